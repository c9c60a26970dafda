"""Every fenced example of README.md, CONTRIBUTING.md and docs/*.md runs as written, or is checked against what it
shows: each block is claimed by one entry of CLAIMS naming the handler that tests it (CONTRIBUTING.md, under
"ecosystem", says what each kind of block gets and how a new example is claimed)."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import signal
import subprocess
import time

import pytest
import yaml

from docs_examples import (
    HOME_FILES,
    Block,
    Claim,
    GalaxyServer,
    all_blocks,
    commands,
    extra_var_arguments,
    resolve_claims,
    substitute,
)
from ecosystem_support import (
    APPENDED,
    BIN,
    PRIMARY_KEY,
    RELEASE_VERSION,
    REPO_ROOT,
    STAGED,
    RECAP,
    Ansible,
    PlaybookRun,
    assert_changed_nothing,
    assert_no_secret,
    create_incident,
    create_monitor,
    incident_of,
    monitors_by_name,
    plain,
    seed_inventory_account,
    stamp,
    versions,
)

# The key of no account: the runs of a block that sets its own api_key get it in UPTIME_API_KEY, so that they
# succeed only with the key the block gives.
NO_ACCOUNT_KEY = 'key-of-no-account'
# How long ansible-rulebook (a JVM) may take to start and poll: a deadline, not a wait (on a loaded machine it can
# take well over a minute).
RULEBOOK_STARTUP = 240


class DocRun(Ansible):
    """``Ansible`` in a temporary directory, the virtualenv's bin first on PATH, that also runs a playbook given as text
    and shell commands; ``blocks`` are the blocks by the name of their claim (an example may use a file another shows)."""

    def __init__(self, emulator, workdir, blocks):
        super().__init__(emulator, workdir)
        self.blocks = blocks

    def environment(self, api_key=PRIMARY_KEY, collections=(), extra=None, without=()):
        env = super().environment(api_key, collections, dict({'PATH': BIN + os.pathsep + os.environ['PATH']}, **(extra or {})))
        return {name: value for name, value in env.items() if name not in without}

    def playbook_text(self, text, *args, env=None):
        return self.playbook(self.write('playbook.yml', text), *(list(args) + extra_var_arguments()), env=env)

    def shell(self, text, env=None, check=True):
        result = subprocess.run(['bash', '-e', '-o', 'pipefail', '-c', text], cwd=self.workdir,
                                env=env or self.environment(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=600, check=False)
        run = PlaybookRun(text, result.returncode, result.stdout)
        assert run.rc == 0 or not check, 'the commands failed (rc %d):\n%s\n%s' % (run.rc, text, run.output)
        return run


# -- kinds of blocks ---------------------------------------------------------------------------------------------

def play(tasks, name='Tasks'):
    """A playbook of one play of ``tasks`` on localhost."""
    return yaml.safe_dump([{'name': name, 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}], sort_keys=False)


def run_playbook_block(run, block):
    """A playbook, run once. Its own connection options (the placeholders substituted) are what reach the
    service: UPTIME_API_KEY holds the key of no account."""
    plays = yaml.safe_load(block.text)
    assert isinstance(plays, list), '%r is not a playbook' % block
    assert all('hosts' in play for play in plays), '%r is not a playbook' % block
    first = run.playbook_text(substitute(block.text, run.emulator), '--diff', env={'UPTIME_API_KEY': NO_ACCOUNT_KEY})
    assert first.failed() == 0, first
    assert first.recap, first
    return first


def run_task_block(run, block, asserts=(), writes=True):
    """A list of tasks: run in one play on localhost whose connection comes from the environment (UPTIME_API_URL,
    UPTIME_API_KEY), with ``asserts`` on what they registered, once. Tasks that only read (``writes=False``) change
    and write nothing."""
    tasks = yaml.safe_load(substitute(block.text, run.emulator))
    assert isinstance(tasks, list), '%r is not a list of tasks' % block
    assert all('hosts' not in task for task in tasks), '%r is not a list of tasks' % block
    if asserts:
        tasks.append({'name': 'Check what the example registered',
                      'ansible.builtin.assert': {'that': list(asserts), 'quiet': True}})
    run.emulator.clear_log()
    first = run.playbook_text(play(tasks, 'Example of %s' % block.document), '--diff')
    assert first.failed() == 0, first
    assert first.recap, first
    if not writes:
        assert_changed_nothing(first)
        assert run.emulator.writes() == []
    return first


def subset(record, expected):
    return {key: str(record.get(key)) for key in expected} == {key: str(value) for key, value in expected.items()}


def example(kind, monitors=(), incidents=(), asserts=(), writes=True, expect_monitors=None, expect_incidents=None):
    """A handler of a playbook or a list of tasks (``kind``: run_playbook_block or run_task_block, with ``asserts``
    and ``writes``) run against an account seeded with ``monitors`` ((name, fields)) and ``incidents`` ((monitor,
    started seconds ago, ended seconds ago or None, fields)), checked by what the account holds afterwards: exactly the
    monitors of ``expect_monitors`` ({name: fields}), the incidents of ``expect_incidents`` ({monitor: [fields]})."""
    def handler(run, block):
        ids = {name: create_monitor(run.emulator, name, **fields)['id'] for name, fields in monitors}
        for name, started, ended, fields in incidents:
            create_incident(run.emulator, ids[name], stamp(started), **dict(fields, **({'ended_at': stamp(ended)} if ended else {})))
        if kind is run_task_block:
            run_task_block(run, block, asserts, writes)
        else:
            run_playbook_block(run, block)
        stored = monitors_by_name(run.emulator)
        assert sorted(stored) == sorted(expect_monitors or stored), stored
        assert all(subset(stored[name], fields) for name, fields in (expect_monitors or {}).items()), stored
        for name, expected in (expect_incidents or {}).items():
            found = incident_of(run.emulator, name)
            assert len(found) == len(expected), found
            assert all(map(subset, found, expected)), found
    return handler


def run_shell_block(run, block, env=None):
    """A shell block, every command as written (the placeholders substituted), stopping at the first failure."""
    return run.shell(substitute(block.text, run.emulator), env=env)


LOAD_RULEBOOK = '''\
import argparse
import sys

from ansible_rulebook.app import load_rulebook
from ansible_rulebook.json_generator import generate_dict_rulesets

print(len(generate_dict_rulesets(load_rulebook(argparse.Namespace(rulebook=sys.argv[1])), {})))
'''


def load_rulebook(run, block):
    """A rulebook as ansible-rulebook loads one (its JSON schema, its parser, its sources found in the staged
    collection, the conditions compiled), in a process of its own as ansible-rulebook is."""
    path = run.write('rulebook.yml', block.text)
    loaded = subprocess.run([os.path.join(BIN, 'python'), '-c', LOAD_RULEBOOK, path], cwd=run.workdir,
                            env=run.environment(), capture_output=True, text=True, timeout=120, check=False)
    rulebook = yaml.safe_load(block.text)
    assert loaded.returncode == 0, loaded
    assert loaded.stdout.strip() == str(len(rulebook)), loaded
    return rulebook


def sources_of(rulebook):
    return [name for ruleset in rulebook for source in ruleset['sources'] for name in source if name != 'name']


# -- README.md --------------------------------------------------------------------------------------------------

def galaxy_install(run, block, galaxy, collection):
    """``ansible-galaxy collection install uptime.monitoring``, or the requirements.yml installed with the command the
    README gives for it, from the test's Galaxy server (ANSIBLE_GALAXY_SERVER): the collection of this work tree is
    installed, at the version of the release it leads to (RELEASE_VERSION)."""
    installed = os.path.join(run.workdir, 'collections')
    env = run.environment(extra=dict(ANSIBLE_GALAXY_SERVER=galaxy.url, ANSIBLE_COLLECTIONS_PATH=installed, ANSIBLE_GALAXY_SERVER_LIST='',
                                     ANSIBLE_GALAXY_CACHE_DIR=os.path.join(run.workdir, 'galaxy-cache'),
                                     ANSIBLE_GALAXY_TOKEN_PATH=os.path.join(run.workdir, 'galaxy-token')))
    if block.text.startswith('---'):
        run.write('requirements.yml', block.text)
        run.shell('ansible-galaxy collection install -r requirements.yml', env=env)
    else:
        run_shell_block(run, block, env=env)
    with open(os.path.join(installed, 'ansible_collections', 'uptime', 'monitoring', 'MANIFEST.json'), encoding='utf-8') as handle:
        info = json.load(handle)['collection_info']
    assert [info[key] for key in ('namespace', 'name', 'version')] == [collection['namespace'], collection['name'], RELEASE_VERSION]
    assert galaxy.download_path in galaxy.requests


WEBSERVERS_INVENTORY = '''\
[webservers]
web1.example.com
web2.example.com

[webservers:vars]
ansible_connection=local
'''

DEPLOY_TASKS = '''\
---
- name: Deploy the new release
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }} deployed"
'''


def collection_playbooks(run, block):
    """The playbooks run as docs/playbooks.md shows, in a directory with the ``inventory`` (group webservers) and the
    ``deploy.yml`` they name, against an account with an ongoing incident of the monitor shop."""
    shop = create_monitor(run.emulator, 'shop', url='https://shop.example.com/health')
    create_incident(run.emulator, shop['id'], stamp(600), cause='Timeout')
    run.write('inventory', WEBSERVERS_INVENTORY)
    run.write('deploy.yml', DEPLOY_TASKS)
    output = run_shell_block(run, block).output
    monitors = monitors_by_name(run.emulator)
    assert sorted(monitors) == ['shop', 'web1.example.com', 'web2.example.com']
    assert not any(monitor['status'] == 'paused' for monitor in monitors.values())  # the deploy put them back
    assert output.count('deployed') >= 2, output
    assert 'No inventory was parsed' not in output, output
    assert 'hosts list is empty' not in output, output
    assert [incident['status'] for incident in incident_of(run.emulator, 'shop')] == ['resolved']
    with open(os.path.join(run.workdir, 'account.yml'), encoding='utf-8') as handle:
        exported = yaml.safe_load(handle)
    assert sorted(monitor['name'] for monitor in exported['uptime_monitors']) == sorted(monitors)
    specs = yaml.safe_load(read('roles/playbooks/meta/argument_specs.yml'))['argument_specs'].values()  # and its tables name every variable
    assert set(re.findall(r'^\| `(\w+)` \|', read('docs/playbooks.md'), re.M)) == {name for spec in specs for name in spec['options']}


# -- the development workflow -------------------------------------------------------------------------------------

def read(path):
    with open(os.path.join(REPO_ROOT, path), encoding='utf-8') as handle:
        return handle.read()


def command_lines(text):
    """The lines of a shell script or block, without comments."""
    return [line.split(' #', 1)[0].strip() for line in text.split('\n') if line.strip() and not line.lstrip().startswith('#')]


def version(line):
    return tuple(map(int, line.split('.')))


def noxfile_lines():
    """``{ansible-core line: Python}``: LINES of noxfile.py."""
    return ast.literal_eval(re.search(r'^LINES = (\{.*\})$', read('noxfile.py'), re.MULTILINE).group(1))


def ci_commands(run, block):  # pylint: disable=unused-argument
    """``./scripts/demo.sh`` and ``./scripts/test.sh`` are what .ci/run runs (CI runs them; they are not run again
    here), and every session or tag that README.md, CONTRIBUTING.md and docs/ name is one of noxfile.py (``--list``
    marks those out of the default run ``-``)."""
    ci = command_lines(read('.ci/run'))
    for command in command_lines(block.text):
        # As written, with its arguments: alone on its line, or with its output kept or under a lock.
        assert any(re.search(r'(^|\s)%s(\s|$)' % re.escape(command), line) for line in ci), '%r is not run by .ci/run' % command
    listed = subprocess.run([os.path.join(REPO_ROOT, 'scripts', 'test.sh'), '--list'], capture_output=True, text=True,
                            check=True, timeout=120, stdin=subprocess.DEVNULL).stdout
    sessions, lines = set(re.findall(r'^[*-] (\S+)', listed, re.MULTILINE)), set(noxfile_lines())
    # Every line has its units and (but the oldest, whose laws run in the laws session) its laws of the two paths; the
    # oldest and the newest, sanity and integration too (the README's table).
    oldest, newest = min(lines, key=version), max(lines, key=version)
    assert {'units-%s' % line for line in lines} | {'two-paths-%s' % line for line in lines - {oldest}} <= sessions
    assert {'%s-%s' % (suite, line) for suite in ('sanity', 'integration') for line in (oldest, newest)} <= sessions
    for document in ['README.md', 'CONTRIBUTING.md'] + ['docs/' + name for name in os.listdir(os.path.join(REPO_ROOT, 'docs'))
                                                        if name.endswith('.md')]:
        named = set(' '.join(re.findall(r'test\.sh -s ((?:[a-z][a-z0-9.-]* ?)+)', read(document))).split())
        tags = {tag.strip('`') for tag in re.findall(r'test\.sh -t (\S+)', read(document))}
        assert named <= sessions, '%s names no session %s, no ansible-core line %s' % (document, named - sessions, tags - lines)
        assert tags <= lines, '%s names no session %s, no ansible-core line %s' % (document, named - sessions, tags - lines)


# The benchmarks of tests/benchmark, and the small form of each that CI runs (the session benchmark of noxfile.py).
BENCHMARKS = {'run.py': r"'tests/benchmark/run\.py', '--n', '\d+'",
              'events.py': r"'tests/benchmark/events\.py', '--sizes', '\d+', '--scale', '\d+', '--no-busy'",
              'tasks.py': r"'tests/benchmark/tasks\.py', '--runs', '\d+'",
              'lookups.py': r"'tests/benchmark/lookups\.py', '--hosts', '\d+', '--monitors', '\d+'"}


def script_accepts(command):
    """A command of a block: a script of the repository, or a benchmark (through the session benchmark, CI running
    its small form) with options it has (its --help, without running the benchmark)."""
    words = shlex.split(command)
    assert words[0].startswith('./scripts/'), command
    assert os.access(os.path.join(REPO_ROOT, words[0]), os.X_OK), command
    if words[1:3] == ['-s', 'benchmark']:
        assert words[3] == '--', 'no check of %r here' % command
        assert words[4] in BENCHMARKS, 'no check of %r here' % command
        assert re.search(BENCHMARKS[words[4]], read('noxfile.py')), '%s: CI runs no small form of it' % words[4]
        usage = subprocess.run([os.path.join(BIN, 'python'), os.path.join(REPO_ROOT, 'tests', 'benchmark', words[4]), '--help'],
                               cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=60).stdout
        for word in words[5:]:  # its options, and the documents it writes
            assert word in usage if word.startswith('--') else not word.endswith('.md') or os.path.isfile(os.path.join(REPO_ROOT, word)), word


def benchmark_commands(run, block):  # pylint: disable=unused-argument
    """A full benchmark takes a quarter of an hour or more: its command is checked, and CI runs its small form."""
    for command in command_lines(block.text):
        for part in command.split('&&'):
            script_accepts(part.strip())


def release_command(run, block):
    """The release, run as written in a fresh clone of the repository (its tags too), with the version of the release
    galaxy.yml leads to in place of the one written: the release's commit and tag, the changelog holding it with no
    fragment left, then the next development version committed."""
    (command,) = command_lines(block.text)
    written = re.search(r'-- (\S+) --write$', command).group(1)
    clone = os.path.join(run.workdir, 'clone')
    subprocess.run(['git', 'clone', '-q', REPO_ROOT, clone], check=True, timeout=120)
    identity = dict(GIT_AUTHOR_NAME='release test', GIT_AUTHOR_EMAIL='release@example.com', GIT_COMMITTER_NAME='release test',
                    GIT_COMMITTER_EMAIL='release@example.com')
    released = subprocess.run(command.replace(written, RELEASE_VERSION), shell=True, cwd=clone, env=dict(os.environ, **identity),
                              capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL, check=False)
    assert released.returncode == 0, released.stdout[-3000:] + released.stderr[-3000:]

    def git(*args):
        return subprocess.run(['git', *args], cwd=clone, capture_output=True, text=True, check=True).stdout.strip()
    assert git('log', '--format=%s', '-2').splitlines() == [
        'Development of %s opened' % versions.next_development(RELEASE_VERSION), 'Release %s' % RELEASE_VERSION]
    assert git('rev-list', '-n', '1', RELEASE_VERSION) == git('rev-parse', 'HEAD~1')
    assert versions.galaxy_version(clone) == versions.next_development(RELEASE_VERSION)
    assert RELEASE_VERSION in versions.released(clone)
    assert [name for name in os.listdir(os.path.join(clone, 'changelogs', 'fragments')) if name.endswith(('.yml', '.yaml'))] == []


def ansible_test_by_hand(run, block):  # pylint: disable=unused-argument
    """The ansible-test commands are those of the sessions sanity-, units- and integration- of the line the first
    command names (their arguments in noxfile.py), in the directory scripts/stage-collection.sh stages to by default,
    with the tools of that units session."""
    first, directory, path, *tests = command_lines(block.text)
    for part in first.split('&&'):
        script_accepts(part.strip())
    line = re.search(r'-s units-([0-9.]+) ', first).group(1)
    assert (directory, path) == ('cd build/collections/ansible_collections/uptime/monitoring',
                                 'PATH=$OLDPWD/.nox/units-%s/bin:$PATH' % line.replace('.', '-'))
    common = (word.strip(" '") for word in re.search(r"args = \[(.*?)\]\n", read('noxfile.py')).group(1).replace("'--color', 'no'", '').split(','))
    common = [noxfile_lines()[line] if word == 'python' else word for word in common if word]
    targets = os.listdir(os.path.join(REPO_ROOT, 'tests', 'integration', 'targets'))
    for test in tests:
        words = test.split()
        assert words[0] == 'ansible-test', (test, common)
        assert words[2:len(words) - (words[1] == 'integration' and words[-1] in targets)] == common, (test, common)


# -- docs/eda.md ---------------------------------------------------------------------------------------------------

def rulebook_sample(run, block):
    """A rulebook ansible-rulebook loads, whose source is the collection's."""
    rulebook = load_rulebook(run, block)
    assert sources_of(rulebook) == ['uptime.monitoring.events']
    assert os.path.isfile(os.path.join(STAGED, 'extensions', 'eda', 'plugins', 'event_source', 'events.py'))


