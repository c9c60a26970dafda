# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Timestamps in the account's time zone: instants in, local times sent, UTC instants out.

That a second run in any zone changes nothing is the idempotence law's (tests/laws, which runs in several zones); that
a time in the future is refused before any request, the bad-input law's."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import zoneinfo

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from module_runner import run_module

from ansible_collections.uptime.monitoring.plugins.module_utils import _schema
from ansible_collections.uptime.monitoring.plugins.module_utils._bulk import MonitorSync
from ansible_collections.uptime.monitoring.plugins.module_utils._client import UptimeApiError
from ansible_collections.uptime.monitoring.plugins.module_utils._connection import account_zone
from ansible_collections.uptime.monitoring.plugins.module_utils._incident import INCIDENT_SCHEMA, INCIDENT_RESOURCE
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import (
    AccountZone,
    ValidationError,
    to_utc_timestamp,
    utc_now,
)
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import TimeBounds
from ansible_collections.uptime.monitoring.plugins.modules import incident, monitor, monitors

NEW_YORK = 'America/New_York'
KOLKATA = 'Asia/Kolkata'


# The times a user gives, with the option the service pairs each with; the pair gets a time far from the edges.
TIME_OPTIONS = {'maintenance_start_at': 'maintenance_end_at', 'maintenance_end_at': 'maintenance_start_at',
                'started_at': None, 'acknowledged_at': None, 'ended_at': None,
                'started_since': None, 'started_until': None, 'ended_since': None, 'ended_until': None}
TIMES = st.one_of(st.text(max_size=30), st.builds(
    lambda moment, offset: moment.isoformat() + offset, st.datetimes(),
    st.sampled_from(['', 'Z', '+01:00', '-01:00', '+14:00', '-12:00', '+23:59'])))


def own_checks(option, value, zone):
    """What a module checks of one time before it sends it: normalised, ordered, and made the local time sent."""
    account = AccountZone(zone)
    if option in INCIDENT_RESOURCE.list_bounds:
        TimeBounds(INCIDENT_RESOURCE, {option: value}, {}, account)
        return
    schema = MONITOR_SCHEMA if option in MONITOR_SCHEMA.by_name else INCIDENT_SCHEMA
    params = {option: value}
    if TIME_OPTIONS[option]:
        params[TIME_OPTIONS[option]] = '5000-01-01T00:00:00'
    schema.form(schema.checked(params, utc_now(), zone=account), account)


@settings(max_examples=400, deadline=None)
@given(option=st.sampled_from(sorted(TIME_OPTIONS)), value=TIMES,
       zone=st.sampled_from(['UTC', 'Pacific/Kiritimati', 'Etc/GMT+12', NEW_YORK, KOLKATA]))
@example(option='maintenance_end_at', value='9999-12-31T23:00:00Z', zone='Pacific/Kiritimati')  # issue 35's others: the bad-input law's
def test_a_time_is_taken_or_refused_naming_its_option(option, value, zone):
    """A year outside 1000-9999, as given, in UTC or in the account's zone, is refused like any unreadable time."""
    try:
        own_checks(option, value, zone)
    except ValidationError as exc:
        assert exc.field in (option, TIME_OPTIONS[option]), str(exc)


def test_the_zone_is_read_once_not_for_an_instant_null_means_utc_and_an_unknown_one_names_the_option():
    reads = []
    account = AccountZone(None, read_account=lambda: reads.append(1) or {'timezone': None})
    assert to_utc_timestamp('2031-01-10T06:00:00', 'x', account) == '2031-01-10T06:00:00Z'
    assert to_utc_timestamp('2031-01-11T06:00:00', 'x', account) == '2031-01-11T06:00:00Z'
    assert reads == [1]
    assert account.describe() == "UTC (the account's setting)"
    # A time with an offset is an instant whatever the zone: the zone is not read for it.
    never_read = AccountZone(None, read_account=lambda: pytest.fail('the zone was read for an instant'))
    for instant in ('2031-01-10T06:00:00Z', '2031-01-10T01:00:00-05:00', '2031-01-10T11:30:00+05:30'):
        assert to_utc_timestamp(instant, 'started_at', never_read) == '2031-01-10T06:00:00Z'
    with pytest.raises(ValidationError) as caught:  # an unknown zone names the option
        AccountZone('Mars/Olympus_Mons')
    assert caught.value.field == 'account_timezone'
    assert 'IANA' in str(caught.value)


