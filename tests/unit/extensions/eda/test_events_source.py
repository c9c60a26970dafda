# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source uptime.monitoring.events: its arguments, how it talks to the service (through the
collection's own module_utils), the transitions it finds, the uuids it gives them, its state file and its error
policy, against the emulator and a scripted HTTP server.

The source is loaded with ``runpy.run_path``, as ansible-rulebook loads it. UPTIME_EVENTS_SOURCE points the
tests at another copy of the file (for example the one of an older commit, to see which tests it fails).
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import http.server
import json
import logging
import os
import runpy
import shutil
import sys
import threading
import time
import urllib.parse

import pytest
import yaml
from emulator.control import NOPLAN_KEY, OTHER_KEY, PRIMARY_KEY, Emulator

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
SOURCE_PATH = os.environ.get('UPTIME_EVENTS_SOURCE') or os.path.join(
    REPO_ROOT, 'extensions', 'eda', 'plugins', 'event_source', 'events.py')
MASK = '********'

MONITOR = {'name': 'web', 'url': 'https://web.example.com', 'interval': '60',
           'request_method': 'GET', 'alert_condition': 'url_unavailable'}


def run_source(monkeypatch, path=SOURCE_PATH):
    """The globals of the source file at ``path``, run the way ansible-rulebook runs it."""
    # Under ansible-test units, the collection loader's path hook claims every path, so run_path would
    # take the file for an import root and look for __main__ in it. ansible-rulebook runs without that
    # hook: a plain file has no importer, and run_path then runs it as a script.
    monkeypatch.setitem(sys.path_importer_cache, path, None)
    return runpy.run_path(path)


@pytest.fixture
def source(monkeypatch):
    """A fresh copy of the source module (its globals), loaded the way ansible-rulebook loads it."""
    return run_source(monkeypatch)


def now_text(seconds_ago=0):
    moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return moment.strftime('%Y-%m-%dT%H:%M:%S')


def create_monitor(emulator, name='web', api_key=None, **fields):
    answer = emulator.api('POST', '/api/v1/monitors', api_key=api_key, data=dict(MONITOR, name=name, **fields))
    assert answer.status in (200, 201), answer.text
    return answer.json['data']['id']


def open_incident(emulator, monitor_id, seconds_ago=60, api_key=None, **fields):
    answer = emulator.api('POST', '/api/v1/incidents', api_key=api_key,
                          data=dict(monitor_id=monitor_id, started_at=now_text(seconds_ago), **fields))
    assert answer.status in (200, 201), answer.text
    return answer.json['data']['id']


def update_incident(emulator, incident_id, **fields):
    answer = emulator.api('PUT', '/api/v1/incidents/%d' % incident_id, data=fields)
    assert answer.status == 200, answer.text


def make_poller(source, url, key=PRIMARY_KEY, **args):
    settings = source['parse_args'](dict(dict(api_url=url, api_key=key, interval=1), **args), environ={})
    return source['Poller'](settings)


def summary(events):
    return [(event['uptime']['type'], event['uptime'].get('incident_id') or event['uptime']['monitor_id'],
             event['uptime']['previous_status'], event['uptime']['status']) for event in events]


def uuids(events):
    return [event['meta']['uuid'] for event in events]


# -- loading the collection's module_utils --------------------------------------------------------------------


def test_the_source_uses_the_module_utils_of_its_own_collection(source):
    module_utils = os.path.join(os.path.dirname(os.path.abspath(SOURCE_PATH)), '..', '..', '..', '..', 'plugins',
                                'module_utils')
    for name in ('_client', '_schema', '_connection'):
        loaded = source[name]
        assert os.path.samefile(loaded.__file__, os.path.join(module_utils, name + '.py'))
        # A private package name: another ansible_collections tree on sys.path cannot stand in for it.
        assert not loaded.__name__.startswith('ansible_collections.')
    assert source['LOAD_ERROR'] is None


def copy_source(tmp_path, with_module_utils=True):
    """A copy of the collection's source file (and of its module_utils) in a tree of its own."""
    root = tmp_path / 'ansible_collections' / 'uptime' / 'monitoring'
    target = root / 'extensions' / 'eda' / 'plugins' / 'event_source'
    target.mkdir(parents=True)
    shutil.copy(SOURCE_PATH, str(target / 'events.py'))
    if with_module_utils:
        shutil.copytree(os.path.join(REPO_ROOT, 'plugins', 'module_utils'), str(root / 'plugins' / 'module_utils'))
    return str(target / 'events.py')


@pytest.mark.asyncio
@pytest.mark.parametrize('broken, words', [
    ('no module_utils', ['plugins/module_utils', 'ansible-galaxy collection install']),
    ('no requests', ['requests is required', 'pip install requests']),
])
async def test_a_collection_that_cannot_be_loaded_stops_main_at_once_with_one_line(tmp_path, monkeypatch, broken,
                                                                                   words):
    if broken == 'no requests':
        monkeypatch.setitem(sys.modules, 'requests', None)  # import requests fails
    path = copy_source(tmp_path, with_module_utils=broken != 'no module_utils')
    copy = run_source(monkeypatch, path)  # loading the file itself never fails
    with pytest.raises(copy['SourceError']) as caught:
        await asyncio.wait_for(copy['main'](Collector(), {'api_url': 'https://u.example', 'api_key': 'k1234'}), 5)
    message = str(caught.value)
    assert '\n' not in message
    for word in words:
        assert word in message


# -- documentation and arguments ----------------------------------------------------------------------


def test_documentation_lists_exactly_the_options_the_source_reads(source):
    documentation = yaml.safe_load(source['DOCUMENTATION'])
    assert list(documentation['options']) == list(source['OPTIONS'])
    assert documentation['options']['watch']['choices'] == list(source['WATCH_CHOICES'])
    for rulebook in yaml.safe_load(source['EXAMPLES']):
        assert rulebook['sources'][0].keys() == {'uptime.monitoring.events'}
        assert set(rulebook['sources'][0]['uptime.monitoring.events']) <= set(source['OPTIONS'])


def test_arguments_fall_back_to_the_environment_of_the_modules(source):
    settings = source['parse_args']({}, environ={'UPTIME_API_URL': 'https://uptime.example.com/api/v1/',
                                                 'UPTIME_API_KEY': 'k' * 20, 'UPTIME_VALIDATE_CERTS': 'false'})
    assert settings['base_url'] == 'https://uptime.example.com'
    assert settings['api_key'] == 'k' * 20
    assert settings['validate_certs'] is False
    assert settings['interval'] == 60
    assert settings['watch'] == ('incidents', 'monitors')
    assert settings['emit_existing'] is False


@pytest.mark.parametrize('text, expected', [('y', True), ('t', True), ('n', False), ('f', False), ('yes', True),
                                            ('0', False)])
def test_validate_certs_takes_what_ansible_booleans_take_as_the_modules_do(source, text, expected):
    settings = source['parse_args']({}, environ={'UPTIME_API_URL': 'https://uptime.example.com',
                                                 'UPTIME_API_KEY': 'k' * 20, 'UPTIME_VALIDATE_CERTS': text})
    assert settings['validate_certs'] is expected


def test_an_argument_wins_over_its_environment_variable(source):
    settings = source['parse_args']({'api_url': 'http://a.example', 'api_key': 'from-args', 'validate_certs': True,
                                     'watch': ['monitors']},
                                    environ={'UPTIME_API_URL': 'http://b.example', 'UPTIME_API_KEY': 'from-env',
                                             'UPTIME_VALIDATE_CERTS': 'false'})
    assert (settings['base_url'], settings['api_key'], settings['validate_certs']) == ('http://a.example', 'from-args', True)
    assert settings['watch'] == ('monitors',)


