"""HTTP emulator of the phpUptime API (``/api/v1``) for tests and demos.

Run it with ``python tests/emulator/server.py --port 0 --api-key KEY``; it prints one line
``READY http://HOST:PORT`` once it listens.  Besides the service API it offers control endpoints under
``/_emulator`` (no authentication, JSON in and out) to read the request log, inject faults, switch the
rate limit on, assign monitors to status pages and turn on response quirks.  See tests/emulator/README.md.

Only the Python standard library is used, so the emulator runs from a bare checkout.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import socket
import sys
import threading
import time
import zoneinfo
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlencode, urlsplit

try:
    from . import store as store_module
    from . import transport
except ImportError:  # run as a script: tests/emulator is sys.path[0]
    import store as store_module  # type: ignore[no-redef]
    import transport  # type: ignore[no-redef]

API_PREFIX = '/api/v1'
CONTROL_PREFIX = '/_emulator'
FAULT_KINDS = ('status', 'html', 'badjson', 'truncated', 'delay', 'drop', 'redirect', 'record', 'check', 'meanwhile')
FAULT_DEFAULT_STATUS = {'status': 500, 'html': 200, 'badjson': 200, 'truncated': 200, 'redirect': 302}
# Each route: its path below API_PREFIX, the kind of record, and the action of each method (see Handler.act).
ROUTES = (
    (r'/status', None, {'GET': 'status'}),
    (r'/account', None, {'GET': 'account'}),
    (r'/monitors', 'monitor', {'GET': 'list', 'POST': 'create'}),
    (r'/monitors/([^/]+)', 'monitor', {'GET': 'get', 'PUT': 'update', 'PATCH': 'update', 'DELETE': 'delete'}),
    (r'/incidents', 'incident', {'GET': 'list', 'POST': 'create'}),
    (r'/incidents/([^/]+)', 'incident', {'GET': 'get', 'PUT': 'update', 'DELETE': 'delete'}),
)
# The parameters a list's links carry along.
LIST_PARAMS = {'monitor': ('search', 'search_by', 'status_page_id', 'sort_by', 'sort', 'per_page'),
               'incident': ('search', 'search_by', 'monitor_id', 'status', 'sort_by', 'sort', 'per_page')}
JSON_TYPE = 'application/json'
HTML_TYPE = 'text/html; charset=UTF-8'

LOGIN_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Login - phpUptime</title></head>
<body><form method="POST" action="/login"><input type="email" name="email"><input type="password" name="password">
<button type="submit">Login</button></form></body></html>
"""

ERROR_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%(code)d %(reason)s</title></head>
<body><h1>%(code)d %(reason)s</h1><p>The server could not handle the request.</p></body></html>
"""


class Response:
    """A complete HTTP answer before it is written (so a fault can still replace it)."""

    def __init__(self, status, body=b'', content_type=JSON_TYPE, headers=None):
        self.status = int(status)
        self.body = body
        self.content_type = content_type
        self.headers = list(headers or [])

    @classmethod
    def json(cls, status, payload, headers=None):
        return cls(status, json.dumps(payload).encode('utf-8'), JSON_TYPE, headers)

    @classmethod
    def html(cls, status, text, headers=None):
        return cls(status, text.encode('utf-8'), HTML_TYPE, headers)

    @classmethod
    def message(cls, status, message, with_status=True):
        payload = {'message': message}
        if with_status:
            payload['status'] = int(status)
        return cls.json(status, payload)


class RateLimiter:
    """Fixed-window request counter per client key, like Laravel's ``throttle`` middleware."""

    def __init__(self):
        self.lock = threading.Lock()
        self.configure(0, 60)  # off

    def configure(self, per_window, window_seconds):
        with self.lock:
            self.per_window = per_window
            self.window_seconds = window_seconds
            self.windows = {}

    def hit(self, key):
        with self.lock:
            if not self.per_window:
                return None
            now = time.monotonic()
            start, count = self.windows.get(key, (now, 0))
            if now - start >= self.window_seconds:
                start, count = now, 0
            headers = [('X-RateLimit-Limit', str(self.per_window))]
            if count >= self.per_window:
                retry_after = max(1, math.ceil(self.window_seconds - (now - start)))
                headers += [('X-RateLimit-Remaining', '0'), ('Retry-After', str(retry_after)),
                            ('X-RateLimit-Reset', str(int(time.time()) + retry_after))]
                return False, headers
            self.windows[key] = (start, count + 1)
            headers.append(('X-RateLimit-Remaining', str(self.per_window - count - 1)))
            return True, headers


