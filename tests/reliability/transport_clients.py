"""The clients of the service that the transport tests exercise, as data (see test_transport.py).

A client is anything that takes the connection options and talks to the service: each module run
in-process, and one module run by ``ansible-playbook`` (what a user sees: Ansible's own warning and
failure lines). Every client gets the same transport cases (or a subset it names); a client only says
how it is run and how its outcome is read.

Adding a client is one entry in CLIENTS. Besides the modules there are:

* the inventory plugin, run by ``ansible-inventory --list`` on a configuration file with the connection
  options; ``ANSIBLE_INVENTORY_ENABLED`` names only that plugin, and ``CommandClient`` sets
  ANSIBLE_INVENTORY_UNPARSED_FAILED, so a source that fails is a failure, takes the plugin's message from
  ``Failed to parse inventory with '...' plugin: <msg>`` (``read_ansible_output``) and the plugin's own
  ``display.warning`` lines as its warnings;
* the event source, run by ``EventSourceClient``: it loads the file with ``runpy`` and runs its
  ``main(queue, args)`` as ansible-rulebook does, with the connection options it takes as ``args``; the
  first event put on the queue is success, an exception is the failure line, the source's log records of
  level WARNING are its warnings.

``run(connection, env)`` returns an ``Outcome``: failed, the failure message (one line expected),
the warnings shown, and any traceback. A client's ``cases`` (None: all) names the transport cases it runs.
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

import yaml

from reliability_support import REPO_ROOT, ansible_playbook, playbook_env, run_module

from ansible_collections.uptime.monitoring.plugins.modules import incident, incident_info, monitor, monitor_info, monitors

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
    saved = {name: os.environ.get(name) for name in set(CONNECTION_VARIABLES) | set(env)}
    for name in saved:
        os.environ.pop(name, None)
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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
    """A command line of Ansible (``ansible-playbook``, ``ansible-inventory``, ...) run with files made per run.

    ``files(connection)`` returns ``{name: text}`` written into a fresh directory; ``{dir}`` in the command is
    that directory. A failure is the ``msg`` of a ``FAILED! =>`` result, or else the first ``[ERROR]`` line.
    """

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
    """The Outcome of an Ansible command line from its exit code and output.

    The failure message is the ``msg`` of a task's ``FAILED! =>`` result, else what an inventory plugin
    raised (``[WARNING]: Failed to parse inventory with '<plugin>' plugin: <msg>``), else the first
    ``[ERROR]`` line. Those parse failures are the failure, not warnings.
    """
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
    """An EDA event source file run as ansible-rulebook runs it: ``runpy``, then ``main(queue, args)``.

    Success is the first event on the queue within ``timeout`` seconds; failure is the exception ``main``
    raises (a defect's exception, such as a TypeError, counts as a traceback). WARNING log records
    emitted meanwhile are the warnings.
    """

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
    ModuleClient('monitor', monitor.main, dict(MONITOR_ARGS, interval=300)),
    ModuleClient('monitor_info', monitor_info.main, {}),
    ModuleClient('incident', incident.main, {'monitor': 'web', 'started_at': '2026-01-05T10:00:00', 'cause': 'db'}),
    ModuleClient('incident_info', incident_info.main, {}),
    ModuleClient('monitors', monitors.main, {'config': [dict(MONITOR_ARGS, interval=300)], 'workers': 1}),
    # What ansible-playbook adds to the in-process monitor_info above is how Ansible shows a module's result: a
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
