# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source uptime.monitoring.events: what no law says. The transitions, once each across restarts, and no
secret in an event or the state file, are tests/laws/test_event_source.py's; loading module_utils is tests/eda's; the
client's answers are tests/unit/plugins/module_utils'. The source is loaded as ansible-rulebook loads it
(``runpy.run_path``); UPTIME_EVENTS_SOURCE names another copy."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import json
import logging
import os
import runpy
import sys
import time
import urllib.parse

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
import state_versions
from emulator.control import PRIMARY_KEY

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
SOURCE_PATH = os.environ.get('UPTIME_EVENTS_SOURCE') or os.path.join(
    REPO_ROOT, 'extensions', 'eda', 'plugins', 'event_source', 'events.py')
MONITOR = {'name': 'web', 'url': 'https://web.example.com', 'interval': '60', 'request_method': 'GET',
           'alert_condition': 'url_unavailable'}
T0, T1, T2, T3 = ('2026-01-01T10:00:00.000000Z', '2026-01-01T10:05:00.000000Z', '2026-01-01T10:09:00.000000Z',
                  '2026-01-01T10:20:00.000000Z')


def in_own_event_loop(test):
    """A test of main() (a coroutine), run to its end in an event loop of its own: no pytest plugin needed."""
    @functools.wraps(test)
    def run_to_end(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))
    return run_to_end


@pytest.fixture
def source(monkeypatch):
    """A fresh copy of the source module (its globals), loaded the way ansible-rulebook loads it."""
    # Under ansible-test units, the collection loader's path hook claims every path, so run_path would take the
    # file for an import root; ansible-rulebook runs without that hook: a plain file is run as a script.
    monkeypatch.setitem(sys.path_importer_cache, SOURCE_PATH, None)
    return runpy.run_path(SOURCE_PATH)


def now_text(seconds_ago=0):
    return time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(time.time() - seconds_ago))


def create_monitor(emulator, name='web'):
    return emulator.records(monitors=[dict(MONITOR, name=name)])['monitors'][0]


def open_incident(emulator, monitor_id):
    return emulator.records(incidents=[{'monitor_id': monitor_id, 'started_at': now_text(60)}])['incidents'][0]


def make_poller(source, url, **args):
    return source['Poller'](source['parse_args'](dict(dict(api_url=url, api_key=PRIMARY_KEY, interval=1), **args), environ={}))


def summary(events):
    return [(event['uptime']['type'], event['uptime'].get('incident_id') or event['uptime']['monitor_id'],
             event['uptime']['previous_status'], event['uptime']['status']) for event in events]


def uuids(events):
    return [event['meta']['uuid'] for event in events]


def incident(incident_id, started, acknowledged=None, ended=None, monitor_id=1):
    return {'id': incident_id, 'monitor': {'id': monitor_id, 'name': 'web'}, 'started_at': started,
            'acknowledged_at': acknowledged, 'ended_at': ended}


def monitor(monitor_id, status, started, **more):
    return dict({'id': monitor_id, 'name': 'm%d' % monitor_id, 'status': status, 'started_at': started}, **more)


def sweep(tracker, records):
    """The events of a sweep of the whole monitor list that read ``records``."""
    events = tracker.monitor_events(records)
    tracker.sweep_over()
    return events


class Collector(list):
    async def put(self, event):
        self.append(event)


