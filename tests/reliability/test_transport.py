# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Transport security of the whole clients: each reaches an HTTPS emulator through the one shared client.

What the client does with a certificate, a redirect, the environment's CA bundles or an unreachable address is
proven once, on the client itself, in ``tests/unit/plugins/module_utils/test_client.py``. Here each client that is
more than a module run in-process gets the connection options from where its users write them and shows the
client's outcome its own way: a module by ``ansible-playbook`` (how Ansible shows a result), the inventory plugin by
``ansible-inventory --list``, the event source as ansible-rulebook runs it (``runpy``, then ``main(queue, args)``: a
first event is success). Each meets the three CASES; none shows the API key.
"""

from __future__ import annotations

import asyncio
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
EVENT_SOURCE = os.path.join(REPO_ROOT, 'extensions/eda/plugins/event_source/events.py')


class Outcome:
    def __init__(self, failed, msg='', warnings=(), crash=None, output=''):
        self.failed, self.msg, self.warnings, self.crash, self.output = failed, msg, list(warnings), crash, output

    def __repr__(self):
        return '<Outcome failed=%r msg=%r warnings=%r crash=%r>' % (self.failed, self.msg, self.warnings,
                                                                    self.crash and self.crash[-400:])


ANSIBLE_LINE = re.compile(r'^\[(WARNING|ERROR)\]:? ?(.*)$')
INVENTORY_FAILURE = re.compile(r"^Failed to parse inventory with '[^']+' plugin: (.*)$")


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


def run_ansible(files, *command, **env):
    """An Ansible command line run on ``files`` (``{name: text}``) in a fresh ``{dir}``, without the connection
    variables of this environment. The failure is the ``msg`` of a ``FAILED! =>`` result, else what an inventory
    plugin raised, else the first ``[ERROR]`` line; an inventory plugin's parse failure is no warning."""
    with tempfile.TemporaryDirectory(prefix='uptime-transport-') as directory:
        for name, text in files.items():
            with open(os.path.join(directory, name), 'w', encoding='utf-8') as handle:
                handle.write(text)
        child_env = playbook_env(dict(env, COLUMNS='1000', ANSIBLE_INVENTORY_UNPARSED_FAILED='1', ANSIBLE_DEPRECATION_WARNINGS='0'))
        for name in CONNECTION_VARIABLES:
            child_env.pop(name, None)
        done = subprocess.run([part.replace('{dir}', directory) for part in command], env=child_env, cwd=directory,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False)
    output = done.stdout + done.stderr
    warnings, errors = ansible_messages(output)
    crash = output if 'Traceback (most recent call last)' in output or 'MODULE FAILURE' in output else None
    parse_failures = [INVENTORY_FAILURE.match(w).group(1) for w in warnings if INVENTORY_FAILURE.match(w)]
    warnings = [w for w in warnings if not INVENTORY_FAILURE.match(w) and not w.startswith('Unable to parse ')]
    failed_result = re.search(r'FAILED! => (\{.*\})\s*$', output, re.MULTILINE)
    msg = str(json.loads(failed_result.group(1)).get('msg', '')) if failed_result else (parse_failures or errors or [''])[0]
    return Outcome(done.returncode != 0, msg, warnings, crash, output)


def by_ansible_playbook(connection):
    """A module, monitor_info, run by ``ansible-playbook``: how Ansible shows a module's result."""
    play = [{'hosts': 'localhost', 'gather_facts': False, 'connection': 'local',
             'tasks': [{'name': 'one task', 'uptime.monitoring.monitor_info': dict(connection, name='web')}]}]
    return run_ansible({'playbook.yml': yaml.safe_dump(play, sort_keys=False)}, ansible_playbook(), '-i', 'localhost,',
                       '-e', 'ansible_python_interpreter=%s' % sys.executable, '{dir}/playbook.yml')


def by_ansible_inventory(connection):
    """The inventory plugin by ``ansible-inventory --list`` (it takes a file named uptime.yml or *.uptime.yml)."""
    files = {'production.uptime.yml': yaml.safe_dump(dict(plugin='uptime.monitoring.monitors', **connection))}
    return run_ansible(files, os.path.join(os.path.dirname(ansible_playbook()), 'ansible-inventory'), '-i',
                       '{dir}/production.uptime.yml', '--list', ANSIBLE_INVENTORY_ENABLED='uptime.monitoring.monitors')