@pytest.mark.parametrize('args, words', [
    ({'api_url': 'https://u.example'}, ['api_key', 'UPTIME_API_KEY']),
    ({'api_key': 'secret-key-1234'}, ['api_url', 'UPTIME_API_URL']),
    ({'api_url': 'ftp://u.example', 'api_key': 'secret-key-1234'}, ['api_url', 'http']),
    ({'api_url': 'https://u.example', 'api_key': 'secret-key-1234', 'interval': 0}, ['interval', 'greater than 0']),
    ({'api_url': 'https://u.example', 'api_key': 'secret-key-1234', 'watch': ['incidents', 'pages']},
     ['watch', 'incidents and monitors']),
    ({'api_url': 'https://u.example', 'api_key': 'secret-key-1234', 'emit_existing': 'maybe'}, ['emit_existing', 'boolean']),
    ({'api_url': 'https://u.example', 'api_key': 'secret-key-1234', 'delay': 5}, ['unknown argument', 'delay', 'interval']),
    ({'api_url': 'https://u.example', 'api_key': 'secret-key-1234', 'ca_path': '/nonexistent/ca.pem'},
     ['ca_path', 'no such file']),
    ({'api_url': 'https://u.example', 'api_key': 'secret-key-1234', 'timeout': 'soon'}, ['timeout', 'number']),
    # Read from a file with more than the key: refused before any request, as the modules refuse it.
    ({'api_url': 'https://u.example', 'api_key': 'secret-key-1234\nsecret-key-1234'}, ['api_key', 'white space']),
])
def test_invalid_arguments_are_refused_with_the_field_named(source, args, words):
    with pytest.raises(source['SourceError']) as caught:
        source['parse_args'](args, environ={})
    for word in words:
        assert word in str(caught.value)
    assert 'secret-key-1234' not in str(caught.value)


def test_arguments_ansible_rulebook_adds_are_accepted(source):
    settings = source['parse_args']({'api_url': 'https://u.example', 'api_key': 'k1234', 'eda_feedback_queue': object()},
                                    environ={})
    assert settings['api_key'] == 'k1234'


def test_an_api_key_read_with_a_trailing_newline_is_trimmed_as_the_modules_trim_it(emulator, source):
    web = create_monitor(emulator, 'web')
    poller = make_poller(source, emulator.url, key=PRIMARY_KEY + '\n', emit_existing=True, watch=['monitors'])
    assert summary(poller.poll()) == [('monitor_status_changed', web, None, 'pending')]
    assert emulator.log()[-1]['status'] == 200


def test_the_account_is_a_fingerprint_of_address_and_key_never_the_key(source):
    def account(url, key):
        return source['parse_args']({'api_url': url, 'api_key': key}, environ={})['account']
    first = account('https://u.example', 'key-one-123456')
    assert first == account('https://u.example/api/v1', 'key-one-123456\n')
    assert first != account('https://u.example', 'key-two-123456') != account('https://v.example', 'key-one-123456')
    assert 'key-one' not in first


# -- talking to the service ----------------------------------------------------------------------


class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers from a list of (status, headers, body) and records each request's path and headers."""

    def do_GET(self):  # pylint: disable=invalid-name
        server = self.server
        server.requests.append({'path': self.path, 'headers': dict(self.headers.items())})
        status, headers, body = server.answers.pop(0) if server.answers else (500, {}, b'{}')
        if status is None:
            self.connection.close()
            return
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):  # pylint: disable=arguments-differ
        pass


@pytest.fixture
def scripted():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Scripted)
    server.answers, server.requests = [], []
    # A short poll interval: shutdown() waits for the loop's next poll (0.5 s by default) after every test.
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
    thread.start()
    server.url = 'http://127.0.0.1:%d' % server.server_address[1]
    yield server
    server.shutdown()
    server.server_close()


def page(records, next_url=None):
    return {'data': records, 'links': {'next': next_url}, 'meta': {}, 'status': 200}


def listed_incident(incident_id, monitor_id, status='offline'):
    return {'id': incident_id, 'started_at': '2026-01-01T00:00:00Z', 'ended_at': None, 'acknowledged_at': None,
            'monitor': {'id': monitor_id, 'name': 'web-%d' % monitor_id, 'status': status}}


# Every poll reads the incidents first.
NO_INCIDENTS = (200, {}, page([]))


def test_requests_carry_bearer_and_json_accept_and_pages_follow_the_query_of_links_next(source, scripted):
    # links.next names an address this client cannot reach (a proxy's): only its query is taken.
    scripted.answers = [(200, {}, page([listed_incident(1, 1)],
                                       'http://internal.invalid:9/api/v1/incidents?page=2&per_page=100')),
                        (200, {}, page([listed_incident(2, 2)]))]
    poller = make_poller(source, scripted.url, key='key-1234', watch=['incidents'])
    assert poller.poll() == []
    assert sorted(poller.tracker.incidents) == [1, 2]
    assert poller.client.request_count == 2
    first, second = scripted.requests
    assert first['headers']['Authorization'] == 'Bearer key-1234'
    assert first['headers']['Accept'] == 'application/json'
    assert second['path'].startswith('/api/v1/incidents?') and 'page=2' in second['path'] and 'sort=desc' in second['path']


def test_the_monitor_list_is_read_a_page_a_time_by_id(source, scripted):
    scripted.answers = [NO_INCIDENTS, (200, {}, {'data': [{'id': 1, 'status': 'online'}], 'links': {},
                                                 'meta': {'current_page': 1, 'last_page': 1}})]
    poller = make_poller(source, scripted.url, key='key-1234', watch=['monitors'])
    assert poller.poll() == []
    assert sorted(poller.tracker.monitors) == [1]
    path = scripted.requests[1]['path']
    for word in ('/api/v1/monitors?', 'page=1', 'per_page=100', 'sort_by=id', 'sort=asc'):
        assert word in path


def test_a_list_sent_as_an_object_keyed_by_position_is_read(source, scripted):
    scripted.answers = [NO_INCIDENTS,
                        (200, {}, {'data': {'1': {'id': '2', 'status': 'paused'}, '0': {'id': '1', 'status': 'paused'}},
                                   'links': {}, 'meta': {}})]
    poller = make_poller(source, scripted.url, key='key-1234', watch=['monitors'], emit_existing=True)
    assert sorted(summary(poller.poll())) == [('monitor_status_changed', 1, None, 'paused'),
                                              ('monitor_status_changed', 2, None, 'paused')]


