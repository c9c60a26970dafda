# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Transport of the shared client: TLS against a local HTTPS server, transport warnings, unreachable addresses."""

from __future__ import annotations

import http.server
import json
import socket
import threading

import pytest
from emulator.pki import make_pki
from emulator.transport import RecordingServer

from ansible_collections.uptime.monitoring.plugins.module_utils._client import (
    UNREACHABLE_BUDGET,
    UptimeApiError,
    UptimeClient,
    is_loopback,
    origin,
    transport_warnings,
)

KEY = 'transport-key-0123456789'


@pytest.fixture(scope='module')
def pki(tmp_path_factory):
    directory = tmp_path_factory.mktemp('pki')
    paths = make_pki(str(directory))
    paths['dir'] = str(directory)
    return paths


@pytest.fixture
def https_server(pki):
    with RecordingServer(tls_directory=pki['dir']) as server:
        yield server


class FakeTime:
    """An injected clock and sleep: sleeping moves the clock, nothing really waits."""

    def __init__(self):
        self.now = 1000.0
        self.waits = []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.waits.append(seconds)
        self.now += seconds


def client_for(url, **options):
    fake = FakeTime()
    options.setdefault('retries', 5)
    client = UptimeClient(url, KEY, sleep=fake.sleep, clock=fake.clock, **options)
    return client, fake


def failure(client, call=lambda client: client.get('/api/v1/monitors')):
    with pytest.raises(UptimeApiError) as caught:
        call(client)
    message = str(caught.value)
    assert '\n' not in message and 'Traceback' not in message and KEY not in message
    return caught.value, message


# -- certificates ------------------------------------------------------------------------------

@pytest.mark.parametrize('ca', [None, 'other-ca'])
def test_an_unknown_ca_fails_naming_the_problem_and_the_options(https_server, pki, ca):
    client, fake = client_for(https_server.url, ca_path=pki.get(ca))
    error, message = failure(client, lambda c: c.create('/api/v1/monitors', {'name': 'web'}))
    assert message.startswith('POST /api/v1/monitors failed: request not sent: the TLS certificate of %s is not '
                              'trusted (' % https_server.url)
    assert 'ca_path' in message and 'validate_certs: false' in message
    assert not error.ambiguous and fake.waits == []
    assert https_server.received == []


def test_ca_path_to_the_ca_is_trusted(https_server, pki):
    client, dummy = client_for(https_server.url, ca_path=pki['ca'])
    assert client.get('/api/v1/monitors') == []
    assert https_server.received[0]['headers']['Authorization'] == 'Bearer %s' % KEY
    assert client.transport_warnings == []


@pytest.mark.parametrize('variable', ['REQUESTS_CA_BUNDLE', 'SSL_CERT_FILE', 'CURL_CA_BUNDLE'])
@pytest.mark.parametrize('option', [{'ca_path': 'ca'}, {'validate_certs': False}])
def test_the_environment_overrides_neither_ca_path_nor_validate_certs_false(https_server, pki, monkeypatch, variable, option):
    monkeypatch.setenv(variable, pki['other-ca'])
    client, dummy = client_for(https_server.url, **{name: pki.get(value, value) for name, value in option.items()})
    assert client.get('/api/v1/monitors') == []


def test_without_ca_path_the_environment_bundle_is_used(https_server, pki, monkeypatch):
    """What the two tests above rule out is real: with neither option, REQUESTS_CA_BUNDLE decides."""
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', pki['ca'])
    client, dummy = client_for(https_server.url)
    assert client.get('/api/v1/monitors') == []
    monkeypatch.setenv('REQUESTS_CA_BUNDLE', pki['other-ca'])
    client, dummy = client_for(https_server.url)
    failure(client)


def test_validate_certs_false_works_and_is_warned_about(https_server):
    client, dummy = client_for(https_server.url, validate_certs=False)
    assert client.get('/api/v1/monitors') == []
    assert len(client.transport_warnings) == 1
    assert 'certificate of %s is not checked' % https_server.url in client.transport_warnings[0]


