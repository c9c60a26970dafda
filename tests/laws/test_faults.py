# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The law of a truthful ``changed``, under faults at any request of a task.

A generated task of any module meets one or two faults in a row (a 5xx, a 429, an answer slower than the timeout, a
dropped, broken or truncated answer, a proxy's HTML page; before the service ran the request or after it, the answer
lost or held) from the request of a generated index (of any method, or of one write method), the last once or on every
attempt, the service's clock on time or behind.
Whenever the stored records differ afterwards the task reports ``changed: true`` or fails saying the write may have
been applied; a success that stored nothing reports no change; the info modules never do. No crash; a failure is one
line naming the request, one reading. A POST the service applied is never sent again; the task run again without
faults succeeds, duplicates nothing, and a third run changes nothing.

And the law of a whole list: another client creates and deletes monitors between its page reads, and the reader
returns every record that lived throughout, once, or fails naming the list.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import Phase, event, example, given, strategies as st

from emulator.control import PRIMARY_KEY
from laws import ago, budget, fresh, holds, quiet, run as run_task, stored
import strategies as gen

from ansible_collections.uptime.monitoring.plugins.module_utils._client import LIST_READS, UptimeApiError, UptimeClient
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_RESOURCE


ALPHA = gen.entry('alpha')
TIMEOUT, RETRIES, SLOW = 1.0, 1, 1.4
UNKNOWN = re.compile(r'may have (been )?applied|may have (been )?(created|changed|deleted)|outcome is unknown'
                     r'|before this failure, the task|no definite answer', re.IGNORECASE)


NAMES = st.lists(st.sampled_from(['alpha', 'beta', 'gamma']), unique=True, max_size=3)
ENTRY = st.builds(gen.entry, st.sampled_from(['alpha', 'beta', 'gamma']), st.sampled_from([60, 300]))
STARTS = st.sampled_from([None, 'seeded'])  # None: the task chooses now; 'seeded': when the seeded incident starts

TASKS = st.one_of(
    st.fixed_dictionaries({'seed': NAMES, 'module': st.just('monitor'), 'args': st.one_of(
        st.builds(lambda entry, paused: dict(entry, paused=paused), ENTRY, st.sampled_from([None, True, False])),
        st.builds(lambda name: {'name': name, 'state': 'absent'}, st.sampled_from(['alpha', 'beta'])))}),
    st.fixed_dictionaries({'seed': NAMES, 'module': st.just('monitors'), 'args': st.builds(
        lambda config, state: {'config': config, 'state': state, 'workers': 1},
        st.lists(ENTRY, min_size=1, max_size=3, unique_by=lambda entry: entry['name']),
        st.sampled_from(['merged', 'replaced', 'overridden', 'deleted']))}),
    st.builds(lambda state, start, cause, ongoing: {
        'seed': ['shop'], 'module': 'incident', 'incident': ongoing or state != 'present' and not start,
        'args': {k: v for k, v in {'monitor': 'shop', 'state': state, 'cause': cause, 'started_at': start}.items() if v}},
        st.sampled_from(['present', 'acknowledged', 'resolved', 'absent']), STARTS, st.sampled_from(['db', 'disk']),
        st.booleans()),
    st.fixed_dictionaries({'seed': NAMES, 'module': st.sampled_from(['monitor_info', 'incident_info']),
                           'args': st.sampled_from([{}, {'per_page': 10, 'limit': 2}, {'search': 'alpha'}])}),
)
FAULTS = st.one_of(
    st.builds(lambda status, when: dict(kind='status', status=status, when=when), st.sampled_from([500, 502, 503]),
              st.sampled_from(['before', 'after'])),
    st.just(dict(kind='status', status=429, retry_after=1)),
    st.builds(lambda when: dict(kind='delay', seconds=SLOW, when=when), st.sampled_from(['before', 'after'])),
    st.builds(lambda kind, when: dict(kind=kind, when=when), st.sampled_from(['drop', 'badjson', 'truncated', 'html']),
              st.sampled_from(['before', 'after'])),
    st.just(dict(kind='html', status=404)),  # a proxy's page, or a wrong path in api_url
)
# What a failure the fault caused says besides the request (method and path).
SAYS = {'status': 'HTTP %(status)s', 'delay': 'timeout', 'drop': 'connection', 'html': 'text/html', 'badjson': 'JSON',
        'truncated': ''}
