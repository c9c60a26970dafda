# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source under the real ansible-rulebook, against the emulator (./scripts/test.sh -s eda).

ansible-rulebook loads uptime.monitoring.events from the collection as users install it (built and installed
with ansible-galaxy: conftest.py; ANSIBLE_COLLECTIONS_PATH names only that install), with only the environment
that the EDA credential type of extras/eda/ injects. The emulator plays the service and
its checker (POST /_emulator/check). Each transition is driven, then the rule's action (a debug line that
names the transition and its uuid) is awaited: exactly one action per transition, none twice, none lost
across a restart or injected faults. The latency from each transition to its action, and the requests per
poll, are printed and written to tests/output/eda/figures.json (docs/performance.md quotes them); they are
not asserted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import jinja2
import pytest
import yaml
from emulator.control import PRIMARY_KEY
from state_versions import EARLIER_SHAPES, written_by

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CREDENTIAL_TYPE = os.path.join(REPO_ROOT, 'extras', 'eda', 'credential_type.yml')
OUTPUT = os.path.join(REPO_ROOT, 'tests', 'output', 'eda')
BIN = os.path.dirname(sys.executable)
SOURCE_IN_COLLECTION = os.path.join('ansible_collections', 'uptime', 'monitoring', 'extensions', 'eda', 'plugins',
                                    'event_source', 'events.py')
INTERVAL = 1
ACTION = re.compile(r'TRANSITION (?P<type>\S+) monitor=(?P<monitor>\S+) incident=(?P<incident>\S+) '
                    r'(?P<previous>\S+)->(?P<status>\S+) uuid=(?P<uuid>\S+) found_on_start=(?P<found_on_start>\S+)')

MONITOR = {'url': 'https://web.example.com', 'interval': '60', 'request_method': 'GET',
           'alert_condition': 'url_unavailable'}
FIGURES = {'latency': [], 'requests_per_poll': {}}


def make_rulebook(**source_args):
    rule_source = dict({'interval': INTERVAL}, **source_args)
    return [{
        'name': 'Every transition of the phpUptime service',
        'hosts': 'all',
        'sources': [{'name': 'uptime', 'uptime.monitoring.events': rule_source}],
        'rules': [{
            'name': 'Record the transition',
            'condition': 'event.uptime.type is defined',
            'action': {'debug': {'msg': 'TRANSITION {{ event.uptime.type }} monitor={{ event.uptime.monitor_id }} '
                                        'incident={{ event.uptime.incident_id }} {{ event.uptime.previous_status }}->'
                                        '{{ event.uptime.status }} uuid={{ event.meta.uuid }} '
                                        'found_on_start={{ event.uptime.found_on_start }}'}},
        }],
    }]


def credential_environment(url, api_key):
    """The environment the EDA credential type injects, rendered from its injectors as EDA renders them."""
    with open(CREDENTIAL_TYPE, encoding='utf-8') as handle:
        credential_type = yaml.safe_load(handle)
    inputs = {'url': url, 'api_key': api_key, 'skip_tls_verify': False, 'account_timezone': ''}
    missing = set(credential_type['inputs']['required']) - set(inputs)
    assert not missing
    return {name: jinja2.Template(template).render(**inputs) for name, template in credential_type['injectors']['env'].items()}