@pytest.mark.parametrize('kind, fragments', [
    ('expired', ['has expired', 'certificate has expired', 'validate_certs: false', 'ca_path cannot help']),
    ('wrong-host', ["is not valid for the host name in api_url (IP address mismatch, certificate is not valid for "
                    "'127.0.0.1')", 'host name the certificate names', 'validate_certs', 'ca_path cannot help']),
    ('refuse', ['refused the TLS handshake', 'handshake failure']),
])
def test_tls_faults_fail_at_once_in_one_line(https_server, pki, kind, fragments):
    https_server.server.tls_faults.add({'kind': kind, 'count': 10})
    client, fake = client_for(https_server.url, ca_path=pki['ca'])
    error, message = failure(client, lambda c: c.update('/api/v1/monitors/1', {'interval': 60}))
    assert message.startswith('PUT /api/v1/monitors/1 failed: request not sent: ')
    for fragment in fragments:
        assert fragment in message
    assert fake.waits == [] and not error.ambiguous
    assert https_server.received == []


def test_https_to_a_plain_http_port_says_so():
    with RecordingServer() as plain:
        client, fake = client_for(plain.url.replace('http://', 'https://'))
        dummy, message = failure(client)
    assert 'did not answer in TLS' in message and 'http://' in message
    assert fake.waits == []


def test_a_ca_path_without_a_certificate_is_named(https_server, tmp_path):
    bundle = tmp_path / 'empty.pem'
    bundle.write_text('not a certificate\n')
    client, fake = client_for(https_server.url, ca_path=str(bundle))
    dummy, message = failure(client)
    assert 'request not sent: ca_path holds no PEM certificate' in message and 'validate_certs' in message
    assert fake.waits == [] and https_server.received == []


# -- warnings and addresses ---------------------------------------------------------------------

@pytest.mark.parametrize('url, validate_certs, expected', [
    ('http://uptime.example.com', True, ['api_url http://uptime.example.com:80 uses http://']),
    ('http://10.0.0.5:8080/api/v1', False, ['api_url http://10.0.0.5:8080 uses http://']),
    ('http://127.0.0.1:8080', True, []),
    ('http://127.3.4.5', True, []),
    ('http://localhost:8080', True, []),
    ('http://[::1]:8080', True, []),
    ('https://uptime.example.com', True, []),
    ('https://uptime.example.com', False, ['validate_certs is false: the TLS certificate of '
                                           'https://uptime.example.com:443 is not checked']),
    ('https://127.0.0.1', False, ['validate_certs is false']),
    ('http://admin:%s@uptime.example.com/' % KEY, True, ['api_url http://uptime.example.com:80 uses http://']),
])
def test_transport_warnings(url, validate_certs, expected):
    warnings = transport_warnings(url, validate_certs)
    assert len(warnings) == len(expected) and all(warning.startswith(start) for warning, start in zip(warnings, expected))
    assert all(KEY not in warning and 'admin' not in warning for warning in warnings), warnings
    assert all('API key' in warning and 'unencrypted' in warning for warning in warnings if 'uses http://' in warning)


@pytest.mark.parametrize('host, loopback', [
    ('localhost', True), ('LOCALHOST.', True), ('127.0.0.1', True), ('::1', True), ('[::1]', True), ('127.1.2.3', True),
    ('10.0.0.1', False), ('uptime.example.com', False), ('localhost.example.com', False), ('', False)])
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_origin_names_scheme_host_and_port_only():
    assert origin('https://user:secret@Uptime.Example.com/base/api/v1?key=x') == 'https://uptime.example.com:443'
    assert origin('http://[::1]:8080/x') == 'http://[::1]:8080'


# -- redirects ------------------------------------------------------------------------------------

class Redirecting(http.server.BaseHTTPRequestHandler):
    location = ''

    def do_GET(self):  # noqa: N802
        self.send_response(302)
        self.send_header('Location', self.location)
        self.send_header('Content-Length', '0')
        self.end_headers()

    do_POST = do_PUT = do_DELETE = do_GET

    def log_message(self, *args):
        pass