async def wait_for(predicate, timeout=60.0):
    """Waits until predicate() holds; the deadline only bounds a failing test on a loaded machine."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, 'timed out'
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def running(source, emulator, queue, gate=None, **args):
    """main() polling the emulator into ``queue``: yields its sleeps, recorded and cut to 0.05 s (with ``gate``, an
    asyncio.Event, each lasts until it opens); main() must not stop."""
    waits, real_sleep = [], asyncio.sleep

    async def fake(seconds):
        waits.append(seconds)
        await real_sleep(min(seconds, 0.05))
        if gate is not None:
            await gate.wait()
    source['main'].__globals__['_sleep'] = fake  # run_path hands back a copy of the globals: patch main()'s own
    task = asyncio.create_task(source['main'](queue, dict({'api_url': emulator.url, 'api_key': PRIMARY_KEY, 'interval': 1}, **args)))
    try:
        yield waits
        assert not task.done()
    finally:
        task.cancel()


def told(caplog, words):
    return [record for record in caplog.records if words in record.getMessage()]


def test_the_arguments_documented_read_from_the_environment_and_the_account_fingerprinted(source):
    documentation = yaml.safe_load(source['DOCUMENTATION'])
    assert list(documentation['options']) == list(source['OPTIONS'])
    assert documentation['options']['watch']['choices'] == list(source['WATCH_CHOICES'])
    for rulebook in yaml.safe_load(source['EXAMPLES']):
        assert set(rulebook['sources'][0]['uptime.monitoring.events']) <= set(source['OPTIONS'])
    # The environment of the modules is the fallback; arguments win over it.
    environ = {'UPTIME_API_URL': 'https://uptime.example.com/api/v1/', 'UPTIME_API_KEY': 'k' * 20 + '\n',
               'UPTIME_VALIDATE_CERTS': 'n'}
    settings = source['parse_args']({'eda_feedback_queue': object()}, environ=environ)  # what ansible-rulebook adds
    assert (settings['base_url'], settings['api_key'], settings['validate_certs']) == ('https://uptime.example.com', 'k' * 20, False)
    assert (settings['interval'], settings['watch'], settings['emit_existing'], settings['reserve']) == (
        60, ('incidents', 'monitors'), False, 30)
    settings = source['parse_args']({'api_url': 'http://a.example', 'api_key': 'from-args', 'validate_certs': 't',
                                     'watch': ['monitors'], 'reserve': ' 30 '}, environ=environ)
    assert (settings['base_url'], settings['api_key'], settings['validate_certs']) == ('http://a.example', 'from-args', True)
    assert (settings['watch'], settings['reserve']) == (('monitors',), 30)
    assert settings['account'] == source['_connection'].account_fingerprint(settings)  # its properties: test_connection.py's


# The connection options' rules are test_connection.py's; api_key shows they are the source's too.
@pytest.mark.parametrize('args, words', [
    ({'api_key': None}, ['api_key', 'UPTIME_API_KEY']), ({'interval': 0}, ['interval', 'greater than 0']),
    ({'api_url': 'https://secret-key-1234@u.example'}, ['api_url', 'https://********@u.example']),
    ({'watch': ['incidents', 'pages']}, ['watch', 'incidents and monitors']), ({'emit_existing': 'maybe'}, ['emit_existing', 'boolean']),
    ({'delay': 5}, ['unknown argument', 'delay', 'interval']), ({'sweep_period': 30, 'interval': 60}, ['sweep_period', 'at least 60']),
    ({'reserve': -1}, ['reserve', 'whole number']), ({'reserve': 2.5}, ['reserve', 'whole number']), ({'reserve': True}, ['reserve', 'whole number']),
])
def test_invalid_arguments_are_refused_with_the_field_named(source, args, words):
    args = {key: value for key, value in dict({'api_url': 'https://u.example', 'api_key': 'secret-key-1234'}, **args).items()
            if value is not None}
    with pytest.raises(source['SourceError']) as caught:
        source['parse_args'](args, environ={})
    for word in words:
        assert word in str(caught.value)
    assert 'secret-key-1234' not in str(caught.value)


@pytest.mark.parametrize('fault, transient, words', [
    ({'kind': 'status', 'status': 429, 'retry_after': 7}, True, ['429', 'Too Many Attempts.']),
    ({'kind': 'status', 'status': 500}, True, ['500', 'Server Error']),
    ({'kind': 'html', 'status': 200}, True, ['not the expected JSON', 'api_url must be the base address']),
    ({'kind': 'drop'}, True, []), ({'kind': 'status', 'status': 401}, False, ['401', 'api_key']),
    ({'kind': 'status', 'status': 403}, False, ['403']), ({'kind': 'status', 'status': 422}, False, ['422']),
    ({'kind': 'html', 'status': 404}, False, ['404', 'a wrong address or a proxy', 'api_url must be the base address']),
])
def test_answers_are_sorted_into_transient_and_fatal(emulator, source, fault, transient, words):
    emulator.fault(fault.pop('kind'), path='/api/v1/incidents', **fault)
    with pytest.raises(source['UptimeApiError'] if transient else source['SourceError']) as caught:
        make_poller(source, emulator.url).poll()
    for word in words:
        assert word in str(caught.value)
    assert not transient or (caught.value.transient and caught.value.retry_after == fault.get('retry_after'))
    assert len(emulator.log()) == 1  # no retry inside a poll: the next poll is the retry


@in_own_event_loop
@pytest.mark.parametrize('fault, wait', [({'kind': 'status', 'status': 500}, None), ({'kind': 'html', 'status': 502}, None),
                                         ({'kind': 'status', 'status': 429, 'retry_after': 17}, 17)])
async def test_transient_failures_warn_and_back_off_or_wait_as_asked(emulator, source, caplog, fault, wait):
    web, queue, gate = create_monitor(emulator, 'web'), Collector(), asyncio.Event()
    async with running(source, emulator, queue, gate, interval=2) as waits:
        await wait_for(lambda: waits)  # the first poll is over: main() sleeps until the gate opens
        assert waits == [2], 'the first poll failed: the source backed off %r s' % waits
        emulator.fault(fault.pop('kind'), count=1 if wait else 3, path='/api/v1/incidents', method='GET', **fault)
        open_incident(emulator, web)
        gate.set()
        await wait_for(lambda: len(queue) == 2)
    if wait:
        assert wait in waits
        assert told(caplog, 'as the service asks')
        return
    warnings = [record.getMessage() for record in told(caplog, 'polling again') if record.levelno == logging.WARNING]
    assert len(warnings) >= 3
    assert 'nothing is lost' in warnings[0]
    failed = [pause for pause in waits if pause != 2]  # 2, then about 4, then about 8 (with jitter)
    assert len(failed) >= 2
    assert failed[1] > failed[0] > 1.5


@in_own_event_loop
async def test_an_unexpected_error_is_logged_and_polling_goes_on(emulator, source, caplog, monkeypatch):
    web = create_monitor(emulator, 'web')
    read_monitors, calls = source['Tracker'].monitor_events, []

    def fails_once(self, records, explained=None):
        calls.append(1)
        if len(calls) == 2:
            raise KeyError('a record this source cannot read')
        return read_monitors(self, records, explained)
    monkeypatch.setattr(source['Tracker'], 'monitor_events', fails_once)
    queue = Collector()
    async with running(source, emulator, queue):
        await wait_for(lambda: len(calls) >= 4)  # the first poll failed and was undone; the second is the baseline
        incident_id = open_incident(emulator, web)
        await wait_for(lambda: len(queue) == 2)
    assert summary(queue)[0] == ('incident_opened', incident_id, None, 'unresolved')
    assert told(caplog, 'failed unexpectedly (KeyError')


@in_own_event_loop
@pytest.mark.parametrize('args, first_poll', [
    ({}, 'the first poll records what is there and sends nothing'),
    ({'emit_existing': True}, 'the first poll sends every ongoing incident and every monitor that is not online, found on start'),
    ({'emit_existing': True, 'watch': ['monitors']}, 'the first poll sends every monitor that is not online, found on start'),
    ({'catch_up': True}, 'the first poll sends each incident opened, acknowledged or resolved within lookback and every '
                         'monitor offline, paused or in maintenance, found on start'),
])
async def test_the_source_says_once_at_start_where_it_polls_and_how_often(emulator, source, caplog, args, first_poll):
    """ansible-rulebook shows a source's WARNING lines without -v: the start is told at that level, the key never."""
    async with running(source, emulator, Collector(), api_url=emulator.url + '/api/v1/', interval=2, **args) as waits:
        await wait_for(lambda: waits.count(2) >= 3)  # three polls
    starts = [record for record in caplog.records if record.getMessage().startswith('polling ')]
    assert [record.levelno for record in starts] == [logging.WARNING]
    assert starts[0].getMessage() == 'polling %s every 2s for %s; %s' % (
        emulator.url, ' and '.join(args.get('watch', ['incidents', 'monitors'])), first_poll)
    assert PRIMARY_KEY not in caplog.text


