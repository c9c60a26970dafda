"""The emulator's transport: HTTPS with a test PKI, handshake faults that spare the harness, the redirect fault."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request

import pytest

from emulator.control import PRIMARY_KEY, Emulator
from emulator.transport import RecordingServer


@pytest.fixture(scope='module')
def tls_emulator():
    with Emulator.start(tls=True) as emulator:
        yield emulator


def fetch(emulator, context):
    """One request as a client that is not the harness would make it (no SNI for an IP address)."""
    request = urllib.request.Request(emulator.url + '/api/v1/monitors',
                                     headers={'Authorization': 'Bearer %s' % PRIMARY_KEY, 'Accept': 'application/json'})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context))
    with opener.open(request, timeout=10) as answer:
        return answer.status


def trusting(emulator):
    return ssl.create_default_context(cafile=emulator.ca_path)


def test_serves_https_with_a_certificate_of_its_ca(tls_emulator):
    assert tls_emulator.url.startswith('https://127.0.0.1:')
    assert fetch(tls_emulator, trusting(tls_emulator)) == 200
    with pytest.raises(urllib.error.URLError, match='CERTIFICATE_VERIFY_FAILED'):
        fetch(tls_emulator, ssl.create_default_context(cafile=tls_emulator.pki['other-ca']))


@pytest.mark.parametrize('kind, error', [('expired', 'certificate has expired'), ('wrong-host', 'mismatch'),
                                         ('refuse', 'HANDSHAKE_FAILURE')])
def test_handshake_faults_hit_the_counted_connection_and_spare_the_harness(tls_emulator, kind, error):
    tls_emulator.reset()
    tls_emulator.clear_handshakes()
    tls_emulator.tls_fault(kind, after=1, count=1)
    assert tls_emulator.log() == []  # a harness call in between is neither faulted nor counted
    assert fetch(tls_emulator, trusting(tls_emulator)) == 200
    with pytest.raises(urllib.error.URLError, match=error):
        fetch(tls_emulator, trusting(tls_emulator))
    assert fetch(tls_emulator, trusting(tls_emulator)) == 200
    handshakes = tls_emulator.handshakes(until=lambda found: len(found) == 3)
    # In any order: the failed handshake may be recorded after the next connection's.
    assert sorted((handshake['certificate'], handshake['outcome'] == 'ok') for handshake in handshakes) == sorted(
        [('server', True), ('server', True), (kind, False)]), handshakes
    assert len(tls_emulator.log()) == 2  # the faulted connection never carried a request


def test_reset_clears_handshake_faults(tls_emulator):
    tls_emulator.tls_fault('refuse', count=5)
    tls_emulator.reset()
    assert fetch(tls_emulator, trusting(tls_emulator)) == 200


def test_redirect_fault_points_where_it_is_told(emulator):
    with RecordingServer() as other:
        emulator.fault('redirect', location=other.url + '/elsewhere', method='GET')
        answer = emulator.api('GET', '/api/v1/monitors')
        assert answer.status == 302 and answer.headers['Location'] == other.url + '/elsewhere'
        assert other.received == []
    assert emulator.log()[0]['fault'] == 'redirect'


def test_recording_server_keeps_what_it_receives():
    with RecordingServer() as other:
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            urllib.request.Request(other.url + '/x', data=b'a=1', headers={'X-Probe': 'yes'}, method='POST'), timeout=10)
        assert [(r['method'], r['path'], r['headers'].get('X-Probe'), r['body']) for r in other.received] == [
            ('POST', '/x', 'yes', 'a=1')]