def test_an_instant_in_the_repeated_hour_cannot_be_sent_and_one_in_the_first_can():
    # 2031-11-02 in New York: 01:00 to 02:00 local time happens twice (EDT, then EST); the service reads the first.
    account = AccountZone(NEW_YORK)
    assert account.local('2031-11-02T05:30:00Z') == '2031-11-02T01:30:00'
    assert account.local('2031-11-02T07:30:00Z') == '2031-11-02T02:30:00'
    with pytest.raises(ValidationError) as caught:
        account.local('2031-11-02T06:30:00Z', 'maintenance_start_at')
    assert caught.value.field == 'maintenance_start_at'
    assert all(text in str(caught.value) for text in ('2031-11-02T01:30:00', '2031-11-02T05:30:00Z', NEW_YORK))


def test_a_service_without_the_account_endpoint_asks_for_the_option():
    class NoAccountEndpoint:
        def get(self, path):
            raise UptimeApiError('Resource not found.', status=404, method='GET', path=path)
    with pytest.raises(UptimeApiError) as caught:
        account_zone(NoAccountEndpoint()).tzinfo()
    assert 'GET /api/v1/account' in str(caught.value)
    assert 'set account_timezone' in str(caught.value)


def run(module, args, check_mode=False):
    return run_module(module.main, args, check_mode=check_mode).result


def stored(service, kind, record_id):
    return service.api('GET', '/api/v1/%s/%d' % (kind, record_id)).json['data']


def account_reads(service):
    return [entry for entry in service.log() if entry['path'] == '/api/v1/account']


def window(start, end, **args):
    return dict(args, name='shop', url='https://shop.example.com', interval=60,
                maintenance_start_at=start, maintenance_end_at=end)


@pytest.mark.parametrize('zone, start, end, stored_start, stored_end', [
    (NEW_YORK, '2031-01-10T06:00:00', '2031-01-10T08:00:00', '2031-01-10T11:00:00', '2031-01-10T13:00:00'),
    (NEW_YORK, '2031-07-10T06:00:00', '2031-07-10T08:00:00', '2031-07-10T10:00:00', '2031-07-10T12:00:00'),
    (KOLKATA, '2031-07-10T06:00:00', '2031-07-10T08:00:00', '2031-07-10T00:30:00', '2031-07-10T02:30:00'),
    (None, '2031-07-10T06:00:00', '2031-07-10T08:00:00', '2031-07-10T06:00:00', '2031-07-10T08:00:00'),
    (NEW_YORK, '2031-01-10T06:00:00+00:00', '2031-07-10T08:00:00Z', '2031-01-10T06:00:00', '2031-07-10T08:00:00'),
])
def test_a_window_lands_on_the_intended_instants(service, fake_connection, zone, start, end, stored_start, stored_end):
    service.timezone(zone)
    created = run(monitor, dict(fake_connection, **window(start, end)))
    record = stored(service, 'monitors', created['monitor']['id'])
    assert record['maintenance_start_at'].startswith(stored_start + '.')
    assert record['maintenance_end_at'].startswith(stored_end + '.')
    assert (created['monitor']['maintenance_start_at'], created['monitor']['maintenance_end_at']) == (
        stored_start + 'Z', stored_end + 'Z')


def test_the_zone_costs_one_request_and_only_for_tasks_with_local_times(service, fake_connection, monkeypatch):
    service.timezone(NEW_YORK)
    service.clear_log()
    run(monitor, dict(fake_connection, name='plain', url='https://plain.example.com', interval=60))
    assert account_reads(service) == []
    service.clear_log()
    run(monitor, dict(fake_connection, **window('2031-01-10T06:00:00', '2031-01-10T08:00:00')))
    assert len(account_reads(service)) == 1
    service.clear_log()
    given = run(monitor, dict(fake_connection, account_timezone=NEW_YORK,
                              **window('2031-01-10T06:00:00', '2031-01-10T08:00:00')))
    assert not given['changed']
    assert account_reads(service) == []
    monkeypatch.setenv('UPTIME_ACCOUNT_TIMEZONE', NEW_YORK)  # the option from the environment
    from_environment = run(monitor, dict(fake_connection, **window('2031-01-10T06:00:00', '2031-01-10T08:00:00')))
    assert not from_environment['changed']
    assert account_reads(service) == []