def test_an_incident_event_shows_the_incident_as_the_modules_do(source):
    monitor_record = monitor(1, 'offline', T0, url='https://web.example.com', interval='60')
    tracker = source['Tracker']('https://u.example')
    tracker.incident_events([], [])
    events = tracker.incident_events([{'id': 3, 'monitor': monitor_record, 'cause': 'down', 'started_at': T0, 'acknowledged_at': None,
                                       'ended_at': '2026-01-01T10:30:00.000000Z', 'status': 'unresolved', 'url': 'x'}], [])
    shown = events[-1]['uptime']['incident']
    # The status is derived by the service's rule (ended: resolved), whatever the record says; times in UTC with Z.
    assert (shown['id'], shown['monitor_id'], shown['monitor_name'], shown['status'], shown['duration']) == (3, 1, 'm1', 'resolved', 1800)
    assert (shown['started_at'], shown['ended_at'], 'url' in shown) == ('2026-01-01T10:00:00Z', '2026-01-01T10:30:00Z', False)
    assert shown['monitor'] == events[-1]['uptime']['monitor']
    assert shown['monitor']['interval'] == 60


def test_emit_existing_sends_what_is_ongoing_with_the_uuids_of_the_live_events(source):
    live = source['Tracker']('https://u.example')
    live.incident_events([], [])
    sweep(live, [monitor(1, 'online', T0)])
    seen_live = live.incident_events([incident(5, T1, T2)], []) + sweep(live, [monitor(1, 'offline', T1)])
    restarted = source['Tracker']('https://u.example', emit_existing=True)
    existing = restarted.incident_events([incident(5, T1, T2), incident(3, T0, T1, T2)], [])
    existing += sweep(restarted, [monitor(1, 'offline', T1), monitor(2, 'online', T0), monitor(3, 'pending', T0)])
    assert summary(existing) == [('incident_opened', 5, None, 'unresolved'), ('incident_acknowledged', 5, 'unresolved', 'acknowledged'),
                                 ('monitor_status_changed', 1, None, 'offline'), ('monitor_status_changed', 3, None, 'pending')]
    assert all(event['uptime']['existing'] for event in existing)
    assert sorted(uuids(existing[:3])) == sorted(uuids(seen_live))
    other = source['Tracker']('https://other.example', emit_existing=True)  # another service, the same ids: other uuids
    assert not set(uuids(other.incident_events([incident(5, T1, T2)], []))) & set(uuids(seen_live))