@pytest.mark.parametrize('target', ['other host', 'http://'])
def test_a_redirect_never_carries_the_key_elsewhere(pki, target):
    other = RecordingServer(tls_directory=pki['dir'] if target == 'other host' else None, host='127.0.0.1')
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Redirecting)
    Redirecting.location = other.url.replace('127.0.0.1', 'localhost') + '/api/v1/monitors'
    threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True).start()
    try:
        client, dummy = client_for('http://127.0.0.1:%d' % server.server_address[1], ca_path=pki['ca'])
        for call in (lambda c: c.get('/api/v1/monitors'), lambda c: c.create('/api/v1/monitors', {'name': 'x'})):
            dummy, message = failure(client, call)
            assert 'HTTP 302: redirected to %s, which is not followed' % Redirecting.location in message
    finally:
        server.shutdown()
        server.server_close()
        other.stop()
    assert other.received == []


# -- an address that cannot be connected to --------------------------------------------------------

@pytest.fixture
def closed_port():
    """A local port nothing listens on: connections to it are refused at once.

    The socket stays bound, not listening, for the whole test, so that no server started meanwhile
    (another test worker, an emulator on port 0) can take the port.
    """
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        yield sock.getsockname()[1]


@pytest.mark.parametrize('retries', [10, 2])
def test_a_refused_address_is_named_with_the_attempts_bounded_by_the_budget_and_retries(closed_port, retries):
    client, fake = client_for('http://127.0.0.1:%d/api/v1' % closed_port, retries=retries)
    dummy, message = failure(client)
    assert message.startswith('GET /api/v1/monitors failed: connection refused by http://127.0.0.1:%d (' % closed_port)
    assert message.endswith('s): is the service running there, and is api_url right?'), message
    attempts = int(message.split('(')[1].split(' ')[0])
    assert attempts == len(fake.waits) + 1 and attempts < 11 and (retries == 10 or attempts == 3), message
    if retries == 10:  # the budget ends the attempts first
        assert sum(fake.waits) == pytest.approx(UNREACHABLE_BUDGET) and '%.1f s)' % UNREACHABLE_BUDGET in message
    else:
        assert sum(fake.waits) < UNREACHABLE_BUDGET


def test_a_refused_post_is_retried_never_ambiguous_and_the_budget_is_shared_by_the_requests_to_one_address(closed_port):
    client, fake = client_for('http://127.0.0.1:%d' % closed_port)
    error, dummy = failure(client, lambda c: c.create('/api/v1/monitors', {'name': 'x'}))
    assert not error.ambiguous and fake.waits
    waited = len(fake.waits)
    dummy, message = failure(client)
    assert len(fake.waits) == waited and 'attempts' not in message


class Restarting(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        payload = json.dumps({'data': [{'id': 1}]}).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize('down_for', [0.7, 3.0, UNREACHABLE_BUDGET - 0.5])
def test_a_service_restarting_for_a_few_seconds_is_ridden_out(down_for):
    """The port is bound but not listening (refused) until the injected clock passes ``down_for``."""
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Restarting, bind_and_activate=False)
    server.server_bind()
    fake = FakeTime()
    start = fake.now

    def sleep(seconds):
        fake.sleep(seconds)
        if fake.now - start >= down_for and not getattr(server, 'listening', False):
            server.server_activate()
            server.listening = True
            threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True).start()

    client = UptimeClient('http://127.0.0.1:%d' % server.server_address[1], KEY, sleep=sleep, clock=fake.clock)
    try:
        assert client.get('/api/v1/monitors') == [{'id': 1}]
    finally:
        if getattr(server, 'listening', False):
            server.shutdown()
        server.server_close()
    assert down_for <= sum(fake.waits) <= UNREACHABLE_BUDGET + 1e-9
    # After an answer the budget starts afresh.
    assert client._unreachable_since is None  # pylint: disable=protected-access