# Faults queue in order: the first takes the request of the index (among those of the method, when one is drawn: a
# write, whose loss only a read can settle), the next the requests after it; the last, when it persists, every attempt.
PLAN = st.fixed_dictionaries({'task': TASKS, 'faults': st.lists(FAULTS, min_size=1, max_size=2), 'index': st.integers(0, 2),
                              'method': st.sampled_from([None, None, 'POST', 'PUT', 'DELETE']), 'persists': st.booleans(),
                              'clock': st.sampled_from([0, 0, -5])})


@pytest.fixture
def quick_backoff(monkeypatch):
    original = UptimeClient._backoff  # pylint: disable=protected-access

    def backoff(self, attempt, retry_after):
        seconds = original(self, attempt, retry_after)
        return seconds if retry_after is not None else seconds / 10

    monkeypatch.setattr(UptimeClient, '_backoff', backoff)


@budget(45, phases=[Phase.explicit, Phase.generate, Phase.shrink])
@given(plan=PLAN)
# Issue 35, item 9: an HTML page answered with 200 to a create: one reading, a proxy's page.
@example(plan={'task': {'seed': [], 'module': 'monitor', 'args': ALPHA},
               'faults': [dict(kind='html', status=200, when='before', method='POST')], 'index': 0, 'persists': False, 'clock': 0})
# Issue 35, item 12: the service's clock 5 s behind the controller's: "now" is taken from the service.
@example(plan={'task': {'seed': ['shop'], 'incident': None, 'module': 'incident', 'args': {'monitor': 'shop', 'cause': 'db'}},
               'faults': [dict(kind='status', status=503, when='before')], 'index': 0, 'persists': False, 'clock': -5})
# A lost POST whose read-back fails too: one line naming the read; the next run finds the monitor, posts nothing.
@example(plan={'task': {'seed': [], 'module': 'monitor', 'args': ALPHA},
               'faults': [dict(kind='drop', when='after'), dict(kind='status', status=503)], 'index': 1, 'persists': True, 'clock': 0})
# Issue 45: a create applied whose answer comes too late at every attempt: never sent again, its outcome read back.
@example(plan={'task': {'seed': [], 'module': 'monitor', 'args': ALPHA}, 'faults': [dict(kind='delay', seconds=SLOW, when='after')],
               'index': 0, 'method': 'POST', 'persists': True, 'clock': 0})
# Issue 45: an update applied whose answer comes too late, its retry refused unsent (429): still maybe applied.
@example(plan={'task': {'seed': ['alpha'], 'module': 'monitor', 'args': gen.entry('alpha', 300)},
               'faults': [dict(kind='delay', seconds=SLOW, when='after'), dict(kind='status', status=429, retry_after=1)],
               'index': 0, 'method': 'PUT', 'persists': True, 'clock': 0})