DEFECT_EXCEPTIONS = (AttributeError, TypeError, KeyError, NameError, IndexError, UnboundLocalError)


def by_the_event_source(connection, timeout=30):
    """The event source as ansible-rulebook runs it: success is a first event within ``timeout`` s (a monitor not online
    is seeded, and emit_existing sends it at the first poll), failure the exception ``main`` raises (a defect's, such
    as a TypeError, is a traceback); its WARNING log records are its warnings."""
    records = []
    handler = logging.Handler(level=logging.WARNING)
    handler.emit = records.append
    logging.getLogger().addHandler(handler)
    try:
        with mock.patch.dict(os.environ):
            for name in CONNECTION_VARIABLES:
                os.environ.pop(name, None)
            source = runpy.run_path(EVENT_SOURCE)
            # The connection options the source takes (it has no retries: it polls again instead).
            args = {name: value for name, value in connection.items() if name in source['OPTIONS']}
            outcome = asyncio.run(first_event(source['main'], dict(args, emit_existing=True, watch=['monitors'], interval=1),
                                              timeout))
    finally:
        logging.getLogger().removeHandler(handler)
    outcome.warnings = [record.getMessage() for record in records if record.levelno == logging.WARNING]
    return outcome


async def first_event(main, args, timeout):
    queue = asyncio.Queue()
    task = asyncio.ensure_future(main(queue, args))
    getter = asyncio.ensure_future(queue.get())
    try:
        done, dummy = await asyncio.wait({task, getter}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            return Outcome(False)
        if task not in done:
            return Outcome(True, 'no event within %s s' % timeout)
        error = task.exception()
        if error is None:
            return Outcome(True, 'the source ended without an event')
        return Outcome(True, str(error), crash=''.join(traceback.format_exception(error))
                       if isinstance(error, DEFECT_EXCEPTIONS) else None)
    finally:
        for pending in (task, getter):
            pending.cancel()
        await asyncio.gather(task, getter, return_exceptions=True)


CLIENTS = [by_ansible_playbook, by_ansible_inventory, by_the_event_source]

# (name, options, failure fragments or None for a success, the transport warning expected)
CASES = [
    ('unknown CA', {}, ['certificate', 'is not trusted', 'ca_path', 'validate_certs'], None),
    ('ca_path to the CA', {'ca_path': '{ca}'}, None, None),
    ('validate_certs: false', {'validate_certs': False}, None, 'certificate of {https_origin} is not checked'),
]


@pytest.mark.parametrize('client', CLIENTS, ids=lambda client: client.__name__)
@pytest.mark.parametrize('name, options, fragments, warning', CASES, ids=[case[0] for case in CASES])
def test_transport(client, name, options, fragments, warning, tls_emulator, record_property):
    names = {'ca': tls_emulator.ca_path, 'https_origin': tls_emulator.url}
    seed_monitor(tls_emulator, 'web')
    tls_emulator.clear_log()
    connection = dict({key: value.format(**names) if isinstance(value, str) else value for key, value in options.items()},
                      api_url=tls_emulator.url, api_key=PRIMARY_KEY, timeout=5, retries=1)
    outcome = client(connection)
    record_property('message', outcome.msg.replace(PRIMARY_KEY, '<key>'))
    assert not outcome.crash, outcome
    assert outcome.failed is (fragments is not None), outcome
    if fragments:
        assert '\n' not in outcome.msg.strip(), outcome
        assert all(fragment in outcome.msg for fragment in fragments), outcome
        assert tls_emulator.log() == [], 'a request reached the service'
    shown = [w for w in outcome.warnings if 'api_url' in w or 'validate_certs' in w]
    assert len(shown) == (1 if warning else 0), outcome
    assert all(warning.format(**names) in w for w in shown), outcome
    assert PRIMARY_KEY not in outcome.output + outcome.msg + ' '.join(outcome.warnings), 'the API key is shown'
