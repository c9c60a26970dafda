# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Transport security: every client of the service against a real HTTPS emulator.

A client takes the connection options and gives an ``Outcome`` (failed, its one-line message, the warnings shown, a
traceback): one module in-process (one stands for all: they share one client), a module by ``ansible-playbook`` (how
Ansible shows a result), the inventory plugin by ``ansible-inventory --list``, the event source as ansible-rulebook runs
it (``runpy``, then ``main(queue, args)``: a first event is success). Every client gets every case it names (None: all):
an unknown CA, ``ca_path``, ``validate_certs: false``, the environment's CA bundles, an unencrypted address that leaves
the machine, an expired certificate, one for another host name, a refused handshake, redirects to another host and to
``http://``. A case says whether the client succeeds or fails, what its one failure line names, which warning is shown
(and no other), and whether a request may reach the service; a redirect's target records what it receives: nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import runpy
import socket
import subprocess
import sys
import tempfile
import traceback
from unittest import mock

import pytest
import yaml

from module_runner import run_module
from reliability_support import MONITORS, REPO_ROOT, ansible_playbook, playbook_env, seed_monitor

from emulator.control import PRIMARY_KEY, Emulator
from emulator.transport import RecordingServer
from ansible_collections.uptime.monitoring.plugins.modules import monitor

CONNECTION_VARIABLES = ('UPTIME_API_URL', 'UPTIME_API_KEY', 'UPTIME_VALIDATE_CERTS', 'REQUESTS_CA_BUNDLE',
                        'CURL_CA_BUNDLE', 'SSL_CERT_FILE', 'SSL_CERT_DIR')


class Outcome:
    def __init__(self, failed, msg='', warnings=(), crash=None, output=''):
        self.failed = failed
        self.msg = msg
        self.warnings = list(warnings)
        self.crash = crash
        self.output = output

    def __repr__(self):
        return '<Outcome failed=%r msg=%r warnings=%r crash=%r>' % (self.failed, self.msg, self.warnings,
                                                                    self.crash and self.crash[-400:])


@contextlib.contextmanager
def environment(env):
    """``os.environ`` without the connection variables, plus ``env``, for the duration."""
    with mock.patch.dict(os.environ):
        for name in CONNECTION_VARIABLES:
            os.environ.pop(name, None)
        os.environ.update(env)
        yield


class ModuleClient:
    """A module run in-process, as Ansible runs it (arguments in, JSON result out)."""

    def __init__(self, name, main, args):
        self.name = name
        self.main = main
        self.args = args

    def run(self, connection, env):
        with environment(env):
            run = run_module(self.main, dict(connection, **self.args))
        return Outcome(run.failed, run.msg, [warning_text(w) for w in run.result.get('warnings', [])], run.crash,
                       run.stdout)


def warning_text(warning):
    """The text of a module result's warning (ansible-core 2.19 wraps it: ``{'event': {'msg': ...}}``)."""
    if isinstance(warning, dict):
        return str((warning.get('event') or {}).get('msg', warning.get('msg', warning)))
    return str(warning)


ANSIBLE_LINE = re.compile(r'^\[(WARNING|ERROR)\]:? ?(.*)$')


def ansible_messages(text):
    """``(warnings, errors)``: the ``[WARNING]`` and ``[ERROR]`` messages of Ansible's output, continuation lines joined."""
    found = {'WARNING': [], 'ERROR': []}
    current = None
    for line in text.splitlines():
        match = ANSIBLE_LINE.match(line)
        if match:
            current = found[match.group(1)]
            current.append(match.group(2).strip())
        elif current is not None and line.strip() and not re.match(r'^(\S+:|PLAY|TASK|ok:|fatal:|changed:)', line):
            current[-1] += ' ' + line.strip()
        else:
            current = None
    return found['WARNING'], found['ERROR']


class CommandClient:
    """An Ansible command line run on the files ``files(connection)`` gives (``{name: text}``) in a fresh ``{dir}``."""

    def __init__(self, name, files, command, env=None, timeout=120, cases=None):
        self.name = name
        self.files = files
        self.command = command
        self.env = env or {}
        self.timeout = timeout
        self.cases = cases

    def run(self, connection, env):
        with tempfile.TemporaryDirectory(prefix='uptime-transport-') as directory:
            for name, text in self.files(connection).items():
                with open(os.path.join(directory, name), 'w', encoding='utf-8') as handle:
                    handle.write(text)
            command = [part.replace('{dir}', directory) for part in self.command]
            child_env = playbook_env(dict(env, COLUMNS='1000', ANSIBLE_INVENTORY_UNPARSED_FAILED='1',
                                          ANSIBLE_DEPRECATION_WARNINGS='0', **self.env))
            for name in CONNECTION_VARIABLES:
                if name not in env:
                    child_env.pop(name, None)
            done = subprocess.run(command, env=child_env, cwd=directory, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=self.timeout, check=False)
        return read_ansible_output(done.returncode, done.stdout + done.stderr)


INVENTORY_FAILURE = re.compile(r"^Failed to parse inventory with '[^']+' plugin: (.*)$")