class Faults(transport.FaultQueue):
    """Queue of injected faults; each matching request consumes one count of the first matching fault."""

    @staticmethod
    def normalise(spec):
        """Check a fault spec from ``POST /_emulator/faults`` and fill in its defaults."""
        if not isinstance(spec, dict):
            raise ValueError('a fault is a JSON object')
        kind = spec.get('kind')
        if kind not in FAULT_KINDS:
            raise ValueError('kind must be one of %s' % ', '.join(FAULT_KINDS))
        fault = {
            'kind': kind,
            'count': int(spec.get('count', 1)),
            'method': spec.get('method').upper() if spec.get('method') else None,
            'path': spec.get('path') or None,
            'when': spec.get('when', 'before'),
        }
        if fault['count'] < 1:
            raise ValueError('count must be at least 1')
        if fault['when'] not in ('before', 'after'):
            raise ValueError('when must be "before" or "after"')
        if kind in FAULT_DEFAULT_STATUS:
            fault['status'] = int(spec.get('status') or FAULT_DEFAULT_STATUS[kind])
            if not 100 <= fault['status'] <= 599:
                raise ValueError('status must be an HTTP status code')
            explicit = 'status' in spec and spec['status'] is not None
            fault['explicit_status'] = explicit
        retry_after = spec.get('retry_after')
        if retry_after is None and fault.get('status') == 429:
            retry_after = 1
        fault['retry_after'] = int(retry_after) if retry_after is not None else None
        if kind == 'delay':
            fault['seconds'] = float(spec.get('seconds', 3))
        if kind == 'redirect':
            if not spec.get('location'):
                raise ValueError('a redirect needs a location')
            fault['location'] = str(spec['location'])
        if kind == 'record':  # the answer as processed, with fields of one record replaced: a record a client may not read
            if not isinstance(spec.get('set'), dict) or 'record' not in spec:
                raise ValueError('a record fault needs the record id and a "set" object')
            fault.update(when='after', record=spec['record'], set=spec['set'])
        if kind == 'check':  # the checker acts just before the request is handled: another actor between a read and a write
            check = spec.get('check')
            if not isinstance(check, dict) or 'monitor_id' not in check or check.get('status') not in ('pending', 'online', 'offline'):
                raise ValueError('a check fault needs a "check" object with monitor_id and status (pending, online or offline)')
            fault['check'] = {key: check.get(key) for key in ('api_key', 'monitor_id', 'status', 'cause')}
        if kind == 'meanwhile':  # another client's changes once the request is answered: between two page reads
            edits = spec.get('update', [])
            if not isinstance(edits, list) or not all(isinstance(edit, dict) and 'id' in edit for edit in edits):
                raise ValueError('the update of a meanwhile fault is a list of objects, each with the id of a monitor')
            fault.update(when='after', delete=[int(item) for item in spec.get('delete', [])], create=list(spec.get('create', [])),
                         update=edits)
        return fault

    def take(self, method, path):
        with self.lock:
            for fault in self.queue:
                if fault['method'] and fault['method'] != method:
                    continue
                if fault['path'] and not path_within(path, fault['path']):
                    continue
                fault['count'] -= 1
                if fault['count'] == 0:
                    self.queue.remove(fault)
                return dict(fault)
            return None


def path_within(path, prefix):
    """Whether ``path`` is ``prefix`` or below it: ``/monitors/1`` covers ``/monitors/1/x``, not ``/monitors/10``.

    A prefix that ends with ``/`` covers only what is below it: ``/monitors/`` every record, not the list.
    """
    if prefix.endswith('/'):
        return path.startswith(prefix)
    return path == prefix or path.startswith(prefix + '/')


class RequestLog:
    """Every service request (not the control endpoints) with its outcome."""

    def __init__(self):
        self.lock = threading.Lock()
        self.entries = []
        self.seq = 0

    def start(self, **fields):
        with self.lock:
            self.seq += 1
            entry = dict(seq=self.seq, **fields, status=None, app_status=None, fault=None, fault_when=None, account=None,
                         api_key=None, rate_remaining=None)
            self.entries.append(entry)
            return entry

    def snapshot(self):
        with self.lock:
            return [dict(entry) for entry in self.entries]

    def clear(self, restart=False):
        """Forget the entries; ``restart`` also numbers the next request 1 again."""
        with self.lock:
            self.entries = []
            if restart:
                self.seq = 0


