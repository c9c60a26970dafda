# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Transport security of the whole clients: each reaches an HTTPS emulator through the one shared client.

What the client does with a certificate, a redirect, the environment's CA bundles or an unreachable address is
proven once, on the client itself, in ``tests/unit/plugins/module_utils/test_client.py``. Here each client that is
more than a module run in-process gets the connection options from where its users write them and shows the
client's outcome its own way: a module by ``ansible-playbook`` (how Ansible shows a result), the inventory plugin by
``ansible-inventory --list``, the event source as ansible-rulebook runs it (``runpy``, then ``main(queue, args)``: a
first event is success). A client takes the connection options and gives an ``Outcome`` (failed, its one-line
message, the warnings shown, a traceback). Each gets three cases: an unknown CA (one failure line naming the options,
no request reaches the service), ``ca_path`` to the CA (success), ``validate_certs: false`` (success and the one
transport warning); none shows the API key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import runpy
import subprocess
import sys
import tempfile
import traceback
from unittest import mock

import pytest
import yaml

from reliability_support import REPO_ROOT, ansible_playbook, playbook_env, seed_monitor

from emulator.control import PRIMARY_KEY

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

    def __init__(self, name, files, command, env=None, timeout=120):
        self.name = name
        self.files = files
        self.command = command
        self.env = env or {}
        self.timeout = timeout

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


CLIENTS = [
    CommandClient('monitor_info through ansible-playbook',
                  one_task_playbook('uptime.monitoring.monitor_info', {'name': 'web'}),
                  [ansible_playbook(), '-i', 'localhost,', '-e', 'ansible_python_interpreter=%s' % sys.executable,
                   '{dir}/playbook.yml']),
    CommandClient('monitors inventory plugin', inventory_files,
                  [os.path.join(os.path.dirname(ansible_playbook()), 'ansible-inventory'), '-i',
                   '{dir}/production.uptime.yml', '--list'],
                  env={'ANSIBLE_INVENTORY_ENABLED': 'uptime.monitoring.monitors'}),
    # A monitor not online exists (seeded), so with emit_existing the first poll sends an event.
    EventSourceClient('events event source', 'extensions/eda/plugins/event_source/events.py',
                      {'emit_existing': True, 'watch': ['monitors'], 'interval': 1}),
]

# (name, options, failure fragments or None for a success, the transport warning expected)
CASES = [
    ('unknown CA', {}, ['certificate', 'is not trusted', 'ca_path', 'validate_certs'], None),
    ('ca_path to the CA', {'ca_path': '{ca}'}, None, None),
    ('validate_certs: false', {'validate_certs': False}, None, 'certificate of {https_origin} is not checked'),
]


@pytest.mark.parametrize('client', CLIENTS, ids=lambda client: client.name)
@pytest.mark.parametrize('name, options, fragments, warning', CASES, ids=[case[0] for case in CASES])
def test_transport(client, name, options, fragments, warning, tls_emulator, record_property):
    names = {'ca': tls_emulator.ca_path, 'https_origin': tls_emulator.url}
    seed_monitor(tls_emulator, 'web')
    tls_emulator.clear_log()
    connection = dict({key: value.format(**names) if isinstance(value, str) else value for key, value in options.items()},
                      api_url=tls_emulator.url, api_key=PRIMARY_KEY, timeout=5, retries=1)
    outcome = client.run(connection, {})

    problems = []
    transport_warnings = [w for w in outcome.warnings if 'api_url' in w or 'validate_certs' in w]
    if outcome.crash:
        problems.append('traceback')
    if fragments is None and outcome.failed:
        problems.append('failed: %s' % outcome.msg)
    if fragments is not None:
        if not outcome.failed:
            problems.append('succeeded')
        if '\n' in outcome.msg.strip() or 'Traceback' in outcome.msg:
            problems.append('more than one line')
        problems.extend('does not say %r' % fragment for fragment in fragments if fragment not in outcome.msg)
        if tls_emulator.log():
            problems.append('%d request(s) reached the service' % len(tls_emulator.log()))
    warning = warning.format(**names) if warning else None
    if warning and not any(warning in w for w in transport_warnings):
        problems.append('no warning saying %r (warnings: %r)' % (warning, outcome.warnings))
    if not warning and transport_warnings:
        problems.append('unexpected transport warning: %r' % transport_warnings)
    if PRIMARY_KEY in outcome.output + outcome.msg + ' '.join(outcome.warnings):
        problems.append('the API key is shown')

    record_property('message', outcome.msg.replace(PRIMARY_KEY, '<key>'))
    assert not problems, '%s: %s\n%r' % (name, '; '.join(problems), outcome)
