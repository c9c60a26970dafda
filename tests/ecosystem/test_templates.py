"""Text from the service never runs: a law over generated text that Jinja would evaluate (expressions, statements,
comments, raw blocks, each carrying a marker command ``lookup('ansible.builtin.pipe', 'touch <marker>')``), seeded
into the account as monitor names, incident causes and comments, a URL's path or query and a request header's value,
then read by every shipped playbook that reads the service, run as docs/playbooks.md says, by the inventory plugin
under ``ansible-inventory`` (``compose``, ``groups`` and ``keyed_groups`` over those texts), and by
acknowledge_incident given events as ansible-rulebook gives them (extra vars in a YAML file, ``-e @file``) carrying
the texts in ``monitor_name``, ``monitor`` and ``incident``.

ansible-core (2.19 and later) evaluates every string of extra vars, playbooks and inventory files as a template, and
none of module results or of an inventory plugin's values. The law: no marker file is ever made, and each text comes
out as it is, where a playbook prints a name, in the export file, in the imported monitors, in a composed variable.

demo.yml and awx_credential_type.yml are left out: they read nothing from the service (the demo applies monitors of
its own; awx_credential_type talks to AWX only). The rulebook acknowledge_offline, under the real ansible-rulebook,
is tests/eda/test_rulebook.py's.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import sys
import tempfile
import uuid

import pytest
import yaml
from hypothesis import example, given, strategies as st

from ansible.inventory.group import to_safe_group_name
from ansible_collections.uptime.monitoring.plugins.module_utils._incident import INCIDENT_RESOURCE
from ecosystem_support import APPENDED, OTHER_KEY, REPO_ROOT, create_incident, create_monitor, monitors_by_name, plain, records, stamp

sys.path.append(os.path.join(REPO_ROOT, 'tests', 'laws'))
from laws import budget, holds  # noqa: E402  pylint: disable=wrong-import-position

ACKNOWLEDGE = 'uptime.monitoring.acknowledge_incident'
RULESET = 'Acknowledge the incidents of monitors that go offline'
RULE = 'Acknowledge the incident of a monitor that went offline'

# Where a text holds its marker command: replaced, per field, by a file of the example's marker directory.
MARKER = 'MARKER'
# The longest marker path a text must make room for (names hold 128 characters).
MARKER_ROOM = 24
COMMAND = "lookup('ansible.builtin.pipe', 'touch MARKER')"
# A URL holds no white space: the shell's ${IFS} stands for it.
URL_COMMAND = "lookup('ansible.builtin.pipe','touch${IFS}MARKER')"
# Each with COMMAND in it, spaced and compact (for a URL). An evaluation runs it (expression, statement), drops it
# (comment), or prints a template that a second evaluation would run (raw).
SHAPES = [
    ('{{ %s }}', '{{%s}}'),
    ('{{- %s -}}', '{{-%s-}}'),
    ('{{ (%s) | string }}', '{{(%s)|string}}'),
    ('{%% set x = %s %%}', '{%%set(x)=%s%%}'),
    ('{%% if %s %%}{%% endif %%}', '{%%if(%s)%%}{%%endif%%}'),
    ('{%%- for x in [%s] -%%}{{ x }}{%% endfor %%}', '{%%for(x)in[%s]%%}{{x}}{%%endfor%%}'),
    ('{# %s #}', '{#%s#}'),
    ('{%% raw %%}{{ %s }}{%% endraw %%}', '{%%raw%%}{{%s}}{%%endraw%%}'),
    ('{%% raw %%}{%% set x = %s %%}{%% endraw %%}', '{%%raw%%}{%%if(%s)%%}{%%endif%%}{%%endraw%%}'),
]
# Between them: what a name may hold, quotes, backslashes, lone braces and percent signs included.
PLAIN = st.text(st.sampled_from('abz09 -_.:\'"\\{}%#()éß€'), max_size=6)
URL_PLAIN = st.text(st.sampled_from("abz09-_.:'{}%()$!*,;~"), max_size=6)
LIMITS = {'name': 120, 'cause': 255, 'comment': 1024, 'header': 256, 'url': 1500}
# The marker file of each field: the one made names the field whose text ran.
LETTERS = {'name': 'n', 'cause': 'c', 'comment': 'm', 'header': 'h', 'url': 'u'}


@st.composite
def template_text(draw, field):
    """Plain text and shapes, as long as the field holds (one shape at least), without white space at the ends."""
    compact = field == 'url'
    text = ''
    for shape in draw(st.lists(st.sampled_from(SHAPES), min_size=1, max_size=4)):
        part = draw(URL_PLAIN if compact else PLAIN) + shape[compact] % (URL_COMMAND if compact else COMMAND)
        if text and len((text + part).replace(MARKER, 'x' * MARKER_ROOM)) > LIMITS[field]:
            break
        text += part
    text = (text + draw(URL_PLAIN if compact else PLAIN)).strip()
    if compact:  # in the path, or the value of a query parameter
        text = draw(st.sampled_from(['x/', '?q='])) + text
    return text


TEXTS = st.fixed_dictionaries({field: template_text(field) for field in LIMITS})
# The monitor named in the issue, whose incident was already acknowledged: the old acknowledge_incident read its
# name from the event.
ISSUE_43 = {'name': "db {{ lookup('ansible.builtin.pipe', 'id > MARKER') }}", 'cause': 'Timeouts',
            'comment': 'Looking', 'header': 'prod', 'url': 'x/health'}


@pytest.fixture
def markers():
    """A directory for the marker files, with a short path: it goes into names of 128 characters."""
    path = tempfile.mkdtemp(prefix='tpl', dir='/tmp')
    assert len(os.path.join(path, 'n')) <= MARKER_ROOM, path
    yield path
    shutil.rmtree(path)


class Account:
    """The texts of an example with their markers (a file per field), and the account they are seeded into."""

    def __init__(self, emulator, texts, markers):
        self.emulator = emulator
        self.text = {field: text.replace(MARKER, os.path.join(markers, LETTERS[field])) for field, text in texts.items()}
        # The emulator's own page answers (query) or not (path): health_check resolves or acknowledges.
        self.url = emulator.url + '/_emulator/' + self.text['url']
        # a holds the header, k's incident is acknowledged: each on the emulator's address, one inventory host
        # (127.0.0.1, reached locally).
        self.names = {'a': self.text['name'] + ' a', 'b': self.text['name'] + ' b', 'k': self.text['name']}
        self.ids, self.incidents, self.runs = {}, {}, []

    def seed(self):
        for key, name in self.names.items():
            fields = {'request_headers': [{'key': 'X-Note', 'value': self.text['header']}]} if key == 'a' else {}
            self.ids[key] = create_monitor(self.emulator, name, url=self.url, **fields)['id']
            acknowledged = {'acknowledged_at': stamp(300)} if key == 'k' else {}
            self.incidents[key] = create_incident(self.emulator, self.ids[key], stamp(600), cause=self.text['cause'],
                                                  comment=self.text['comment'], **acknowledged)['id']
        assert sorted(map(held, monitors_by_name(self.emulator).values())) == self.monitors()
        return self

    def monitors(self):
        """Name, URL and request headers of each monitor, sorted."""
        return sorted((name, self.url, [{'key': 'X-Note', 'value': self.text['header']}] if key == 'a' else [])
                      for key, name in self.names.items())

    def incident_texts(self):
        return sorted((name, self.text['cause'], self.text['comment']) for name in self.names.values())

    def incident(self, key):
        return self.emulator.api('GET', '/api/v1/incidents/%d' % self.incidents[key]).json['data']

    def playbook(self, ansible, *args, **options):
        """Run a playbook; the law checks that no text ran before it checks that the run succeeded."""
        run = ansible.playbook(*args, check=False, **options)
        self.runs.append((run.rc, run.output))
        return run

    def event(self, ansible, key, event_type):
        """``-e @file``: extra vars as ansible-rulebook's run_playbook writes them for an event of ``key``'s incident,
        its monitor and incident as the event source shows them."""
        view = INCIDENT_RESOURCE.record_view(self.incident(key))
        uptime = {'type': event_type, 'kind': 'incident', 'status': view['status'], 'previous_status': None,
                  'at': view['started_at'], 'incident_id': view['id'], 'monitor_id': view['monitor_id'],
                  'monitor_name': view['monitor_name'], 'incident': view, 'monitor': view['monitor'], 'existing': False,
                  'flapped': False, 'late': False, 'seen_at': view['started_at'], 'api_url': self.emulator.url}
        assert (uptime['monitor_name'], uptime['monitor']['name'], view['cause']) == (self.names[key], self.names[key], self.text['cause'])
        event = {'uptime': uptime, 'meta': {'source': {'name': 'phpUptime transitions', 'type': 'uptime.monitoring.events'},
                                            'received_at': datetime.datetime.now(datetime.timezone.utc).isoformat(),
                                            'uuid': str(uuid.uuid4())}}
        extra_vars = {'ansible_eda': {'ruleset': RULESET, 'rule': RULE, 'event': event}}
        return '@' + ansible.write('%s-event.yml' % key, yaml.dump(extra_vars))


PRINTED = re.compile(r'^\s*(?:"msg": )?("(?:[^"\\]|\\.)*"),?$', re.MULTILINE)


def printed(run, message, start=False):
    """``message`` when the run printed it as a string of a result (JSON, as the default callback prints them), whole
    or (``start``) at the start of one; else every such string it printed."""
    encoded = json.dumps(message, ensure_ascii=False)
    if (encoded[:-1] if start else encoded) in run.output:
        return message
    return [json.loads(found) for found in PRINTED.findall(run.output)]


def held(monitor):
    """What a monitor holds of the texts."""
    return monitor['name'], monitor['url'], monitor.get('request_headers') or []


def appended(comment):
    """A comment and the note appended to it, or the comment when none was."""
    match = APPENDED.fullmatch(comment or '')
    return match.groups() if match else comment


def acknowledge_by_hand(ansible, account):
    account.seed()
    run = account.playbook(ansible, ACKNOWLEDGE, '-e', 'uptime_monitor_id=%d' % account.ids['b'])
    b = account.incident('b')
    said = "Incident %d of monitor '%s' is acknowledged." % (account.incidents['b'], account.names['b'])
    return [('the message names the monitor', said, printed(run, said)),
            ('the incident is acknowledged, its cause kept', ('acknowledged', account.text['cause']), (b['status'], b['cause'])),
            ('its comment is kept, the note appended', account.text['comment'], appended(b['comment'])[0])]


def acknowledge_events(ansible, account):
    """Both paths: the event's monitor has an unacknowledged incident (a), or none (k's was acknowledged)."""
    account.seed()
    opened = account.playbook(ansible, ACKNOWLEDGE, '-e', account.event(ansible, 'a', 'incident_opened'))
    none = account.playbook(ansible, ACKNOWLEDGE, '-e', account.event(ansible, 'k', 'incident_acknowledged'))
    a, k = account.incident('a'), account.incident('k')
    acknowledged = "Incident %d of monitor '%s' is acknowledged." % (account.incidents['a'], account.names['a'])
    nothing = "Monitor '%s' has no unacknowledged incident: nothing to acknowledge." % account.names['k']
    return [('the message names the monitor of the incident', acknowledged, printed(opened, acknowledged)),
            ('the message names the monitor without one', nothing, printed(none, nothing)),
            ('the incident is acknowledged', 'acknowledged', a['status']),
            ('its comment is kept, the note appended', (account.text['comment'], 'Acknowledged by Event-Driven Ansible: ' + RULE),
             appended(a['comment'])),
            ('the acknowledged one is left as it was', (account.text['cause'], account.text['comment']), (k['cause'], k['comment']))]


def respond_to_incident(ansible, account):
    account.seed()
    run = account.playbook(ansible, 'uptime.monitoring.respond_to_incident', '-e', 'uptime_incident_id=%d' % account.incidents['a'],
                           '-e', 'uptime_incident_action=resolve')
    a = account.incident('a')
    said = 'Incident %d of %s (started ' % (account.incidents['a'], account.names['a'])
    return [('the message names the monitor', said, printed(run, said, start=True)),
            ('the incident is resolved, its cause and comment kept', ('resolved', account.text['cause'], account.text['comment']),
             (a['status'], a['cause'], a['comment']))]


def export_account(ansible, account):
    account.seed()
    account.playbook(ansible, 'uptime.monitoring.export_account', '-e', 'uptime_export_file=account.yml')
    with open(os.path.join(ansible.workdir, 'account.yml'), encoding='utf-8') as handle:
        export = yaml.safe_load(handle)
    return [('the monitors with their URL and header', account.monitors(), sorted(map(held, export['uptime_monitors']))),
            ('the incidents with their monitor, cause and comment', account.incident_texts(), sorted(
                (incident['monitor'], incident['cause'], incident['comment']) for incident in export['uptime_incidents']))]


def import_account(ansible, account):
    """A file as export_account writes it (the first monitor's credentials masked), imported into the other account."""
    monitors = [{'name': name, 'url': url, 'interval': 300, 'request_headers': headers} for name, url, headers in account.monitors()]
    monitors[0].update(request_auth_username='uptime', request_auth_password='********')
    name = monitors[0]['name']
    export = {'uptime_monitors': monitors, 'uptime_monitors_masked': {name: ['request_auth_username', 'request_auth_password']},
              'uptime_incidents': [{'monitor': monitor, 'started_at': '2026-01-10T08:00:00Z', 'ended_at': '2026-01-10T09:00:00Z',
                                    'cause': cause, 'comment': comment} for monitor, cause, comment in account.incident_texts()]}
    ansible.write('account.yml', yaml.safe_dump(export, allow_unicode=True, sort_keys=False))
    run = account.playbook(ansible, 'uptime.monitoring.import_account', '-e', 'uptime_import_file=account.yml', api_key=OTHER_KEY)
    said = ("monitor '%s' was applied without request_auth_username, request_auth_password: masked in the export, and nothing "
            "in the account stands for them" % name)
    return [('the monitor imported without its credentials is named', said, printed(run, said)),
            ('the monitors with their URL and header', account.monitors(), sorted(map(held, monitors_by_name(account.emulator, OTHER_KEY).values()))),
            ('the incidents with their monitor, cause and comment', account.incident_texts(), sorted(
                (incident['monitor']['name'], incident['cause'], incident['comment'])
                for incident in records(account.emulator, '/api/v1/incidents', OTHER_KEY)))]


PLUGIN = {'plugin': 'uptime.monitoring.monitors'}


def health_check(ansible, account):
    """As docs/inventory.md's rule runs it when a monitor goes offline: the event is among the extra vars too."""
    account.seed()
    run = account.playbook(ansible, 'uptime.monitoring.health_check', '-e', 'uptime_health_acknowledge=true', '-e', 'uptime_health_resolve=true',
                           '-e', account.event(ansible, 'b', 'incident_opened'), inventory=ansible.write('health.uptime.yml', yaml.safe_dump(PLUGIN)))
    note = 'Health check: %s ' % account.url
    comment = appended(account.incident('b')['comment'])
    return [('the report names each monitor and its URL', '%s (%s) ' % (name, account.url), printed(run, '%s (%s) ' % (name, account.url), start=True))
            for name in account.names.values()] + [
        ("the incident's comment is kept, the note naming the URL appended", (account.text['comment'], note),
         (comment[0], comment[1][:len(note)]) if isinstance(comment, tuple) else comment)]


def rolling_deploy(ansible, account):
    account.seed()
    inventory = ansible.write('deploy.uptime.yml', yaml.safe_dump(dict(PLUGIN, groups={'webservers': 'uptime_monitors | length > 0'})))
    run = account.playbook(ansible, 'uptime.monitoring.rolling_deploy', '-e', 'deploy_hosts=webservers', inventory=inventory)
    paused = sorted(int(entry['path'].rsplit('/', 1)[1]) for entry in account.emulator.writes() if entry['form'].get('pause') == '1')
    return [('each monitor is held, and shown by name', sorted(account.names.values()), sorted(set(re.findall(r'\(item=(.*)\) ?$', run.output, re.M)))),
            ('every monitor of the host is paused', sorted(account.ids.values()), paused),
            ('and resumed', [], [name for name, monitor in monitors_by_name(account.emulator).items() if monitor['status'] == 'paused'])]


def monitor_hosts(ansible, account):
    """Each host's monitor named and addressed by the inventory plugin's values: nothing to change."""
    account.seed()
    config = dict(PLUGIN, compose={'uptime_monitor_name': 'uptime_monitors[0].name', 'uptime_monitor_url': 'uptime_monitors[0].url'})
    account.emulator.clear_log()
    run = account.playbook(ansible, 'uptime.monitoring.monitor_hosts', '-e', 'uptime_hosts=uptime_offline',
                           inventory=ansible.write('hosts.uptime.yml', yaml.safe_dump(config)))
    said = '%s checks %s every 300 s' % (account.names['a'], account.url)
    return [('the monitor is shown by name and URL', said, printed(run, said)), ('nothing is written', [], account.emulator.writes())]


def inventory(ansible, account):
    account.seed()
    config = dict(PLUGIN, compose={'shown_name': 'uptime_monitors[0].name', 'shown_url': 'uptime_monitors[0].url'},
                  groups={'named': "uptime_monitors | map(attribute='name') | select('search', 'pipe') | list | length == 3"},
                  keyed_groups=[{'key': "uptime_monitors | map(attribute='name') | list", 'prefix': 'name'}])
    # Keyed groups are named with what a variable's name may not hold replaced (else Ansible warns of each).
    listed = ansible.inventory(ansible.write('shown.uptime.yml', yaml.safe_dump(config)), '--list', check=False,
                               env={'ANSIBLE_TRANSFORM_INVALID_GROUP_CHARS': 'silently'})
    account.runs.append((listed.returncode, listed.stdout + listed.stderr))
    found = plain(json.loads(listed.stdout or '{}'))
    host = found.get('_meta', {}).get('hostvars', {}).get('127.0.0.1', {})
    keyed = {to_safe_group_name('name_' + name, force=True, silent=True) for name in account.names.values()}
    return [('the composed name and URL', (account.names['a'], account.url), (host.get('shown_name'), host.get('shown_url'))),
            ('the monitors', sorted(account.names.values()), sorted(monitor['name'] for monitor in host.get('uptime_monitors', []))),
            ('the group of a condition over the names', ['127.0.0.1'], found.get('named', {}).get('hosts')),
            ('a keyed group per name', {group: ['127.0.0.1'] for group in keyed}, {group: found.get(group, {}).get('hosts') for group in keyed})]


# Per playbook, how docs/playbooks.md (docs/inventory.md, docs/eda.md) runs it against a seeded account, and what it
# shows of the texts.
RUNS = {'acknowledge_incident': acknowledge_by_hand, 'acknowledge_incident, events': acknowledge_events,
        'respond_to_incident': respond_to_incident, 'export_account': export_account, 'import_account': import_account,
        'health_check': health_check, 'rolling_deploy': rolling_deploy, 'monitor_hosts': monitor_hosts,
        'ansible-inventory': inventory}


@pytest.mark.parametrize('playbook', list(RUNS))
@budget(2)
@given(texts=TEXTS)
@example(texts=ISSUE_43).via('issue 43 item 1: a monitor named to run id, its incident acknowledged, in the event')
def test_text_from_the_service_never_runs_and_comes_out_as_it_is(ansible, emulator, markers, playbook, texts):
    emulator.wait_idle()
    emulator.reset()
    for name in os.listdir(markers):  # left by an earlier example that broke the law: shrinking replays
        os.unlink(os.path.join(markers, name))
    account = Account(emulator, texts, markers)
    checks = RUNS[playbook](ansible, account)
    holds(os.listdir(markers) == [], 'no text from the service runs', playbook=playbook, ran=sorted(os.listdir(markers)), texts=account.text)
    for rc, output in account.runs:
        holds(rc == 0, 'the run succeeds', playbook=playbook, texts=account.text, output=output[-4000:])
    for what, expected, got in checks:
        holds(got == expected, 'the text comes out as it is: %s' % what, playbook=playbook, expected=expected, got=got, texts=account.text)
