# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Wiring of the incident and incident_info modules: arguments and results (that the documentation is the argument
spec is ansible-test sanity's validate-modules)."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
import yaml
from fake_client import add_monitor, open_incident
from module_runner import run_module

from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK
from ansible_collections.uptime.monitoring.plugins.modules import incident, incident_info


@pytest.fixture
def monitor_id(emulator):
    return add_monitor(emulator, request_auth_username='robot', request_auth_password='plain-secret')


def test_an_opened_incident_returns_every_documented_key_and_its_diff(emulator, connection, monitor_id):
    opened = run_module(incident.main, dict(monitor='shop', started_at='2026-01-01T10:00:00', cause='db', **connection)).result
    assert opened['changed']
    assert opened['incident']['monitor_id'] == monitor_id
    assert set(opened['incident']) == set(yaml.safe_load(incident.RETURN)['incident']['contains'])
    assert opened['diff']['before'] == {}
    assert opened['diff']['after']['cause'] == 'db'


@pytest.mark.parametrize('state, stamp', [('present', 'started_at'), ('acknowledged', 'acknowledged_at'),
                                          ('resolved', 'ended_at')])
def test_now_is_the_service_s_now_when_its_clock_is_behind(emulator, connection, monitor_id, state, stamp):
    if state != 'present':
        open_incident(emulator, monitor_id, '2026-01-01T10:00:00')
    emulator.clock(-5)
    result = run_module(incident.main, dict(monitor='shop', cause='x', state=state, **connection)).result
    assert result['changed'], result['msg']
    assert not result.get('failed'), result['msg']
    assert result['msg'] == "%s is now by the service's clock, %s" % (stamp, result['incident'][stamp])


def test_info_filters_and_sends_search_by_with_search(emulator, connection, monitor_id):
    open_incident(emulator, monitor_id, '2026-01-01T10:00:00', ended_at='2026-01-01T10:10:00', cause='dns')
    open_incident(emulator, monitor_id, '2026-01-02T10:00:00', cause='disk full')
    emulator.clear_log()
    found = run_module(incident_info.main, dict(search='shop', **connection)).result
    assert len(found['incidents']) == 2
    assert parse_qs(emulator.log()[0]['query'])['search_by'] == ['monitor']
    by_cause = run_module(incident_info.main, dict(search='disk', search_by='cause', **connection)).result
    assert [item['cause'] for item in by_cause['incidents']] == ['disk full']
    resolved = run_module(incident_info.main, dict(monitor='shop', status='resolved', **connection)).result
    assert [item['cause'] for item in resolved['incidents']] == ['dns']
    assert resolved['incidents'][0]['monitor']['request_auth_password'] == MASK
    assert run_module(incident_info.main, dict(monitor='nope', **connection)).result['incidents'] == []
    assert run_module(incident_info.main, dict(id=999, **connection)).result['incidents'] == []
    one = run_module(incident_info.main, dict(id=resolved['incidents'][0]['id'], **connection)).result
    assert one['incidents'] == resolved['incidents']


def seed_days(emulator, monitor_id, days=25):
    """One incident a day in January 2026 (10:00 to 11:00 UTC), and one ongoing since February 1st."""
    ids = {day: open_incident(emulator, monitor_id, '2026-01-%02dT10:00:00' % day, ended_at='2026-01-%02dT11:00:00' % day)
           for day in range(1, days + 1)}
    open_incident(emulator, monitor_id, '2026-02-01T10:00:00')
    return ids


def listed_days(result):
    return sorted(int(item['started_at'][8:10]) for item in result['incidents'] if item['ended_at'])


def test_info_time_bounds_stop_reading_when_the_order_allows(emulator, connection, monitor_id):
    seed_days(emulator, monitor_id)
    emulator.clear_log()
    # The service's default order (ended_at, newest first, ongoing first): the second page passes the bound.
    recent = run_module(incident_info.main, dict(ended_since='2026-01-14T11:00:00Z', per_page=10, **connection)).result
    assert listed_days(recent) == list(range(14, 26))
    assert len(recent['incidents']) == 12
    assert len(emulator.log()) == 2
    # An offset is an instant: 12:30+01:00 is 11:30 UTC, after the end of the incident of the 20th.
    assert listed_days(run_module(incident_info.main, dict(ended_since='2026-01-20T12:30:00+01:00',
                                  **connection)).result) == [21, 22, 23, 24, 25]
    emulator.clear_log()
    # A time without an offset is the account's local time: its zone is read once (UTC here).
    early = run_module(incident_info.main, dict(started_until='2026-01-05T10:00:00', sort_by='started_at', sort='asc',
                       per_page=10, **connection)).result
    assert listed_days(early) == [1, 2, 3, 4, 5]
    assert [entry['path'] for entry in emulator.log()] == ['/api/v1/account', '/api/v1/incidents']
    emulator.clear_log()
    # An order that does not follow the bound reads every page (3 of 10) and filters.
    window = run_module(incident_info.main, dict(monitor='shop', started_since='2026-01-10T00:00:00',
                        started_until='2026-01-12T23:59:59', per_page=10, **connection)).result
    assert listed_days(window) == [10, 11, 12]
    assert [entry['path'] for entry in emulator.log()].count('/api/v1/incidents') == 3
    # limit counts the incidents within the bounds.
    newest = run_module(incident_info.main, dict(ended_since='2026-01-01T00:00:00', limit=2, **connection)).result
    assert listed_days(newest) == [24, 25]
    # The ongoing incident has not ended: an ended bound leaves it out, a started bound does not.
    assert [item['ended_at'] for item in run_module(incident_info.main, dict(started_since='2026-01-31T00:00:00',
                                                    **connection)).result['incidents']] == [None]
