"""The emulator's transport: HTTPS serving, handshake faults, and a server that records what it receives.

* ``tls_server_class(EmulatorServer)``: the emulator's server class, serving HTTPS with the certificates of a
  directory made by ``pki.make_pki`` (``server.py --tls-dir DIR``), and handshake faults
  (``POST /_emulator/tls_faults``, see README.md) for every connection but the harness's own.
* ``RecordingServer``: a second local server that answers every request with an empty list and keeps what it
  was sent (method, path, headers, body): the place a redirect points to, to show what a client carries there.

Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CERTIFICATES = ('server', 'expired', 'wrong-host')
TLS_FAULT_KINDS = ('expired', 'wrong-host', 'refuse')
HANDSHAKE_TIMEOUT = 10
CONTROL_SERVER_NAME = 'emulator-control.invalid'


def server_context(directory, name):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(directory, '%s.crt' % name), os.path.join(directory, '%s.key' % name))
    return context


class FaultQueue:
    """Faults queued by a control endpoint (``normalise`` checks a spec), consumed by ``take``."""

    def __init__(self):
        self.lock = threading.Lock()
        self.queue = []

    def add(self, spec):
        fault = self.normalise(spec)
        with self.lock:
            self.queue.append(dict(fault))
        return fault

    def pending(self):
        with self.lock:
            return [dict(fault) for fault in self.queue]

    def clear(self):
        with self.lock:
            self.queue = []


class TlsFaults(FaultQueue):
    """Queue of handshake faults, consumed one connection at a time in the order connections are accepted."""

    @staticmethod
    def normalise(spec):
        if not isinstance(spec, dict) or spec.get('kind') not in TLS_FAULT_KINDS:
            raise ValueError('kind must be one of %s' % ', '.join(TLS_FAULT_KINDS))
        fault = {'kind': spec['kind'], 'count': int(spec.get('count', 1)), 'after': int(spec.get('after', 0))}
        if fault['count'] < 1 or fault['after'] < 0:
            raise ValueError('count must be at least 1 and after at least 0')
        return fault

    def take(self):
        with self.lock:
            if not self.queue:
                return None
            fault = self.queue[0]
            if fault['after'] > 0:
                fault['after'] -= 1
                return None
            fault['count'] -= 1
            if fault['count'] == 0:
                self.queue.pop(0)
            return fault['kind']


class _ControlContext(ssl.SSLContext):
    def wrap_socket(self, sock, *args, **kwargs):  # pylint: disable=arguments-differ
        kwargs['server_hostname'] = CONTROL_SERVER_NAME
        return super().wrap_socket(sock, *args, **kwargs)


def control_client_context():
    """The harness's client context: it names CONTROL_SERVER_NAME, so handshake faults leave it alone.

    It checks no certificate: the harness talks to its own local server, whatever a test makes it present.
    """
    context = _ControlContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def tls_server_class(base):
    """``base`` (a socketserver class) serving TLS with a certificate directory and handshake faults."""

    class TlsServer(base):
        scheme = 'https'

        def setup_tls(self, directory):
            self.contexts = {name: server_context(directory, name) for name in CERTIFICATES}
            self.contexts['server'].sni_callback = self._choose_certificate
            self.tls_faults = TlsFaults()

        def _choose_certificate(self, connection, server_name, context):  # pylint: disable=unused-argument
            """Called during each handshake, once the client's hello is read: apply the next handshake fault."""
            if server_name == CONTROL_SERVER_NAME:
                return None
            fault = self.tls_faults.take()
            if fault == 'refuse':
                return ssl.ALERT_DESCRIPTION_HANDSHAKE_FAILURE
            if fault:
                connection.context = self.contexts[fault]
            return None

        def finish_request(self, request, client_address):
            request.settimeout(HANDSHAKE_TIMEOUT)
            connection = self.contexts['server'].wrap_socket(request, server_side=True, do_handshake_on_connect=False)
            try:
                connection.do_handshake()
                connection.settimeout(None)
                super().finish_request(connection, client_address)
            except (ssl.SSLError, OSError):
                pass  # a refused or failed handshake, or a client that hung up
            finally:
                try:
                    connection.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                connection.close()

        def clear_transport_faults(self):
            self.tls_faults.clear()

        def transport_control(self, action, payload):
            """``(status, body)`` of a transport control endpoint, or None when ``action`` is not one."""
            if action == ('POST', '/tls_faults'):
                return 200, {'fault': self.tls_faults.add(payload)}
            return None

    return TlsServer


class _RecordingHandler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def do_GET(self):  # pylint: disable=invalid-name
        length = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(length).decode('utf-8', 'replace') if length else ''
        self.server.received.append({'method': self.command, 'path': self.path, 'headers': dict(self.headers.items()),
                                     'body': body})
        payload = json.dumps({'data': [], 'status': 200}).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(payload)))
        self.send_header('Connection', 'close')
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass


class RecordingServer:
    """A local HTTP (or, given a certificate directory, HTTPS) server that keeps every request it receives.

        with RecordingServer() as other:
            ...   # point a redirect at other.url
            assert other.received == []
    """

    def __init__(self, tls_directory=None, host='127.0.0.1'):
        server_class = ThreadingHTTPServer
        if tls_directory:
            server_class = tls_server_class(ThreadingHTTPServer)
        self.server = server_class((host, 0), _RecordingHandler)
        self.server.daemon_threads = True
        self.server.received = []
        scheme = 'http'
        if tls_directory:
            self.server.setup_tls(tls_directory)
            scheme = 'https'
        self.url = '%s://%s:%d' % (scheme, host, self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={'poll_interval': 0.1}, daemon=True)
        self.thread.start()

    @property
    def received(self):
        return self.server.received

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.stop()