def read_ansible_output(returncode, output):
    """The failure is the ``msg`` of a ``FAILED! =>`` result, else what an inventory plugin raised, else the first
    ``[ERROR]`` line; an inventory plugin's parse failure is no warning."""
    warnings, errors = ansible_messages(output)
    crash = output if 'Traceback (most recent call last)' in output or 'MODULE FAILURE' in output else None
    parse_failures = [INVENTORY_FAILURE.match(w).group(1) for w in warnings if INVENTORY_FAILURE.match(w)]
    warnings = [w for w in warnings if not INVENTORY_FAILURE.match(w) and not w.startswith('Unable to parse ')]
    msg = ''
    failed_result = re.search(r'FAILED! => (\{.*\})\s*$', output, re.MULTILINE)
    if failed_result:
        msg = str(json.loads(failed_result.group(1)).get('msg', ''))
    elif parse_failures:
        msg = parse_failures[0]
    elif errors:
        msg = errors[0]
    return Outcome(returncode != 0, msg, warnings, crash, output)


DEFECT_EXCEPTIONS = (AttributeError, TypeError, KeyError, NameError, IndexError, UnboundLocalError)


class EventSourceClient:
    """An event source: success is a first event within ``timeout`` s, failure the exception ``main`` raises (a
    defect's, such as a TypeError, is a traceback); its WARNING log records are its warnings."""

    def __init__(self, name, path, args=None, timeout=30):
        self.name = name
        self.path = path if os.path.isabs(path) else os.path.join(REPO_ROOT, path)
        self.args = args or {}
        self.timeout = timeout

    def run(self, connection, env):
        records = []

        class Collect(logging.Handler):
            def emit(self, record):
                records.append(record)

        handler = Collect(level=logging.WARNING)
        logging.getLogger().addHandler(handler)
        try:
            with environment(env):
                source = runpy.run_path(self.path)
                # The connection options the source takes, when it lists them (ours has no retries: it polls
                # again instead).
                known = source.get('OPTIONS')
                args = {name: value for name, value in dict(connection, **self.args).items()
                        if known is None or name in known}
                outcome = asyncio.run(self._first_event(source['main'], args))
        finally:
            logging.getLogger().removeHandler(handler)
        outcome.warnings = [record.getMessage() for record in records if record.levelno == logging.WARNING]
        return outcome

    async def _first_event(self, main, args):
        queue = asyncio.Queue()
        task = asyncio.ensure_future(main(queue, args))
        getter = asyncio.ensure_future(queue.get())
        try:
            done, dummy = await asyncio.wait({task, getter}, timeout=self.timeout,
                                             return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                return Outcome(False)
            if task in done:
                error = task.exception()
                if error is None:
                    return Outcome(True, 'the source ended without an event')
                crash = ''.join(traceback.format_exception(error)) if isinstance(error, DEFECT_EXCEPTIONS) else None
                return Outcome(True, str(error), crash=crash)
            return Outcome(True, 'no event within %s s' % self.timeout)
        finally:
            for pending in (task, getter):
                pending.cancel()
            await asyncio.gather(task, getter, return_exceptions=True)


def one_task_playbook(module, args):
    def files(connection):
        play = [{'hosts': 'localhost', 'gather_facts': False, 'connection': 'local',
                 'tasks': [{'name': 'one task', module: dict(connection, **args)}]}]
        return {'playbook.yml': yaml.safe_dump(play, sort_keys=False)}
    return files


def inventory_files(connection):
    # The plugin takes a file named uptime.yml or *.uptime.yml (its verify_file).
    return {'production.uptime.yml': yaml.safe_dump(dict(plugin='uptime.monitoring.monitors', **connection))}


MONITOR_ARGS = {'name': 'web', 'url': 'https://web.example.com/health', 'interval': 60}

CLIENTS = [
    # Every module reaches the service through the one client of module_utils/_client.py, built from the same
    # connection options: one module stands for them all (an update: a read, then a write).
    ModuleClient('monitor', monitor.main, dict(MONITOR_ARGS, interval=300)),
    # What ansible-playbook adds to the in-process module above is how Ansible shows a module's result: a
    # success, a module warning, a failure line. That is the same for every case, so it runs one of each (the case
    # itself is proven in-process); an inventory plugin and an event source have no in-process form, so they run all.
    CommandClient('monitor_info through ansible-playbook',
                  one_task_playbook('uptime.monitoring.monitor_info', {'name': 'web'}),
                  [ansible_playbook(), '-i', 'localhost,', '-e', 'ansible_python_interpreter=%s' % sys.executable,
                   '{dir}/playbook.yml'],
                  cases=('unknown CA', 'ca_path to the CA', 'validate_certs: false')),
    CommandClient('monitors inventory plugin', inventory_files,
                  [os.path.join(os.path.dirname(ansible_playbook()), 'ansible-inventory'), '-i',
                   '{dir}/production.uptime.yml', '--list'],
                  env={'ANSIBLE_INVENTORY_ENABLED': 'uptime.monitoring.monitors'}),
    # A monitor not online exists (seeded), so with emit_existing the first poll sends an event.
    EventSourceClient('events event source', 'extensions/eda/plugins/event_source/events.py',
                      {'emit_existing': True, 'watch': ['monitors'], 'interval': 1}),
]


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