def test_changed_is_true_whenever_the_service_changed(emulator, connection, quick_backoff, plan):  # pylint: disable=unused-argument
    task, faults = dict(plan['task'], seeded=ago(120)), plan['faults']
    if task['args'].get('started_at') == 'seeded':
        task['args'] = dict(task['args'], started_at=task['seeded'])
    fresh(emulator, clock=plan['clock'], stored=[gen.record(gen.entry(name)) for name in task['seed']],
          incidents=[{'monitor': task['seed'][0], 'started_at': task['seeded'], 'cause': 'db'}] if task.get('incident') else ())
    args = dict(timeout=TIMEOUT, retries=RETRIES, **task['args'])
    before = quiet(stored(emulator), 'checked_at')
    emulator.clear_log()
    aim = {'method': plan['method']} if plan.get('method') else {}
    if plan['index']:
        emulator.fault('delay', count=plan['index'], seconds=0, **aim)
    for number, fault in enumerate(faults, 1):
        emulator.fault(count=RETRIES + 1 if plan['persists'] and number == len(faults) else 1, **dict(aim, **fault))

    run = run_task(connection, task['module'], args, diff=False)
    emulator.wait_idle(SLOW + 2)
    met = not emulator.faults()
    event('fault met' if met else 'fault not met (fewer requests than the index)')
    emulator.clear_faults()
    log = emulator.log()
    after = quiet(stored(emulator), 'checked_at')
    event('%s: %s' % ('failed' if run.failed else 'ok', 'changed' if after != before else 'unchanged'))
    assert run.crash is None, run.crash
    if task['module'].endswith('_info'):
        assert run.changed is False or run.failed and not run.changed, run
        assert after == before
    elif after != before:
        assert run.changed is True or run.failed and UNKNOWN.search(run.msg), (run, before, after)
    elif not run.failed:
        assert run.changed is False, (run, before, after)
    if run.failed:  # one line (monitors: a summary, a line per failed entry, a closing line), one reading
        assert len(run.msg.splitlines()) == 1 or task['module'] == 'monitors', run
        assert not ('a wrong address or a proxy answered' in run.msg and 'the service failed' in run.msg), run
        assert not run.msg.startswith('unexpected error'), run
    if run.failed and met and plan['persists'] and not task['module'].endswith('s'):
        requests = ['%s %s' % (entry['method'], entry['path']) for entry in log if entry['fault']]
        assert any(request in run.msg for request in requests), (run, requests)
        assert (SAYS[faults[-1]['kind']] % faults[-1]).lower() in run.msg.lower(), run
    applied = set()  # a POST the service applied is never sent again: the record is read back
    for entry in log:
        key = (entry['path'], entry['form'].get('name'), entry['form'].get('started_at'))
        assert entry['method'] != 'POST' or key not in applied, log
        if entry['method'] == 'POST' and entry['app_status'] in (200, 201):
            applied.add(key)

    again = run_task(connection, task['module'], dict(args, timeout=30, retries=0), diff=False)
    assert not again.failed, (run, again)
    records = stored(emulator)
    names = [record['name'] for record in records['monitors']]
    assert len(names) == len(set(names)), names
    starts = [(record['monitor']['id'], record['started_at']) for record in records['incidents']]
    assert len(starts) == len(set(starts)), starts
    if task['module'] == 'incident' and 'started_at' not in task['args']:
        return  # "now" moves on: a third run may rightly see another time
    third = run_task(connection, task['module'], dict(args, timeout=30, retries=0), diff=False)
    assert not third.failed, (again, third)
    assert third.changed is False, (again, third)


# What another client does after a page read: monitors deleted (by their place among those there at first) and created.
MEANWHILE = st.fixed_dictionaries({'delete': st.lists(st.integers(0, 349), max_size=3), 'create': st.integers(0, 2)})


@budget(30)
@given(count=st.sampled_from([0, 3, 100, 101, 199, 250, 350]), changes=st.lists(MEANWHILE, max_size=5))
def test_a_whole_list_holds_every_record_that_lived_while_it_was_read_or_fails_naming_it(emulator, count, changes):
    """The service cuts each page by offset when it reads it; whatever another client creates and deletes between two
    page reads, the reader returns each monitor that lived throughout once, none that never lived, oldest first, or,
    when the list moved at each of its reads, fails naming it; one request per 100 monitors when nothing moves
    (issue 44, item 7: read oldest first, a monitor deleted after the first page left a live one on no page)."""
    fresh(emulator)
    first = emulator.seed(count)['first_id'] or 1
    for number, change in enumerate(changes):
        emulator.fault('meanwhile', method='GET', path='/api/v1/monitors', delete=[first + place for place in change['delete']],
                       create=[gen.record(gen.entry('new-%d-%d' % (number, index))) for index in range(change['create'])])
    alive, moved = set(range(first, first + count)), 0
    for change in changes:  # a change moves the list when it creates, or deletes a monitor still there
        moved += bool(change['create'] or alive & {first + place for place in change['delete']})
        alive -= {first + place for place in change['delete']}
    client = UptimeClient(emulator.url, PRIMARY_KEY, retries=0, sleep=lambda seconds: None)
    try:
        read = [record['id'] for record in MONITOR_RESOURCE.read_all(client)]
    except UptimeApiError as exc:
        holds(str(exc).startswith('GET /api/v1/monitors failed: the list changed while its pages were read'), 'the failure names the list',
              error=str(exc))
        holds(moved >= LIST_READS, 'a read fails only when the list moved at each of its reads', changes=changes, moved=moved)
        return
    holds(read == sorted(set(read)), 'each record once, oldest first', read=read)
    holds(alive <= set(read), 'every record that lived throughout', count=count, changes=changes, missing=sorted(alive - set(read)))
    holds(set(read) <= set(range(first, first + count)) | set(range(first + count, first + count + 10)), 'no record that never lived', read=read)
    if not moved:
        holds(len(emulator.log()) == max(1, -(-count // 100)), 'one request per 100 monitors', count=count, log=len(emulator.log()))
