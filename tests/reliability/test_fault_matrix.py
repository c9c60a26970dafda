# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fault matrix: every module, every operation, every fault the emulator can inject.

Each cell runs a module in-process against the emulator with one fault queued on the
request that carries the operation (the search, the POST, the PUT, the DELETE, the
second page of a list), then classifies what happened:

* ``recovered``: the module succeeded and the service holds exactly what was asked.
* ``failed``: the module failed with one clear line (method, path, status and the
  service's message when there was one) and the service is as it was before.
* ``failed, may be applied``: the module failed, the write did reach the service, and
  the message says the outcome is unknown.
* ``failed, write reported``: the module failed after a write the service accepted
  (a create whose pause then failed), reports ``changed`` and names what it wrote.

Anything else fails the test: a traceback, a success that did not reach the asked
state (or a write that does not report ``changed``), an unclear message, or a failure
that hides a change the service made. After every cell the same task is run again
without faults: it must succeed, reach the asked state, change nothing when the first
run had reached it, and never create a duplicate. A POST whose answer was lost is never
sent again in the same run: the module reads the record back by its natural key (this
row is what proves it for a single lost POST of each module; test_lost_answers.py keeps
the cases the matrix has no cell for).

Rows: ``as sent`` (the fault answers instead of the service), ``answer lost`` (writes
only: the service did the work, then the fault replaced its answer), ``fault persists``
(the fault answers every attempt).

The TLS columns run against the HTTPS emulator (``ca_path`` set to its CA): the
connection that would carry the operation meets a refused handshake, an expired
certificate or a certificate for another host name. A handshake comes before the
request, so the fault is placed by counting connections: a fault-free run of the same
scenario on the same seed (once per scenario) tells how many requests come before the
faulted one. They run "as sent" only: a failed handshake is never tried again (each cell
fails when the operation reaches the service after it), so a fault that persists would
meet the same single attempt.
"""

from __future__ import annotations

import re

import pytest

import known_issues
from emulator.server import path_within
from matrix_settings import RETRIES, SLOW_SECONDS
from reliability_support import INCIDENTS, MONITORS, list_all, record, run_module, seed_incident, seed_monitor, snapshot, utc_ago

from ansible_collections.uptime.monitoring.plugins.module_utils._client import UptimeClient
from ansible_collections.uptime.monitoring.plugins.modules import incident, incident_info, monitor, monitor_info, monitors

GROUP = 'fault_matrix'
# The client's own backoff between retries (random, from 0.25 s up) is divided by this
# to keep the matrix quick; waits the service asks for (Retry-After) stay as they are.
BACKOFF_SPEEDUP = 10

# column -> (fault spec, fragments a failure message must contain)
FAULTS = {
    '500': (dict(kind='status', status=500), ['HTTP 500', 'Server Error']),
    '502': (dict(kind='status', status=502), ['HTTP 502', 'Bad Gateway']),
    '503': (dict(kind='status', status=503), ['HTTP 503', 'Service Unavailable']),
    '429 + Retry-After': (dict(kind='status', status=429, retry_after=1), ['HTTP 429', 'Too Many Attempts']),
    'slower than timeout': (dict(kind='delay', seconds=SLOW_SECONDS), ['timeout']),
    'dropped connection': (dict(kind='drop'), ['connection']),
    'HTML page': (dict(kind='html'), ['text/html']),
    'broken JSON': (dict(kind='badjson'), ['JSON']),
    'truncated body': (dict(kind='truncated'), []),
    # A proxy's page, or a wrong path in api_url: not the service's answer for a missing record.
    '404 from a proxy': (dict(kind='html', status=404), ['HTTP 404', 'api_url must be the base address']),
}
# column -> (handshake fault of the HTTPS emulator, fragments a failure message must contain)
TLS_FAULTS = {
    'handshake refused': ('refuse', ['refused the TLS handshake']),
    'certificate expired': ('expired', ['certificate', 'has expired', 'validate_certs']),
    'wrong host name': ('wrong-host', ['certificate', 'is not valid for', 'validate_certs']),
}
# A message that admits the write may have been applied.
MAY_BE_APPLIED = re.compile(r'may have (been )?applied|may have (been )?(created|changed|deleted)|outcome is unknown',
                            re.IGNORECASE)
# A message that names the write the task made before it failed.
WRITE_REPORTED = re.compile(r'before this failure, the task (created|updated) \w+')


# -- scenarios ---------------------------------------------------------------------------

class Scenario:
    """One operation of one module: how to set it up, run it, fault it and check its end state."""

    def __init__(self, module, operation, main, method, path, setup, args, verify, skip=0, write=False,
                 persists=False):
        self.module = module
        self.operation = operation
        self.main = main
        self.method = method
        self.path = path
        self.setup = setup
        self.args = args
        self.verify = verify
        self.skip = skip  # matching requests let through before the faulted one
        self.write = write
        self.persists = persists

    @property
    def name(self):
        return '%s %s' % (self.module, self.operation)


def fail(run):
    raise AssertionError(repr(run))


def only_monitors(emu, expected):
    """The account holds exactly ``expected`` ({name: interval}), no duplicate."""
    found = [(record['name'], int(record['interval'])) for record in list_all(emu, MONITORS)]
    assert sorted(found) == sorted(expected.items()), found


def only_paused(emu, names):
    """The account holds exactly the monitors ``names``, each paused."""
    found = [(record['name'], record['status']) for record in list_all(emu, MONITORS)]
    assert sorted(found) == [(name, 'paused') for name in sorted(names)], found


def seed_alpha(emu):
    return {'id': seed_monitor(emu, 'alpha')['id']}


def seed_alpha_behind_a_page(emu):
    """'alpha' on the second page of a search for 'alpha' (100 newer monitors match too)."""
    ctx = seed_alpha(emu)
    for index in range(100):
        seed_monitor(emu, 'alpha-%03d' % index)
    return ctx


def seed_101(emu):
    for index in range(101):
        seed_monitor(emu, 'm%03d' % index)
    return {}


def seed_25(emu):
    for index in range(25):
        seed_monitor(emu, 'm%03d' % index)
    return {}


def seed_incident_ctx(emu, with_incident=True):
    mid = seed_monitor(emu, 'shop')['id']
    ctx = {'mid': mid, 'started': utc_ago(hours=2)}
    if with_incident:
        ctx['iid'] = seed_incident(emu, mid, ctx['started'], cause='db')['id']
    return ctx


def seed_25_incidents(emu):
    mid = seed_monitor(emu, 'shop')['id']
    for index in range(25):
        seed_incident(emu, mid, utc_ago(hours=60 - 2 * index), ended_at=utc_ago(hours=59 - 2 * index),
                      cause='cause %d' % index)
    return {'mid': mid}


def only_incidents(emu, expected):
    """The account holds exactly ``expected`` (a list of causes), no duplicate."""
    found = [record['cause'] for record in list_all(emu, INCIDENTS)]
    assert sorted(found) == sorted(expected), found


def unchanged(expected_monitors):
    def verify(emu, run, ctx):  # pylint: disable=unused-argument
        assert run.result.get('changed') is False, run
        only_monitors(emu, expected_monitors)
    return verify


ALPHA = {'name': 'alpha', 'url': 'https://alpha.example.com/health', 'interval': 60}
M101 = {'m%03d' % index: 60 for index in range(101)}

SCENARIOS = [
    # monitor
    Scenario('monitor', 'find', monitor.main, 'GET', MONITORS, seed_alpha, lambda ctx: dict(ALPHA),
             unchanged({'alpha': 60}), persists=True),
    Scenario('monitor', 'find, 2 pages', monitor.main, 'GET', MONITORS, seed_alpha_behind_a_page,
             lambda ctx: dict(ALPHA), unchanged(dict({'alpha': 60}, **{'alpha-%03d' % i: 60 for i in range(100)})),
             skip=1),
    Scenario('monitor', 'create', monitor.main, 'POST', MONITORS, lambda emu: {}, lambda ctx: dict(ALPHA),
             lambda emu, run, ctx: only_monitors(emu, {'alpha': 60}), write=True, persists=True),
    # The pause is an update right after the create: its fault comes after a write the service accepted.
    Scenario('monitor', 'create paused', monitor.main, 'PUT', MONITORS + '/', lambda emu: {},
             lambda ctx: dict(ALPHA, paused=True), lambda emu, run, ctx: only_paused(emu, ['alpha']), write=True,
             persists=True),
    Scenario('monitor', 'update', monitor.main, 'PUT', MONITORS + '/', seed_alpha,
             lambda ctx: dict(ALPHA, interval=300),
             lambda emu, run, ctx: only_monitors(emu, {'alpha': 300}), write=True, persists=True),
    Scenario('monitor', 'delete', monitor.main, 'DELETE', MONITORS + '/', seed_alpha,
             lambda ctx: dict(name='alpha', state='absent'),
             lambda emu, run, ctx: only_monitors(emu, {}), write=True, persists=True),
    # monitor_info
    Scenario('monitor_info', 'find', monitor_info.main, 'GET', MONITORS + '/', seed_alpha,
             lambda ctx: dict(id=ctx['id']),
             lambda emu, run, ctx: [m['name'] for m in run.result['monitors']] == ['alpha'] or fail(run)),
    Scenario('monitor_info', 'list, 3 pages', monitor_info.main, 'GET', MONITORS, seed_25,
             lambda ctx: dict(per_page=10),
             lambda emu, run, ctx: sorted(m['name'] for m in run.result['monitors']) == sorted(
                 'm%03d' % i for i in range(25)) or fail(run), skip=1, persists=True),
    # incident
    Scenario('incident', 'find', incident.main, 'GET', INCIDENTS, seed_incident_ctx,
             lambda ctx: dict(monitor_id=ctx['mid'], started_at=ctx['started'], cause='db'),
             lambda emu, run, ctx: (run.result['changed'] is False or fail(run)) and only_incidents(emu, ['db'])),
    Scenario('incident', 'create', incident.main, 'POST', INCIDENTS, lambda emu: seed_incident_ctx(emu, False),
             lambda ctx: dict(monitor_id=ctx['mid'], started_at=ctx['started'], cause='db'),
             lambda emu, run, ctx: only_incidents(emu, ['db']), write=True, persists=True),
    Scenario('incident', 'update', incident.main, 'PUT', INCIDENTS + '/', seed_incident_ctx,
             lambda ctx: dict(monitor_id=ctx['mid'], started_at=ctx['started'], cause='disk'),
             lambda emu, run, ctx: only_incidents(emu, ['disk']), write=True),
    Scenario('incident', 'delete', incident.main, 'DELETE', INCIDENTS + '/', seed_incident_ctx,
             lambda ctx: dict(monitor_id=ctx['mid'], started_at=ctx['started'], state='absent'),
             lambda emu, run, ctx: only_incidents(emu, []), write=True),
    # incident_info
    Scenario('incident_info', 'find', incident_info.main, 'GET', INCIDENTS + '/', seed_incident_ctx,
             lambda ctx: dict(id=ctx['iid']),
             lambda emu, run, ctx: [i['id'] for i in run.result['incidents']] == [ctx['iid']] or fail(run)),
    Scenario('incident_info', 'list, 3 pages', incident_info.main, 'GET', INCIDENTS, seed_25_incidents,
             lambda ctx: dict(monitor_id=ctx['mid'], per_page=10),
             lambda emu, run, ctx: sorted(i['cause'] for i in run.result['incidents']) == sorted(
                 'cause %d' % i for i in range(25)) or fail(run), skip=1),
    # monitors (bulk)
    Scenario('monitors', 'list, 2 pages', monitors.main, 'GET', MONITORS, seed_101,
             lambda ctx: dict(config=[{'name': 'm000', 'url': 'https://m000.example.com/health', 'interval': 60}],
                              workers=1),
             unchanged(M101), skip=1, persists=True),
    Scenario('monitors', 'create', monitors.main, 'POST', MONITORS, lambda emu: {},
             lambda ctx: dict(config=[dict(ALPHA)], workers=1),
             lambda emu, run, ctx: only_monitors(emu, {'alpha': 60}), write=True),
    Scenario('monitors', 'update', monitors.main, 'PUT', MONITORS + '/', seed_alpha,
             lambda ctx: dict(config=[dict(ALPHA, interval=300)], workers=1),
             lambda emu, run, ctx: only_monitors(emu, {'alpha': 300}), write=True),
    Scenario('monitors', 'delete', monitors.main, 'DELETE', MONITORS + '/', seed_alpha,
             lambda ctx: dict(config=[{'name': 'alpha'}], state='deleted', workers=1),
             lambda emu, run, ctx: only_monitors(emu, {}), write=True),
]

VARIANTS = ('as sent', 'answer lost', 'fault persists')


def cells():
    for scenario in SCENARIOS:
        for variant in VARIANTS:
            if variant == 'answer lost' and not scenario.write:
                continue
            if variant == 'fault persists' and not scenario.persists:
                continue
            for column, (spec, dummy) in FAULTS.items():
                if variant == 'answer lost' and spec['kind'] == 'delay':
                    continue  # a slow answer is always processed: the "as sent" cell is already a lost answer
                if variant == 'answer lost' and spec.get('status') in (404, 429):
                    continue  # a 429 is a refusal before any processing, and so is a proxy's 404
                key = '%s|%s|%s' % (scenario.name, variant, column)
                yield pytest.param(scenario, variant, column, id=key,
                                   marks=known_issues.mark(pytest, known_issues.MATRIX, key))


def tls_cells():
    # "as sent" only: a failed handshake is never tried again (each cell asserts it), so a fault that
    # persists meets the same single attempt and would prove the same thing a second time.
    for scenario in SCENARIOS:
        variant = 'as sent'
        for column in TLS_FAULTS:
            key = '%s|%s|%s' % (scenario.name, variant, column)
            yield pytest.param(scenario, variant, column, id=key,
                               marks=known_issues.mark(pytest, known_issues.MATRIX, key))


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    original = UptimeClient._backoff  # pylint: disable=protected-access

    def backoff(self, attempt, retry_after):
        seconds = original(self, attempt, retry_after)
        return seconds if retry_after is not None else seconds / BACKOFF_SPEEDUP

    monkeypatch.setattr(UptimeClient, '_backoff', backoff)


# -- judging a cell ----------------------------------------------------------------------

def message_problems(msg, scenario, fragments):
    """Why a failure message is not one clear line naming the request, or [] when it is."""
    problems = []
    lines = msg.splitlines() or ['']
    if scenario.module == 'monitors':
        # The bulk module reports one line per failed write between a summary line and whether a rerun finishes.
        lines = lines[1:-1] or lines
    for line in lines:
        if 'Traceback' in line:
            problems.append('traceback text')
        if scenario.method not in line or scenario.path.rstrip('/') not in line:
            problems.append('does not name %s %s' % (scenario.method, scenario.path))
        for fragment in fragments:
            if fragment.lower() not in line.lower():
                problems.append('does not say %r' % fragment)
    if scenario.module != 'monitors' and len(msg.splitlines()) > 1:
        problems.append('more than one line')
    return sorted(set(problems))


def hits(entry, scenario):
    """Whether a logged request is one the scenario's fault is aimed at (the emulator's own path rule)."""
    return entry['method'] == scenario.method and path_within(entry['path'], scenario.path)


def faulted_entry(log, scenario):
    matching = [entry for entry in log if hits(entry, scenario)]
    return matching[scenario.skip] if len(matching) > scenario.skip else None


def normalise(msg):
    """A message with the parts that vary between runs (ids, byte counts) replaced."""
    msg = re.sub(r'/(monitors|incidents)/\d+', r'/\1/{id}', msg)
    msg = re.sub(r'\b\d+ bytes\b', 'N bytes', msg)
    msg = re.sub(r'(https?://127\.0\.0\.1):\d+', r'\1:PORT', msg)
    return msg


@pytest.mark.parametrize('scenario, variant, column', list(cells()))
def test_cell(emulator, connection, scenario, variant, column):
    spec, fragments = FAULTS[column]
    ctx = scenario.setup(emulator)
    args = dict(connection, **scenario.args(ctx))
    before = snapshot(emulator)
    emulator.clear_log()
    if scenario.skip:
        emulator.fault('delay', count=scenario.skip, seconds=0, method=scenario.method, path=scenario.path)
    fault = dict(spec, method=scenario.method, path=scenario.path,
                 when='after' if variant == 'answer lost' else 'before',
                 count=RETRIES + 1 if variant == 'fault persists' else 1)
    emulator.fault(**fault)

    run = run_module(scenario.main, args)
    emulator.wait_idle(SLOW_SECONDS + 3)
    emulator.clear_faults()
    log = emulator.log()
    hit = faulted_entry(log, scenario)
    problems = []
    if hit is None or hit['fault'] != spec['kind']:
        problems.append('the fault did not hit %s %s' % (scenario.method, scenario.path))
    attempts = len([e for e in log if hits(e, scenario)])
    judge(emulator, scenario, variant, column, fragments, ctx, args, before, run, log, attempts - scenario.skip,
          problems)


# scenario name -> how many requests come before the one a TLS cell faults (the same for every column)
_REQUESTS_BEFORE = {}


def requests_before_the_operation(emulator, scenario, connection):
    """How many requests a fault-free run of ``scenario`` sends before the faulted one (one dry run per scenario).

    Leaves the emulator reset.
    """
    if scenario.name not in _REQUESTS_BEFORE:
        emulator.reset()
        ctx = scenario.setup(emulator)
        emulator.clear_log()
        dry_run = run_module(scenario.main, dict(connection, **scenario.args(ctx)))
        assert not dry_run.failed, dry_run
        matching = [index for index, entry in enumerate(emulator.log()) if hits(entry, scenario)]
        _REQUESTS_BEFORE[scenario.name] = matching[scenario.skip]
    emulator.reset()
    return _REQUESTS_BEFORE[scenario.name]


@pytest.mark.parametrize('scenario, variant, column', list(tls_cells()))
def test_tls_cell(tls_emulator, connection, scenario, variant, column):
    """A TLS column: the connection that carries the operation fails its handshake."""
    emulator = tls_emulator
    kind, fragments = TLS_FAULTS[column]
    connection = dict(connection, api_url=emulator.url, ca_path=emulator.ca_path)
    requests_before = requests_before_the_operation(emulator, scenario, connection)

    ctx = scenario.setup(emulator)
    args = dict(connection, **scenario.args(ctx))
    before = snapshot(emulator)
    emulator.clear_log()
    emulator.clear_handshakes()
    emulator.tls_fault(kind, after=requests_before, count=1)

    run = run_module(scenario.main, args)
    emulator.clear_faults()
    log = emulator.log()

    def of_the_fault(handshakes):
        return [handshake for handshake in handshakes if handshake['certificate'] == kind]
    faulted = of_the_fault(emulator.handshakes(until=of_the_fault))
    problems = []
    reached_anyway = any(hits(entry, scenario) for entry in log[requests_before:requests_before + 1])
    if not faulted or len(log) < requests_before or reached_anyway:
        problems.append('the fault did not hit %s %s' % (scenario.method, scenario.path))
    elif any(hits(entry, scenario) for entry in log[requests_before:]):
        # Only the faulted connection fails: an operation that reached the service later was tried again.
        problems.append('a failed handshake was tried again: %s %s reached the service' % (scenario.method, scenario.path))
    judge(emulator, scenario, variant, column, fragments, ctx, args, before, run, log, len(faulted), problems)


def judge(emulator, scenario, variant, column, fragments, ctx, args, before, run, log, attempts, problems):
    """Classify a cell's run, run the task again without a fault, record the row, fail on any problem."""
    after = snapshot(emulator)
    if run.crash:
        outcome = 'traceback'
        problems.append(run.crash.strip().splitlines()[-1])
    elif not run.failed:
        try:
            scenario.verify(emulator, run, ctx)
            outcome = 'recovered'
        except AssertionError as exc:
            outcome = 'wrong result'
            problems.append('success without the asked state: %s' % exc)
        if outcome == 'recovered' and scenario.write and run.result.get('changed') is not True:
            problems.append('the write was made but the task does not report changed')
    elif run.msg.startswith('unexpected error'):
        outcome = 'traceback'
        problems.append('a defect, caught: %s' % run.msg)
    else:
        problems.extend(message_problems(run.msg, scenario, fragments))
        if after == before:
            outcome = 'failed'
        elif run.result.get('changed') is True and WRITE_REPORTED.search(run.msg):
            outcome = 'failed, write reported'
        elif MAY_BE_APPLIED.search(run.msg):
            outcome = 'failed, may be applied'
        else:
            outcome = 'hidden change'
            problems.append('the task failed but the service changed')
        if problems and outcome != 'hidden change':
            outcome = 'unclear message'

    # The next run, without a fault, finishes the job and never duplicates anything.
    emulator.clear_log()
    # Without a fault the rerun needs no retries; a generous timeout keeps a stall of a loaded machine
    # from being judged as the task's failure.
    rerun = run_module(scenario.main, dict(args, retries=0, timeout=30))
    rerun_state = 'ok'
    if rerun.failed:
        rerun_state = 'failed'
        problems.append('the next run failed: %s' % (rerun.crash or rerun.msg))
    else:
        try:
            scenario.verify(emulator, rerun, ctx)
        except AssertionError as exc:
            rerun_state = 'wrong'
            problems.append('the next run did not reach the asked state: %s' % exc)
    rerun_posts = [entry for entry in emulator.log() if entry['method'] == 'POST']
    if scenario.operation == 'create' and outcome != 'failed' and rerun_posts:
        problems.append('the next run sent a POST although the first one was applied')
    if outcome == 'recovered' and rerun.result.get('changed'):
        problems.append('the next run changed something although the first one reached the asked state')
    if variant == 'answer lost' and scenario.method == 'POST' and attempts != 1:
        # The service stored the record: the module must read it back by its natural key, never post again.
        problems.append('the POST whose answer was lost was sent %d times' % attempts)

    requests = list(log)
    key = '%s|%s|%s' % (scenario.name, variant, column)
    record(GROUP, key, known_issue=known_issues.MATRIX.get(key) if problems else None,
           module=scenario.module, operation=scenario.operation, variant=variant, fault=column,
           outcome=outcome, msg=normalise(run.msg) if run.failed and not run.crash else '',
           changed=bool(run.result.get('changed')),
           requests=len(requests), attempts=attempts, seconds=round(run.seconds, 2), rerun=rerun_state,
           rerun_changed=bool(rerun.result.get('changed')), problems=problems)
    assert not problems, '%s: %s\n%r' % (outcome, '; '.join(problems), run)