def local_now(zone, hours_ago):
    moment = datetime.datetime.now(zoneinfo.ZoneInfo(zone)) - datetime.timedelta(hours=hours_ago)
    return moment.replace(tzinfo=None, microsecond=0).strftime('%Y-%m-%dT%H:%M:%S')


@pytest.mark.parametrize('zone, started_at, ended_at, stored_start', [
    # Three hours ago in local time, then resolved with the local time of now.
    (NEW_YORK, 3, None, None),
    (KOLKATA, 3, None, None),
    (NEW_YORK, '2026-01-15T09:00:00', '2026-01-15T10:00:00', '2026-01-15T14:00:00'),
    (NEW_YORK, '2026-07-15T09:00:00', '2026-07-15T10:00:00', '2026-07-15T13:00:00'),
    (NEW_YORK, '2026-07-15T09:00:00+02:00', '2026-07-15T10:00:00+02:00', '2026-07-15T07:00:00'),
])
def test_incident_times_land_on_their_instants(service, fake_connection, zone, started_at, ended_at, stored_start):
    service.timezone(zone)
    shop = run(monitor, dict(fake_connection, name='shop', url='https://shop.example.com', interval=60))
    if stored_start is None:
        started_at = local_now(zone, started_at)
        stored_start = to_utc_timestamp(started_at, 'x', AccountZone(zone))[:-1]
    opened = run(incident, dict(fake_connection, monitor='shop', started_at=started_at, ended_at=ended_at))
    assert opened['changed'], opened.get('msg')
    assert not opened.get('failed'), opened.get('msg')
    record = stored(service, 'incidents', opened['incident']['id'])
    assert to_utc_timestamp(record['started_at']) == opened['incident']['started_at'] == stored_start + 'Z'
    assert shop['monitor']['id'] == record['monitor']['id']
    if ended_at:
        assert opened['incident']['duration'] == 3600
        return
    resolved = run(incident, dict(fake_connection, monitor='shop', state='resolved'))
    assert resolved['changed'], resolved.get('msg')
    assert not resolved.get('failed'), resolved.get('msg')
    ended = datetime.datetime.strptime(resolved['incident']['ended_at'], '%Y-%m-%dT%H:%M:%SZ')
    lag = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) - ended
    assert datetime.timedelta(0) <= lag < datetime.timedelta(minutes=5)


def test_monitors_settles_windows_in_the_accounts_zone_with_one_zone_read_and_an_export_keeps_the_instants(service, fake_connection):
    service.timezone(NEW_YORK)
    config = [dict(window('2031-01-10T06:00:00', '2031-01-10T08:00:00'), name='m%d' % number) for number in range(3)]
    first = run(monitors, dict(fake_connection, state='merged', config=config))
    assert first['summary']['created'] == 3
    assert {view['maintenance_start_at'] for view in first['after']} == {'2031-01-10T11:00:00Z'}
    service.clear_log()
    second = run(monitors, dict(fake_connection, state='replaced', config=config))
    assert not second['changed']
    assert len(account_reads(service)) == 1
    # Applied to an account in another zone, the export keeps the instants.
    gathered = run(monitors, dict(fake_connection, state='gathered'))['gathered']
    service.reset()
    service.timezone(KOLKATA)
    run(monitors, dict(fake_connection, state='merged', config=gathered))
    assert stored(service, 'monitors', 1)['maintenance_start_at'].startswith('2031-01-10T11:00:00.')


def test_a_bulk_sync_without_local_times_reads_no_zone(service):
    service.timezone(NEW_YORK)
    sync = MonitorSync(service.client(), lambda sleep: service.client(sleep=sleep))
    config = [dict(window('2031-01-10T06:00:00Z', '2031-01-10T08:00:00Z'), name='instant')]
    service.clear_log()
    result = sync.run(dict(state='merged', config=config, workers=1))
    assert result['summary']['created'] == 1
    # Sending an instant needs the zone: read once, by the write.
    assert len(account_reads(service)) == 1
    service.clear_log()
    again = sync.run(dict(state='merged', config=config, workers=1))
    assert not again['changed'], 'a sync that sends nothing read the zone'
    assert account_reads(service) == [], 'a sync that sends nothing read the zone'