@pytest.mark.parametrize('answer, transient, words', [
    ((429, {'Retry-After': '7'}, {'message': 'Too Many Attempts.'}), True, ['429', 'Too Many Attempts.']),
    ((500, {}, {'message': 'Server Error'}), True, ['500', 'Server Error']),
    ((503, {}, b'<html>maintenance</html>'), True, ['503']),
    ((200, {}, b'<html>proxy page</html>'), True, ['not the expected JSON', 'api_url must be the base address']),
    ((401, {}, {'message': 'Unauthenticated.'}), False, ['401', 'api_key']),
    ((403, {}, {'message': "You don't have access to this feature."}), False, ['403', 'access to this feature']),
    ((302, {'Location': '/login'}, b''), False, ['login page', 'api_key']),
    ((302, {'Location': 'https://elsewhere.example/api/v1/monitors'}, b''), False, ['redirected', 'api_url']),
    ((404, {}, b'<html>Not Found</html>'), False, ['404', 'a wrong address or a proxy', 'api_url must be the base address']),
    ((405, {}, b'<html>Not Allowed</html>'), False, ['405', 'a wrong address or a proxy', 'api_url must be the base address']),
    ((422, {}, {'message': 'bad'}), False, ['422', 'bad']),
    # The service puts per-field errors under message: read as the modules read them, not as a bare reason.
    ((422, {}, {'message': {'sort_by': ['The selected sort by is invalid.']}, 'status': 422}), False,
     ['422', 'sort_by: The selected sort by is invalid.']),
    ((400, {}, {'message': {'per_page': 'must be 10, 25, 50 or 100'}}), False,
     ['400', 'per_page: must be 10, 25, 50 or 100']),
])
def test_answers_are_sorted_into_transient_and_fatal(source, scripted, answer, transient, words):
    scripted.answers = [answer]
    poller = make_poller(source, scripted.url, key='key-1234', watch=['monitors'])
    with pytest.raises(source['UptimeApiError'] if transient else source['SourceError']) as caught:
        poller.poll()
    for word in words:
        assert word in str(caught.value)
    if transient:
        assert caught.value.transient
    if answer[0] == 429:
        assert caught.value.retry_after == 7
    assert len(scripted.requests) == 1  # no retry inside a poll: the next poll is the retry


def test_a_dropped_connection_and_a_refused_one_are_transient(source, scripted):
    scripted.answers = [(None, {}, b'')]
    poller = make_poller(source, scripted.url, key='key-1234', watch=['monitors'])
    with pytest.raises(source['UptimeApiError']) as caught:
        poller.poll()
    assert caught.value.transient
    port = scripted.server_address[1]
    scripted.shutdown()
    scripted.server_close()
    refused = make_poller(source, 'http://127.0.0.1:%d' % port, key='key-1234', watch=['monitors'])
    with pytest.raises(source['UptimeApiError']) as caught:
        refused.poll()
    assert caught.value.transient and 'connection refused' in str(caught.value)


@pytest.mark.parametrize('api_url, validate_certs, words', [
    ('https://uptime.example.com', True, []),
    ('https://uptime.example.com:8443', False, ['validate_certs is false', 'https://uptime.example.com:8443']),
    ('http://uptime.example.com', True, ['uses http://', 'unencrypted']),
    ('http://127.0.0.1:8080', True, []), ('http://[::1]:80', False, []), ('http://app.localhost', True, []),
])
def test_a_weak_transport_is_warned_of_as_the_modules_warn(source, api_url, validate_certs, words):
    poller = make_poller(source, api_url, key='key-1234', validate_certs=validate_certs)
    warnings = ' '.join(poller.client.transport_warnings)
    assert bool(warnings) == bool(words)
    for word in words:
        assert word in warnings


@pytest.fixture(scope='module')
def tls_emulator():
    with Emulator.start(tls=True) as server:
        yield server


@pytest.mark.asyncio
@pytest.mark.parametrize('fault, trust, words', [
    (None, False, ['not trusted', 'ca_path']),
    ('refuse', True, ['refused the TLS handshake']),
    ('expired', True, ['has expired']),
])
async def test_a_refused_tls_handshake_stops_the_source_with_one_message(tls_emulator, source, caplog, fault, trust,
                                                                         words):
    tls_emulator.reset()
    if fault:
        tls_emulator.tls_fault(fault, count=5)
    args = {'api_url': tls_emulator.url, 'api_key': PRIMARY_KEY, 'interval': 1}
    if trust:
        args['ca_path'] = tls_emulator.ca_path
    with pytest.raises(source['SourceError']) as caught:
        await asyncio.wait_for(source['main'](Collector(), args), 10)
    for word in words:
        assert word in str(caught.value)
    assert len([record for record in caplog.records if record.levelno >= logging.ERROR]) == 1


def test_a_trusted_certificate_is_polled(tls_emulator, source):
    tls_emulator.reset()
    web = create_monitor(tls_emulator, 'web')
    poller = make_poller(source, tls_emulator.url, ca_path=tls_emulator.ca_path, emit_existing=True)
    assert summary(poller.poll()) == [('monitor_status_changed', web, None, 'pending')]


# -- masking ------------------------------------------------------------------------------------


def test_events_show_the_records_as_the_modules_do_with_secrets_masked(source):
    monitor_record = {'id': '1', 'name': 'web', 'url': 'https://web.example.com', 'interval': '60',
                      'request_auth_username': 'bob', 'request_auth_password': 'hunter2',
                      'request_headers': {'0': {'key': 'Authorization', 'value': 'Bearer abc'},
                                          '1': {'key': 'X-Trace', 'value': 'on'}},
                      'alerts': [{'key': 'teams', 'value': 'https://acme.webhook.office.com/webhookb2/tm-s3cret'},
                                 {'key': 'email', 'value': 'ops@example.com'}],
                      'token': 'f00d', 'status': 'offline', 'started_at': '2026-01-01T10:00:00.000000Z'}
    tracker = source['Tracker']('https://u.example', emit_existing=True)
    (event,) = sweep(tracker, [monitor_record])
    masked = event['uptime']['monitor']
    assert (masked['id'], masked['interval'], masked['status']) == (1, 60, 'offline')
    assert masked['started_at'] == '2026-01-01T10:00:00Z'
    assert masked['request_auth_username'] == 'bob'
    assert masked['request_auth_password'] == MASK
    assert masked['request_headers'] == [{'key': 'Authorization', 'value': MASK}, {'key': 'X-Trace', 'value': 'on'}]
    assert masked['alerts'] == [{'key': 'teams', 'value': 'https://acme.webhook.office.com/' + MASK},
                                {'key': 'email', 'value': 'ops@example.com'}]
    assert masked['token'] == MASK
    incident_record = {'id': 3, 'monitor': monitor_record, 'cause': 'down', 'started_at': '2026-01-01T10:00:00Z',
                       'acknowledged_at': None, 'ended_at': '2026-01-01T10:30:00.000000Z', 'status': 'unresolved'}
    tracker.incident_events([], [])
    events = tracker.incident_events([incident_record], [])
    shown = events[-1]['uptime']['incident']
    for secret in ('hunter2', 'Bearer abc', 'tm-s3cret'):
        assert secret not in json.dumps(events)
    # The status is derived by the service's rule (ended: resolved), whatever the record says.
    assert (shown['id'], shown['monitor_id'], shown['monitor_name'], shown['status'], shown['duration']) == (
        3, 1, 'web', 'resolved', 1800)
    assert shown['ended_at'] == '2026-01-01T10:30:00Z' and shown['monitor'] == masked
    assert events[-1]['uptime']['monitor'] == masked
    assert monitor_record['request_auth_password'] == 'hunter2'  # the record itself is left alone


# -- transitions and uuids (no I/O) -------------------------------------------------------------------


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


T0, T1, T2, T3 = ('2026-01-01T10:00:00.000000Z', '2026-01-01T10:05:00.000000Z', '2026-01-01T10:09:00.000000Z',
                  '2026-01-01T10:20:00.000000Z')