def test_entering_and_leaving_maintenance_are_distinct_from_the_online_period(source):
    tracker = source['Tracker']('https://u.example')
    online = monitor(1, 'online', T0, maintenance_start_at=T1, maintenance_end_at=T2)
    sweep(tracker, [dict(online, status='offline', started_at='2025-12-31T00:00:00Z')])
    events = sweep(tracker, [online]) + sweep(tracker, [dict(online, status='maintenance')]) + sweep(tracker, [online])
    assert [item[2:] for item in summary(events)] == [('offline', 'online'), ('online', 'maintenance'), ('maintenance', 'online')]
    assert [event['uptime']['at'] for event in events[1:]] == ['2026-01-01T10:05:00Z', '2026-01-01T10:09:00Z']  # the window
    # A window set at 10:30 with a start in the past began, for the source, when it last read the monitor online.
    tracker.begin_poll(T3, '2026-01-01T10:25:00Z')
    sweep(tracker, [online])
    tracker.begin_poll(T3, '2026-01-01T10:30:00Z')
    (event,) = sweep(tracker, [dict(online, status='maintenance', maintenance_start_at=T0)])
    assert (event['uptime']['at'], event['uptime']['late']) == ('2026-01-01T10:25:00Z', False)


def test_a_monitor_created_after_the_first_poll_is_new_before_the_first_sweep_ends(source):
    tracker = source['Tracker']('https://u.example')
    tracker.begin_poll(T1, T1)  # the first poll: its sweep reads the first page only
    events = tracker.monitor_events([monitor(150, 'paused', T2, created_at=T2), monitor(151, 'paused', T0, created_at=T0)])
    assert summary(events) == [('monitor_status_changed', 150, None, 'paused')]  # 151 is part of the baseline


@pytest.mark.parametrize('kind, first, then', [
    ('monitor', [monitor(7, 'online', T0, id='7a')], [monitor(7, 'offline', T1, id='7a')]),
    ('incident', [], [dict(incident(1, T0), id='x1')]),
])
def test_a_record_whose_id_is_not_an_integer_is_left_out_with_one_warning(source, caplog, kind, first, then):
    """A playbook reads the ids of an event (acknowledge_incident's incident_id)."""
    tracker = source['Tracker']('https://u.example')
    for records in (first, then, then):
        assert (tracker.incident_events(records, []) if kind == 'incident' else sweep(tracker, records)) == []
    assert [record.getMessage() for record in told(caplog, 'cannot be read')] == [
        '%s %s cannot be read (ValidationError in id): it is left out of the events until it can be' % (kind, then[0]['id'])]


