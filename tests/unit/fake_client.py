"""The one in-memory fake of the service for the unit tests of ``plugins/module_utils``: no HTTP, no emulator process.

``FakeService`` holds the emulator's state (``emulator.store.Store`` and ``emulator.server.Emulator``'s faults, request
log, quirks and rate limit) in this process and answers a request through the emulator's own request handler
(``Handler.service``, ``Handler.control``), so that the service's rules live in one place. It offers what
``emulator.control.Emulator`` offers the tests (``log``, ``writes``, ``fault``, ``timezone``, ``quirks``, ``seed``,
``records``, ``api``...).

``FakeClient`` is ``UptimeClient`` with its one send replaced by a call to the ``FakeService``: all else is the
client's, never a second copy (its transport is tested against a real server in ``test_client.py``).
``install(service, monkeypatch)`` makes every client a module or plugin connects a ``FakeClient`` of ``service``.
"""

from __future__ import annotations

import datetime
import json
import time
import types
from email.utils import formatdate
from urllib.parse import parse_qsl, urlencode, urlsplit

from emulator import server
from emulator.control import NOPLAN_KEY, OTHER_KEY, PRIMARY_KEY, ApiResponse, Emulator
from emulator.store import Store
from requests.structures import CaseInsensitiveDict

from ansible_collections.uptime.monitoring.plugins.module_utils import _client, _connection

FAKE_URL = 'http://uptime.fake'
DROPPED = 'dropped'


class FakeAnswer:
    """What ``UptimeClient._read_response`` reads of a ``requests`` response."""

    def __init__(self, status, headers, content):
        self.status_code = status
        self.headers = CaseInsensitiveDict(headers)
        self.content = content
        self.reason = server._reason(status)  # pylint: disable=protected-access


class FakeService(Emulator):
    def __init__(self, api_keys=(PRIMARY_KEY, OTHER_KEY), no_api_keys=(NOPLAN_KEY,)):
        super().__init__(FAKE_URL, api_keys=api_keys)
        self.state = server.Emulator(Store(), api_keys, no_api_keys)
        self.server = types.SimpleNamespace(emulator=self.state, server_address=('uptime.fake', 80), verbose=False,
                                            transport_control=lambda action, payload: None,
                                            clear_transport_faults=lambda: None)

    def client(self, api_key=PRIMARY_KEY, **options):
        """A ``FakeClient`` of this service (``retries`` 0 unless given)."""
        options.setdefault('retries', 0)
        return FakeClient(self, FAKE_URL, api_key, **options)

    def _handler(self, method, target, headers):
        handler = server.Handler.__new__(server.Handler)
        handler.command, handler.path, handler.headers = method, target, CaseInsensitiveDict(headers)
        handler.server, handler.client_address = self.server, ('127.0.0.1', 0)
        return handler

    def answer(self, method, url, params=None, form=None, headers=None):
        """A service request as ``Handler.handle_request`` takes it: logged, through the faults, then routed.

        Returns a ``FakeAnswer``, or ``DROPPED`` when a fault closes the connection without an answer (``drop``,
        ``truncated``) or holds it past any timeout (``delay``).
        """
        split = urlsplit(url)
        query = '&'.join(part for part in (split.query, urlencode(params or {})) if part)
        body = urlencode(form) if form is not None else ''
        target = split.path + ('?' + query if query else '')
        entry = self.state.log.start(method=method, path=split.path, query=query, url=target,
                                     form=dict(parse_qsl(body, keep_blank_values=True)), headers=dict(headers or {}),
                                     time=time.time())
        fault = self.state.faults.take(method, split.path)
        if fault and fault['kind'] == 'delay':
            entry.update(fault='delay', fault_when='before')
            return DROPPED
        if fault and fault['kind'] == 'check':
            self.state.checker_acts(fault, entry)
            fault = None
        response = None
        if not fault or fault['when'] == 'after':
            try:
                response = self._handler(method, target, headers or {}).service(split.path, query, body, entry)
            except Exception:  # pylint: disable=broad-except  # the real service answers 500 too
                response = server.Response.message(500, 'Server Error')
            entry['app_status'] = response.status
        if fault:
            entry.update(fault=fault['kind'], fault_when=fault['when'])
            if fault['kind'] == 'meanwhile':
                self.state.another_client_acts(fault, entry['api_key'])
            response = _fault_response(fault, response)
            if response is None:
                return DROPPED
        entry['status'] = response.status
        headers = dict(response.headers)
        headers.update({'Content-Type': response.content_type,
                        'Date': formatdate(time.time() + self.state.store.clock_offset, usegmt=True)})
        return FakeAnswer(response.status, headers, response.body)

    def api(self, method, path, api_key=None, data=None, params=None, headers=None, accept_json=True, timeout=10):
        key = self.api_keys[0] if api_key is None else api_key
        request_headers = {'Accept': 'application/json'} if accept_json else {}
        if key:
            request_headers['Authorization'] = 'Bearer %s' % key
        request_headers.update(headers or {})
        url = path if path.startswith('http') else self.url + '/' + path.lstrip('/')
        form = _client.encode_form(data) if isinstance(data, dict) else data
        answer = self.answer(method.upper(), url, params, form, request_headers)
        return ApiResponse(answer.status_code, answer.headers, answer.content.decode('utf-8'))

    def _control(self, method, path, payload=None):
        body = json.dumps(payload) if payload is not None else ''
        response = self._handler(method, server.CONTROL_PREFIX + path, {}).control(server.CONTROL_PREFIX + path, body)
        answer = json.loads(response.body.decode('utf-8'))
        if response.status != 200:
            raise RuntimeError('emulator control %s %s failed: %s' % (method, path, answer))
        return answer

    def wait_idle(self, timeout=5.0, requests=0):
        return True


