"""Helpers of the ecosystem tests: run ansible-playbook against the emulator, seed and read the emulator."""

from __future__ import annotations

import ast
import datetime
import os
import re
import subprocess
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The collection under test, staged (nox sessions stage a copy of their own).
COLLECTIONS = os.environ.get('UPTIME_COLLECTIONS') or os.path.join(REPO_ROOT, 'build', 'collections')
STAGED = os.path.join(COLLECTIONS, 'ansible_collections', 'uptime', 'monitoring')
BIN = os.path.dirname(sys.executable)
MODULES_DIR = os.path.join(REPO_ROOT, 'plugins', 'modules')

if os.path.join(REPO_ROOT, 'tests') not in sys.path:
    sys.path.insert(0, os.path.join(REPO_ROOT, 'tests'))

from emulator.control import OTHER_KEY, PRIMARY_KEY, Emulator  # noqa: E402  pylint: disable=wrong-import-position

sys.path.insert(0, os.path.join(REPO_ROOT, 'scripts'))
import versions  # noqa: E402  # pylint: disable=wrong-import-position

# The version a build of this work tree ships as: the release galaxy.yml's development version leads to.
RELEASE_VERSION = versions.release_of(versions.galaxy_version(REPO_ROOT))

__all__ = ['OTHER_KEY', 'PRIMARY_KEY', 'Emulator', 'versions']

RECAP = re.compile(r'^(?P<host>\S+)\s+: ok=(?P<ok>\d+)\s+changed=(?P<changed>\d+)\s+unreachable=(?P<unreachable>\d+)\s+'
                   r'failed=(?P<failed>\d+)', re.MULTILINE)

# A comment with a note appended by comment_mode append: the earlier comment, then the note after a UTC time stamp.
APPENDED = re.compile(r'(.*)\n\[[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\] (.*)', re.DOTALL)


class PlaybookRun:
    """The result of one ``ansible-playbook`` run: ``rc``, ``output`` and the PLAY RECAP per host."""

    def __init__(self, command, rc, output):
        self.command = command
        self.rc = rc
        self.output = output
        self.recap = {match['host']: {key: int(match[key]) for key in ('ok', 'changed', 'unreachable', 'failed')}
                      for match in RECAP.finditer(output)}

    def changed(self):
        """Total number of changed tasks over all hosts."""
        return sum(host['changed'] for host in self.recap.values())

    def failed(self):
        """Total number of failed tasks over all hosts."""
        return sum(host['failed'] for host in self.recap.values())

    def __repr__(self):
        return 'PlaybookRun(rc=%d, command=%r)\n%s' % (self.rc, self.command, self.output)


class Ansible:
    """Runs ``ansible-playbook`` and ``ansible`` from the development virtualenv against the emulator."""

    def __init__(self, emulator, workdir):
        self.emulator = emulator
        self.workdir = str(workdir)

    def environment(self, api_key=PRIMARY_KEY, collections=(), extra=None):
        env = dict(os.environ)
        env.pop('ANSIBLE_FORCE_COLOR', None)
        env.update(
            ANSIBLE_COLLECTIONS_PATH=os.pathsep.join(list(collections) + [COLLECTIONS]),
            ANSIBLE_NOCOLOR='1',
            ANSIBLE_RETRY_FILES_ENABLED='0',
            ANSIBLE_LOCALHOST_WARNING='0',
            ANSIBLE_INVENTORY_UNPARSED_WARNING='0',
            PYTHONUNBUFFERED='1',
            PWD=self.workdir,
            UPTIME_API_URL=self.emulator.url,
            UPTIME_API_KEY=api_key,
        )
        env.update(extra or {})
        return env

    def playbook(self, playbook, *args, inventory=None, api_key=PRIMARY_KEY, collections=(), env=None, check=True):
        """Run a playbook (a path or a collection playbook name); ``check`` asserts that it succeeded."""
        command = [os.path.join(BIN, 'ansible-playbook')]
        if inventory:
            command += ['-i', str(inventory)]
        command += [str(playbook)] + [str(arg) for arg in args]
        result = subprocess.run(command, cwd=self.workdir, env=self.environment(api_key, collections, env),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=600, check=False)
        run = PlaybookRun(command, result.returncode, result.stdout)
        if check:
            assert run.rc == 0, run
        return run

    def inventory(self, source, *args, api_key=PRIMARY_KEY, env=None, check=True):
        """Run ``ansible-inventory -i source args...``; ``check`` asserts that it succeeded without a warning."""
        command = [os.path.join(BIN, 'ansible-inventory'), '-i', str(source)] + [str(arg) for arg in args]
        environment = self.environment(api_key, extra=dict({'ANSIBLE_INVENTORY_UNPARSED_FAILED': '1'}, **(env or {})))
        result = subprocess.run(command, cwd=self.workdir, env=environment, stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=300, check=False)
        if check:
            assert result.returncode == 0, result
            assert '[WARNING]' not in result.stderr, result
        return result

    def write(self, name, text):
        """Write a file into the working directory and return its path."""
        path = os.path.join(self.workdir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write(text)
        return path


def module_names():
    """The modules of plugins/modules/."""
    return sorted(name[:-3] for name in os.listdir(MODULES_DIR) if name.endswith('.py') and not name.startswith('_'))


def documentation(path, name):
    """The string a plugin's source assigns to ``name`` (EXAMPLES, RETURN), read without importing it; ``path`` is
    a file or the name of a module."""
    with open(path if os.sep in path else os.path.join(MODULES_DIR, path + '.py'), encoding='utf-8') as handle:
        for node in ast.parse(handle.read()).body:
            if isinstance(node, ast.Assign) and any(getattr(target, 'id', None) == name for target in node.targets):
                return ast.literal_eval(node.value)
    raise AssertionError('%s has no %s' % (path, name))


def assert_changed_nothing(run):
    """A run (usually the second with the same arguments) that succeeded and, per its PLAY RECAP, changed nothing
    and failed nothing on any host (and ran on at least one)."""
    assert run.rc == 0, run
    assert run.recap, run
    assert run.changed() == 0, run
    assert run.failed() == 0, run


def records(emulator, path, api_key=PRIMARY_KEY, **params):
    """Every record of a list endpoint (all pages), as the service returns them."""
    found, url = [], path
    query = dict(params, per_page=100)
    while url:
        answer = emulator.api('GET', url, api_key=api_key, params=query)
        assert answer.status == 200, answer.text
        found += answer.json['data']
        url, query = answer.json['links']['next'], None
    return found


def incident_of(emulator, name):
    """The incidents of the monitor ``name``, oldest first."""
    return [incident for incident in records(emulator, '/api/v1/incidents', sort_by='started_at', sort='asc')
            if incident['monitor']['name'] == name]


def monitors_by_name(emulator, api_key=PRIMARY_KEY):
    """The monitors of an account, by name."""
    return {record['name']: record for record in records(emulator, '/api/v1/monitors', api_key)}


def create_monitor(emulator, name, api_key=PRIMARY_KEY, **fields):
    """Create a monitor through the API and return its record."""
    form = dict(name=name, url='https://%s.example.com/' % name, interval=300, request_method='GET',
                alert_condition='url_unavailable')
    form.update(fields)
    answer = emulator.api('POST', '/api/v1/monitors', api_key=api_key, data=form)
    assert answer.status in (200, 201), answer.text
    return answer.json['data']


def update_monitor(emulator, monitor_id, api_key=PRIMARY_KEY, **fields):
    answer = emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, api_key=api_key, data=fields)
    assert answer.status == 200, answer.text
    return answer.json['data']