class PagedClient:
    """A stand-in client: incident pages as given, the records a read by id may show, and the service's clock (the
    Date of its answers); counts requests."""

    def __init__(self, pages, records=None, date=datetime.datetime(2026, 1, 1, 10, 21)):
        self.pages_given, self.records, self.requests, self.service_date = pages, records or {}, [], date

    def iter_pages(self, path, params=None):
        for records in self.pages_given:
            self.requests.append(path)
            yield records

    def get_or_none(self, path):
        self.requests.append(path)
        return self.records.get(path)


def test_the_floor_is_lookback_before_the_service_clock_and_vanished_ongoing_incidents_are_read_a_few_a_poll(source):
    settings = source['parse_args']({'api_url': 'https://u.example', 'api_key': 'k1234', 'watch': ['incidents'], 'lookback': 600,
                                     'interval': 1, 'sweep_period': 1}, environ={})
    # At 10:21 by the service's clock, the floor is 10:11: the second page reaches an end below it and reading stops.
    first = PagedClient([[incident(1, T0), incident(7, T0, None, T3)], [incident(2, T0, None, T2)], [incident(5, T0, None, T0)]])
    poller = source['Poller'](settings, client=first)
    assert poller.poll() == []
    assert first.requests == ['/api/v1/incidents'] * 2
    # At 10:25 (floor 10:15): incident 1 was resolved at 10:05, back-dated below the floor, and 6 ended at 10:09: history.
    # Incident 4 opened at 10:05, below the floor too; its end at 10:20 is news, found after the poll at 10:21 began.
    poller.client = later = PagedClient([[incident(4, T1, None, T3), incident(7, T0, None, T3), incident(6, T0, None, T2)]],
                                        {'/api/v1/incidents/1': incident(1, T0, None, T1)}, datetime.datetime(2026, 1, 1, 10, 25))
    events = poller.poll()
    assert summary(events) == [('incident_resolved', 4, 'unresolved', 'resolved')]
    assert events[0]['uptime']['late'] is True
    assert later.requests == ['/api/v1/incidents', '/api/v1/incidents/1']
    poller = source['Poller'](settings, client=PagedClient([[incident(number, T0) for number in range(1, 26)]]))
    poller.poll()
    deleted = []
    for expected_reads in (20, 5, 0):  # a bulk delete: all 25 are gone; each poll reads at most 20 of them one by one
        client = poller.client = PagedClient([[]])
        deleted.extend(event['uptime']['incident_id'] for event in poller.poll())
        assert len(client.requests) == 1 + expected_reads
    assert sorted(deleted) == list(range(1, 26))


def test_the_monitor_list_is_read_a_page_a_poll_and_a_change_seen_late_says_so(emulator, source):
    emulator.seed(250)  # three pages
    poller = make_poller(source, emulator.url, sweep_period=3, watch=['monitors'])  # interval 1: a page a poll
    assert [poller.poll() for dummy in range(3)] == [[], [], []]  # the baseline
    assert [urllib.parse.parse_qs(entry['query'])['page'] for entry in emulator.log()
            if entry['path'] == '/api/v1/monitors'] == [['1'], ['2'], ['3']]
    for monitor_id in (1, 250):
        assert emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 1}).status == 200
    first_page = poller.poll()
    assert summary(first_page) == [('monitor_status_changed', 1, 'online', 'paused')]
    assert not first_page[0]['uptime']['late']
    time.sleep(1.1)  # timestamps have a resolution of one second: the next poll begins after the pause
    assert poller.poll() == []
    last_page = poller.poll()
    assert summary(last_page) == [('monitor_status_changed', 250, 'online', 'paused')]
    assert last_page[0]['uptime']['late'] is True
    assert last_page[0]['uptime']['at'] < last_page[0]['uptime']['seen_at']
    poller.last_poll -= 3  # as after a poll that took long, or a backoff: the whole list is due
    emulator.clear_log()
    poller.poll()
    assert [entry['path'] for entry in emulator.log()].count('/api/v1/monitors') == 3