def _fault_response(fault, response):
    """The answer a fault gives instead of ``response`` (None when the request was not processed); None for none."""
    kind, status = fault['kind'], fault.get('status')
    if kind in ('drop', 'truncated'):
        return None
    if kind == 'meanwhile':
        return response
    headers = [('Retry-After', str(fault['retry_after']))] if fault['retry_after'] is not None else []
    if kind in ('badjson',) and response is not None and not fault['explicit_status']:
        status = response.status
    if kind == 'status':
        reason = 'Too Many Attempts.' if status == 429 else ('Server Error' if status == 500 else server._reason(status))  # pylint: disable=protected-access
        return server.Response.json(status, {'message': reason, 'status': status}, headers)
    if kind == 'html':
        return server.Response.html(status, server.ERROR_PAGE % {'code': status, 'reason': server._reason(status)}, headers)  # pylint: disable=protected-access
    if kind == 'badjson':
        original = response.body if response is not None else b'{"data": {"id": 1}}'
        return server.Response(status, original[:max(1, len(original) // 2)], server.JSON_TYPE, headers)
    return server.Response.json(status, {'message': 'Moved'}, headers + [('Location', fault['location'])])


class FakeClient(_client.UptimeClient):
    """``UptimeClient`` whose requests a ``FakeService`` answers in this process; no sleep between retries."""

    def __init__(self, service, api_url=FAKE_URL, api_key=PRIMARY_KEY, **options):
        options.setdefault('sleep', lambda seconds: None)
        super().__init__(api_url, api_key, **options)
        self.service = service

    def _send_once(self, method, url, display_path, params, data):
        self.request_count += 1
        answer = self.service.answer(method, url, params, data, dict(self.session.headers))
        if answer == DROPPED:
            raise _client._TransientError(self._error(  # pylint: disable=protected-access
                'connection failed: the connection was closed without an answer', None, method, display_path))
        self._unreachable_since = None
        self.rate_limit.observe(answer.headers)
        body = self._read_response(answer, answer.content, method, display_path)
        self._observe_date(answer.headers)
        return body


def install(service, monkeypatch):
    """Make every client ``_connection.connect`` makes (modules, the bulk module's workers, the inventory) a
    ``FakeClient`` of ``service``; returns the connection options."""
    monkeypatch.setattr(_connection, 'UptimeClient', lambda api_url, api_key, **options: FakeClient(
        service, api_url, api_key, **options))
    for name in ('UPTIME_API_URL', 'UPTIME_API_KEY', 'UPTIME_ACCOUNT_TIMEZONE'):
        monkeypatch.delenv(name, raising=False)
    return {'api_url': FAKE_URL, 'api_key': PRIMARY_KEY}


class FakeTime:
    """An injected clock and sleep: sleeping moves the clock and records the wait, nothing really waits."""

    def __init__(self):
        self.now = 1000.0
        self.waits = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.waits.append(seconds)
        self.now += seconds


def stamp(seconds_ago=0):
    moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return moment.strftime('%Y-%m-%dT%H:%M:%S')


def add_monitor(service, name='shop', url=None, api_key=None, **fields):
    """A monitor created through the API of ``service`` (a ``FakeService`` or the emulator): its id."""
    form = {'name': name, 'url': url or 'https://%s.example.com/' % name, 'interval': 60, 'request_method': 'GET',
            'alert_condition': 'url_unavailable'}
    form.update(fields)
    answer = service.api('POST', '/api/v1/monitors', api_key=api_key, data=form)
    assert answer.status in (200, 201), answer.text
    return int(answer.json['data']['id'])


def shifting_account(service, deleted_after_page_1):
    """101 monitors whose names hold ``seed-0`` (the oldest so named, id 1; then ``seed-00001``... ids 2 to 101): two pages;
    another job deletes a monitor once page 1 is read."""
    add_monitor(service, 'seed-0')
    service.seed(100)
    service.fault('meanwhile', method='GET', path='/api/v1/monitors', delete=[deleted_after_page_1])


def open_incident(service, monitor_id, started_at=None, api_key=None, **fields):
    """An incident of ``monitor_id`` started at ``started_at`` (else an hour ago): its id."""
    form = {'monitor_id': monitor_id, 'started_at': started_at or stamp(3600)}
    form.update(fields)
    answer = service.api('POST', '/api/v1/incidents', api_key=api_key, data=form)
    assert answer.status in (200, 201), answer.text
    return int(answer.json['data']['id'])