FIRST_RULEBOOK = 'docs/eda.md: - name: React to phpUptime'


def rulebook_inventory(run, block):
    """The inventory the rulebook's playbooks run with: the playbook the first rulebook starts, given the event
    of a monitor gone offline as ansible-rulebook gives it, acknowledges the incident. Its modules need
    ``requests``, which only the Python running the playbook is sure to have; interpreter discovery would pick
    another Python. The incident had no comment: the playbook's note (the default one, as the event names no
    rule) is the whole comment, with no time stamp (test_playbooks.py checks the note appended to
    an operator's comment)."""
    shop = create_monitor(run.emulator, 'shop')
    create_incident(run.emulator, shop['id'], stamp(600))
    run.write('inventory.yml', block.text)
    event = {'ansible_eda': {'event': {'uptime': {'type': 'monitor_status_changed', 'status': 'offline',
                                                  'monitor_id': int(shop['id']), 'monitor_name': 'shop'}}}}
    run.write('event.json', json.dumps(event))
    played = yaml.safe_load(run.blocks[FIRST_RULEBOOK].text)[0]['rules'][0]['action']['run_playbook']['name']
    run.shell('ansible-playbook -i inventory.yml %s -e @event.json' % played)
    (incident,) = incident_of(run.emulator, 'shop')
    assert (incident['status'], incident['comment']) == (
        'acknowledged', 'Acknowledged by Event-Driven Ansible: uptime.monitoring.acknowledge_incident')