def test_an_incident_seen_only_once_resolved_yields_all_three_transitions_oldest_first(source):
    tracker = source['Tracker']('https://u.example')
    assert tracker.incident_events([], []) == []  # the baseline
    events = tracker.incident_events([incident(7, T0, T1, T2)], [])
    assert summary(events) == [('incident_opened', 7, None, 'unresolved'),
                               ('incident_acknowledged', 7, 'unresolved', 'acknowledged'),
                               ('incident_resolved', 7, 'acknowledged', 'resolved')]
    assert [event['uptime']['at'] for event in events] == ['2026-01-01T10:00:00Z', '2026-01-01T10:05:00Z', '2026-01-01T10:09:00Z']
    assert len(set(uuids(events))) == 3
    assert tracker.incident_events([incident(7, T0, T1, T2)], []) == []  # nothing new


def test_each_incident_transition_is_reported_once_as_it_happens(source):
    tracker = source['Tracker']('https://u.example')
    tracker.incident_events([], [])
    opened = tracker.incident_events([incident(1, T0)], [])
    acknowledged = tracker.incident_events([incident(1, T0, T1)], [])
    again = tracker.incident_events([incident(1, T0, T1)], [])
    resolved = tracker.incident_events([incident(1, T0, T1, T2)], [])
    assert summary(opened + acknowledged + again + resolved) == [
        ('incident_opened', 1, None, 'unresolved'), ('incident_acknowledged', 1, 'unresolved', 'acknowledged'),
        ('incident_resolved', 1, 'acknowledged', 'resolved')]


def test_the_same_transition_gets_the_same_uuid_whoever_sees_it_and_when(source):
    live = source['Tracker']('https://u.example')
    live.incident_events([], [])
    sweep(live, [monitor(1, 'online', T0)])
    seen_live = live.incident_events([incident(5, T1, T2)], []) + sweep(live, [monitor(1, 'offline', T1)])

    # A restarted source that emits what exists gives those transitions the uuids of the live events.
    restarted = source['Tracker']('https://u.example', emit_existing=True)
    existing = restarted.incident_events([incident(5, T1, T2)], []) + sweep(restarted, [monitor(1, 'offline', T1)])
    assert sorted(uuids(existing)) == sorted(uuids(seen_live))
    assert all(event['uptime']['existing'] for event in existing)
    # Another service, the same ids: other uuids.
    other = source['Tracker']('https://other.example', emit_existing=True)
    assert not set(uuids(other.incident_events([incident(5, T1, T2)], []))) & set(uuids(seen_live))


def test_emit_existing_sends_ongoing_incidents_and_monitors_not_online_only(source):
    tracker = source['Tracker']('https://u.example', emit_existing=True)
    events = tracker.incident_events([incident(1, T0), incident(2, T0, T1), incident(3, T0, T1, T2)], [])
    events += sweep(tracker, [monitor(1, 'online', T0), monitor(2, 'paused', T0), monitor(3, 'pending', T0)])
    assert summary(events) == [('incident_opened', 1, None, 'unresolved'), ('incident_opened', 2, None, 'unresolved'),
                               ('incident_acknowledged', 2, 'unresolved', 'acknowledged'),
                               ('monitor_status_changed', 2, None, 'paused'),
                               ('monitor_status_changed', 3, None, 'pending')]


def test_a_flapping_monitor_yields_distinct_transitions(source):
    tracker = source['Tracker']('https://u.example')
    sweep(tracker, [monitor(1, 'online', T0)])
    flips = []
    for status, started in (('offline', T1), ('online', T2), ('offline', T3)):
        flips += sweep(tracker, [monitor(1, status, started)])
    assert summary(flips) == [('monitor_status_changed', 1, 'online', 'offline'),
                              ('monitor_status_changed', 1, 'offline', 'online'),
                              ('monitor_status_changed', 1, 'online', 'offline')]
    assert len(set(uuids(flips))) == 3
    # Offline -> online -> offline between two polls: the status is the same, started_at tells.
    between = sweep(tracker, [monitor(1, 'offline', '2026-01-01T10:30:00Z')])
    assert summary(between) == [('monitor_status_changed', 1, 'offline', 'offline')]
    assert between[0]['uptime']['flapped'] is True
    assert between[0]['meta']['uuid'] not in uuids(flips)


def test_entering_and_leaving_maintenance_are_distinct_from_the_online_period(source):
    tracker = source['Tracker']('https://u.example')
    online = monitor(1, 'online', T0, maintenance_start_at=T1)
    sweep(tracker, [dict(online, status='offline', started_at='2025-12-31T00:00:00Z')])
    came_online = sweep(tracker, [online])
    entered = sweep(tracker, [dict(online, status='maintenance')])
    left = sweep(tracker, [online])
    assert summary(came_online + entered + left) == [('monitor_status_changed', 1, 'offline', 'online'),
                                                     ('monitor_status_changed', 1, 'online', 'maintenance'),
                                                     ('monitor_status_changed', 1, 'maintenance', 'online')]
    assert len(set(uuids(came_online + entered + left))) == 3
    assert entered[0]['uptime']['at'] == '2026-01-01T10:05:00Z'


def test_a_new_monitor_is_recorded_silently_and_a_deleted_one_forgotten(source):
    tracker = source['Tracker']('https://u.example')
    sweep(tracker, [monitor(1, 'online', T0)])
    assert sweep(tracker, [monitor(1, 'online', T0), monitor(2, 'pending', T1)]) == []
    assert sweep(tracker, [monitor(2, 'online', T2)]) != []
    # Monitor 1 missed one reading (as when it moves between pages): kept; a second miss forgets it.
    assert 1 in tracker.monitors
    sweep(tracker, [monitor(2, 'online', T2)])
    assert 1 not in tracker.monitors


def test_resolved_history_below_the_floor_is_not_news(source):
    tracker = source['Tracker']('https://u.example', lookback=60)
    tracker.incident_events([incident(9, T0, None, T2)], [])
    # An old incident (ended more than lookback before the newest end seen) read on the last page of a later poll.
    assert tracker.incident_events([incident(4, T0, None, T1), incident(9, T0, None, T2)], []) == []
    assert 9 in tracker.incidents and 4 not in tracker.incidents


def test_an_incident_resolved_between_polls_with_an_end_before_the_newest_is_news_once(source):
    tracker = source['Tracker']('https://u.example')  # lookback: an hour
    tracker.incident_events([incident(9, T0, None, T2)], [])
    # Opened and resolved between two polls by a writer whose clock lags: its end is before the newest end seen.
    records = [incident(9, T0, None, T2), incident(4, T0, None, T1)]
    assert summary(tracker.incident_events(records, [])) == [
        ('incident_opened', 4, None, 'unresolved'), ('incident_resolved', 4, 'unresolved', 'resolved')]
    assert tracker.incident_events(records, []) == []


def test_a_deleted_ongoing_incident_is_reported_with_its_last_record(source):
    tracker = source['Tracker']('https://u.example')
    tracker.incident_events([], [])
    tracker.incident_events([incident(3, T0)], [])
    tracker.begin_poll('2026-01-01T11:00:00')
    events = tracker.incident_events([], [3])
    assert summary(events) == [('incident_deleted', 3, 'unresolved', 'deleted')]
    assert events[0]['uptime']['monitor_id'] == 1 and events[0]['uptime']['at'] == '2026-01-01T11:00:00'
    assert tracker.ongoing_ids() == []


# -- polling against the emulator ---------------------------------------------------------------------


