# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Transport security: every client (transport_clients.CLIENTS) against a real HTTPS emulator.

Every client gets every case (a client that runs a subset names it: transport_clients.py): an unknown
CA, ``ca_path``, ``validate_certs: false``, the environment's CA bundles, an unencrypted address that
leaves the machine, an expired certificate, a certificate for another host name, a refused handshake,
and redirects to another host and to ``http://``. A case says
whether the client must succeed or fail, what the one failure line must name, which warning must be
shown (and that no other transport warning is), and whether any request may reach the service. The
redirects point at a second local server that records what it receives: it must receive nothing.
"""

from __future__ import annotations

import socket

import pytest

from reliability_support import MONITORS, seed_monitor
from transport_clients import CLIENTS

from emulator.control import PRIMARY_KEY, Emulator
from emulator.transport import RecordingServer

UNCHECKED = 'certificate of %(https_origin)s is not checked'
UNENCRYPTED = 'the API key and all data travel unencrypted'


def non_loopback_address():
    """An address of this machine that is not the loopback (the one its default route leaves by)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(('10.255.255.255', 9))  # no packet is sent: this only picks the outgoing interface
        address = probe.getsockname()[0]
    except OSError:
        address = None
    finally:
        probe.close()
    if address and not address.startswith('127.'):
        return address, address
    # No route: listen everywhere and use the machine's name, which is not a loopback name.
    return '0.0.0.0', socket.gethostname()


@pytest.fixture(scope='module')
def remote_http_emulator():
    listen, name = non_loopback_address()
    server = Emulator.start(host=listen)
    server.url = 'http://%s:%s' % (name, server.url.rsplit(':', 1)[1])
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope='module')
def recorders(tls_emulator_server):
    """Two servers a redirect may point to: another host over HTTPS, and a plain http:// one."""
    with RecordingServer(tls_directory=tls_emulator_server.tls_dir) as other_host, RecordingServer() as plain:
        yield {'other host': other_host, 'http': plain}


class Case:
    """One transport situation: the options and environment given, what must happen."""

    def __init__(self, name, options, expect, fragments=(), warning=None, env=None, tls_fault=None, redirect=None,
                 target='https'):
        self.name = name
        self.options = options
        self.expect = expect  # 'ok' or 'failed'
        self.fragments = fragments
        self.warning = warning
        self.env = env or {}
        self.tls_fault = tls_fault
        self.redirect = redirect
        self.target = target


OTHER_BUNDLES = {'REQUESTS_CA_BUNDLE': '{other_ca}', 'CURL_CA_BUNDLE': '{other_ca}', 'SSL_CERT_FILE': '{other_ca}'}
CA = {'ca_path': '{ca}'}

CASES = [
    Case('unknown CA', {}, 'failed', ['certificate', 'is not trusted', 'ca_path', 'validate_certs']),
    Case('ca_path to the CA', CA, 'ok'),
    Case('ca_path, environment bundles of another CA', CA, 'ok', env=OTHER_BUNDLES),
    Case('validate_certs: false', {'validate_certs': False}, 'ok', warning=UNCHECKED),
    Case('validate_certs: false, environment bundles of another CA', {'validate_certs': False}, 'ok',
         warning=UNCHECKED, env=OTHER_BUNDLES),
    Case('http:// to a host that is not the loopback', {}, 'ok', warning=UNENCRYPTED, target='remote http'),
    Case('certificate expired', CA, 'failed', ['certificate', 'has expired', 'validate_certs'], tls_fault='expired'),
    Case('wrong host name', CA, 'failed', ['certificate', "is not valid for '127.0.0.1'", 'validate_certs'],
         tls_fault='wrong-host'),
    Case('handshake refused', CA, 'failed', ['refused the TLS handshake'], tls_fault='refuse'),
    Case('redirect to another host', CA, 'failed', ['redirected to https://localhost:', 'not followed'],
         redirect='other host'),
    Case('redirect to http://', CA, 'failed', ['redirected to http://127.0.0.1:', 'not followed'], redirect='http'),
]


def fill(value, names):
    return value.format(**names) if isinstance(value, str) else value


def client_cases():
    names = {case.name for case in CASES}
    for client in CLIENTS:
        assert set(getattr(client, 'cases', None) or ()) <= names, client.cases
        for case in CASES:
            if getattr(client, 'cases', None) is None or case.name in client.cases:
                yield pytest.param(client, case, id='%s-%s' % (client.name, case.name))


@pytest.mark.parametrize('client, case', list(client_cases()))
def test_transport(client, case, tls_emulator, remote_http_emulator, recorders, record_property):
    emulator = remote_http_emulator if case.target == 'remote http' else tls_emulator
    if case.target == 'remote http':
        emulator.reset()
    names = {'ca': tls_emulator.ca_path, 'other_ca': tls_emulator.pki['other-ca'],
             'https_origin': tls_emulator.url}
    seed_monitor(emulator, 'web')
    emulator.clear_log()
    recorder = recorders.get(case.redirect)
    for other in recorders.values():
        other.received.clear()
    if case.tls_fault:
        emulator.tls_fault(case.tls_fault, count=100)
    if recorder is not None:
        host = 'localhost' if case.redirect == 'other host' else '127.0.0.1'
        emulator.fault('redirect', count=100, location='%s://%s:%s%s' % (
            recorder.url.split(':')[0], host, recorder.url.rsplit(':', 1)[1], MONITORS))

    connection = dict({name: fill(value, names) for name, value in case.options.items()},
                      api_url=emulator.url, api_key=PRIMARY_KEY, timeout=5, retries=1)
    outcome = client.run(connection, {name: fill(value, names) for name, value in case.env.items()})
    emulator.clear_faults()
    log = emulator.log()

    problems = []
    transport_warnings = [w for w in outcome.warnings if 'api_url' in w or 'validate_certs' in w]
    if outcome.crash:
        problems.append('traceback')
    if case.expect == 'ok' and outcome.failed:
        problems.append('failed: %s' % outcome.msg)
    if case.expect == 'failed':
        if not outcome.failed:
            problems.append('succeeded')
        if '\n' in outcome.msg.strip() or 'Traceback' in outcome.msg:
            problems.append('more than one line')
        problems.extend('does not say %r' % fragment for fragment in case.fragments if fragment not in outcome.msg)
    expected_warning = case.warning % names if case.warning else None
    if expected_warning and not any(expected_warning in w for w in transport_warnings):
        problems.append('no warning saying %r (warnings: %r)' % (expected_warning, outcome.warnings))
    if not expected_warning and transport_warnings:
        problems.append('unexpected transport warning: %r' % transport_warnings)
    shown = outcome.output + outcome.msg + ' '.join(outcome.warnings)
    if PRIMARY_KEY in shown:
        problems.append('the API key is shown')
    if case.tls_fault or case.name == 'unknown CA':
        if log:
            problems.append('%d request(s) reached the service' % len(log))
    if case.redirect and [entry for entry in log if entry['method'] != 'GET']:
        problems.append('a write reached the service')
    for name, other in recorders.items():
        if other.received:
            problems.append('the %s server received %d request(s), Authorization: %s' % (
                name, len(other.received), [r['headers'].get('Authorization') is not None for r in other.received]))

    record_property('message', outcome.msg.replace(PRIMARY_KEY, '<key>'))
    assert not problems, '%s: %s\n%r' % (case.name, '; '.join(problems), outcome)