def stringly(value):
    """The ``stringly`` quirk: ints as strings, {key, value} lists as objects keyed by position, empty lists as null."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        return {key: stringly(item) for key, item in value.items()}
    if isinstance(value, list):
        if not value:
            return None
        if all(isinstance(item, dict) and set(item) == {'key', 'value'} for item in value):
            return {str(index): stringly(item) for index, item in enumerate(value)}
        return [stringly(item) for item in value]
    return value


class Emulator:
    def __init__(self, store, api_keys, no_api_keys, timezones=None):
        self.store = store
        self.rate_limiter = RateLimiter()
        self.faults = Faults()
        self.log = RequestLog()
        self.quirks = {}
        self.key_index = {}
        for index, key in enumerate(list(api_keys) + list(no_api_keys)):
            store.ensure_account(key, api_access=key not in no_api_keys)
            self.key_index[key] = index
        # The accounts' time zones of the command line, which reset restores.
        self.initial_timezones = dict(timezones or {})
        self._apply_initial_timezones()

    def _apply_initial_timezones(self):
        for key, zone in self.initial_timezones.items():
            self.store.set_timezone(key, zone)

    def checker_acts(self, fault, entry):
        """What a ``check`` fault makes the checker write before its request is handled, as ``POST /_emulator/check``
        would (for the first key's account unless it names another)."""
        check = fault['check']
        key = check['api_key'] or min(self.key_index, key=self.key_index.get)
        self.store.check_monitor(self.store.account_for_key(key)['id'], int(check['monitor_id']), check['status'],
                                 check['cause'])
        entry.update(fault='check', fault_when='before')

    def another_client_acts(self, fault, api_key):
        """What a ``meanwhile`` fault does after the request it matched: monitors edited, deleted and created in its
        account."""
        account_id = self.store.account_for_key(api_key)['id']
        for edit in fault['update']:
            try:
                self.store.update_monitor(account_id, int(edit['id']), {key: value for key, value in edit.items() if key != 'id'})
            except store_module.NotFound:
                pass
        for monitor_id in fault['delete']:
            try:
                self.store.delete_monitor(account_id, monitor_id)
            except store_module.NotFound:
                pass
        self.store.add_records(account_id, fault['create'], [])

    def reset(self):
        """Back to a clean start: no records, log, faults, rate limit or quirks; time zones as on the command line."""
        self.store.reset()
        self._apply_initial_timezones()
        self.log.clear(restart=True)
        self.faults.clear()
        self.rate_limiter.configure(0, 60)
        self.quirks = {}


class Handler(BaseHTTPRequestHandler):
    """One request: control endpoint, or service request through faults, auth, rate limit and routing."""

    protocol_version = 'HTTP/1.1'
    server: 'EmulatorServer'

    def do_GET(self):  # pylint: disable=invalid-name
        self.handle_request()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        if self.server.verbose:
            super().log_message(format, *args)

    def version_string(self):
        return 'nginx'

    def date_time_string(self, timestamp=None):
        # The Date header tells the service's clock, which may run off the real one (POST /_emulator/clock).
        if timestamp is None:
            timestamp = time.time() + self.emulator.store.clock_offset
        return super().date_time_string(timestamp)

    @property
    def emulator(self):
        return self.server.emulator

    def handle_request(self):
        self.close_connection = True
        split = urlsplit(self.path)
        path, query = split.path, split.query
        try:
            body = self.read_body()
        except (OSError, ValueError):
            return
        if path == CONTROL_PREFIX or path.startswith(CONTROL_PREFIX + '/'):
            self.send(self.control(path, body))
            return

        raw_form = dict(parse_qsl(body, keep_blank_values=True))
        entry = self.emulator.log.start(method=self.command, path=path, query=query, url=self.path, form=raw_form,
                                        headers=dict(self.headers.items()), time=time.time())
        fault = self.emulator.faults.take(self.command, path)
        if fault and fault['kind'] == 'delay' and fault['when'] == 'before':
            time.sleep(fault['seconds'])
            entry.update(fault='delay', fault_when='before')
            fault = None
        if fault and fault['kind'] == 'check':
            self.emulator.checker_acts(fault, entry)
            fault = None
        if fault and fault['when'] == 'before':
            self.send_fault(fault, entry, None)
            return
        try:
            response = self.service(path, query, body, entry)
        except Exception as exc:  # pylint: disable=broad-except  # the real service answers 500 too
            self.log_error('internal error: %r', exc)
            response = Response.message(500, 'Server Error')
        entry['app_status'] = response.status
        if fault:
            self.send_fault(fault, entry, response)
        else:
            entry['status'] = response.status
            self.send(response)

    def read_body(self):
        if self.headers.get('Transfer-Encoding', '').lower() == 'chunked':
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b';')[0].strip() or b'0', 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b''.join(chunks).decode('utf-8', 'replace')
        length = int(self.headers.get('Content-Length') or 0)
        return self.rfile.read(length).decode('utf-8', 'replace') if length else ''

    def send(self, response, declared_length=None, body=None):
        """Write a response; ``declared_length`` / ``body`` let the truncation fault lie about the length."""
        body = response.body if body is None else body
        try:
            self.send_response(response.status)
            self.send_header('Content-Type', response.content_type)
            self.send_header('Content-Length', str(len(response.body) if declared_length is None else declared_length))
            self.send_header('Cache-Control', 'no-cache, private')
            for name, value in response.headers:
                self.send_header(name, value)
            self.send_header('Connection', 'close')
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. after a delay fault)

    def drop(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def send_fault(self, fault, entry, response):
        """Answer with the fault instead of ``response`` (None when the request was not processed)."""
        kind = fault['kind']
        entry['fault'] = kind
        entry['fault_when'] = fault['when']
        if kind == 'drop':
            self.drop()
            return
        if kind == 'delay':  # applied and committed, its answer held: a client that gave up cannot tell
            time.sleep(fault['seconds'])
            entry['status'] = response.status
            self.send(response)
            return
        if kind == 'meanwhile':
            self.emulator.another_client_acts(fault, entry['api_key'])
            entry['status'] = response.status
            self.send(response)
            return
        if kind == 'record':
            document = json.loads(response.body)
            data = document.get('data')
            for item in data if isinstance(data, list) else [data]:
                if isinstance(item, dict) and item.get('id') == fault['record']:
                    item.update(fault['set'])
            entry['status'] = response.status
            self.send(Response(response.status, json.dumps(document).encode(), JSON_TYPE, response.headers))
            return
        original = response.body if response is not None else json.dumps({'data': {'id': 1, 'name': 'x' * 64}, 'status': 200}).encode()
        status = fault['status']
        if kind in ('badjson', 'truncated') and response is not None and not fault['explicit_status']:
            status = response.status
        headers = [('Retry-After', str(fault['retry_after']))] if fault['retry_after'] is not None else []
        entry['status'] = status
        if kind == 'status':
            reason = 'Too Many Attempts.' if status == 429 else ('Server Error' if status == 500 else _reason(status))
            self.send(Response.json(status, {'message': reason, 'status': status}, headers))
        elif kind == 'html':
            self.send(Response.html(status, ERROR_PAGE % {'code': status, 'reason': _reason(status)}, headers))
        elif kind == 'badjson':
            self.send(Response(status, original[:max(1, len(original) // 2)], JSON_TYPE, headers))
        elif kind == 'truncated':
            self.send(Response(status, original, JSON_TYPE, headers), body=original[:len(original) // 2])
            self.drop()
        elif kind == 'redirect':
            self.send(Response.json(status, {'message': 'Moved'}, headers + [('Location', fault['location'])]))

    def service(self, path, query, body, entry):
        """Authenticate, rate-limit and route a service request."""
        if path == '/login' and self.command == 'GET':
            return Response.html(200, LOGIN_PAGE)
        if not path.startswith(API_PREFIX + '/'):
            return Response.html(404, ERROR_PAGE % {'code': 404, 'reason': 'Not Found'})

        account = None
        authorization = self.headers.get('Authorization', '')
        match = re.fullmatch(r'Bearer\s+(\S+)', authorization.strip(), re.IGNORECASE)
        if match and match.group(1) in self.emulator.key_index:
            account = self.emulator.store.account_for_key(match.group(1))
            entry['account'] = self.emulator.key_index[match.group(1)]
            entry['api_key'] = match.group(1)

        limited = self.emulator.rate_limiter.hit('account:%d' % account['id'] if account else 'ip:%s' % self.client_address[0])
        rate_headers = limited[1] if limited else []
        entry['rate_remaining'] = next((int(value) for name, value in rate_headers if name == 'X-RateLimit-Remaining'), None)
        if limited and not limited[0]:
            response = Response.message(429, 'Too Many Attempts.')
        elif account is None:
            if self.wants_json():
                response = Response.message(401, 'Unauthenticated.', with_status=False)
            else:
                response = Response.html(302, '<!DOCTYPE html><html><body>Redirecting to /login</body></html>', [('Location', '/login')])
        elif not account['api_access']:
            response = Response.message(403, "You don't have access to this feature.")
        else:
            response = self.route(account['id'], path, query, body)
        response.headers.extend(rate_headers)
        return response

    def wants_json(self):
        """Laravel's ``expectsJson()`` as far as API clients are concerned: the first accepted type is JSON."""
        accept = self.headers.get('Accept', '').split(',')[0].strip().lower()
        return '/json' in accept or '+json' in accept

    def route(self, account_id, path, query, body):
        for pattern, kind, methods in ROUTES:
            match = re.fullmatch(re.escape(API_PREFIX) + pattern, path)
            if not match:
                continue
            action = methods.get(self.command)
            if action is None:
                allowed = ', '.join(list(methods) + (['HEAD'] if 'GET' in methods else []))
                return Response.message(405, 'The %s method is not supported for route %s. Supported methods: %s.'
                                        % (self.command, path.lstrip('/'), allowed))
            record_id = int(match.group(1)) if match.groups() and match.group(1).isdigit() else None
            try:
                return self.act(action, kind, account_id, record_id, dict(parse_qsl(query, keep_blank_values=True)),
                                store_module.decode_form(body))
            except store_module.ValidationError as exc:
                return Response.json(422, {'message': exc.messages, 'status': 422})
            except store_module.NotFound:
                if (action, kind) == ('update', 'incident'):
                    # Its form request looks the incident up with firstOrFail() before the controller runs.
                    return Response.json(404, {'message': 'No query results for model [App\\Models\\Incident] %s' % record_id})
                return Response.message(404, 'Resource not found.')
        # Laravel's answer for a path no route matches: nothing to do with a record.
        return Response.json(404, {'message': 'The route %s could not be found.' % path.lstrip('/')})

    def act(self, action, kind, account_id, record_id, query, form):
        """One routed request: ``action`` of ROUTES on a ``kind`` of record (the store's ``<action>_<kind>``)."""
        store = self.emulator.store
        if action == 'status':
            return Response.message(200, 'Online.')
        if action == 'account':
            return self.record(store.account(account_id))
        if action == 'list':
            return self.listing(getattr(store, 'list_%ss' % kind)(account_id, query), LIST_PARAMS[kind])
        if action == 'create':
            return self.record(getattr(store, 'create_' + kind)(account_id, form), 201)
        if action == 'delete':
            getattr(store, 'delete_' + kind)(account_id, record_id)
            shown_id = str(record_id) if self.emulator.quirks.get('stringly') else record_id
            return Response.json(200, {'id': shown_id, 'object': kind, 'deleted': True, 'status': 200})
        arguments = (form,) if action == 'update' else ()
        return self.record(getattr(store, '%s_%s' % (action, kind))(account_id, record_id, *arguments))

    def record(self, data, status=200):
        if self.emulator.quirks.get('stringly'):
            data = stringly(data)
        return Response.json(status, {'data': data, 'status': status})

    def listing(self, page, params):
        """The paginated list envelope with ``links`` and ``meta`` like a Laravel resource collection."""
        base = 'http://%s%s' % (self.headers.get('Host') or '%s:%d' % self.server.server_address[:2], urlsplit(self.path).path)
        kept = [(key, value) for key, value in parse_qsl(urlsplit(self.path).query, keep_blank_values=True) if key in params]
        kept = list(dict(kept).items())
        last_page = max(1, math.ceil(page.total / page.per_page))

        def link(number):
            if number is None:
                return None
            return base + '?' + urlencode(kept + [('page', number)])

        records = [stringly(record) for record in page.records] if self.emulator.quirks.get('stringly') else page.records
        offset = (page.page - 1) * page.per_page
        return Response.json(200, {
            'data': records,
            'links': {
                'first': link(1),
                'last': link(last_page),
                'prev': link(page.page - 1) if page.page > 1 else None,
                'next': link(page.page + 1) if page.page < last_page else None,
            },
            'meta': {
                'current_page': page.page,
                'from': offset + 1 if page.records else None,
                'last_page': last_page,
                'path': base,
                'per_page': page.per_page,
                'to': offset + len(page.records) if page.records else None,
                'total': page.total,
            },
            'status': 200,
        })

    def account_id(self, payload):
        account = self.emulator.store.account_for_key(payload.get('api_key'))
        if account is None:
            raise ValueError('unknown api_key')
        return account['id']

    def control(self, path, body):
        """``/_emulator/...``: test support, JSON in and out, never logged or faulted."""
        try:
            payload = json.loads(body) if body.strip() else {}
        except ValueError:
            return Response.json(400, {'error': 'body is not JSON'})
        emulator, store = self.emulator, self.emulator.store
        action = (self.command, path[len(CONTROL_PREFIX):].rstrip('/') or '/')
        try:
            if action == ('GET', '/'):
                return Response.json(200, {'emulator': 'phpUptime', 'accounts': len(emulator.key_index)})
            if action == ('GET', '/log'):
                return Response.json(200, {'requests': emulator.log.snapshot()})
            if action == ('DELETE', '/log'):
                emulator.log.clear()
                return Response.json(200, {'cleared': True})
            if action == ('POST', '/reset'):
                emulator.reset()
                self.server.clear_transport_faults()
                return Response.json(200, {'reset': True})
            if action == ('GET', '/faults'):
                return Response.json(200, {'faults': emulator.faults.pending()})
            if action == ('POST', '/faults'):
                return Response.json(200, {'fault': emulator.faults.add(payload)})
            if action == ('DELETE', '/faults'):
                emulator.faults.clear()
                self.server.clear_transport_faults()
                return Response.json(200, {'cleared': True})
            if action == ('POST', '/rate_limit'):
                per_minute, window_seconds = int(payload.get('per_minute', 0)), float(payload.get('window_seconds', 60))
                emulator.rate_limiter.configure(per_minute, window_seconds)
                return Response.json(200, {'per_minute': per_minute, 'window_seconds': window_seconds})
            if action == ('POST', '/status_pages'):
                account_id = self.account_id(payload)
                monitor_ids = [int(monitor_id) for monitor_id in payload.get('monitor_ids', [])]
                store.set_status_page(account_id, int(payload['id']), monitor_ids)
                return Response.json(200, {'id': int(payload['id']), 'monitor_ids': monitor_ids})
            if action == ('POST', '/check'):
                return Response.json(200, store.check_monitor(self.account_id(payload), int(payload['monitor_id']),
                                                              payload.get('status'), payload.get('cause')))
            if action == ('POST', '/seed'):
                return Response.json(200, store.seed(self.account_id(payload), payload.get('monitors'),
                                                     payload.get('offline', 0), payload.get('resolved', 0)))
            if action == ('POST', '/records'):
                return Response.json(200, store.add_records(self.account_id(payload), payload.get('monitors', []),
                                                            payload.get('incidents', [])))
            if action == ('POST', '/account'):
                self.account_id(payload)
                store.set_timezone(payload['api_key'], payload.get('timezone'))
                return Response.json(200, {'timezone': payload.get('timezone')})
            if action == ('POST', '/rotate_key'):
                store.rotate_key(payload['api_key'], payload['new_key'])
                emulator.key_index[payload['new_key']] = emulator.key_index.pop(payload['api_key'])
                return Response.json(200, {'rotated': True})
            if action == ('POST', '/clock'):
                store.set_clock(payload.get('offset', 0))
                return Response.json(200, {'offset': store.clock_offset})
            if action == ('POST', '/quirks'):
                emulator.quirks.update({key: bool(value) for key, value in payload.items()})
                return Response.json(200, emulator.quirks)
            if action == ('POST', '/names'):
                store.names_ignore_case = bool(payload['ignore_case'])
                return Response.json(200, {'ignore_case': store.names_ignore_case})
            handled = self.server.transport_control(action, payload)
            if handled is not None:
                return Response.json(*handled)
        except (KeyError, TypeError, ValueError) as exc:
            return Response.json(400, {'error': str(exc)})
        except store_module.NotFound:
            return Response.json(400, {'error': 'a monitor id does not belong to that account'})
        return Response.json(404, {'error': 'no control endpoint %s %s' % action})


def _reason(status):
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return 'Error'


class EmulatorServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, emulator, verbose=False):
        super().__init__(address, Handler)
        self.emulator = emulator
        self.verbose = verbose

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, socket.timeout)):
            return
        super().handle_error(request, client_address)

    scheme = 'http'

    def transport_control(self, action, payload):  # pylint: disable=unused-argument
        """Control endpoints of the transport (HTTPS mode only, see transport.py)."""
        return None

    def clear_transport_faults(self):
        """Plain HTTP has no handshake faults."""


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Emulator of the phpUptime HTTP API for tests.')
    parser.add_argument('--host', default='127.0.0.1', help='address to listen on (default 127.0.0.1)')
    parser.add_argument('--port', type=int, default=8080, help='port to listen on; 0 picks a free one (default 8080)')
    parser.add_argument('--db', default=':memory:', help='SQLite database file, or :memory: (default)')
    parser.add_argument('--api-key', action='append', default=[], dest='api_keys', metavar='KEY',
                        help='API key of an account with API access (repeatable; each key is its own account)')
    parser.add_argument('--no-api-key', action='append', default=[], dest='no_api_keys', metavar='KEY',
                        help='API key of an account whose plan has no API access (every request is a 403)')
    parser.add_argument('--timezone', action='append', default=[], dest='timezones', metavar='KEY=ZONE',
                        help="time zone of the account of KEY (an IANA name such as America/New_York; "
                             "without it, the instance default, UTC); reset restores it (repeatable)")
    parser.add_argument('--verbose', action='store_true', help='log each request to stderr')
    parser.add_argument('--tls-dir', metavar='DIR',
                        help='serve HTTPS with the certificates of DIR (made by pki.make_pki; see transport.py)')
    parser.add_argument('--lifetime', type=float, metavar='SECONDS',
                        help='stop after SECONDS at most (a backstop for a test run that ends without stopping it)')
    parser.add_argument('--exit-with-stdin', action='store_true',
                        help='stop when standard input reaches end of file (lets a parent process that dies take the server with it)')
    args = parser.parse_args(argv)
    if not args.api_keys and not args.no_api_keys:
        parser.error('give at least one --api-key')
    zones = {}
    for setting in args.timezones:
        key, zone = setting.rpartition('=')[::2]
        if key not in args.api_keys + args.no_api_keys:
            parser.error('--timezone %s: give it as KEY=ZONE, KEY one of the --api-key or --no-api-key keys' % setting)
        try:
            zoneinfo.ZoneInfo(zone)
        except (ValueError, zoneinfo.ZoneInfoNotFoundError):
            parser.error('--timezone %s: %r is no IANA time zone name' % (setting, zone))
        zones[key] = zone
    args.timezones = zones
    return args


def stop_at_end_of_stdin(server):
    # os.read, not sys.stdin: a thread blocked in a buffered read holds its lock, and an exit for another reason (the
    # lifetime, a signal) would then abort the interpreter.
    while os.read(0, 65536):
        pass
    server.shutdown()


def main(argv=None):
    args = parse_args(argv)
    store = store_module.Store(args.db)
    emulator = Emulator(store, args.api_keys, args.no_api_keys, timezones=args.timezones)
    if args.tls_dir:
        server = transport.tls_server_class(EmulatorServer)((args.host, args.port), emulator, verbose=args.verbose)
        server.setup_tls(args.tls_dir)
    else:
        server = EmulatorServer((args.host, args.port), emulator, verbose=args.verbose)

    def stop(signum, frame):  # pylint: disable=unused-argument
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if args.exit_with_stdin:
        threading.Thread(target=stop_at_end_of_stdin, args=(server,), daemon=True).start()
    if args.lifetime:
        backstop = threading.Timer(args.lifetime, server.shutdown)
        backstop.daemon = True
        backstop.start()
    # The only line on stdout: a detached server's stdout (control.Emulator.start with log=) is closed once it is read.
    print('READY %s://%s:%d' % (server.scheme, args.host, server.server_address[1]), flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        store.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