def test_the_first_poll_is_a_baseline_then_each_change_is_one_event(emulator, source):
    web = create_monitor(emulator, 'web')
    db = create_monitor(emulator, 'db')
    old = open_incident(emulator, db, seconds_ago=600)
    update_incident(emulator, old, ended_at=now_text(300))
    poller = make_poller(source, emulator.url)
    assert poller.poll() == []

    incident_id = open_incident(emulator, web)
    events = poller.poll()
    assert summary(events) == [('incident_opened', incident_id, None, 'unresolved'),
                               ('monitor_status_changed', web, 'pending', 'offline')]
    assert events[0]['uptime']['monitor_name'] == 'web'
    assert poller.poll() == []

    update_incident(emulator, incident_id, acknowledged_at=now_text(10))
    assert summary(poller.poll()) == [('incident_acknowledged', incident_id, 'unresolved', 'acknowledged')]
    update_incident(emulator, incident_id, ended_at=now_text())
    assert summary(poller.poll()) == [('incident_resolved', incident_id, 'acknowledged', 'resolved'),
                                      ('monitor_status_changed', web, 'offline', 'online')]


def test_checker_flips_pause_and_resume_are_each_one_event(emulator, source):
    web = create_monitor(emulator, 'web')
    poller = make_poller(source, emulator.url, watch=['monitors'])
    poller.poll()
    seen = []
    for status in ('online', 'offline', 'online'):
        time.sleep(1.05)  # started_at has a resolution of one second, like the service's
        emulator.check(web, status)
        seen += poller.poll()
        emulator.check(web, status)  # a check that confirms the status is no transition
        seen += poller.poll()
    for pause in (1, 0):
        time.sleep(1.05)
        emulator.api('PUT', '/api/v1/monitors/%d' % web, data={'pause': pause})
        seen += poller.poll()
    assert [(item[2], item[3]) for item in summary(seen)] == [
        ('pending', 'online'), ('online', 'offline'), ('offline', 'online'), ('online', 'paused'), ('paused', 'online')]
    assert len(set(uuids(seen))) == len(seen)


def test_a_flap_between_two_polls_is_still_reported(emulator, source):
    web = create_monitor(emulator, 'web')
    emulator.check(web, 'offline')
    poller = make_poller(source, emulator.url, watch=['monitors'])
    poller.poll()
    time.sleep(1.1)  # started_at has a resolution of one second
    emulator.check(web, 'online')
    emulator.check(web, 'offline')
    events = poller.poll()
    assert summary(events) == [('monitor_status_changed', web, 'offline', 'offline')]
    assert events[0]['uptime']['flapped'] is True


def test_deleting_an_ongoing_incident_is_reported(emulator, source):
    web = create_monitor(emulator, 'web')
    incident_id = open_incident(emulator, web)
    poller = make_poller(source, emulator.url, watch=['incidents'])
    poller.poll()
    assert emulator.api('DELETE', '/api/v1/incidents/%d' % incident_id).status == 200
    assert summary(poller.poll()) == [('incident_deleted', incident_id, 'unresolved', 'deleted')]


def test_a_back_dated_resolution_is_found_by_reading_the_incident(emulator, source):
    web = create_monitor(emulator, 'web')
    db = create_monitor(emulator, 'db')
    first = open_incident(emulator, db, seconds_ago=900)
    update_incident(emulator, first, ended_at=now_text(60))
    ongoing = open_incident(emulator, web, seconds_ago=600)
    poller = make_poller(source, emulator.url, watch=['incidents'], lookback=60)
    poller.poll()
    update_incident(emulator, ongoing, ended_at=now_text(500))  # ends below the floor the source reads down to
    assert summary(poller.poll()) == [('incident_resolved', ongoing, 'unresolved', 'resolved')]


def test_a_list_that_is_not_there_stops_the_source_naming_api_url(emulator, source):
    poller = make_poller(source, emulator.url + '/uptime')
    with pytest.raises(source['SourceError']) as caught:
        poller.poll()
    assert '404' in str(caught.value) and 'api_url must be the base address' in str(caught.value)
    assert str(caught.value).endswith('with no path of its own (a trailing /api/v1 is ignored) (it has the path /uptime))')


class PagedClient:
    """A stand-in client: incident pages as given, and the records a read by id may show; counts requests."""

    def __init__(self, pages, records):
        self.pages_given, self.records, self.requests = pages, records, []

    def iter_pages(self, path, params=None):
        for records in self.pages_given:
            self.requests.append(path)
            yield records

    def list(self, path, params=None):
        return [record for records in self.iter_pages(path, params) for record in records]

    def get_or_none(self, path):
        self.requests.append(path)
        return self.records.get(path)


def test_reading_stops_at_the_floor_and_a_vanished_ongoing_incident_is_read_alone(source):
    settings = source['parse_args']({'api_url': 'https://u.example', 'api_key': 'k1234', 'watch': ['incidents'],
                                     'lookback': 60}, environ={})
    first = PagedClient([[incident(1, T0), incident(2, T0, None, T2)], [incident(3, T0, None, T1)],
                         [incident(5, T0, None, T0)]], {})
    poller = source['Poller'](settings, client=first)
    assert poller.poll() == []
    # The second page may still hold ends within a minute of the newest, T2; it ends below: reading stops there.
    assert first.requests == ['/api/v1/incidents'] * 2

    # Incident 1 was resolved with an end before the cut (back-dated): it is not on the pages read any more.
    later = PagedClient([[incident(4, T1, None, T3), incident(2, T0, None, T2), incident(6, T0, None, T1)],
                         [incident(1, T0, None, T1)]],
                        {'/api/v1/incidents/1': incident(1, T0, None, T1)})
    poller.client = later
    events = poller.poll()
    assert later.requests == ['/api/v1/incidents', '/api/v1/incidents/1']
    # Incident 6 ended before the cut and was never seen ongoing: history, not news.
    assert summary(events) == [('incident_resolved', 1, 'unresolved', 'resolved'),
                               ('incident_opened', 4, None, 'unresolved'),
                               ('incident_resolved', 4, 'unresolved', 'resolved')]


def test_many_vanished_incidents_are_read_a_few_a_poll_and_none_is_lost(source):
    settings = source['parse_args']({'api_url': 'https://u.example', 'api_key': 'k1234', 'watch': ['incidents']},
                                    environ={})
    ongoing = [incident(number, T0) for number in range(1, 26)]
    poller = source['Poller'](settings, client=PagedClient([ongoing], {}))
    poller.poll()
    deleted = []
    for expected_reads in (20, 5, 0):
        # A bulk delete: all 25 are gone; each poll reads at most 20 of them one by one.
        client = poller.client = PagedClient([[]], {})
        deleted.extend(event['uptime']['incident_id'] for event in poller.poll())
        assert len(client.requests) == 1 + expected_reads
    assert sorted(deleted) == list(range(1, 26))


def test_secrets_never_reach_an_event(emulator, source):
    web = create_monitor(emulator, 'web', request_auth_username='bob', request_auth_password='hunter2-secret',
                         request_headers=[{'key': 'X-Api-Key', 'value': 'header-secret'}],
                         alerts=[{'key': 'discord', 'value': 'https://discord.com/api/webhooks/1/discord-secret'}])
    poller = make_poller(source, emulator.url, emit_existing=True)
    open_incident(emulator, web)
    text = json.dumps(poller.poll())
    assert 'bob' in text and 'https://discord.com/********' in text
    for secret in ('hunter2-secret', 'header-secret', 'discord-secret', PRIMARY_KEY):
        assert secret not in text