def test_incidents_held_back_after_their_first_page_are_read_later_and_never_taken_for_deleted(emulator, source):
    emulator.seed(250, offline=150)  # 150 ongoing incidents: two pages, the newest first
    emulator.rate_limit(100)
    poller = make_poller(source, emulator.url, sweep_period=3, reserve=50)
    poller.poll()  # the baseline, whole
    time.sleep(1.1)  # the seed's newest incident may have begun this very second
    assert emulator.api('PUT', '/api/v1/incidents/1', data={'ended_at': now_text()}).status == 200  # on the second page
    emulator.check(250, 'offline')  # a new incident: on the first page
    while int(emulator.api('GET', '/api/v1/account').headers['X-RateLimit-Remaining']) > 51:
        pass  # other traffic of the account, until one request is left to spare
    events = poller.poll()
    assert poller.held_back
    assert len(poller.tracker.ongoing_ids()) == 151
    assert [item[:2] for item in summary(events) if item[0].startswith('incident')] == [('incident_opened', 151)]
    poller.client.rate_limit = source['_client'].RateLimit()  # the count is renewed
    emulator.rate_limit(100)
    assert ('incident_resolved', 1, 'unresolved', 'resolved') in summary(poller.poll())
    assert not poller.held_back


def test_a_sweep_the_reserve_starves_reads_a_page_before_the_incidents_once_a_sweep_period(emulator, source):
    emulator.seed(250)  # three pages
    poller = make_poller(source, emulator.url, sweep_period=3, reserve=50)
    for dummy in range(3):
        poller.poll()  # the baseline: a page a poll
    assert emulator.api('PUT', '/api/v1/monitors/50', data={'pause': 1}).status == 200  # on the first page
    for starved in (False, True):
        poller.page_read_at -= 3 * starved  # no page read for a whole sweep_period
        emulator.rate_limit(100)
        poller.client.rate_limit = source['_client'].RateLimit()  # a new window, which other traffic spends
        while int(emulator.api('GET', '/api/v1/account').headers['X-RateLimit-Remaining']) > 51:
            pass
        emulator.clear_log()
        events = poller.poll()
        assert poller.held_back
        # one request to spare, never below the reserve
        assert [entry['path'] for entry in emulator.log()] == ['/api/v1/monitors' if starved else '/api/v1/incidents']
    assert summary(events) == [('monitor_status_changed', 50, 'online', 'paused')]
    emulator.rate_limit(0)
    poller.client.rate_limit = source['_client'].RateLimit()
    read_at = poller.page_read_at = poller.page_read_at - 3
    emulator.fault('status', status=500, method='GET', path='/api/v1/incidents')
    with pytest.raises(source['UptimeApiError']):
        poller.poll()
    assert poller.page_read_at == read_at  # the page of a poll that failed is read again: the sweep's turn is not spent


@in_own_event_loop
async def test_the_source_never_spends_the_reserve_and_its_events_come_later(emulator, source, caplog, monkeypatch):
    web = create_monitor(emulator, 'web')
    monkeypatch.setattr(source['_client'], 'RATE_WINDOW', 3.0)
    emulator.rate_limit(8, window_seconds=3)
    remaining, observe = [], source['_client'].RateLimit.observe

    def recording(self, headers):
        observe(self, headers)
        remaining.append(self.remaining)
    monkeypatch.setattr(source['_client'].RateLimit, 'observe', recording)
    queue = Collector()
    async with running(source, emulator, queue, reserve=5):
        await wait_for(lambda: told(caplog, 'kept for playbooks and people'))
        incident_id = open_incident(emulator, web)  # other traffic, while the source holds back
        await wait_for(lambda: len(queue) == 2)
        await wait_for(lambda: told(caplog, 'reading at full pace'))
    assert sorted(summary(queue)) == [('incident_opened', incident_id, None, 'unresolved'),
                                      ('monitor_status_changed', web, 'pending', 'offline')]
    assert min(remaining) >= 5
    assert not [entry for entry in emulator.log() if entry['status'] == 429]
    # Once each way per busy spell, never once per poll.
    assert len(told(caplog, 'kept for playbooks and people')) - len(told(caplog, 'reading at full pace')) in (0, 1)
    source['warn_reserve_above_limit'](make_poller(source, emulator.url, reserve=8))  # no count read yet: nothing to say
    poller = make_poller(source, emulator.url, reserve=8)
    poller.poll()
    source['warn_reserve_above_limit'](poller)
    source['warn_reserve_above_limit'](poller)
    assert [record.getMessage().count('reserve 8') for record in told(caplog, 'not below the account')] == [1]