class Rulebook:
    """One ansible-rulebook process; its output lines are kept with the time each arrived."""

    def __init__(self, workdir, rulebook, env, extra_args=(), variables=None):
        self.lines = []
        self.lock = threading.Lock()
        path = rulebook if isinstance(rulebook, str) else os.path.join(workdir, 'rulebook.yml')  # str: a collection's, by name
        inventory, vars_file = os.path.join(workdir, 'inventory.yml'), os.path.join(workdir, 'vars.yml')
        localhost = {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}
        files = {path: rulebook, inventory: {'all': {'hosts': {'localhost': localhost}}}, vars_file: variables}
        for name, data in files.items():
            if data and not isinstance(data, str):
                with open(name, 'w', encoding='utf-8') as handle:
                    yaml.safe_dump(data, handle)
        command = [os.path.join(BIN, 'ansible-rulebook'), '-r', path, '-i', inventory] + (['--vars', vars_file] if variables else [])
        command += list(extra_args)
        self.process = subprocess.Popen(command, cwd=workdir, env=env, stdin=subprocess.DEVNULL,  # pylint: disable=consider-using-with
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            with self.lock:
                self.lines.append((time.monotonic(), line.rstrip('\n')))

    def output(self):
        with self.lock:
            return '\n'.join(line for dummy, line in self.lines)

    def actions(self):
        with self.lock:
            return [(moment, ACTION.search(line).groupdict()) for moment, line in self.lines if ACTION.search(line)]

    def wait_until(self, found, count, what, timeout=45):
        """``found()`` once it holds ``count`` items; fails when ansible-rulebook ends or the time is up."""
        deadline = time.monotonic() + timeout
        while len(found()) < count:
            if self.process.poll() is not None:
                raise AssertionError('ansible-rulebook ended (rc %s):\n%s' % (self.process.returncode, self.output()))
            if time.monotonic() > deadline:
                raise AssertionError('expected %d %s, got %d:\n%s' % (count, what, len(found()), self.output()))
            time.sleep(0.05)
        return found()

    def wait_actions(self, count, timeout=45):
        return self.wait_until(self.actions, count, 'actions', timeout)

    def wait_output(self, pattern, count, timeout=45):
        """The matches of ``pattern`` in the output, once there are ``count`` of them."""
        return self.wait_until(lambda: re.findall(pattern, self.output()), count, 'lines matching %r' % pattern, timeout)

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.reader.join(5)


@pytest.fixture
def env(emulator, tmp_path, installed_collections):
    """Only what ansible-rulebook needs, plus the credential's injected variables; the collection installed."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith(('UPTIME_', 'ANSIBLE_'))}
    environment.update(credential_environment(emulator.url, PRIMARY_KEY))
    environment['ANSIBLE_COLLECTIONS_PATH'] = installed_collections
    environment['PATH'] = BIN + os.pathsep + environment.get('PATH', '')
    environment['ANSIBLE_LOCAL_TEMP'] = str(tmp_path / 'ansible-tmp')
    environment['ANSIBLE_NOCOLOR'] = '1'
    return environment


@pytest.fixture
def running(tmp_path, env):
    started = []

    def start(rulebook, extra_args=(), variables=None):
        rulebook_process = Rulebook(str(tmp_path), rulebook, env, extra_args, variables)
        started.append(rulebook_process)
        return rulebook_process

    yield start
    for rulebook_process in started:
        rulebook_process.stop()
    os.makedirs(OUTPUT, exist_ok=True)
    with open(os.path.join(OUTPUT, 'figures.json'), 'w', encoding='utf-8') as handle:
        json.dump(FIGURES, handle, indent=2)


def create_monitor(emulator, name):
    answer = emulator.api('POST', '/api/v1/monitors', data=dict(MONITOR, name=name))
    assert answer.status == 201, answer.text
    return answer.json['data']['id']


def now_text(seconds=None):
    return time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))


def open_incident(emulator, monitor_id):
    answer = emulator.api('POST', '/api/v1/incidents', data={'monitor_id': monitor_id, 'started_at': now_text()})
    assert answer.status == 201, answer.text
    return answer.json['data']['id']


def put(emulator, path, **fields):
    """A change through the API: PUT to a record, POST to a list."""
    answer = emulator.api('PUT' if path[-1].isdigit() else 'POST', path, data=fields)
    assert answer.status in (200, 201), answer.text


def wait_polls(emulator, polls=2, timeout=60, path='/api/v1/incidents'):
    """Wait until the source has read ``path`` ``polls`` more times (its first poll is the baseline)."""
    def reads():
        return len([entry for entry in emulator.log() if entry['path'] == path and entry['method'] == 'GET'
                    and entry['status'] == 200])
    target = reads() + polls
    deadline = time.monotonic() + timeout
    while reads() < target:
        assert time.monotonic() < deadline, 'the source did not poll'
        time.sleep(0.1)


def expect(rulebook, seen, step, expected, name):
    """Drive ``step``, wait for ``expected`` actions ((type, monitor, incident, previous, status)), record latency."""
    time.sleep(1.05)  # timestamps have a resolution of one second: keep transitions of one record apart
    started = time.monotonic()
    step()
    actions = rulebook.wait_actions(seen + len(expected))
    new = actions[seen:]
    got = [(action['type'], action['monitor'], action['incident'], action['previous'], action['status'])
           for dummy, action in new]
    assert got == [tuple(str(part) for part in item) for item in expected], (name, got)
    FIGURES['latency'].append({'step': name, 'seconds': round(max(moment for moment, dummy in new) - started, 2)})
    return seen + len(expected)


def test_one_action_per_transition_and_nothing_lost_to_faults_or_a_restart(emulator, running, tmp_path):
    web = create_monitor(emulator, 'web')
    db = create_monitor(emulator, 'db')
    state_file = str(tmp_path / 'uptime-events.json')
    rulebook = running(make_rulebook(state_file=state_file))
    wait_polls(emulator)
    assert rulebook.actions() == []  # the first poll is a baseline
    # Without -v, ansible-rulebook shows a source's lines from WARNING up: the start is told there, the key never.
    rulebook.wait_output(r'WARNING - polling %s every %gs for incidents and monitors; the first poll records'
                         % (re.escape(emulator.url), INTERVAL), 1)
    assert PRIMARY_KEY not in rulebook.output()

    seen = 0
    seen = expect(rulebook, seen, lambda: emulator.check(web, 'online'),
                  [('monitor_status_changed', web, None, 'pending', 'online')], 'checker: pending -> online')
    incident = []
    seen = expect(rulebook, seen, lambda: incident.append(open_incident(emulator, web)),
                  [('incident_opened', web, 1, None, 'unresolved'),
                   ('monitor_status_changed', web, None, 'online', 'offline')], 'incident opened')
    seen = expect(rulebook, seen, lambda: put(emulator, '/api/v1/incidents/1', acknowledged_at=now_text()),
                  [('incident_acknowledged', web, 1, 'unresolved', 'acknowledged')], 'incident acknowledged')
    seen = expect(rulebook, seen, lambda: put(emulator, '/api/v1/incidents/1', ended_at=now_text()),
                  [('incident_resolved', web, 1, 'acknowledged', 'resolved'),
                   ('monitor_status_changed', web, None, 'offline', 'online')], 'incident resolved')
    seen = expect(rulebook, seen, lambda: put(emulator, '/api/v1/monitors/%d' % web, pause=1),
                  [('monitor_status_changed', web, None, 'online', 'paused')], 'pause')
    seen = expect(rulebook, seen, lambda: put(emulator, '/api/v1/monitors/%d' % web, pause=0),
                  [('monitor_status_changed', web, None, 'paused', 'online')], 'resume')
    # Every other sequence of transitions (flaps, deletions...) is the law's: tests/laws/test_event_source.py.

    # Requests per poll with 2 monitors and 3 incidents (1 ongoing): count the reads over a few quiet polls.
    emulator.clear_log()
    wait_polls(emulator, polls=4)
    reads = [entry['path'] for entry in emulator.log()]
    polls = reads.count('/api/v1/incidents')
    FIGURES['requests_per_poll']['2 monitors, 3 incidents (1 ongoing)'] = round(len(reads) / float(polls), 2)
    assert set(reads) == {'/api/v1/monitors', '/api/v1/incidents'}

    # Faults while transitions happen: a 429 with Retry-After, two 500s, a dropped connection, a cut answer.
    emulator.fault('status', status=429, retry_after=2, method='GET', path='/api/v1/monitors')
    emulator.fault('status', status=500, count=2, method='GET', path='/api/v1/incidents')
    emulator.fault('drop', method='GET', path='/api/v1/monitors')
    emulator.fault('truncated', method='GET', path='/api/v1/incidents')
    seen = expect(rulebook, seen, lambda: open_incident(emulator, db),
                  [('incident_opened', db, 2, None, 'unresolved'),
                   ('monitor_status_changed', db, None, 'pending', 'offline')], 'opened during 429/500/drop faults')
    # The faults of the monitor list delay only its sweep: the incidents (and the event) may come first.
    deadline = time.monotonic() + 30
    while emulator.faults():
        assert time.monotonic() < deadline, 'the source stopped polling: %s' % emulator.faults()
        time.sleep(0.1)
    faulted = [entry['fault'] for entry in emulator.log() if entry['fault']]
    assert sorted(faulted) == ['drop', 'status', 'status', 'status', 'truncated']

    # A restart with the state file: what happened while it was stopped is reported once, nothing earlier again.
    rulebook.stop()
    before_restart = [action for dummy, action in rulebook.actions()]
    assert len(before_restart) == seen
    assert len({action['uuid'] for action in before_restart}) == seen  # every transition its own uuid
    put(emulator, '/api/v1/incidents/2', ended_at=now_text())
    time.sleep(1.05)
    emulator.check(web, 'offline')  # the checker opens incident 3
    restarted = running(make_rulebook(state_file=state_file))
    actions = restarted.wait_actions(4)
    wait_polls(emulator, polls=3)
    got = sorted((action['type'], action['monitor'], action['incident'], action['previous'], action['status'])
                 for dummy, action in restarted.actions())
    assert got == sorted([('incident_resolved', str(db), '2', 'unresolved', 'resolved'),
                          ('monitor_status_changed', str(db), 'None', 'offline', 'online'),
                          ('incident_opened', str(web), '3', 'None', 'unresolved'),
                          ('monitor_status_changed', str(web), 'None', 'online', 'offline')])
    assert not {action['uuid'] for dummy, action in actions} & {action['uuid'] for action in before_restart}
    print('\nlatency from transition to action (interval %ss):' % INTERVAL)
    for figure in FIGURES['latency']:
        print('  %-40s %5.2f s' % (figure['step'], figure['seconds']))
    print('requests per poll: %s' % FIGURES['requests_per_poll'])


def test_only_what_happened_is_told_and_a_record_it_cannot_read_stops_nothing(emulator, running):
    """Issue 38: incidents recorded after the fact older than lookback are never sent; a monitor created paused is; a
    record the source cannot read is left out (one warning) while the others' events are sent."""
    web, jan, feb = (create_monitor(emulator, name) for name in ('web', 'jan', 'feb'))
    rulebook = running(make_rulebook(sweep_period=INTERVAL))
    wait_polls(emulator)

    def history_and_a_paused_monitor():  # as import_account records a history: ten and nine months ago
        for monitor_id, days in ((jan, 300), (feb, 270)):
            start = time.time() - days * 86400
            put(emulator, '/api/v1/incidents', monitor_id=monitor_id, started_at=now_text(start), ended_at=now_text(start + 1800))
        put(emulator, '/api/v1/monitors/%d' % create_monitor(emulator, 'new'), pause=1)
    seen = expect(rulebook, 0, history_and_a_paused_monitor, [('monitor_status_changed', 4, None, None, 'paused')], 'history')
    seen = expect(rulebook, seen, lambda: open_incident(emulator, web),
                  [('incident_opened', web, 3, None, 'unresolved'), ('monitor_status_changed', web, None, 'pending', 'offline')], 'opened')
    emulator.fault('record', count=10000, path='/api/v1/incidents', record=3, set={'started_at': 'soon'})
    seen = expect(rulebook, seen, lambda: emulator.check(feb, 'offline'),
                  [('incident_opened', feb, 4, None, 'unresolved'), ('monitor_status_changed', feb, None, 'pending', 'offline')],
                  'beside an unreadable record')
    wait_polls(emulator, polls=3)
    emulator.clear_faults()
    assert len(rulebook.actions()) == seen  # no history, and the unreadable ongoing incident is not taken for deleted
    assert len(re.findall(r'incident 3 cannot be read \(ValidationError in started_at\)', rulebook.output())) == 1


def test_persistence_drops_what_a_restart_sends_again(emulator, running, tmp_path):
    """emit_existing re-sends the ongoing incident and the offline monitor with their live uuids; persistence drops them."""
    web = create_monitor(emulator, 'web')
    emulator.check(web, 'online')  # emit_existing sends monitors that are not online
    variables = {'drools_db_file_path': str(tmp_path / 'h2' / 'rulebook'), 'drools_deduplication_window_size': 100}
    persistence = ['--persistence-id', '15', '--id', '1', '-v']  # -v: the engine says what it drops
    rulebook = running(make_rulebook(emit_existing=True), persistence, variables)
    wait_polls(emulator)
    assert rulebook.actions() == []
    open_incident(emulator, web)
    first = [action for dummy, action in rulebook.wait_actions(2)]
    wait_polls(emulator)
    rulebook.stop()

    again = running(make_rulebook(emit_existing=True), persistence, variables)
    # The engine logs what it drops when it gets to it, which a loaded machine may take a while to do.
    dropped = again.wait_output(r'Event (\S+) has already been processed once', len(first))
    wait_polls(emulator, polls=3)
    assert again.actions() == [], again.output()
    assert sorted(dropped) == sorted(action['uuid'] for action in first)
    # A new transition still gets through.
    time.sleep(1.05)
    put(emulator, '/api/v1/incidents/1', acknowledged_at=now_text())
    (dummy, action), = again.wait_actions(1)
    assert (action['type'], action['status']) == ('incident_acknowledged', 'acknowledged')


def test_a_refused_key_stops_ansible_rulebook_with_one_message(emulator, running, env):
    env['UPTIME_API_KEY'] = 'not-a-valid-key-4711'
    rulebook = running(make_rulebook())
    rulebook.process.wait(60)
    output = rulebook.output()
    assert rulebook.process.returncode != 0
    assert 'authentication failed: check api_key' in output
    assert 'not-a-valid-key-4711' not in output


def test_the_shipped_rulebook_acknowledges_the_incident_of_a_monitor_gone_offline(emulator, running, tmp_path):
    """The monitors' names hold a template (issue 43): run_playbook hands the event to the playbook as extra vars,
    which ansible-core evaluates as templates; the playbook reads the id alone, and the names come out as they are."""
    marker = tmp_path / 'ran'
    web_name, db_name = ("%s {{ lookup('ansible.builtin.pipe', 'touch %s') }}" % (name, marker) for name in ('web', 'db'))
    web = create_monitor(emulator, web_name)
    db = create_monitor(emulator, db_name)
    rulebook = running('uptime.monitoring.acknowledge_offline', variables={'uptime_events_interval': INTERVAL})
    wait_polls(emulator, path='/api/v1/monitors')  # the rulebook watches monitors only
    started = time.monotonic()
    incident_id = open_incident(emulator, web)
    deadline = started + 90
    while True:
        record = emulator.api('GET', '/api/v1/incidents/%d' % incident_id).json['data']
        if record['status'] == 'acknowledged':
            break
        assert time.monotonic() < deadline, rulebook.output()
        time.sleep(0.2)
    FIGURES['latency'].append({'step': 'offline -> incident acknowledged by the playbook',
                               'seconds': round(time.monotonic() - started, 2)})
    assert record['comment'].startswith('Acknowledged by Event-Driven Ansible')
    rulebook.wait_output(r'PLAY RECAP', 1)
    # Offline with its incident acknowledged already: the playbook names the monitor as the service returns it.
    put(emulator, '/api/v1/incidents', monitor_id=db, started_at=now_text(), acknowledged_at=now_text())
    rulebook.wait_output(r'PLAY RECAP', 2, 90)
    wait_polls(emulator, polls=3, path='/api/v1/monitors')
    assert not marker.exists()
    assert json.dumps("Incident %d of monitor '%s' is acknowledged." % (incident_id, web_name)) in rulebook.output()
    assert json.dumps("Monitor '%s' has no unacknowledged incident: nothing to acknowledge." % db_name) in rulebook.output()
    writes = [entry['path'] for entry in emulator.writes() if entry['path'].startswith('/api/v1/incidents/')]
    assert writes == ['/api/v1/incidents/%d' % incident_id]  # one playbook run for one transition, no write for db's
    assert shutil.which('java'), 'ansible-rulebook needs java on PATH'


def seed_account(emulator, monitors, ongoing, resolved):
    """``monitors`` monitors; the first ``ongoing`` have an ongoing incident, the next ``resolved`` a resolved one
    (ended between 50 and 20 minutes ago, within lookback)."""
    ids = [create_monitor(emulator, 'm%04d' % index) for index in range(monitors)]
    base = time.time() - 3000
    for index, monitor_id in enumerate(ids[:ongoing + resolved]):
        ended = {'ended_at': now_text(base + index * 10 + 5)} if index >= ongoing else {}
        fields = dict(monitor_id=monitor_id, started_at=now_text(base + index * 10), **ended)
        assert emulator.api('POST', '/api/v1/incidents', data=fields).status == 201
    return ids


def incident_pages(within, below):
    """Pages of 100 incidents read down to the first one that ended below the lookback floor: ``within`` are
    ongoing or ended within ``lookback`` before the service's clock, ``below`` ended earlier."""
    return -(-(within + (1 if below else 0)) // 100)


@pytest.mark.parametrize('monitors, ongoing, resolved', [(10, 2, 5), (250, 30, 150)])
def test_requests_per_poll_for_n_monitors_and_m_incidents(emulator, installed_collections, monitors, ongoing, resolved):
    """The share of the monitor list's ceil(N / 100) pages that one poll reads (the whole list once a sweep_period),
    and the incidents down to the first page that passes the lookback floor."""
    import runpy  # pylint: disable=import-outside-toplevel
    source = runpy.run_path(os.path.join(installed_collections, SOURCE_IN_COLLECTION))
    ids = seed_account(emulator, monitors, ongoing, resolved)
    poller = source['Poller'](source['parse_args']({'api_url': emulator.url, 'api_key': PRIMARY_KEY, 'lookback': 3600},
                                                   environ={}))
    emulator.clear_log()
    poller.poll()
    baseline = len(emulator.log())
    emulator.clear_log()
    poller.poll()
    quiet = len(emulator.log())
    # Up to five ongoing incidents resolved and five monitors flipped between two polls (each opening an incident).
    resolved_now = min(5, ongoing)
    for incident_id in range(1, resolved_now + 1):
        put(emulator, '/api/v1/incidents/%d' % incident_id, ended_at=now_text())
    for monitor_id in ids[-5:]:
        emulator.check(monitor_id, 'offline')
    emulator.clear_log()
    events = poller.poll()
    busy = len(emulator.log())
    transitions = 2 * resolved_now + 2 * 5  # each resolved incident's monitor came back online too
    assert len(events) == transitions
    settings = poller.settings
    monitor_pages = -(-(-(-monitors // 100)) * int(settings['interval']) // int(settings['sweep_period']))
    # A poll reads down to an hour before the service's clock: every resolved incident seeded ended within that
    # hour, in the quiet poll and in the busy one alike.
    assert quiet == monitor_pages + incident_pages(ongoing + resolved, 0)
    assert busy == monitor_pages + incident_pages(ongoing + resolved + 5, 0)
    key = '%d monitors, %d incidents (%d ongoing)' % (monitors, ongoing + resolved, ongoing)
    FIGURES['requests_per_poll'][key] = {'first poll': baseline, 'quiet poll': quiet,
                                         'poll with %d transitions' % transitions: busy}
    print('\nrequests per poll, %s: first %d, quiet %d, with %d transitions %d'
          % (key, baseline, quiet, transitions, busy))
    os.makedirs(OUTPUT, exist_ok=True)
    with open(os.path.join(OUTPUT, 'figures.json'), 'w', encoding='utf-8') as handle:
        json.dump(FIGURES, handle, indent=2)


def test_a_rotated_key_or_an_upgrade_carries_on_and_sends_what_happened_meanwhile(emulator, running, env, tmp_path):
    """Issue 56: the source is stopped; meanwhile the monitor goes offline (or online again), and either the state file
    is one that an earlier version wrote, or the account's key is rotated. Started again on the same state file, it
    carries on and sends the gap's events: migrated from versions 2 to 5 (they knew the account by its key), with no
    new baseline; from version 1, which named no account, by a catch-up, found on start."""
    # Imported here: the benchmark of the event source imports this file without the collection on its path.
    from ansible_collections.uptime.monitoring.plugins.module_utils._connection import account_fingerprint  # pylint: disable=import-outside-toplevel
    web = create_monitor(emulator, 'web')
    emulator.check(web, 'online')
    state_file = str(tmp_path / 'uptime-events.json')
    rulebook = running(make_rulebook(state_file=state_file))
    wait_polls(emulator)
    rulebook.stop()
    assert rulebook.actions() == []
    for index, case in enumerate(['version %s' % shape for shape in EARLIER_SHAPES] + ['rotated key']):
        time.sleep(1.05)  # timestamps have a resolution of one second: keep transitions of one record apart
        emulator.check(web, 'offline' if index % 2 == 0 else 'online')
        key = env['UPTIME_API_KEY']
        if case == 'rotated key':
            emulator.rotate_key(PRIMARY_KEY, 'test-key-rotated-5150')
            env['UPTIME_API_KEY'] = 'test-key-rotated-5150'
        else:
            with open(state_file, encoding='utf-8') as handle:
                state = json.load(handle)
            fingerprint = account_fingerprint({'api_url': emulator.url, 'api_key': key})
            with open(state_file, 'w', encoding='utf-8') as handle:
                json.dump(written_by(state, case[len('version '):], fingerprint), handle)
        try:
            restarted = running(make_rulebook(state_file=state_file))
            got = sorted((action['type'], action['monitor'], action['status'], action['found_on_start'])
                         for dummy, action in restarted.wait_actions(2))
            found_on_start = str(case == 'version 1')
            expected = [('incident_opened', str(web), 'unresolved', found_on_start), ('monitor_status_changed', str(web), 'offline', found_on_start)] \
                if index % 2 == 0 else [('incident_resolved', str(web), 'resolved', 'False'), ('monitor_status_changed', str(web), 'online', 'False')]
            assert got == expected, (case, got, restarted.output())
            wait_polls(emulator)
            assert len(restarted.actions()) == 2, (case, restarted.output())
            assert 'new baseline' not in restarted.output(), (case, restarted.output())
            assert ('catching up from the service' in restarted.output()) is (case == 'version 1'), (case, restarted.output())
            restarted.stop()
        finally:
            if case == 'rotated key':
                emulator.rotate_key('test-key-rotated-5150', PRIMARY_KEY)
                env['UPTIME_API_KEY'] = key


def test_a_start_without_state_catches_up_once_with_what_it_finds(emulator, running):
    """Issue 56: with catch_up and no state file (an activation without storage), the start sends what happened within
    lookback (the incident opened while nothing watched), the monitors offline now (also one whose incident is older
    than lookback) and the one paused, once, found on start; then the live transitions, not found on start."""
    web, api, old, quiet = (create_monitor(emulator, name) for name in ('web', 'api', 'old', 'quiet'))
    emulator.check(old, 'offline')
    emulator.clock(7200)  # old's incident is two hours old: history, though old is offline still
    emulator.check(api, 'online')
    emulator.check(quiet, 'online')
    put(emulator, '/api/v1/monitors/%d' % quiet, pause=1)
    emulator.check(web, 'offline')
    rulebook = running(make_rulebook(catch_up=True))
    got = sorted((action['type'], action['monitor'], action['status'], action['found_on_start'])
                 for dummy, action in rulebook.wait_actions(4))
    assert got == sorted([('incident_opened', str(web), 'unresolved', 'True'), ('monitor_status_changed', str(web), 'offline', 'True'),
                          ('monitor_status_changed', str(old), 'offline', 'True'),
                          ('monitor_status_changed', str(quiet), 'paused', 'True')]), rulebook.output()
    wait_polls(emulator)
    time.sleep(1.05)
    emulator.check(api, 'offline')
    later = sorted((action['type'], action['monitor'], action['found_on_start']) for dummy, action in rulebook.wait_actions(6)[4:])
    assert later == [('incident_opened', str(api), 'False'), ('monitor_status_changed', str(api), 'False')], rulebook.output()
    wait_polls(emulator)
    assert len(rulebook.actions()) == 6, rulebook.output()