def test_requests_per_poll_stay_within_the_budget(emulator, source):
    for index in range(3):
        monitor_id = create_monitor(emulator, 'm%d' % index)
        incident_id = open_incident(emulator, monitor_id, seconds_ago=900)
        update_incident(emulator, incident_id, ended_at=now_text(600 - index))
    poller = make_poller(source, emulator.url)
    emulator.clear_log()
    poller.poll()
    poller.poll()
    log = emulator.log()
    assert [entry['path'] for entry in log] == ['/api/v1/incidents', '/api/v1/monitors'] * 2
    assert all('per_page=100' in entry['query'] for entry in log)
    assert all('sort_by=id' in entry['query'] for entry in log if entry['path'] == '/api/v1/monitors')
    assert all('sort_by=ended_at' in entry['query'] for entry in log if entry['path'] == '/api/v1/incidents')


# -- big accounts: the sweep, the incidents, the reserve -----------------------------------------------------


def sweep_once(poller, pages):
    """The events of the polls that read the whole monitor list once more, a page a poll."""
    events = []
    for dummy in range(pages):
        events += poller.poll()
    return events


def test_the_monitor_list_is_read_a_page_a_poll_and_a_change_seen_late_says_so(emulator, source):
    emulator.seed(250)  # three pages
    poller = make_poller(source, emulator.url, sweep_period=3, watch=['monitors'])  # interval 1: a page a poll
    emulator.clear_log()
    assert sweep_once(poller, 3) == []  # the baseline
    assert [urllib.parse.parse_qs(entry['query'])['page'] for entry in emulator.log()
            if entry['path'] == '/api/v1/monitors'] == [['1'], ['2'], ['3']]
    assert len(emulator.log()) == 6  # each poll: the incidents and one page
    for monitor_id in (1, 250):
        assert emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 1}).status == 200
    first_page = poller.poll()
    assert summary(first_page) == [('monitor_status_changed', 1, 'online', 'paused')]
    assert first_page[0]['uptime']['late'] is False
    time.sleep(1.1)  # timestamps have a resolution of one second: the next poll begins after the pause
    assert poller.poll() == []
    last_page = poller.poll()
    assert summary(last_page) == [('monitor_status_changed', 250, 'online', 'paused')]
    payload = last_page[0]['uptime']
    assert payload['late'] is True and payload['at'] < payload['seen_at']


def test_offline_and_online_come_from_the_incidents_at_the_next_poll_wherever_the_sweep_is(emulator, source):
    emulator.seed(250)
    poller = make_poller(source, emulator.url, sweep_period=3)
    sweep_once(poller, 3)
    emulator.clear_log()
    emulator.check(250, 'offline')  # the checker opens an incident; the sweep is on page 1
    offline = poller.poll()
    incident_id = offline[0]['uptime']['incident_id']
    assert sorted(summary(offline)) == [('incident_opened', incident_id, None, 'unresolved'),
                                        ('monitor_status_changed', 250, 'online', 'offline')]
    assert not any(event['uptime']['late'] for event in offline)
    emulator.check(250, 'online')
    online = poller.poll()
    assert sorted(summary(online)) == [('incident_resolved', incident_id, 'unresolved', 'resolved'),
                                       ('monitor_status_changed', 250, 'offline', 'online')]
    # Found again when the sweep reaches the monitor: nothing new.
    assert poller.poll() == []
    assert len(emulator.log()) == 6


def test_a_monitor_the_first_sweep_has_not_reached_is_reported_offline_from_its_incident(emulator, source):
    emulator.seed(250)
    poller = make_poller(source, emulator.url, sweep_period=3)
    assert poller.poll() == []  # the first page only
    emulator.check(250, 'offline')
    events = poller.poll()
    assert ('monitor_status_changed', 250, None, 'offline') in summary(events)
    # What it was before (online or pending), the incident does not say.
    assert sweep_once(poller, 3) == []


def test_a_sweep_late_for_its_time_reads_more_pages_to_catch_up(emulator, source):
    emulator.seed(250)
    poller = make_poller(source, emulator.url, sweep_period=3, watch=['monitors'])
    sweep_once(poller, 3)
    poller.last_poll -= 3  # as after a poll that took long, or a backoff: the whole list is due
    emulator.clear_log()
    poller.poll()
    assert [entry['path'] for entry in emulator.log()].count('/api/v1/monitors') == 3


def spend_until(emulator, remaining):
    """Other traffic of the account, until the service says ``remaining`` requests are left."""
    while True:
        answer = emulator.api('GET', '/api/v1/account')
        if int(answer.headers['X-RateLimit-Remaining']) <= remaining:
            return


def test_incidents_held_back_after_their_first_page_are_read_later_and_never_taken_for_deleted(emulator, source):
    emulator.seed(250, offline=150)  # 150 ongoing incidents: two pages, the newest first
    emulator.rate_limit(100)
    poller = make_poller(source, emulator.url, sweep_period=3, reserve=50)
    poller.poll()  # the baseline, whole
    time.sleep(1.1)  # the seed's newest incident may have begun this very second
    update_incident(emulator, 1, ended_at=now_text())  # on the second page
    emulator.check(250, 'offline')  # a new incident: on the first page
    spend_until(emulator, 51)  # one request to spare
    events = poller.poll()
    assert poller.held_back
    opened = [event['uptime'] for event in events if event['uptime']['type'] == 'incident_opened']
    assert [payload['monitor_id'] for payload in opened] == [250]
    assert not [event for event in events if event['uptime']['type'] == 'incident_deleted']
    assert len(poller.tracker.ongoing_ids()) == 151
    poller.client.rate_limit = source['_client'].RateLimit()  # the count is renewed
    emulator.rate_limit(100)
    later = poller.poll()
    assert ('incident_resolved', 1, 'unresolved', 'resolved') in summary(later)
    assert not poller.held_back


def test_a_monitor_not_known_yet_is_reported_as_its_latest_incident_says(source):
    tracker = source['Tracker']('https://u.example')
    sweep(tracker, [])
    tracker.incident_events([], [])
    tracker.begin_poll('2026-01-01T10:30:00Z')
    # Monitor 5 (created since the last sweep): an incident opened and ended, then another opened, between polls.
    records = [incident(12, T3, monitor_id=5), incident(11, T0, None, T1, monitor_id=5)]
    incident_events = tracker.incident_events(records, [])
    explained = source['_explained'](incident_events)
    events = tracker.monitor_events([monitor(5, 'offline', T3)], explained)
    assert summary(events) == [('monitor_status_changed', 5, None, 'offline')]


@pytest.mark.asyncio
async def test_the_source_never_spends_the_reserve_and_its_events_come_later(emulator, source, caplog, monkeypatch):
    web = create_monitor(emulator, 'web')
    monkeypatch.setattr(source['_client'], 'RATE_WINDOW', 3.0)
    emulator.rate_limit(8, window_seconds=3)
    remaining = []
    observe = source['_client'].RateLimit.observe

    def recording(self, headers):
        observe(self, headers)
        remaining.append(self.remaining)
    monkeypatch.setattr(source['_client'].RateLimit, 'observe', recording)
    queue = Collector()
    record_sleeps(source)
    task = asyncio.create_task(source['main'](queue, {'api_url': emulator.url, 'api_key': PRIMARY_KEY, 'interval': 1,
                                                      'reserve': 5}))

    def told(words):
        return [record for record in caplog.records if words in record.getMessage()]
    try:
        await wait_for(lambda: told('kept for playbooks and people'))
        incident_id = open_incident(emulator, web)  # other traffic, while the source holds back
        await wait_for(lambda: len(queue.events) == 2)
        await wait_for(lambda: told('reading at full pace'))
    finally:
        task.cancel()
    assert sorted(summary(queue.events)) == [('incident_opened', incident_id, None, 'unresolved'),
                                             ('monitor_status_changed', web, 'pending', 'offline')]
    assert min(remaining) >= 5
    assert not [entry for entry in emulator.log() if entry['status'] == 429]
    # Once each way per busy spell, never once per poll.
    assert len(told('kept for playbooks and people')) - len(told('reading at full pace')) in (0, 1)
    assert all(record.levelno == logging.WARNING for record in told('kept for playbooks'))


