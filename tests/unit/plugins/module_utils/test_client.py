# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared HTTP client, every behaviour once: against the emulator, a small scripted HTTP server and a local HTTPS
server with certificates made at test time; an injected clock and sleep."""

from __future__ import annotations

import http.server
import json
import socket
import threading

import pytest
from emulator.control import PRIMARY_KEY
from emulator.pki import make_pki
from emulator.transport import RecordingServer
from fake_client import FakeTime, add_monitor

from ansible_collections.uptime.monitoring.plugins.module_utils._client import (
    API_URL_HINT, UNREACHABLE_BUDGET, USER_AGENT, RateLimit, UptimeApiError, UptimeClient, origin, transport_warnings)

MONITOR = {'name': 'web', 'url': 'https://web.example.com', 'interval': '60',
           'request_method': 'GET', 'alert_condition': 'url_unavailable'}


def make_client(url, key=PRIMARY_KEY, **options):
    fake = FakeTime()
    options.setdefault('retries', 3)
    client = UptimeClient(url, key, sleep=fake.sleep, clock=fake.clock, **options)
    return client, fake


def failure(call, *args):
    """The error of ``call(*args)`` and its message: one line, with neither a traceback nor the key."""
    with pytest.raises(UptimeApiError) as caught:
        call(*args)
    message = str(caught.value)
    assert '\n' not in message
    assert 'Traceback' not in message
    assert PRIMARY_KEY not in message
    return caught.value, message


@pytest.mark.parametrize('key, status, text', [
    ('secret-wrong-key-42', 401, 'GET /api/v1/monitors/99 failed: HTTP 401: authentication failed: check api_key'),
    ('test-key-noplan', 403, "GET /api/v1/monitors/99 failed: HTTP 403: You don't have access to this feature."),
    (PRIMARY_KEY, 404, 'GET /api/v1/monitors/99 failed: HTTP 404: Resource not found.'),
])
def test_a_refusal_reads_as_what_it_is_without_the_key(emulator, key, status, text):
    client, dummy = make_client(emulator.url, key=key)
    error, message = failure(client.get, '/api/v1/monitors/99')
    assert error.status == status, message
    assert message.startswith(text), message
    assert 'secret-wrong-key-42' not in message, message


def get_one(client):
    return client.get('/api/v1/monitors/1')


def create_one(client):
    return client.create('/api/v1/monitors', MONITOR)


@pytest.mark.parametrize('fault, call, retries, statuses, waits, error', [
    # A GET is sent again after a 429 (as long as Retry-After says), a 5xx but 500, a broken answer; then gives up.
    (dict(kind='status', status=429, retry_after=7, method='GET'), get_one, 3, [429, 200], [7.0], None),
    (dict(kind='status', count=2, status=503, method='GET'), get_one, 3, [503, 503, 200], 2, None),
    (dict(kind='status', count=10, status=502, method='GET'), get_one, 2, [502] * 3, 2, (502, False, 'HTTP 502')),
    (dict(kind='status', status=500, method='GET'), get_one, 3, [500], [], (500, False, 'HTTP 500')),
    (dict(kind='drop', method='GET', status=200), get_one, 3, [None, 200], 1, None),
    (dict(kind='html', method='GET', status=200), get_one, 3, [200, 200], 1, None),
    (dict(kind='badjson', method='GET', status=200), get_one, 3, [200, 200], 1, None),
    (dict(kind='truncated', method='GET', status=200), get_one, 3, [200, 200], 1, None),
    (dict(kind='drop', count=5, method='GET', status=200), get_one, 1, [None] * 2, 1, (None, False, 'connection failed')),
    (dict(kind='html', count=5, method='GET', status=200), get_one, 1, [200] * 2, 1, (200, False, 'not the expected JSON (text/html')),
    (dict(kind='badjson', count=5, method='GET', status=200), get_one, 1, [200] * 2, 1, (200, False, 'not the expected JSON')),
    (dict(kind='truncated', count=5, method='GET', status=200), get_one, 1, [200] * 2, 1, (None, False, 'failed: ')),
    # A POST is never sent blind again: only a 429 (refused before processing) is; a lost or 5xx answer is ambiguous.
    (dict(kind='status', status=429, retry_after=1, method='POST'), create_one, 3, [429, 201], [1.0], None),
    (dict(kind='status', status=503, method='POST'), create_one, 3, [503], [], (503, True, 'HTTP 503')),
    (dict(kind='status', status=500, method='POST', when='after'), create_one, 3, [500], [], (500, True, 'HTTP 500')),
    (dict(kind='drop', method='POST', when='after'), create_one, 3, [None], [], (None, True, 'connection failed')),
])
def test_what_is_sent_again_and_how_it_ends(emulator, fault, call, retries, statuses, waits, error):
    add_monitor(emulator, 'm-00')
    emulator.clear_log()
    emulator.fault(**fault)
    client, sleep = make_client(emulator.url, retries=retries)
    if error is None:
        assert call(client)['name'] in ('m-00', 'web')
    else:
        caught, message = failure(call, client)
        assert message.startswith(('GET /api/v1/monitors/1 failed: ', 'POST /api/v1/monitors failed: ')), message
        assert error[2] in message, message
        assert (caught.ambiguous, error[0] is None or caught.status == error[0]) == (error[1], True), message
    emulator.wait_idle()
    assert [entry.get('status') for entry in emulator.log()] == statuses
    assert sleep.waits == waits if isinstance(waits, list) else len(sleep.waits) == waits, sleep.waits


def test_timeout_message(emulator):
    # The delay is a floor: a second against a 0.5 s timeout always times out, and the stragglers end sooner.
    emulator.fault('delay', count=2, seconds=1, method='GET')
    client, dummy = make_client(emulator.url, timeout=0.5, retries=1)
    assert failure(client.get, '/api/v1/monitors')[1] == 'GET /api/v1/monitors failed: no answer within 0.5s (timeout) (2 attempts)'
    emulator.wait_idle()


class ScriptedHandler(http.server.BaseHTTPRequestHandler):
    answers = []
    seen = []

    def do_GET(self):  # noqa: N802 (the name http.server dispatches to)
        self.seen.append({'path': self.path, 'headers': dict(self.headers)})
        status, headers, body = self.answers.pop(0)
        payload = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_POST = do_PUT = do_DELETE = do_GET  # noqa: N815

    def log_message(self, *args):  # keep test output quiet
        pass


def serve(server):
    # A short poll interval: shutdown() waits for the loop's next poll (0.5 s by default) after every test.
    threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True).start()


@pytest.fixture
def scripted():
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), ScriptedHandler)
    ScriptedHandler.answers = []
    ScriptedHandler.seen = []
    serve(server)
    yield 'http://127.0.0.1:%d' % server.server_address[1], ScriptedHandler
    server.shutdown()
    server.server_close()


def test_every_request_carries_auth_accept_and_user_agent_and_a_redirect_to_login_is_a_refused_key(scripted):
    url, handler = scripted
    handler.answers = [(200, {'Content-Type': 'application/json'}, {'data': [], 'status': 200}),
                       (302, {'Location': url + '/login'}, b'')]
    client, dummy = make_client(url, key='header-key-1234')
    client.get('/api/v1/monitors')
    headers = handler.seen[0]['headers']
    assert (headers['Authorization'], headers['Accept'], headers['User-Agent']) == (
        'Bearer header-key-1234', 'application/json', USER_AGENT)
    message = failure(client.get, '/api/v1/monitors')[1]
    assert 'authentication failed: check api_key' in message
    assert 'header-key-1234' not in message


@pytest.mark.parametrize('base, params, bodies, paths', [
    # Without a next link, meta's pages; a next link to another host keeps the configured one.
    ('', {'per_page': 10}, [
        {'data': [{'id': 1}], 'meta': {'current_page': 1, 'last_page': 2}},
        {'data': [{'id': 2}], 'links': {'next': 'http://internal.invalid/api/v1/monitors?page=3'}, 'meta': {'current_page': 2, 'last_page': 3}},
        {'data': [{'id': 3}], 'links': {'next': None}, 'meta': {'current_page': 3, 'last_page': 3}}],
     ['/api/v1/monitors?per_page=10', '/api/v1/monitors?per_page=10&page=2', '/api/v1/monitors?per_page=10&page=3']),
    # A next link keeps api_url's path prefix and the first filters.
    ('/uptime', {'per_page': 10, 'status_page_id': 4, 'search': 'a'}, [
        {'data': [{'id': 1}], 'links': {'next': 'http://app.internal/api/v1/monitors?page=2&search=a'}},
        {'data': [{'id': 2}], 'links': {'next': None}}],
     ['/uptime/api/v1/monitors?per_page=10&status_page_id=4&search=a', '/uptime/api/v1/monitors?per_page=10&status_page_id=4&search=a&page=2']),
    # A repeated page ends the paging.
    ('', None, [{'data': [{'id': 1}], 'links': {'next': 'http://127.0.0.1/api/v1/monitors?page=2'}}] * 3,
     ['/api/v1/monitors', '/api/v1/monitors?page=2']),
])
def test_paging_follows_next_or_meta_on_the_configured_address_and_stops_on_a_repeated_page(scripted, base, params, bodies, paths):
    url, handler = scripted
    handler.answers = [(200, {}, body) for body in bodies]
    client, dummy = make_client(url + base)
    records = [record for page in client.iter_pages('/api/v1/monitors', params) for record in page]
    assert [seen['path'] for seen in handler.seen] == paths
    assert [record['id'] for record in records] == [body['data'][0]['id'] for body in bodies[:len(paths)]]


@pytest.mark.parametrize('body, absent', [
    ({'message': 'Resource not found.', 'status': 404}, True),
    ({'message': 'No query results for model [App\\Models\\Incident] 42'}, True),
    ({'message': 'The route api/v1/monitors/7 could not be found.'}, False),
    (b'<html><body>404 Not Found</body></html>', False),
    (b'', False),
])
def test_only_the_services_own_not_found_answer_reads_as_absent(scripted, body, absent):
    url, handler = scripted
    client = UptimeClient(url, 'key-1234', retries=0)
    for call in (lambda: client.get_or_none('/api/v1/monitors/7'), lambda: client.delete('/api/v1/monitors/7')):
        handler.answers = [(404, {}, body)]
        if absent:
            assert call() in (None, False)
            continue
        error, message = failure(call)
        assert error.status == 404
        assert not error.not_found
        assert 'a wrong address or a proxy answered; api_url must be the base address' in message


NOT_FOUND = 'HTTP 404: Not Found (not the service\'s answer for a missing record: '
NOT_ALLOWED = 'HTTP 405: Method Not Allowed (the service takes this method at this path: '


# The emulator's own page for a GET outside /api/v1, a 405 and a success's HTML, as the modules give them:
# test_docs_transport_quotes_the_failure_messages_as_the_modules_give_them.
@pytest.mark.parametrize('method, fault, base, words', [
    ('DELETE', dict(kind='html', status=404), '/uptime', NOT_FOUND),
    ('PUT', dict(kind='html', status=405), '/uptime', NOT_ALLOWED),
    ('POST', dict(kind='status', status=405), '', NOT_ALLOWED),  # without a path in api_url the hint names none
])
def test_an_answer_that_is_not_the_services_names_api_url_and_its_path(emulator, method, fault, base, words):
    emulator.fault(count=10, **fault)
    client, dummy = make_client(emulator.url + base, retries=1)
    calls = {'DELETE': lambda: client.delete('/api/v1/monitors/7'), 'POST': lambda: client.create('/api/v1/monitors', MONITOR),
             'PUT': lambda: client.update('/api/v1/monitors/7', {'interval': 60})}
    error, message = failure(calls[method])
    hint = API_URL_HINT + (', and this one has the path %s' % base if base else '')
    assert message.startswith('%s %s/api/v1/monitors' % (method, base)), message
    assert words in message, message
    assert 'a wrong address or a proxy answered; ' + hint in message, message
    assert message.rstrip(')').endswith(hint.rstrip(')')), message
    assert '))' not in message, message  # no parentheses nested in the error's own
    # Refused before the service: no write can have been applied, and only a success's odd body is worth a retry.
    assert not error.ambiguous, message
    assert error.transient is (error.status == 200), message
    emulator.clear_faults()
    assert emulator.api('GET', '/api/v1/monitors').json['data'] == []


@pytest.mark.parametrize('headers, body, names_api_url', [
    ({'Content-Type': 'text/html; charset=UTF-8'}, b'<html><body>Welcome</body></html>', True),
    ({}, b'plain text', True),
    # JSON cut off on its way is the service's answer, garbled: api_url is not to blame.
    ({'Content-Type': 'application/json'}, b'{"data": [', False),
    ({'Content-Type': 'application/vnd.api+json'}, b'{"data": [', False),
    # JSON of another application: no envelope of the service.
    ({'Content-Type': 'application/json'}, {'message': 'Online.'}, True),
])
def test_a_success_that_is_not_the_services_json_says_whether_api_url_may_be_wrong(
        scripted, headers, body, names_api_url):
    url, handler = scripted
    handler.answers = [(200, headers, body)] * 2
    client, dummy = make_client(url, retries=1)
    error, message = failure(client.get, '/api/v1/monitors')
    assert message.startswith('GET /api/v1/monitors failed: HTTP 200: the answer is ')
    assert '(2 attempts)' in message
    assert ('api_url' in message) is names_api_url, message
    assert error.transient, message


def test_every_answer_tells_what_is_left_of_the_rate_limit_and_a_reserve_is_never_spent(emulator):
    add_monitor(emulator, 'm-00')
    emulator.rate_limit(5)
    client, sleep = make_client(emulator.url, reserve=2)
    assert client.rate_limit.known_remaining() is None
    emulator.clear_log()
    for dummy in range(3):  # leaves 4, 3, then 2
        client.get('/api/v1/monitors/1')
    assert (client.rate_limit.limit, client.rate_limit.known_remaining()) == (5, 2)
    error, message = failure(client.get, '/api/v1/monitors/1')
    assert error.held_back
    assert error.transient
    assert not error.ambiguous
    assert 0 < error.retry_after <= 60
    assert 'not sent' in message
    assert '2 requests left' in message
    assert '2 are kept' in message
    assert len(emulator.log()) == 3
    assert sleep.waits == []


def test_what_was_read_of_the_rate_limit_holds_until_the_window_renews():
    now = [100.0]
    limit = RateLimit(clock=lambda: now[0])
    assert limit.may_send(keep=50)
    assert limit.seconds_until_renewed() == 0
    limit.observe({'X-RateLimit-Limit': '120', 'X-RateLimit-Remaining': '31'})
    assert limit.may_send(keep=30)
    assert not limit.may_send(keep=31)
    now[0] += 59
    assert not limit.may_send(keep=31)
    assert limit.seconds_until_renewed() == pytest.approx(1)
    now[0] += 1
    assert limit.may_send(keep=31)
    assert limit.known_remaining() is None
    limit.observe({})  # an answer without the headers (a proxy's) tells nothing
    assert limit.limit == 120


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


@pytest.mark.parametrize('ca', [None, 'other-ca'])
def test_an_unknown_ca_fails_naming_the_problem_and_the_options(https_server, pki, ca):
    client, fake = make_client(https_server.url, ca_path=pki.get(ca))
    error, message = failure(client.create, '/api/v1/monitors', {'name': 'web'})
    assert message.startswith('POST /api/v1/monitors failed: request not sent: the TLS certificate of %s is not '
                              'trusted (' % https_server.url)
    assert 'ca_path' in message
    assert 'validate_certs: false' in message
    assert not error.ambiguous
    assert fake.waits == []
    assert https_server.received == []


# With neither option, REQUESTS_CA_BUNDLE decides; no variable of the environment overrides either option.
@pytest.mark.parametrize('variable, bundle, option, trusted', [
    (None, None, {'ca_path': 'ca'}, True), ('REQUESTS_CA_BUNDLE', 'ca', {}, True), ('REQUESTS_CA_BUNDLE', 'other-ca', {}, False),
] + [(variable, 'other-ca', option, True) for variable in ('REQUESTS_CA_BUNDLE', 'SSL_CERT_FILE', 'CURL_CA_BUNDLE')
     for option in ({'ca_path': 'ca'}, {'validate_certs': False})])
def test_ca_path_or_the_environment_bundle_is_trusted_and_validate_certs_false_is_warned_about(
        https_server, pki, monkeypatch, variable, bundle, option, trusted):
    if variable:
        monkeypatch.setenv(variable, pki[bundle])
    client, dummy = make_client(https_server.url, **{name: pki.get(value, value) for name, value in option.items()})
    if not trusted:
        failure(client.get, '/api/v1/monitors')
        return
    assert client.get('/api/v1/monitors') == []
    assert https_server.received[0]['headers']['Authorization'] == 'Bearer %s' % PRIMARY_KEY
    assert [('certificate of %s is not checked' % https_server.url) in warning for warning in client.transport_warnings] == (
        [True] if option.get('validate_certs') is False else [])


@pytest.mark.parametrize('kind, fragments', [
    ('expired', ['has expired', 'certificate has expired', 'validate_certs: false', 'ca_path cannot help']),
    ('wrong-host', ["is not valid for the host name in api_url (IP address mismatch, certificate is not valid for "
                    "'127.0.0.1')", 'host name the certificate names', 'validate_certs', 'ca_path cannot help']),
    ('refuse', ['refused the TLS handshake', 'handshake failure']),
])
def test_tls_faults_fail_at_once_in_one_line(https_server, pki, kind, fragments):
    https_server.server.tls_faults.add({'kind': kind, 'count': 10})
    client, fake = make_client(https_server.url, ca_path=pki['ca'])
    error, message = failure(client.update, '/api/v1/monitors/1', {'interval': 60})
    assert message.startswith('PUT /api/v1/monitors/1 failed: request not sent: ')
    for fragment in fragments:
        assert fragment in message
    assert fake.waits == []
    assert not error.ambiguous
    assert https_server.received == []


@pytest.mark.parametrize('case, fragments', [
    ('malformed api_url', ['request not sent']),
    ('https:// to a plain http port', ['did not answer in TLS', 'http://']),
    ('ca_path without a certificate', ['request not sent: ca_path holds no PEM certificate', 'validate_certs']),
])
def test_what_cannot_work_fails_at_once_naming_why(https_server, tmp_path, case, fragments):
    bundle = tmp_path / 'empty.pem'
    bundle.write_text('not a certificate\n')
    with RecordingServer() as plain:
        url, options = {'malformed api_url': ('uptime.example.com', {}),
                        'https:// to a plain http port': (plain.url.replace('http://', 'https://'), {}),
                        'ca_path without a certificate': (https_server.url, {'ca_path': str(bundle)})}[case]
        client, fake = make_client(url, **options)
        error, message = failure(client.get, '/api/v1/monitors')
    assert all(fragment in message for fragment in fragments), message
    assert fake.waits == [], message
    assert not error.ambiguous, message
    assert https_server.received == []


@pytest.mark.parametrize('url, validate_certs, expected', [
    ('http://uptime.example.com', True, ['api_url http://uptime.example.com:80 uses http://']),
    ('http://10.0.0.5:8080/api/v1', False, ['api_url http://10.0.0.5:8080 uses http://']),
    ('http://127.0.0.1:8080', True, []),
    ('http://127.3.4.5', True, []),
    ('http://localhost:8080', True, []),
    ('http://LOCALHOST.:8080', True, []),
    ('http://localhost.example.com', True, ['api_url http://localhost.example.com:80 uses http://']),
    ('http://[::1]:8080', True, []),
    ('https://uptime.example.com', True, []),
    ('https://uptime.example.com', False, ['validate_certs is false: the TLS certificate of '
                                           'https://uptime.example.com:443 is not checked']),
    ('https://127.0.0.1', False, ['validate_certs is false']),
    ('http://admin:%s@uptime.example.com/' % PRIMARY_KEY, True, ['api_url http://uptime.example.com:80 uses http://']),
])
def test_transport_warnings(url, validate_certs, expected):
    warnings = transport_warnings(url, validate_certs)
    assert len(warnings) == len(expected)
    assert all(warning.startswith(start) for warning, start in zip(warnings, expected))
    assert [warning for warning in warnings if PRIMARY_KEY in warning] == []
    assert [warning for warning in warnings if 'admin' in warning] == []
    plain = [warning for warning in warnings if 'uses http://' in warning]
    assert [warning for warning in plain if 'API key' not in warning] == []
    assert [warning for warning in plain if 'unencrypted' not in warning] == []


def test_origin_names_scheme_host_and_port_only():
    assert origin('https://user:secret@Uptime.Example.com/base/api/v1?key=x') == 'https://uptime.example.com:443'
    assert origin('http://[::1]:8080/x') == 'http://[::1]:8080'


@pytest.mark.parametrize('target', ['other host', 'http://'])
def test_a_redirect_never_carries_the_key_elsewhere(pki, scripted, target):
    url, handler = scripted
    with RecordingServer(tls_directory=pki['dir'] if target == 'other host' else None, host='127.0.0.1') as other:
        location = other.url.replace('127.0.0.1', 'localhost') + '/api/v1/monitors'
        handler.answers = [(302, {'Location': location}, b'')] * 2
        client, dummy = make_client(url, ca_path=pki['ca'])
        for call in ((client.get, '/api/v1/monitors'), (client.create, '/api/v1/monitors', {'name': 'x'})):
            dummy, message = failure(*call)
            assert 'HTTP 302: redirected to %s, which is not followed' % location in message
    assert other.received == []


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
    client, fake = make_client('http://127.0.0.1:%d/api/v1' % closed_port, retries=retries)
    dummy, message = failure(client.get, '/api/v1/monitors')
    assert message.startswith('GET /api/v1/monitors failed: connection refused by http://127.0.0.1:%d (' % closed_port)
    assert message.endswith('s): is the service running there, and is api_url right?'), message
    attempts = int(message.split('(')[1].split(' ')[0])
    assert attempts == len(fake.waits) + 1, message
    assert attempts < 11, message
    assert retries == 10 or attempts == 3, message
    if retries == 10:  # the budget ends the attempts first
        assert sum(fake.waits) == pytest.approx(UNREACHABLE_BUDGET)
        assert '%.1f s)' % UNREACHABLE_BUDGET in message
    else:
        assert sum(fake.waits) < UNREACHABLE_BUDGET


def test_a_refused_post_is_retried_never_ambiguous_and_the_budget_is_shared_by_the_requests_to_one_address(closed_port):
    client, fake = make_client('http://127.0.0.1:%d' % closed_port, retries=5)
    error, dummy = failure(client.create, '/api/v1/monitors', {'name': 'x'})
    assert not error.ambiguous
    assert fake.waits
    waited = len(fake.waits)
    dummy, message = failure(client.get, '/api/v1/monitors')
    assert len(fake.waits) == waited
    assert 'attempts' not in message


@pytest.mark.parametrize('down_for', [0.7, 3.0, UNREACHABLE_BUDGET - 0.5])
def test_a_service_restarting_for_a_few_seconds_is_ridden_out(down_for):
    """The port is bound but not listening (refused) until the injected clock passes ``down_for``."""
    ScriptedHandler.answers = [(200, {'Content-Type': 'application/json'}, {'data': [{'id': 1}]})]
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), ScriptedHandler, bind_and_activate=False)
    server.server_bind()
    fake = FakeTime()
    start = fake.now

    def sleep(seconds):
        fake.sleep(seconds)
        if fake.now - start >= down_for and not getattr(server, 'listening', False):
            server.server_activate()
            server.listening = True
            serve(server)

    client = UptimeClient('http://127.0.0.1:%d' % server.server_address[1], PRIMARY_KEY, sleep=sleep, clock=fake.clock)
    try:
        assert client.get('/api/v1/monitors') == [{'id': 1}]
    finally:
        if getattr(server, 'listening', False):
            server.shutdown()
        server.server_close()
    assert down_for <= sum(fake.waits) <= UNREACHABLE_BUDGET + 1e-9
    # After an answer the budget starts afresh.
    assert client._unreachable_since is None  # pylint: disable=protected-access
