"""Start, drive and inspect the phpUptime emulator from tests (``Emulator``) or from a shell
(``python tests/emulator/control.py reset|log|fault|rate-limit|timezone|clock|status --url URL``; see README.md).

    with Emulator.start() as emu:
        emu.api('POST', '/api/v1/monitors', data={'name': 'web', ...})
        emu.fault('status', status=503)
        print(emu.log())

Only the standard library is used (urllib), never the collection's own client.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlencode, urljoin

try:
    from .store import encode_form
    from .transport import control_client_context
except ImportError:  # imported as a top-level module (tests/ or tests/emulator on sys.path)
    from store import encode_form  # type: ignore[no-redef]
    from transport import control_client_context  # type: ignore[no-redef]

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'server.py')
PRIMARY_KEY = 'test-key-primary'
OTHER_KEY = 'test-key-other'
NOPLAN_KEY = 'test-key-noplan'
WRITE_METHODS = ('POST', 'PUT', 'PATCH', 'DELETE')


class ApiResponse:
    """What ``Emulator.api`` got back: ``status``, ``headers`` (case-insensitive), ``text`` and ``json``."""

    def __init__(self, status, headers, text):
        self.status = status
        self.headers = headers
        self.text = text

    @property
    def json(self):
        return json.loads(self.text)

    def __repr__(self):
        return '<ApiResponse %d %s>' % (self.status, self.text[:200])


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Let tests see a 302 instead of following it."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class Emulator:
    """A running emulator: its base ``url`` and, when started here, its process."""

    def __init__(self, url, process=None, api_keys=(PRIMARY_KEY,), pki=None):
        self.url = url.rstrip('/')
        self.process = process
        self.api_keys = tuple(api_keys)
        # HTTPS mode: the paths of the test PKI (pki.make_pki); ``ca_path`` is the CA that signed the server.
        self.pki = pki
        self.ca_path = pki['ca'] if pki else None
        # No proxy (the emulator is local) and no redirect following (tests check the 302 themselves); over
        # HTTPS no certificate check and no handshake fault (see transport.control_client_context).
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect,
                                                   urllib.request.HTTPSHandler(context=control_client_context()))
        self._stderr_lines = []
        self.tls_dir = None  # the directory of the test PKI, when start() made one (removed by stop())

    @classmethod
    def start(cls, api_keys=(PRIMARY_KEY, OTHER_KEY), no_api_keys=(), host='127.0.0.1', extra_args=(),
              timeout=15, tls=False, port=0, log=None):
        """Launch ``server.py`` on ``port`` (0: a free one) and wait for its READY line.

        The server stops when this process goes away, even without ``stop()`` (its stdin is a pipe from here).
        ``tls=True`` makes a test PKI in a temporary directory (removed by ``stop()``) and serves HTTPS with it.
        With ``log`` (a path), the server is detached instead: in a session of its own, its stderr appended to
        ``log``, it outlives this process (give it ``--lifetime`` in ``extra_args``); a SIGTERM to
        ``emulator.process.pid`` stops it.
        """
        command = [sys.executable, SERVER, '--host', host, '--port', str(port)]
        command += ['--exit-with-stdin'] if log is None else []
        pki, pki_dir = None, None
        if tls:
            try:
                from . import pki as pki_module
            except ImportError:  # imported as a top-level module (tests/ on sys.path)
                import pki as pki_module  # type: ignore[no-redef]
            pki_dir = tempfile.mkdtemp(prefix='uptime-emulator-pki-')
            pki = pki_module.make_pki(pki_dir)
            command += ['--tls-dir', pki_dir]
        for key in api_keys:
            command += ['--api-key', key]
        for key in no_api_keys:
            command += ['--no-api-key', key]
        command += list(extra_args)
        if log is None:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,  # pylint: disable=consider-using-with
                                       text=True)
        else:
            with open(log, 'a', encoding='utf-8') as stderr:
                process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,  # pylint: disable=consider-using-with
                                           text=True, start_new_session=True)
        lines = []
        reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        line = lines[0].strip() if lines else ''
        if not line.startswith('READY '):
            process.kill()
            if log is None:
                stderr = process.stderr.read()
            else:
                with open(log, encoding='utf-8', errors='replace') as handle:
                    stderr = ''.join(handle.readlines()[-20:])
            raise RuntimeError('emulator did not start within %ss (exit status %s, first line %r): %s'
                               % (timeout, process.wait(), line, stderr))
        emulator = cls(line.split(' ', 1)[1], process, api_keys, pki)
        emulator.tls_dir = pki_dir
        if log is None:
            threading.Thread(target=emulator._drain_stderr, daemon=True).start()
        return emulator

    def _drain_stderr(self):
        for line in self.process.stderr:
            self._stderr_lines.append(line)

    def stderr(self):
        """What the server process wrote to stderr so far (errors, or the request log with --verbose)."""
        return ''.join(self._stderr_lines)

    def stop(self):
        if self.tls_dir:
            shutil.rmtree(self.tls_dir, ignore_errors=True)
            self.tls_dir = None
        if self.process is None or self.process.poll() is not None:
            return
        if self.process.stdin:
            self.process.stdin.close()
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.stop()

    # Service API -------------------------------------------------------------------------------

    def api(self, method, path, api_key=None, data=None, params=None, headers=None, accept_json=True, timeout=10):
        """Send one request to the service API and return an ``ApiResponse`` (never raises on HTTP errors).

        ``path`` is relative to the base URL or a full URL (e.g. ``links.next``).  ``api_key`` None uses the
        first key, ``''`` sends no Authorization header.  ``data`` is form-encoded with ``encode_form``.
        """
        url = urljoin(self.url + '/', path.lstrip('/')) if not path.startswith('http') else path
        if params:
            url += ('&' if '?' in url else '?') + urlencode(params)
        request_headers = {}
        if accept_json:
            request_headers['Accept'] = 'application/json'
        key = self.api_keys[0] if api_key is None else api_key
        if key:
            request_headers['Authorization'] = 'Bearer %s' % key
        body = encode_form(data)
        if body is not None:
            request_headers['Content-Type'] = 'application/x-www-form-urlencoded'
        request_headers.update(headers or {})
        return self._send(urllib.request.Request(url, data=body, headers=request_headers, method=method.upper()), timeout)

    def _send(self, request, timeout):
        try:
            with self._opener.open(request, timeout=timeout) as answer:
                return ApiResponse(answer.status, answer.headers, answer.read().decode('utf-8'))
        except urllib.error.HTTPError as error:
            with error:
                return ApiResponse(error.code, error.headers, error.read().decode('utf-8'))

    # Control endpoints -------------------------------------------------------------------------

    def _control(self, method, path, payload=None):
        body = json.dumps(payload).encode('utf-8') if payload is not None else None
        request = urllib.request.Request(self.url + '/_emulator' + path, data=body, method=method,
                                         headers={'Content-Type': 'application/json'})
        answer = self._send(request, 10)
        if answer.status != 200:
            raise RuntimeError('emulator control %s %s failed: %s' % (method, path, answer.text))
        return answer.json

    def log(self):
        """Every service request so far: dicts with seq, method, path, query, url, status, fault, account, form..."""
        return self._control('GET', '/log')['requests']

    def clear_log(self):
        self._control('DELETE', '/log')

    def writes(self):
        """The logged requests that could change something (POST, PUT, PATCH, DELETE)."""
        return [entry for entry in self.log() if entry['method'] in WRITE_METHODS]

    def reset(self):
        """Remove all records, the log, faults, rate-limit counters and quirks."""
        self._control('POST', '/reset')

    def fault(self, kind, count=1, **opts):
        """Queue a fault: kind is status, html, badjson, truncated, delay or drop; see the README for opts."""
        spec = {'kind': kind, 'count': count}
        spec.update(opts)
        return self._control('POST', '/faults', spec)['fault']

    def faults(self):
        return self._control('GET', '/faults')['faults']

    def tls_fault(self, kind, count=1, after=0):
        """HTTPS mode: the next ``count`` connections, after ``after`` good ones, present the ``expired`` or
        ``wrong-host`` certificate, or have their handshake refused (``refuse``). Cleared by ``clear_faults()``."""
        return self._control('POST', '/tls_faults', {'kind': kind, 'count': count, 'after': after})['fault']

    def clear_faults(self):
        self._control('DELETE', '/faults')

    def rate_limit(self, per_minute, window_seconds=60):
        """Allow ``per_minute`` requests per account per window (0 switches the limit off)."""
        return self._control('POST', '/rate_limit', {'per_minute': per_minute, 'window_seconds': window_seconds})

    def status_page(self, api_key, page_id, monitor_ids):
        """Make ``monitor_ids`` the monitors of status page ``page_id`` of the account of ``api_key``."""
        return self._control('POST', '/status_pages', {'api_key': api_key, 'id': page_id, 'monitor_ids': list(monitor_ids)})

    # The control requests below act on the account of ``api_key`` (None: the first key); README.md says what each does.

    def _for_account(self, path, api_key, **payload):
        return self._control('POST', path, dict(payload, api_key=self.api_keys[0] if api_key is None else api_key))

    def check(self, monitor_id, status, api_key=None, cause=None):
        """Play the service's checker: ``monitor_id`` goes ``online`` or ``offline`` (an incident opens or ends), or ``pending``."""
        return self._for_account('/check', api_key, monitor_id=monitor_id, status=status, cause=cause)

    def monitor_id(self, monitor, api_key=None):
        """The id of the monitor named exactly ``monitor`` (read from the API's list), else ``monitor`` as an id."""
        url, query = '/api/v1/monitors', {'search': monitor.strip(), 'search_by': 'name', 'per_page': 100}
        while url:
            answer = self.api('GET', url, api_key=api_key, params=query)
            if answer.status != 200:
                raise RuntimeError('the monitor list failed: %s' % answer.text)
            named = [record['id'] for record in answer.json['data'] if record['name'] == monitor.strip()]
            if named:
                return named[0]
            url, query = answer.json['links']['next'], None
        if monitor.isdigit():
            return int(monitor)
        # A newcomer in the playground runs its examples in any order: say where the demo's monitors come from.
        hint = ('; the demo makes demo-shop, demo-api and demo-blog and keeps them with -e demo_cleanup=false (the '
                'playground prints that command)') if monitor.strip().startswith('demo-') else ''
        raise RuntimeError('no monitor is named %r in this account%s' % (monitor, hint))

    def seed(self, monitors, offline=0, resolved=0, api_key=None):
        """Insert ``monitors`` monitors at once (``offline`` of them with an ongoing incident, ``resolved`` with a
        resolved one), not logged; returns ``{monitors, offline, resolved, first_id, last_id}``."""
        return self._for_account('/seed', api_key, monitors=monitors, offline=offline, resolved=resolved)

    def records(self, monitors=(), incidents=(), api_key=None):
        """Create ``monitors``, then ``incidents`` by the API's rules, not logged; returns their ids by kind."""
        return self._for_account('/records', api_key, monitors=list(monitors), incidents=list(incidents))

    def timezone(self, timezone, api_key=PRIMARY_KEY):
        """Set the account's time zone (an IANA name; None: the instance default, UTC)."""
        return self._for_account('/account', api_key, timezone=timezone)

    def rotate_key(self, api_key, new_key):
        """Replace the key of the account of ``api_key`` by ``new_key`` (the old one is refused from then on)."""
        return self._control('POST', '/rotate_key', {'api_key': api_key, 'new_key': new_key})

    def clock(self, offset):
        """Run the service's clock ``offset`` seconds ahead of the real one (negative: behind)."""
        return self._control('POST', '/clock', {'offset': offset})

    def quirks(self, **flags):
        """Switch response quirks on or off: ``quirks(stringly=True)``."""
        return self._control('POST', '/quirks', flags)

    def names(self, ignore_case):
        """Hold monitor names unique without regard to case (True, as on MySQL) or as written (False, the default)."""
        return self._control('POST', '/names', {'ignore_case': ignore_case})

    def wait_idle(self, timeout=5.0):
        """Wait until no logged request is still in flight (one a client gave up on, after a delay)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log()
            if all(entry['status'] is not None or entry['fault'] == 'drop' for entry in log):
                return True
            time.sleep(0.05)
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description='Drive a running phpUptime emulator.')
    parser.add_argument('--url', default=os.environ.get('EMULATOR_URL', 'http://127.0.0.1:8080'), help='base URL (default $EMULATOR_URL)')
    # --url is accepted before or after the command.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('--url', default=argparse.SUPPRESS, help='base URL (default $EMULATOR_URL)')
    commands = parser.add_subparsers(dest='command', required=True)
    commands.add_parser('reset', parents=[common], help='remove all records, the log and faults')
    commands.add_parser('log', parents=[common], help='print the request log as JSON')
    fault = commands.add_parser('fault', parents=[common], help='queue a fault')
    fault.add_argument('kind', choices=('status', 'html', 'badjson', 'truncated', 'delay', 'drop', 'redirect'))
    fault.add_argument('--count', type=int, default=1)
    fault.add_argument('--status', type=int)
    fault.add_argument('--retry-after', type=int)
    fault.add_argument('--seconds', type=float)
    fault.add_argument('--method')
    fault.add_argument('--path')
    fault.add_argument('--location', help='where a redirect points')
    fault.add_argument('--when', choices=('before', 'after'), default='before')
    rate = commands.add_parser('rate-limit', parents=[common], help='set the rate limit (0 = off)')
    rate.add_argument('per_minute', type=int)
    rate.add_argument('--window-seconds', type=float, default=60)
    zone = commands.add_parser('timezone', parents=[common], help='set the time zone of an account')
    zone.add_argument('api_key', metavar='KEY', help='the API key of the account')
    zone.add_argument('zone', metavar='ZONE', help='an IANA name such as America/New_York, or "default" for the instance default (UTC)')
    clock = commands.add_parser('clock', parents=[common], help='run the service\'s clock off the real one')
    clock.add_argument('offset', type=int, help='seconds ahead of the real clock (negative: behind; 0: the real one)')
    status = commands.add_parser('status', parents=[common], help='set a monitor\'s status as the service\'s checker does')
    status.add_argument('monitor', metavar='MONITOR', help='its name, or its id')
    status.add_argument('status', choices=('pending', 'online', 'offline'))
    status.add_argument('--key', default=os.environ.get('UPTIME_API_KEY', PRIMARY_KEY), help='the account\'s API key (default $UPTIME_API_KEY)')
    status.add_argument('--cause', help='the cause of the incident that going offline opens (default HTTP 500)')
    args = parser.parse_args(argv)

    emulator = Emulator(args.url)
    fault_options = ('status', 'retry_after', 'seconds', 'method', 'path', 'location')
    run = {
        'reset': emulator.reset,
        'log': emulator.log,
        'fault': lambda: emulator.fault(args.kind, count=args.count, when=args.when,
                                        **{key: getattr(args, key) for key in fault_options if getattr(args, key) is not None}),
        'rate-limit': lambda: emulator.rate_limit(args.per_minute, args.window_seconds),
        'timezone': lambda: emulator.timezone(None if args.zone == 'default' else args.zone, api_key=args.api_key),
        'clock': lambda: emulator.clock(args.offset),
        'status': lambda: {key: value for key, value in emulator.check(emulator.monitor_id(args.monitor, args.key), args.status,
                                                                       args.key, args.cause).items()
                           if key in ('id', 'name', 'status', 'started_at')},
    }[args.command]
    try:
        answer = run()
    except (RuntimeError, OSError) as error:  # a refused request, or no emulator at --url
        parser.exit(1, '%s\n' % error)
    if answer is not None:
        print(json.dumps(answer, indent=2 if args.command == 'log' else None))
    return 0


if __name__ == '__main__':
    sys.exit(main())