def test_a_reserve_may_be_written_as_a_whole_number_of_any_type(source):
    for value in (30, '30', 30.0, ' 30 '):
        assert source['parse_args']({'api_url': 'https://u.example', 'api_key': 'k1234', 'reserve': value},
                                    environ={})['reserve'] == 30


def test_a_reserve_at_or_above_the_limit_is_told_once(emulator, source, caplog):
    emulator.rate_limit(10)
    poller = make_poller(source, emulator.url, reserve=10)
    poller.poll()
    source['warn_reserve_above_limit'](poller)
    source['warn_reserve_above_limit'](poller)
    told = [record for record in caplog.records if 'not below the account' in record.getMessage()]
    assert len(told) == 1 and 'reserve 10' in told[0].getMessage() and 'limit of 10' in told[0].getMessage()


@pytest.mark.parametrize('args, words', [
    ({'sweep_period': 30, 'interval': 60}, ['sweep_period', 'at least 60']),
    ({'reserve': -1}, ['reserve', 'whole number']),
    ({'reserve': 'some'}, ['reserve', 'whole number']),
    ({'reserve': 2.5}, ['reserve', 'whole number']),
    ({'reserve': True}, ['reserve', 'whole number']),
])
def test_sweep_period_and_reserve_are_checked(source, args, words):
    with pytest.raises(source['SourceError']) as caught:
        source['parse_args'](dict({'api_url': 'https://u.example', 'api_key': 'k1234'}, **args), environ={})
    for word in words:
        assert word in str(caught.value)


# -- restarts ----------------------------------------------------------------------------------------


def test_a_restart_with_a_state_file_misses_nothing_and_repeats_nothing(emulator, source, tmp_path):
    web = create_monitor(emulator, 'web')
    db = create_monitor(emulator, 'db')
    incident_id = open_incident(emulator, web)
    state_file = str(tmp_path / 'state.json')
    before = make_poller(source, emulator.url, state_file=state_file)
    before.poll()
    source['save_state'](before.tracker, state_file)
    with open(state_file, encoding='utf-8') as handle:
        state = handle.read()
    assert PRIMARY_KEY not in state
    assert json.loads(state)['account'] == before.settings['account']

    # While the source is stopped: the incident ends (its monitor comes back online) and another monitor flips,
    # which opens an incident of its own (the checker's).
    update_incident(emulator, incident_id, ended_at=now_text())
    emulator.check(db, 'offline')
    [db_incident] = [item['id'] for item in emulator.api('GET', '/api/v1/incidents').json['data'] if item['monitor']['id'] == db]

    after = make_poller(source, emulator.url, state_file=state_file)
    assert source['load_state'](after.tracker, state_file)
    events = after.poll()
    assert sorted(summary(events)) == sorted([('incident_resolved', incident_id, 'unresolved', 'resolved'),
                                              ('monitor_status_changed', web, 'offline', 'online'),
                                              ('incident_opened', db_incident, None, 'unresolved'),
                                              ('monitor_status_changed', db, 'pending', 'offline')])
    assert after.poll() == []


def test_a_state_file_of_another_service_account_or_version_or_broken_is_a_fresh_start(source, tmp_path, caplog):
    tracker = source['Tracker']('https://a.example', account='account-a')
    tracker.incident_events([incident(1, T0)], [])
    path = str(tmp_path / 'state.json')
    source['save_state'](tracker, path)
    for other, words in ((source['Tracker']('https://b.example', account='account-a'), 'another api_url'),
                         (source['Tracker']('https://a.example', account='account-b'), 'another account')):
        caplog.clear()
        assert not source['load_state'](other, path) and other.incidents is None
        assert words in caplog.text and 'new baseline' in caplog.text
    same = source['Tracker']('https://a.example', account='account-a')
    assert source['load_state'](same, path) and list(same.incidents) == [1]
    with open(path, encoding='utf-8') as handle:
        state = json.load(handle)
    with open(path, 'w', encoding='utf-8') as handle:
        json.dump(dict(state, version=1), handle)  # what an older version of this source wrote
    caplog.clear()
    assert not source['load_state'](source['Tracker']('https://a.example', account='account-a'), path)
    assert 'another version' in caplog.text
    for part in ('sweep', 'polled_at'):
        with open(path, 'w', encoding='utf-8') as handle:
            json.dump({key: value for key, value in state.items() if key != part}, handle)
        caplog.clear()
        assert not source['load_state'](source['Tracker']('https://a.example', account='account-a'), path)
        assert 'a part of it is missing' in caplog.text
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write('{"version": 2, "api_u')
    broken = source['Tracker']('https://a.example', account='account-a')
    assert not source['load_state'](broken, path) and broken.incidents is None
    assert 'cannot be read' in caplog.text


@pytest.mark.asyncio
async def test_a_state_file_of_another_account_is_ignored_not_read_as_deletions(emulator, source, tmp_path, caplog):
    # The first account has an ongoing incident; a source of another account starts on the same state file.
    web = create_monitor(emulator, 'web')
    open_incident(emulator, web)
    state_file = str(tmp_path / 'state.json')
    first = make_poller(source, emulator.url, state_file=state_file)
    first.poll()
    source['save_state'](first.tracker, state_file)

    queue = Collector()
    waits = record_sleeps(source)
    args = {'api_url': emulator.url, 'api_key': OTHER_KEY, 'interval': 1, 'state_file': state_file}
    task = asyncio.create_task(source['main'](queue, args))
    try:
        await wait_for(lambda: waits.count(1) >= 3)  # three polls
    finally:
        task.cancel()
    assert queue.events == []  # no incident_deleted for the incidents of the first account
    assert any('another account' in record.getMessage() and record.levelno == logging.WARNING
               for record in caplog.records)
    with open(state_file, encoding='utf-8') as handle:
        state = json.load(handle)
    assert state['account'] != first.settings['account'] and state['incidents'] == []


# -- the error policy of main() -------------------------------------------------------------------


class Collector:
    def __init__(self):
        self.events = []

    async def put(self, event):
        self.events.append(event)