def test_a_window_in_the_repeated_hour_is_refused_before_any_write(service, fake_connection):
    service.timezone(NEW_YORK)
    result = run(monitor, dict(fake_connection, **window('2031-11-02T06:30:00Z', '2031-11-02T09:00:00Z')))
    assert result['failed']
    assert result['field'] == 'maintenance_start_at'
    assert 'occurs twice' in result['msg']
    config = [dict(window('2031-11-02T04:00:00Z', '2031-11-02T05:30:00Z'), name='first'),
              dict(window('2031-11-02T06:30:00Z', '2031-11-02T09:00:00Z'), name='second')]
    planned = run(monitors, dict(fake_connection, state='merged', config=config), check_mode=True)
    assert planned['failed']
    assert 'config[1].maintenance_start_at' in planned['msg']
    assert "(monitor 'second')" in planned['msg']
    assert 'occurs twice' in planned['msg']
    result = run(monitors, dict(fake_connection, state='merged', config=config))
    assert result['failed']
    assert 'config[1].maintenance_start_at' in result['msg']
    assert not service.writes()


@pytest.mark.parametrize('module', [monitor, monitors])
def test_a_local_start_and_an_instant_end_are_ordered_as_instants(service, fake_connection, module):
    service.timezone(KOLKATA)

    def apply(end):
        entry = window('2031-01-10T06:00:00', end)  # 06:00 in Kolkata is 00:30Z
        return run(module, dict(fake_connection, **entry) if module is monitor
                   else dict(fake_connection, state='merged', config=[entry]))
    applied = apply('2031-01-10T01:00:00Z')
    assert applied['changed'], applied.get('msg')
    assert not applied.get('failed'), applied.get('msg')
    assert stored(service, 'monitors', 1)['maintenance_start_at'].startswith('2031-01-10T00:30:00.')
    inverted = apply('2031-01-10T00:00:00Z')
    assert inverted['failed']
    assert 'maintenance_end_at' in inverted['msg']
    assert '00:30:00Z' in inverted['msg']


@pytest.mark.parametrize('existing', [False, True])
def test_a_wrong_zone_fails_on_the_write_that_shows_it(service, fake_connection, existing):
    service.timezone(NEW_YORK)
    if existing:
        run(monitor, dict(fake_connection, name='shop', url='https://shop.example.com', interval=60))
    service.clear_log()
    result = run(monitor, dict(fake_connection, account_timezone='UTC',
                               **window('2031-01-10T06:00:00Z', '2031-01-10T08:00:00Z')))
    assert result['failed']
    assert result['changed'] is True
    assert 'UTC (option account_timezone)' in result['msg']
    assert 'the service stored' in result['msg']
    assert 'the task %s monitor' % ('updated' if existing else 'created') in result['msg']
    assert '2031-01-10T11:00:00Z' in result['msg']
    assert '2031-01-10T06:00:00Z' in result['msg']
    assert result['monitor']['maintenance_start_at'] == '2031-01-10T11:00:00Z'  # what the service now holds
    service.reset()
    service.timezone(NEW_YORK)
    service.clear_log()
    right = run(monitor, dict(fake_connection, account_timezone=NEW_YORK,
                              **window('2031-01-10T06:00:00Z', '2031-01-10T08:00:00Z')))
    assert right['changed']
    assert right['monitor']['maintenance_start_at'] == '2031-01-10T06:00:00Z'
    # The one request the given zone costs: the created record, read back; no account read.
    assert [(entry['method'], entry['path']) for entry in service.log()] == [
        ('GET', '/api/v1/monitors'), ('POST', '/api/v1/monitors'), ('GET', '/api/v1/monitors/1')]


def test_a_zone_is_known_without_a_system_time_zone_database(tmp_path):
    """A slim execution environment has no /usr/share/zoneinfo: the tzdata package of requirements.txt stands in."""
    collections = _schema.__file__
    for dummy in range(6):  # .../ansible_collections/uptime/monitoring/plugins/module_utils/_schema.py
        collections = os.path.dirname(collections)
    code = 'from ansible_collections.uptime.monitoring.plugins.module_utils._schema import named_zone; print(named_zone("%s"))' % NEW_YORK
    environ = dict(os.environ, PYTHONTZPATH=str(tmp_path), PYTHONPATH=os.pathsep.join([collections] + sys.path))
    ran = subprocess.run([sys.executable, '-c', code], env=environ, capture_output=True, text=True, check=False)
    assert ran.stdout.strip() == NEW_YORK, ran.stderr