@pytest.mark.parametrize('url, account, change, words, catch_up', [
    ('https://b.example', 'account-a', None, 'another api_url', False),
    ('https://a.example', 'account-b', None, 'another account', False),
    ('https://a.example', 'account-a', lambda state: dict(state, version=1), 'version 1', True),
    ('https://a.example', 'account-a', lambda state: dict(state, version=7), 'another version', True),
    ('https://a.example', 'account-a', lambda state: '{"version": 2, "api_u', 'cannot be read', True),
])
def test_a_state_file_of_another_service_account_or_version_or_broken_is_a_fresh_start(
        source, tmp_path, caplog, url, account, change, words, catch_up):
    """Issue 56: a file of another service or account is a new baseline; one that is only lost (unreadable, of a
    version that named no account or that this one does not know) is caught up from the service."""
    tracker, path = source['Tracker']('https://a.example', account='account-a'), str(tmp_path / 'state.json')
    tracker.incident_events([incident(1, T0)], [])
    source['save_state'](tracker, path)
    same = source['Tracker']('https://a.example', account='account-a')
    assert source['load_state'](same, path)
    assert list(same.incidents) == [1]
    with open(path, encoding='utf-8') as handle:
        state = json.load(handle)
    if change:
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write(change(state) if isinstance(change(state), str) else json.dumps(change(state)))
    other = source['Tracker'](url, account=account)
    assert not source['load_state'](other, path)
    assert other.incidents is None  # not read as the others' deletions
    assert words in caplog.text
    assert other.catch_up == catch_up
    assert ('catching up from the service' if catch_up else 'new baseline') in caplog.text


STATUSES = ('online', 'offline', 'paused', 'maintenance')
INCIDENT_STAGES = {'unresolved': {}, 'acknowledged': {'acknowledged': T1}, 'resolved': {'acknowledged': T1, 'ended': T2}}


# What versions before 5 kept plain in the monitor of an incident: a URL's user-info and sig value, a webhook's path,
# a fact of a secret name.
SECRETS_BEFORE_VERSION_5 = ('ghp_', 'hunter2-secret', 'sig-secret-123', 'slack-secret-456', 'sas-secret-789')
PLAIN_BEFORE_VERSION_5 = {
    'url': 'https://admin:hunter2-secret@status.example.com/health?sig=sig-secret-123',
    'alerts': [{'key': 'webhook', 'value': 'https://hooks.slack.com/services/T0/B0/slack-secret-456'}],
    'sas': 'sas-secret-789'}
EARLY = '2026-01-01T08:00:00.000000Z'  # before the lookback of every poll of these laws


def draw_account(draw, monitor_ids=4):
    """Monitors and incidents of an account: what a poll reads. An incident nests its monitor, as the service's do; at
    most one a monitor, opened before the lookback of a poll or within it."""
    drawn = draw(st.dictionaries(st.integers(1, monitor_ids), st.tuples(st.sampled_from(STATUSES), st.sampled_from((EARLY, T0, T1))),
                                 max_size=monitor_ids))
    monitors = {key: monitor(key, status, started, url='https://ghp_%s@status.example.com/' % ('x' * 36))
                for key, (status, started) in drawn.items()}
    incidents = draw(st.dictionaries(st.sampled_from(sorted(monitors)), st.tuples(st.sampled_from(sorted(INCIDENT_STAGES)),
                                                                                  st.sampled_from((EARLY, T0))))) if monitors else {}
    return (list(monitors.values()),
            [dict(incident(key, started, monitor_id=key, **INCIDENT_STAGES[stage]), monitor=monitors[key])
             for key, (stage, started) in incidents.items()])


def poll(tracker, account, at):
    """The events of a poll that read ``account`` (monitors, incidents) whole, as Poller.poll makes them."""
    monitors, incidents = account
    tracker.begin_poll(at, at)
    incident_events, nested_events = tracker.incidents_read(incidents, [])
    events = incident_events + nested_events + sweep(tracker, monitors)
    tracker.end_poll()
    return tracker.admitted(events)


def transitions(events):
    return sorted((event['meta']['uuid'], event['uptime']['type'], event['uptime']['status'], event['uptime']['previous_status'],
                   event['uptime']['found_on_start']) for event in events)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(written_key=st.sampled_from(['key-a', 'key-b']), key=st.sampled_from(['key-a', 'key-b']),
       written_account=st.sampled_from(['account 1', 'account 2']), account=st.sampled_from(['account 1', 'account 2']),
       shape=st.sampled_from(state_versions.EARLIER_SHAPES + ('6',)), data=st.data())