async def wait_for(predicate, timeout=60.0):
    """Waits until predicate() holds. The deadline only bounds a failing test: on a loaded machine a poll whose
    requests the client retries (real backoff) can take many seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, 'timed out'
        await asyncio.sleep(0.05)


def record_sleeps(source, gate=None):
    """The source's sleeps, recorded and cut to 0.05 s; with ``gate`` (an asyncio.Event), each also lasts until the
    gate is open."""
    waits = []
    real_sleep = asyncio.sleep

    async def fake(seconds):
        waits.append(seconds)
        await real_sleep(min(seconds, 0.05))
        if gate is not None:
            await gate.wait()

    # run_path hands back a copy of the module's globals: patch the ones main() reads.
    source['main'].__globals__['_sleep'] = fake
    return waits


async def held_after_the_first_poll(task, waits, interval):
    """Waits until the first poll has succeeded: the source then sleeps ``interval``, and stays in that sleep while
    the gate of record_sleeps is closed. A change made then comes between two polls. (Made earlier, it could come
    between a poll's incidents and its monitors: a first poll would take it into its baseline, and no event would
    tell it; a later one would tell the monitor's change before the incident that explains it.)"""
    await wait_for(lambda: waits or task.done())
    if task.done():
        task.result()  # raises what stopped the source
    assert waits == [interval], 'the first poll failed: the source backed off %r s' % waits


@pytest.mark.asyncio
@pytest.mark.parametrize('fault', [
    {'kind': 'status', 'status': 500}, {'kind': 'drop'}, {'kind': 'truncated', 'status': 200}, {'kind': 'html', 'status': 502},
])
async def test_transient_failures_warn_back_off_and_lose_nothing(emulator, source, caplog, fault):
    web = create_monitor(emulator, 'web')
    queue, gate = Collector(), asyncio.Event()
    waits = record_sleeps(source, gate)
    task = asyncio.create_task(source['main'](queue, {'api_url': emulator.url, 'api_key': PRIMARY_KEY, 'interval': 2}))
    try:
        await held_after_the_first_poll(task, waits, 2)
        emulator.fault(count=3, path='/api/v1/incidents', method='GET', **fault)
        incident_id = open_incident(emulator, web)
        gate.set()
        await wait_for(lambda: len(queue.events) == 2)
        assert summary(queue.events) == [('incident_opened', incident_id, None, 'unresolved'),
                                         ('monitor_status_changed', web, 'pending', 'offline')]
        assert not task.done()
    finally:
        task.cancel()
    warnings = [record.getMessage() for record in caplog.records
                if record.name == 'uptime.monitoring.events' and record.levelno == logging.WARNING
                and 'polling again' in record.getMessage()]
    assert len(warnings) >= 3 and 'nothing is lost' in warnings[0]
    # The pauses after failures grow from the interval: 2, then about 4, then about 8 (with jitter).
    failed = [wait for wait in waits if wait != 2]
    assert len(failed) >= 2 and failed[1] > failed[0] > 1.5


@pytest.mark.asyncio
@pytest.mark.parametrize('args, first_poll', [
    ({}, 'the first poll records what is there and sends nothing'),
    ({'emit_existing': True}, 'the first poll sends every ongoing incident and every monitor that is not online'),
    ({'emit_existing': True, 'watch': ['monitors']}, 'the first poll sends every monitor that is not online'),
    ({'state_file': True}, 'carrying on from state_file '),
])
async def test_the_source_says_once_at_start_where_it_polls_and_how_often(emulator, source, caplog, tmp_path, args,
                                                                          first_poll):
    """ansible-rulebook shows a source's WARNING lines without -v: the start is told at that level, the key never."""
    create_monitor(emulator, 'web')
    if args.get('state_file'):
        state_file = str(tmp_path / 'state.json')
        earlier_run = make_poller(source, emulator.url)
        earlier_run.poll()
        source['save_state'](earlier_run.tracker, state_file)
        args = {'state_file': state_file}
    waits = record_sleeps(source)
    task = asyncio.create_task(source['main'](Collector(), dict({'api_url': emulator.url + '/api/v1/',
                                                                 'api_key': PRIMARY_KEY, 'interval': 2}, **args)))
    try:
        await wait_for(lambda: waits.count(2) >= 3)  # three polls
    finally:
        task.cancel()
    told = [record for record in caplog.records
            if record.name == 'uptime.monitoring.events' and record.getMessage().startswith('polling ')]
    assert [record.levelno for record in told] == [logging.WARNING]
    assert told[0].getMessage() == 'polling %s every 2s for %s; %s' % (
        emulator.url, ' and '.join(args.get('watch', ['incidents', 'monitors'])), first_poll + (args['state_file'] if args.get('state_file') else ''))
    assert PRIMARY_KEY not in caplog.text


@pytest.mark.asyncio
async def test_a_429_is_waited_out_as_retry_after_asks(emulator, source, caplog):
    web = create_monitor(emulator, 'web')
    queue, gate = Collector(), asyncio.Event()
    waits = record_sleeps(source, gate)
    task = asyncio.create_task(source['main'](queue, {'api_url': emulator.url, 'api_key': PRIMARY_KEY, 'interval': 1}))
    try:
        await held_after_the_first_poll(task, waits, 1)
        emulator.fault('status', status=429, retry_after=17, path='/api/v1/monitors', method='GET')
        open_incident(emulator, web)
        gate.set()
        await wait_for(lambda: len(queue.events) == 2)
    finally:
        task.cancel()
    assert 17 in waits
    assert any('as the service asks' in record.getMessage() for record in caplog.records)


@pytest.mark.asyncio
async def test_an_unexpected_error_is_logged_and_polling_goes_on(emulator, source, caplog, monkeypatch):
    web = create_monitor(emulator, 'web')
    tracker_class = source['Tracker']
    read_monitors = tracker_class.monitor_events
    calls = []

    def fails_once(self, records, explained=None):
        calls.append(1)
        if len(calls) == 2:
            raise KeyError('a record this source cannot read')
        return read_monitors(self, records, explained)
    monkeypatch.setattr(tracker_class, 'monitor_events', fails_once)
    queue = Collector()
    record_sleeps(source)
    task = asyncio.create_task(source['main'](queue, {'api_url': emulator.url, 'api_key': PRIMARY_KEY, 'interval': 1}))
    try:
        # The second call (the sweep of the first poll) fails: that poll is undone, the second is the baseline.
        await wait_for(lambda: len(calls) >= 4)
        incident_id = open_incident(emulator, web)
        await wait_for(lambda: len(queue.events) == 2)
        assert not task.done()
    finally:
        task.cancel()
    assert summary(queue.events)[0] == ('incident_opened', incident_id, None, 'unresolved')
    assert any('failed unexpectedly (KeyError' in record.getMessage() for record in caplog.records)


@pytest.mark.asyncio
@pytest.mark.parametrize('key, words', [('wrong-key-98765', ['401', 'api_key']),
                                        (NOPLAN_KEY, ['403', 'access to this feature'])])
async def test_a_refused_key_stops_the_source_with_one_message(emulator, source, caplog, key, words):
    with pytest.raises(source['SourceError']) as caught:
        await asyncio.wait_for(source['main'](Collector(), {'api_url': emulator.url, 'api_key': key, 'interval': 1}), 10)
    for word in words:
        assert word in str(caught.value)
    assert key not in caplog.text and key not in str(caught.value)
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert len(errors) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize('args', [{'interval': -1}, {'api_key': 'abc-123\ndef-456'}, {'validate_certs': 'perhaps'}])
async def test_invalid_arguments_stop_before_any_request(emulator, source, args):
    emulator.clear_log()
    with pytest.raises(source['SourceError']) as caught:
        await asyncio.wait_for(source['main'](Collector(), dict({'api_url': emulator.url, 'api_key': PRIMARY_KEY},
                                                                **args)), 10)
    assert str(caught.value).startswith('argument %s' % list(args)[0]) and '\n' not in str(caught.value)
    assert emulator.log() == []


@pytest.mark.asyncio
async def test_retry_after_as_an_http_date_is_honoured(source, scripted, caplog):
    retry_at = email.utils.formatdate(time.time() + 40, usegmt=True)
    scripted.answers = [(429, {'Retry-After': retry_at}, {'message': 'Too Many Attempts.'})]
    waits = record_sleeps(source)
    task = asyncio.create_task(source['main'](Collector(), {'api_url': scripted.url, 'api_key': 'key-1234',
                                                            'interval': 1, 'watch': ['monitors']}))
    try:
        await wait_for(lambda: waits)
    finally:
        task.cancel()
    assert 30 <= waits[0] <= 40
    assert any('as the service asks' in record.getMessage() for record in caplog.records)