def start_rulebooks(run, block, variables):
    """Each ansible-rulebook command of the block, after the ``export`` lines of the first run (placeholders
    substituted, the key read from where HOME_FILES keeps it, HOME being the temporary directory), in a directory with
    the files the docs name: rulebook.yml and inventory.yml (of docs/eda.md) and vars.yml (``variables``). A command
    is run until its source has polled the service with the exported key, then stopped: ansible-rulebook runs until
    stopped."""
    for name, text in dict(HOME_FILES, **{'rulebook.yml': run.blocks[FIRST_RULEBOOK].text, 'vars.yml': yaml.safe_dump(variables),
                                          'inventory.yml': run.blocks['docs/eda.md: all:'].text}).items():
        run.write(name, text)
    create_monitor(run.emulator, 'shop')
    env = run.environment(without=('UPTIME_API_URL', 'UPTIME_API_KEY'), extra={'HOME': run.workdir})
    exports = [substitute(line, run.emulator) for line in commands(run.blocks['docs/eda.md: export UPTIME_API_URL=https://uptime.example.com'])
               if line.startswith('export ')]
    started = [line for line in commands(block) if not line.startswith('export ')]
    assert started, block
    assert all(line.startswith('ansible-rulebook ') for line in started), block
    for command in started:
        run.emulator.clear_log()
        process = subprocess.Popen(['bash', '-c', '\n'.join(exports + ['exec ' + command])], cwd=run.workdir, env=env,  # pylint: disable=consider-using-with
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        deadline, polled = time.monotonic() + RULEBOOK_STARTUP, False
        while not polled and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            polled = any(entry['path'] == '/api/v1/monitors' and entry.get('api_key') == PRIMARY_KEY for entry in run.emulator.log())
        running = process.poll() is None
        if running:
            os.killpg(process.pid, signal.SIGINT)
        try:
            output = process.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output = process.communicate()[0]
        assert polled, 'ansible-rulebook did not poll the service, or ended (rc %s): %s\n%s' % (process.returncode, command, output)
        assert running, 'ansible-rulebook did not poll the service, or ended (rc %s): %s\n%s' % (process.returncode, command, output)
        assert 'Source error' not in output, output
        assert PRIMARY_KEY not in output, output


def rulebook_first_run(run, block):
    start_rulebooks(run, block, {'uptime_events_interval': 60})


def rulebook_persistence(run, block):
    """The restart-safe command; vars.yml gives the H2 file as its comment says, in the temporary directory."""
    assert 'drools_db_file_path:' in block.text
    database = os.path.join(run.workdir, 'eda', 'uptime')
    os.makedirs(os.path.dirname(database))
    start_rulebooks(run, block, {'drools_db_file_path': database})


# -- docs/inventory.md ---------------------------------------------------------------------------------------------

PLAIN_CONFIG = 'docs/inventory.md: plugin: uptime.monitoring.monitors'


def plain_configuration(run):
    """The guide's plain configuration file, written as production.uptime.yml; its path."""
    return run.write('production.uptime.yml', run.blocks[PLAIN_CONFIG].text)


def inventory_config(run, block):
    """The configuration file alone, with the service in the environment: the plugin found and loaded by
    ansible-inventory, two requests, the variables, no secret of the monitors or the key printed (the status groups
    are the graph of inventory_graph_sample, from the same file)."""
    ids = seed_inventory_account(run.emulator)
    source = run.write('production.uptime.yml', block.text)
    run.emulator.clear_log()
    result = run.inventory(source, '--list')
    assert [(entry['method'], entry['path']) for entry in run.emulator.log()] == [
        ('GET', '/api/v1/monitors'), ('GET', '/api/v1/incidents')]
    assert_no_secret(result.stdout, result.stderr)
    listed = plain(json.loads(result.stdout))
    assert all(set(hostvars) == {'uptime_monitors', 'uptime_statuses'} for hostvars in listed['_meta']['hostvars'].values())
    offline = listed['_meta']['hostvars']['shop.example.com']['uptime_monitors'][0]
    assert (offline['id'], offline['incident']['id']) == (ids['shop'], ids['shop incident'])


def inventory_graph_sample(run, block):
    """The graph shown is what ``ansible-inventory --graph`` prints for an account seeded to match it."""
    command, shown = commands(block)[0], block.text.split('\n', 1)[1]
    assert command == 'ANSIBLE_INVENTORY_UNPARSED_FAILED=true ansible-inventory -i production.uptime.yml --graph'
    seed_inventory_account(run.emulator)
    plain_configuration(run)
    assert run.shell(command).output == shown


def host_variables_sample(run, block):
    """The host variables shown have the keys, and the values other than ids and times, of the real ones."""
    sample = yaml.safe_load(block.text)
    seed_inventory_account(run.emulator)
    source = plain_configuration(run)
    real = plain(json.loads(run.inventory(source, '--host', 'shop.example.com').stdout))
    assert set(real) == set(sample)
    assert real['uptime_statuses'] == sample['uptime_statuses']
    assert len(real['uptime_monitors']) == len(sample['uptime_monitors'])
    for shown, actual in zip(sample['uptime_monitors'], real['uptime_monitors']):
        assert set(shown) == set(actual)
        assert all(shown[key] == actual[key] for key in ('name', 'url', 'status', 'interval'))
        assert set(shown['incident'] or ()) == set(actual['incident'] or ()), (shown, actual)
        assert (shown['incident'] or {}).get('acknowledged') == (actual['incident'] or {}).get('acknowledged')
        assert re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ', actual['started_at'])
        assert shown['started_at'].endswith('Z')


def constructed_groups(run, block):
    seed_inventory_account(run.emulator)
    source = run.write('production.uptime.yml', block.text)
    listed = plain(json.loads(run.inventory(source, '--list').stdout))

    def hosts(group):
        return sorted(listed.get(group, {}).get('hosts', []))
    assert hosts('uptime_interval_60') == ['shop.example.com']
    assert hosts('uptime_interval_300') == ['api.example.com', 'blog.example.com', 'docs.example.com', 'shop.example.com']
    assert hosts('uptime_unacknowledged') == ['shop.example.com']
    assert hosts('uptime_needs_attention') == ['shop.example.com']
    assert {hostvars['ansible_user'] for hostvars in listed['_meta']['hostvars'].values()} == {'deploy'}
    # strict reaches Ansible's constructed options: an expression that cannot be evaluated fails the source.
    assert 'strict: true' in block.text
    broken = run.write('broken.uptime.yml', block.text.replace('compose:', 'compose:\n  broken: uptime_monitors.no_such_key.deeper', 1))
    result = run.inventory(broken, '--list', check=False)
    assert result.returncode != 0, result
    assert 'Could not set broken' in result.stderr, result


def inventory_cache(run, block):
    """The cache configuration: a second run within cache_timeout sends no request and gives the same inventory,
    host variables included; --flush-cache reads again (a monitor added meanwhile shows). The cache goes under ~
    (HOME is the temporary directory): one entry, without the monitors' secrets or the API key, in its text or its
    name."""
    seed_inventory_account(run.emulator)
    source = run.write('production.uptime.yml', block.text)
    env = {'HOME': run.workdir}

    def inventory(*args):
        return plain(json.loads(run.inventory(source, '--list', *args, env=env).stdout))
    run.emulator.clear_log()
    first = inventory()
    assert len(run.emulator.log()) == 2  # the monitors, and the incidents of the offline one
    cache = os.path.join(run.workdir, '.cache', 'uptime-inventory')
    (entry,) = os.listdir(cache)
    with open(os.path.join(cache, entry), encoding='utf-8') as handle:
        cached = handle.read()
    assert 'shop.example.com/health' in cached
    assert_no_secret(entry, cached)
    run.emulator.clear_log()
    assert inventory() == first
    assert run.emulator.log() == []
    create_monitor(run.emulator, 'new', url='https://new.example.com/')
    run.emulator.clear_log()
    assert 'new.example.com' in inventory('--flush-cache')['_meta']['hostvars']
    assert len(run.emulator.log()) == 2


def health_check_commands(run, block):
    """health_check on production.uptime.yml (the plain configuration file): the first command reports on the hosts of
    uptime_offline and on their offline monitors only (not a pending one's) and changes nothing; the second resolves the incident of the monitor
    whose URL answers again and acknowledges that of the one whose URL fails, its notes appended to what operators
    wrote. Run again, nothing changes: the recovered monitor is online, the other incident acknowledged. The URLs are
    the emulator's, on 127.0.0.1, a host the plugin gives the local connection."""
    url = {'recovered': run.emulator.url + '/_emulator/', 'broken': run.emulator.url + '/_emulator/missing'}
    ids = {name: create_monitor(run.emulator, name, url=url[name])['id'] for name in url}
    create_monitor(run.emulator, 'pending', url=url['broken'])
    notes = {'recovered': 'Investigating: the load balancer drops health checks', 'broken': 'Vendor ticket 4711 opened'}
    create_incident(run.emulator, ids['recovered'], stamp(900), acknowledged_at=stamp(800), comment=notes['recovered'])
    create_incident(run.emulator, ids['broken'], stamp(600), comment=notes['broken'])
    plain_configuration(run)
    output = run_shell_block(run, block).output
    assert 'recovered (%s) answers: HTTP 200' % url['recovered'] in output
    assert 'broken (%s) still fails: HTTP 404' % url['broken'] in output
    assert 'pending (' not in output, output
    changed = [int(match['changed']) for match in RECAP.finditer(output)]
    assert len(changed) == 2, output
    assert changed[0] == 0 < changed[1], output
    incidents = {name: incident_of(run.emulator, name) for name in url}
    assert [incident['status'] for incident in incidents['recovered']] == ['resolved']
    assert [incident['status'] for incident in incidents['broken']] == ['acknowledged']
    assert APPENDED.fullmatch(incidents['recovered'][0]['comment']).groups() == (
        notes['recovered'], 'Health check: %s answers again (HTTP 200).' % url['recovered'])
    assert APPENDED.fullmatch(incidents['broken'][0]['comment']).groups() == (
        notes['broken'], 'Health check: %s still fails (HTTP 404).' % url['broken'])
    assert monitors_by_name(run.emulator)['recovered']['status'] == 'online'
    run.emulator.clear_log()
    again = run_shell_block(run, block).output
    assert [int(match['changed']) for match in RECAP.finditer(again)] == [0, 0], again
    assert run.emulator.writes() == []


def maintenance_end_play(run, block):
    """The play on uptime_maintenance prints the end of the window the inventory gives the host in maintenance."""
    seed_inventory_account(run.emulator)
    source = plain_configuration(run)
    (monitor,) = plain(json.loads(run.inventory(source, '--host', 'docs.example.com').stdout))['uptime_monitors']
    assert monitor['status'] == 'maintenance', monitor
    assert monitor['maintenance_end_at'].endswith('Z'), monitor
    played = run.playbook(run.write('maintenance.yml', block.text), inventory=source).output
    assert 'Maintenance ends at %s' % monitor['maintenance_end_at'] in played, played


def unparsed_is_failed_setting(run, block):
    """In ansible.cfg beside the configuration file, the setting makes a wrong key fail ansible-inventory (rc 1,
    the plugin's message naming api_key); without it the same run is only a warning (rc 0, no host)."""
    plain_configuration(run)
    env = run.environment(NO_ACCOUNT_KEY, without=('ANSIBLE_INVENTORY_UNPARSED_WARNING',))
    command = 'ansible-inventory -i production.uptime.yml --graph'
    hint = 'set ANSIBLE_INVENTORY_UNPARSED_FAILED=true'
    lenient = run.shell(command, env=env, check=False)
    assert lenient.rc == 0, lenient
    assert 'check api_key' in lenient.output, lenient
    assert 'uptime_' not in lenient.output.split('@all:')[-1], lenient
    assert hint in ' '.join(lenient.output.split()), lenient
    run.write('ansible.cfg', block.text)
    strict = run.shell(command, env=env, check=False)
    assert strict.rc != 0, strict
    assert 'check api_key' in strict.output, strict
    assert hint not in ' '.join(strict.output.split()), strict


def remediation_play(run, block):
    """A play that restarts nginx with become on the monitored hosts cannot run here: it is checked to be a valid
    playbook that targets exactly the hosts of uptime_offline of the real inventory."""
    seed_inventory_account(run.emulator)
    source = plain_configuration(run)
    playbook = run.write('remediate.yml', block.text)
    listed = run.playbook(playbook, '--list-hosts', inventory=source).output
    hosts = re.search(r'hosts \((\d+)\):\n((?:\s+\S+\n?)*)', listed)
    assert hosts, listed
    assert hosts.group(2).split() == ['shop.example.com'], listed


def job_template_rulebook(run, block):
    """Launching a job template needs a controller: the rulebook is loaded as ansible-rulebook loads it."""
    rulebook = load_rulebook(run, block)
    assert sources_of(rulebook) == ['uptime.monitoring.events']
    action = rulebook[0]['rules'][0]['action']['run_job_template']
    assert action['job_args']['limit'] == 'uptime_offline'


# -- docs/operator-guide.md ----------------------------------------------------------------------------------------

def appended_comment_sample(run, block):
    """The comment shown is the shape of one acknowledged with the first line and resolved, with comment_mode:
    append, with the second (its time stamp being the time of the resolve)."""
    first, second = block.text.rstrip('\n').split('\n')
    note = re.fullmatch(r'\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] (.*)', second).group(1)
    shop = create_monitor(run.emulator, 'shop')
    create_incident(run.emulator, shop['id'], stamp(600))
    run.playbook_text(play([{'name': 'Acknowledge', 'uptime.monitoring.incident': {'monitor': 'shop', 'state': 'acknowledged', 'comment': first}},
                            {'name': 'Resolve, adding a note', 'uptime.monitoring.incident': {
                                'monitor': 'shop', 'state': 'resolved', 'comment': note, 'comment_mode': 'append'}}]))
    (incident,) = incident_of(run.emulator, 'shop')
    assert APPENDED.fullmatch(incident['comment']).groups() == (first, note), incident['comment']


# -- docs/transport.md ---------------------------------------------------------------------------------------------

FAILURES = [  # a request the service answers with an error, one that is never answered; their messages kept
    {'name': 'Answered', 'uptime.monitoring.monitor_info': {'api_key': NO_ACCOUNT_KEY}, 'register': 'answered', 'ignore_errors': True},
    {'name': 'Unanswered', 'uptime.monitoring.monitor_info': {'api_url': 'http://127.0.0.1:9', 'retries': 0}, 'register': 'unanswered',
     'ignore_errors': True},
    {'name': 'Keep the messages', 'ansible.builtin.copy': {
        'content': '{{ [answered.msg, unanswered.msg] | to_json }}', 'dest': '{{ playbook_dir }}/messages.json', 'mode': '0600'}},
]
MESSAGE_PLACEHOLDERS = (
    ('METHOD', '[A-Z]+'), ('/path', r'/\S*'), ('nnn', r'\d{3}'), ('what the service said', '.+'),
    ('what went wrong', '(?!HTTP ).+'),
)


def failure_message_format(run, block):
    """Each line of the format is the shape of a real failure's message: one the service answered, one it did not."""
    run.playbook_text(play(FAILURES))
    with open(os.path.join(run.workdir, 'messages.json'), encoding='utf-8') as handle:
        messages = json.load(handle)
    for line, message in zip(block.text.rstrip('\n').split('\n'), messages):
        shape = re.escape(line)
        for written, pattern in MESSAGE_PLACEHOLDERS:
            shape = shape.replace(re.escape(written), pattern)
        assert re.fullmatch(shape, message), (line, message)


# -- which handler tests which block --------------------------------------------------------------------------------

SHOP_MONITOR = [('shop', {})]

CLAIMS = [
    Claim('README.md', 'ansible-galaxy collection install uptime.monitoring', galaxy_install),
    Claim('README.md', '---\ncollections:', galaxy_install),
    Claim('README.md', '- name: Keep the shop monitored', example(run_playbook_block, expect_monitors={
        'shop': {'url': 'https://shop.example.com/health', 'interval': 60}, 'blog': {'interval': 300}})),
    Claim('README.md', '- hosts: localhost', example(run_playbook_block, expect_monitors={'home page': {'url': 'https://www.example.com/'}})),
    Claim('docs/playbooks.md', 'ansible-playbook -i inventory uptime.monitoring.monitor_hosts -e uptime_hosts=webservers',
          collection_playbooks),
    Claim('README.md', './scripts/demo.sh', ci_commands),
    Claim('CONTRIBUTING.md', './scripts/demo.sh', ci_commands),
    Claim('CONTRIBUTING.md', './scripts/test.sh -s benchmark -- run.py --update-doc', benchmark_commands),
    Claim('CONTRIBUTING.md', './scripts/test.sh -s release -- 1.1.0 --write', release_command),
    Claim('CONTRIBUTING.md', './scripts/test.sh -s units-2.19 --install-only && ./scripts/stage-collection.sh',
          ansible_test_by_hand),
    Claim('docs/eda.md', '- name: React to phpUptime', rulebook_sample),
    Claim('docs/eda.md', 'all:', rulebook_inventory),
    Claim('docs/eda.md', 'export UPTIME_API_URL=https://uptime.example.com', rulebook_first_run),
    Claim('docs/eda.md', 'ansible-rulebook -r uptime.monitoring.acknowledge_offline', rulebook_persistence),
    Claim('docs/inventory.md', '$ ANSIBLE_INVENTORY_UNPARSED_FAILED=true ansible-inventory -i production.uptime.yml --graph',
          inventory_graph_sample),
    Claim('docs/inventory.md', '---\nplugin: uptime.monitoring.monitors', inventory_config),
    Claim('docs/inventory.md', 'uptime_monitors:', host_variables_sample),
    Claim('docs/inventory.md', '---\nplugin: uptime.monitoring.monitors\nstrict: true', constructed_groups),
    Claim('docs/inventory.md', '---\nplugin: uptime.monitoring.monitors\ncache: true', inventory_cache),
    Claim('docs/inventory.md', 'export ANSIBLE_INVENTORY_UNPARSED_FAILED=true\n'
          'ansible-playbook -i production.uptime.yml uptime.monitoring.health_check', health_check_commands),
    Claim('docs/inventory.md', '- name: Tell when the maintenance of each endpoint ends', maintenance_end_play),
    Claim('docs/inventory.md', '[inventory]', unparsed_is_failed_setting),
    Claim('docs/inventory.md', '- name: Restart the web service where a monitor is offline', remediation_play),
    Claim('docs/inventory.md', '- name: React to monitors going offline', job_template_rulebook),
    Claim('docs/operator-guide.md', '- name: Acknowledge the current incident of the shop monitor', example(
        run_task_block, SHOP_MONITOR, [('shop', 600, None, {})], expect_incidents={'shop': [{'status': 'acknowledged', 'comment': 'On it'}]})),
    Claim('docs/operator-guide.md', '- name: Open an incident of the shop monitor now', example(
        run_task_block, SHOP_MONITOR, expect_incidents={'shop': [{'status': 'unresolved', 'cause': 'Payment provider unreachable'}]})),
    Claim('docs/operator-guide.md', 'On it', appended_comment_sample),
    # Of two resolved incidents, the one that ended within the day is found.
    Claim('docs/operator-guide.md', '- name: Incidents resolved in the last day', example(
        run_task_block, SHOP_MONITOR, [('shop', 4 * 86400, 3 * 86400, {'cause': 'Old'}), ('shop', 7200, 3600, {'cause': 'Recent'})],
        ["resolved_last_day.incidents | map(attribute='cause') | list == ['Recent']"], writes=False)),
    # The masked secrets that gathered shows keep what the monitor holds: the run changes and writes nothing.
    Claim('docs/operator-guide.md', '- name: Read every monitor, secrets masked', example(
        run_task_block, [('shop', dict(request_auth_username='u', request_auth_password='docs-secret-pw',
                                       alerts=[{'key': 'slack', 'value': 'https://hooks.slack.com/services/T0/B0/docs-secret-hook'}]))],
        writes=False)),
    Claim('docs/performance.md', './scripts/test.sh -s benchmark -- run.py --update-doc', benchmark_commands),
    Claim('docs/performance.md', './scripts/test.sh -s benchmark -- events.py --update-doc', benchmark_commands),
    Claim('docs/performance.md', './scripts/test.sh -s benchmark -- tasks.py --update-doc', benchmark_commands),
    Claim('docs/transport.md', 'METHOD /path failed:', failure_message_format),
]


@pytest.fixture(scope='module')
def claimed():
    won, problems = resolve_claims(CLAIMS, all_blocks())
    return won, problems


@pytest.fixture(scope='session')
def collection():
    with open(os.path.join(REPO_ROOT, 'galaxy.yml'), encoding='utf-8') as handle:
        return yaml.safe_load(handle)


@pytest.fixture(scope='session')
def galaxy(collection_tarball, collection):  # pylint: disable=redefined-outer-name
    """A Galaxy server holding the collection, built once from the staged copy as `build` builds it."""
    server = GalaxyServer(collection['namespace'], collection['name'], RELEASE_VERSION, collection_tarball)
    yield server
    server.stop()


def test_every_block_is_claimed(claimed):  # pylint: disable=redefined-outer-name
    names = [claim.name for claim in CLAIMS]
    assert len(set(names)) == len(names), 'two claims have one name: give them heads whose last lines differ'
    won, problems = claimed
    assert not problems, '\n'.join(problems)
    assert len(won) == len(CLAIMS)


def test_a_block_no_claim_fits_and_a_claim_without_its_block_are_told():
    """What test_every_block_is_claimed reports when an example is added or changed: the unclaimed block, the claim
    left without a block, and claims that tie; of two heads that fit, the longer wins."""
    handler = None  # never run
    blocks = [Block('docs/x.md', 3, 'yaml', '---\nplugin: x\n'), Block('docs/x.md', 9, 'yaml', '---\nplugin: x\ncache: true\n'),
              Block('docs/x.md', 20, '', 'new command\n')]
    claims = [Claim('docs/x.md', '---\nplugin: x', handler), Claim('docs/x.md', '---\nplugin: x\ncache: true', handler),
              Claim('docs/x.md', 'old command', handler)]
    won, problems = resolve_claims(claims, blocks)
    assert {name: block.line for name, block in won.items()} == {'docs/x.md: plugin: x': 3, 'docs/x.md: cache: true': 9}
    assert len(problems) == 2, problems
    assert "docs/x.md:20" in problems[0]
    assert "add a Claim('docs/x.md', 'new command', handler)" in problems[0]
    assert "claim 'docs/x.md: old command' wins 0 blocks" in problems[1]
    won, problems = resolve_claims(claims[:1] + claims[:1], blocks[:1])
    assert 'both fit' in problems[0]


@pytest.mark.parametrize('claim', CLAIMS, ids=[claim.name for claim in CLAIMS])
def test_docs_example(claim, claimed, emulator, tmp_path, request):  # pylint: disable=redefined-outer-name
    won, dummy = claimed
    assert claim.name in won, 'the block of %r is not there (see test_every_block_is_claimed)' % claim.name
    run = DocRun(emulator, tmp_path, won)
    if claim.handler is galaxy_install:  # the session's Galaxy server
        claim.handler(run, won[claim.name], request.getfixturevalue('galaxy'), request.getfixturevalue('collection'))
    else:
        claim.handler(run, won[claim.name])