def create_incident(emulator, monitor_id, started_at, api_key=PRIMARY_KEY, **fields):
    """Record an incident through the API (times as Y-m-dTH:i:s in UTC) and return its record."""
    form = dict(monitor_id=monitor_id, started_at=started_at)
    form.update(fields)
    answer = emulator.api('POST', '/api/v1/incidents', api_key=api_key, data=form)
    assert answer.status in (200, 201), answer.text
    return answer.json['data']


def stamp(seconds_ago=0):
    """A time ``seconds_ago`` before now, as Y-m-dTH:i:s in UTC."""
    moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return moment.strftime('%Y-%m-%dT%H:%M:%S')


# The secrets seed_inventory_account gives the offline monitor.
INVENTORY_SECRETS = ('hunter2-basic-secret', 'header-secret-value')


def seed_inventory_account(emulator):
    """shop.example.com: an offline monitor (ongoing incident) and a pending one; blog paused; api online; docs in
    maintenance. The offline monitor holds every kind of secret a monitor can. Their ids, by name."""
    ids = {}
    ids['shop'] = create_monitor(emulator, 'shop', url='https://shop.example.com/health',
                                 request_auth_username='uptime', request_auth_password='hunter2-basic-secret',
                                 request_headers=[{'key': 'Authorization', 'value': 'Bearer header-secret-value'}])['id']
    ids['shop admin'] = create_monitor(emulator, 'shop admin', url='https://shop.example.com:8443/admin', interval=60)['id']
    ids['blog'] = create_monitor(emulator, 'blog', url='https://blog.example.com/')['id']
    update_monitor(emulator, ids['blog'], pause=1)
    ids['api'] = create_monitor(emulator, 'api', url='https://api.example.com/v1/status')['id']
    past = create_incident(emulator, ids['api'], stamp(7200))['id']
    assert emulator.api('PUT', '/api/v1/incidents/%d' % past, data={'ended_at': stamp(3600)}).status == 200  # online
    ids['docs'] = create_monitor(emulator, 'docs', url='https://docs.example.com/',
                                 maintenance_start_at=stamp(600), maintenance_end_at=stamp(-3600))['id']
    ids['shop incident'] = create_incident(emulator, ids['shop'], stamp(900), cause='Timeouts')['id']
    return ids


def plain(value):
    """``ansible-inventory --list`` output without ansible-core 2.19's markers of untrusted strings."""
    if isinstance(value, dict):
        if set(value) == {'__ansible_unsafe'}:
            return value['__ansible_unsafe']
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def assert_no_secret(*texts):
    for text in texts:
        for secret in INVENTORY_SECRETS + (PRIMARY_KEY,):
            assert secret not in text