def test_a_state_of_any_version_carries_on_for_the_same_account_whatever_its_key(
        source, tmp_path_factory, written_key, key, written_account, account, shape, data):
    """Issue 56: a state of this version is the account's whatever key wrote it (a rotated key carries on); one of
    versions 2 to 5, which knew the account by its key, is migrated when the key is this source's, and the polls
    after it send what they send after a state of this version; else (version 1 named no account, or another key) the
    source catches up. A record kept plain by an earlier version is masked."""
    path, version = str(tmp_path_factory.mktemp('state') / 'state.json'), int(shape.split()[0])
    before, after = draw_account(data.draw), draw_account(data.draw, monitor_ids=6)  # and monitors created since
    writer = source['Tracker']('https://a.example', account=written_account, key=written_key)
    poll(writer, before, '2026-01-01T10:10:00Z')
    state = json.loads(json.dumps(writer.to_state()))
    for entry in state['incidents'] if version < 5 else ():  # versions before 5 kept plain what the view masks now
        entry['record']['monitor'].update(PLAIN_BEFORE_VERSION_5)
    with open(path, 'w', encoding='utf-8') as handle:
        json.dump(state if version == 6 else state_versions.written_by(state, shape, written_key), handle)
    reader = source['Tracker']('https://a.example', account=account, key=key)
    taken = source['load_state'](reader, path)
    assert taken == (written_account == account if version == 6 else version > 1 and written_key == key), (version, taken)
    assert reader.catch_up == (not taken and version != 6)
    if not taken:
        return
    assert (reader.to_state()['version'], reader.to_state()['account']) == (source['STATE_VERSION'], account)
    deleted = source['Tracker']('https://a.example', account=account, key=key)
    source['load_state'](deleted, path)
    deleted.begin_poll('2026-01-01T10:20:00Z', '2026-01-01T10:20:00Z')
    shown = json.dumps([reader.to_state(), deleted.incident_events([], deleted.ongoing_ids())])
    assert not [secret for secret in SECRETS_BEFORE_VERSION_5 if secret in shown]
    carried_on, kept = source['Tracker']('https://a.example', account=account, key=key), dict(writer.to_state(), account=account)
    if shape in ('2', '3', '4') and kept['monitors'] is not None:  # they kept no read_at: a change's at is not held to it
        kept['monitors'] = [{name: value for name, value in entry.items() if name != 'read_at'} for entry in kept['monitors']]
    assert carried_on.load_state(kept)
    assert transitions(poll(reader, after, '2026-01-01T10:20:00Z')) == transitions(poll(carried_on, after, '2026-01-01T10:20:00Z'))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), lookback=st.sampled_from([60, 400, 3600]), emit_existing=st.booleans())
def test_a_catch_up_sends_what_happened_within_lookback_and_the_troubled_monitors_once(source, data, lookback, emit_existing):
    """Issue 56: a start without state, with catch_up, sends each incident transition within lookback of the first poll
    and each monitor offline, paused or in maintenance, found on start; emit_existing adds what is ongoing and every
    monitor not online, however old; the same account read again sends nothing."""
    monitors, incidents = account = draw_account(data.draw)
    tracker = source['Tracker']('https://a.example', emit_existing=emit_existing, lookback=lookback, catch_up=True)
    events = poll(tracker, account, '2026-01-01T10:10:00Z')
    floor = {60: '2026-01-01T10:09:00', 400: '2026-01-01T10:03:20', 3600: '2026-01-01T09:10:00'}[lookback]
    expected = set()
    for record in incidents:
        history = record['ended_at'] is not None and record['ended_at'][:19] < floor
        for transition, stamp, status in source['_event_tracker'].INCIDENT_TRANSITIONS:
            if record[stamp] and not history and (record[stamp][:19] >= floor or (emit_existing and record['ended_at'] is None)):
                expected.add(('incident_' + transition, record['id'], status))
    resolved = {record['id'] for record in incidents if record['ended_at'] and record['ended_at'][:19] >= floor}
    for record in monitors:
        if record['status'] in ('offline', 'paused', 'maintenance') or (emit_existing and record['status'] != 'online'):
            expected.add(('monitor_status_changed', record['id'], record['status']))
        elif record['id'] in resolved and record['started_at'][:19] >= floor:  # online again since its incident, within lookback
            expected.add(('monitor_status_changed', record['id'], 'online'))
    assert {(event['uptime']['type'], event['uptime']['incident_id'] or event['uptime']['monitor_id'], event['uptime']['status'])
            for event in events} == expected
    assert len(events) == len(expected)
    assert all(event['uptime']['found_on_start'] for event in events)
    assert poll(tracker, account, '2026-01-01T10:11:00Z') == []
