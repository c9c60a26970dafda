# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lost POST answers: the service created the record, the answer never arrived.

A module must never create a duplicate, neither in the same run (it reads the record
back by its natural key instead of posting again) nor in the next run (which reads
before it writes). Monitors are found by name, incidents by monitor and start time.

One lost answer to the POST of each module (dropped, truncated, broken JSON, an HTML page,
500, 502, 503) is a cell of the fault matrix's "answer lost" row (test_fault_matrix.py:
one POST, the record once, ``changed``, and a next run that changes nothing and posts
nothing). This file keeps what the matrix has no cell for: the read-back failing too, a
monitor created paused, a resolved incident, and several lost POSTs of one bulk run.
"""

from __future__ import annotations

from reliability_support import INCIDENTS, MONITORS, list_all, record, run_module, seed_monitor, utc_ago

from ansible_collections.uptime.monitoring.plugins.modules import incident, monitor, monitors

GROUP = 'lost_answers'
ALPHA = {'name': 'alpha', 'url': 'https://alpha.example.com/health', 'interval': 60}


def requests_of(log):
    return ['%s %s%s' % (entry['method'], entry['path'], ' (%s)' % entry['fault'] if entry['fault'] else '')
            for entry in log]


def posts(log, path):
    return [entry for entry in log if entry['method'] == 'POST' and entry['path'] == path]


def check_next_run(emulator, main, args, path):
    """The next run changes nothing and sends no POST."""
    emulator.clear_log()
    again = run_module(main, args)
    assert not again.failed and again.result['changed'] is False, again
    assert posts(emulator.log(), path) == []
    return again


def test_monitor_lost_post_and_failed_read_back_leaves_no_duplicate(emulator, connection):
    """When even the read-back fails, the task fails clearly; the next run finds the monitor and posts nothing."""
    # the first GET (the search before the POST) passes; every read-back after the lost POST is a 503
    emulator.fault('delay', seconds=0, method='GET', path=MONITORS)
    emulator.fault('drop', method='POST', path=MONITORS, when='after')
    emulator.fault('status', status=503, count=10, method='GET', path=MONITORS)
    run = run_module(monitor.main, dict(connection, **ALPHA))
    emulator.clear_faults()
    log = emulator.log()
    assert run.failed and not run.crash, run
    assert '\n' not in run.msg and 'GET /api/v1/monitors' in run.msg and 'HTTP 503' in run.msg
    assert len(posts(log, MONITORS)) == 1
    check_next_run(emulator, monitor.main, dict(connection, **ALPHA), MONITORS)
    assert [m['name'] for m in list_all(emulator, MONITORS)] == ['alpha']
    record(GROUP, 'monitor|read-back fails', module='monitor', answer='drop, then 503 on every read-back',
           outcome='failed in one line; the next run: no change, no POST', msg=run.msg, duplicate=False,
           requests=requests_of(log))


def test_monitor_created_paused_after_a_lost_post(emulator, connection):
    emulator.fault('drop', method='POST', path=MONITORS, when='after')
    run = run_module(monitor.main, dict(connection, paused=True, **ALPHA))
    assert not run.failed, run
    found = list_all(emulator, MONITORS)
    assert [(m['name'], m['status']) for m in found] == [('alpha', 'paused')]
    check_next_run(emulator, monitor.main, dict(connection, paused=True, **ALPHA), MONITORS)
    record(GROUP, 'monitor|paused', module='monitor', answer='drop (create paused)', outcome='one paused monitor', duplicate=False,
           requests=requests_of(emulator.log()))


def test_incident_lost_post_of_a_resolved_incident(emulator, connection):
    """A closed incident (started and ended) is found again by its start time too."""
    seed_monitor(emulator, 'shop')
    args = dict(connection, monitor='shop', started_at=utc_ago(hours=3), ended_at=utc_ago(hours=2), cause='db')
    emulator.clear_log()
    emulator.fault('drop', method='POST', path=INCIDENTS, when='after')
    run = run_module(incident.main, args)
    assert not run.failed, run
    assert len(list_all(emulator, INCIDENTS)) == 1
    check_next_run(emulator, incident.main, args, INCIDENTS)
    record(GROUP, 'incident|resolved', module='incident', answer='drop (resolved incident)',
           outcome='one incident, no second POST', duplicate=False, requests=requests_of(emulator.log()))


def test_bulk_lost_posts(emulator, connection):
    config = [{'name': 'm%d' % index, 'url': 'https://m%d.example.com/' % index, 'interval': 60} for index in range(5)]
    emulator.fault('drop', count=3, method='POST', path=MONITORS, when='after')
    run = run_module(monitors.main, dict(connection, config=config, workers=2))
    log = emulator.log()
    assert not run.failed, run
    assert run.result['summary']['created'] == 5
    assert sorted(m['name'] for m in list_all(emulator, MONITORS)) == ['m%d' % i for i in range(5)]
    assert len(posts(log, MONITORS)) == 5
    check_next_run(emulator, monitors.main, dict(connection, config=config, workers=2), MONITORS)
    record(GROUP, 'monitors|drop x3', module='monitors', answer='drop on 3 of 5 POSTs',
           outcome='five monitors, five POSTs, no second POST', duplicate=False, requests=requests_of(log))
