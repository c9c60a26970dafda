"""The law of the two paths: a task run inside Ansible's worker (the action plugins) gives what the module gives.

For every action plugin of the collection (the modules it runs in the worker, listed from plugins/action/), in check
mode or not, with diff or not, a drawn account and a drawn task of that module (one the service accepts, one of the
bad-input law's invalid ones, or one of its invalid combinations) run once as a module process runs it and once as a
play's strategy runs the action plugin for a task on the controller (a Task whose check mode and diff are the play's,
``module_runner.run_action``: the plugin's choice of path and the arguments it gives the module are part of the run),
each on the same fresh account. The results are equal, every key (the ``invocation``, the masks, the messages, the
warnings), the requests the service logged are the same, in order, in check mode none of them writes, and neither
path prints or returns a deprecation (on every tested ansible-core line). The times
the service chose at the moment of each run are the one thing that may differ. What Ansible adds around the action
plugin (its choice of path, the task's environment, ``module_defaults``) is tests/ecosystem/test_worker_playbooks.py.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import os
import sys
from unittest import mock

import pytest
from ansible.plugins.action import ActionBase
from ansible.plugins.action.normal import ActionModule as NormalAction
from ansible.template import trust_as_template
from hypothesis import example, given, strategies as st

from laws import MODULES, budget, holds, requests_sent, settled
from module_runner import run_action, run_module
from test_bad_input import RELATIONS, WEB, bad_tasks
from test_laws import MODES, START, start, tasks
import strategies as gen

from ansible_collections.uptime.monitoring.plugins.module_utils._connection import CONNECTION_ENV
from ansible_collections.uptime.monitoring.plugins.plugin_utils import _in_worker

ACTION_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'plugins', 'action')
# Every module the collection runs in the worker: the day an action plugin is added, the law runs it.
ACTIONS = sorted(name[:-3] for name in os.listdir(ACTION_DIR) if name.endswith('.py') and not name.startswith('_'))
WRITES = ('POST', 'PUT', 'PATCH', 'DELETE')


def warning_texts(result):
    """The warnings as text: a module process sends each as a record of its message, the worker as the message."""
    return [warning if isinstance(warning, str) else warning.get('event', {}).get('msg', warning)
            for warning in result.get('warnings', [])]


def traceback_shown(result):
    """What a failure's traceback says, frames left out: the worker's frames are not the module process's
    (docs/performance.md), the error it ends with is the same."""
    if 'exception' in result:
        lines = str(result['exception']).strip().splitlines()
        result = dict(result, exception=lines[-1] if lines else '')
    return result


def run_both(emulator, connection, mode, monitors, module, args, ansible):
    """The task run as a module and in the worker; ``ansible``: check_mode, diff, the tracebacks asked for, and whether
    the connection is given by the task's ``environment:``."""
    task = dict(args) if ansible['by_environment'] else dict(connection, **args)
    environment = {CONNECTION_ENV[name]: value for name, value in connection.items()} if ansible['by_environment'] else {}
    if module == 'monitors':  # one write at a time: side by side, the ids the service gives follow the threads' race
        task.setdefault('workers', 1)
    module_args = dict(task, _ansible_module_name='uptime.monitoring.%s' % module, _ansible_tracebacks_for=ansible['tracebacks'])
    paths = {'module': lambda: run_module(MODULES[module].main, module_args, check_mode=ansible['check_mode'], diff=ansible['diff']),
             'worker': lambda: run_action(module, task, check_mode=ansible['check_mode'], diff=ansible['diff'], environment=environment,
                                          tracebacks=ansible['tracebacks'])}
    runs = {}
    for path, runner in paths.items():
        start(emulator, mode, monitors)
        began = datetime.datetime.now(datetime.timezone.utc)
        with mock.patch.dict(os.environ, environment if path == 'module' else {}):
            out = runner()
        result = traceback_shown(dict(out.result, warnings=warning_texts(out.result)))
        runs[path] = (out, settled(result, began, mode['zone']), requests_sent(emulator, began, mode['zone']))
    return runs


@st.composite
def echoed(draw):
    """A monitor whose secret is also a word of its name: what a censor of secret values would wrongly hide."""
    name = draw(st.sampled_from(['staging web', 'shop api 2', 'café prod']))
    return 'monitor', draw(gen.monitors(name=name, secret=draw(st.sampled_from(name.split())).ljust(3, 'x')))


# A service no request reaches, over http:// to an address that is not this machine's loopback: the task warns, then
# fails at once (nothing listens on port 1).
UNREACHABLE = {'api_url': 'http://0.0.0.0:1', 'retries': 0}


def any_task(module):
    """Accepted, echoed (a monitor's), invalid, or invalid together (RELATIONS): 'accepted' stands for a task drawn
    against the account's monitors, 'unreachable' for one sent where no service answers."""
    return st.one_of(
        st.just('accepted'), st.just('accepted'), st.just('accepted'), st.just('unreachable'),  # most write when run
        *([echoed(), echoed()] if module == 'monitor' else []),
        bad_tasks(modules=[module]).map(lambda task: task[:2]),
        *([st.sampled_from([task[:2] for task in RELATIONS if task[0] == module])]
          if any(task[0] == module for task in RELATIONS) else []))


@pytest.mark.parametrize('diff', [False, True])
@pytest.mark.parametrize('check_mode', [False, True])
@pytest.mark.parametrize('module', ACTIONS)
@budget(6)
@given(mode=MODES, monitors=START, data=st.data(), tracebacks=st.sampled_from([[], ['error']]), by_environment=st.booleans())
@example(mode={'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}, monitors=[], tracebacks=['error'], by_environment=False,
         data=('monitors', {'config': 'web'})).via('a list given as text: the module\'s own check, before Ansible\'s')
@example(mode={'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}, monitors=[], tracebacks=[], by_environment=True,
         data=('monitor', dict(WEB, colour='red'))).via('an option no module takes: Ansible\'s message')
@example(mode={'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}, monitors=[], tracebacks=['error'], by_environment=True,
         data=('monitor', {'name': 'staging web', 'url': 'https://web.example.com/', 'interval': 60, 'request_auth_username': 'u',
                           'request_auth_password': 'web'})).via('a password that is a word of the name: never censored in true results')
@example(mode={'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}, monitors=[], tracebacks=[], by_environment=False,
         data=('incident', {'monitor_id': 1, 'started_at': datetime.datetime(2026, 1, 2, 10, 0)})).via(
             'a time as a template gives it ({{ now() }}): not a JSON type, sent to a module as its text')
def test_the_worker_gives_what_the_module_gives(emulator, connection, module, check_mode, diff, mode, monitors, data, tracebacks,
                                                by_environment):
    if isinstance(data, tuple):
        if data[0] != module:
            return  # an example of another module
        args = data[1]
    else:
        drawn = data.draw(any_task(module))
        dummy, args = data.draw(tasks([each['name'] for each in monitors], modules=(module,))) if drawn in ('accepted', 'unreachable') else drawn
        if drawn == 'unreachable':
            args = dict(args, **UNREACHABLE)
    ansible = dict(check_mode=check_mode, diff=diff, tracebacks=tracebacks, by_environment=by_environment)
    runs = run_both(emulator, connection, mode, monitors, module, args, ansible)
    (module_run, module_result, module_requests), (worker_run, worker_result, worker_requests) = runs['module'], runs['worker']
    shown = dict(module=module, args=args, ansible=ansible, module_result=module_run.result, worker_result=worker_run.result)
    holds(module_run.crash is None, 'the module ends with a result', crash=module_run.crash, **shown)
    holds(worker_run.crash is None, 'the worker ends with a result', crash=worker_run.crash, **shown)
    holds(worker_result == module_result, 'the worker gives the result the module gives', **shown)
    holds(module_run.deprecations == [] and worker_run.deprecations == [], 'neither path prints or returns a deprecation',
          module_deprecations=module_run.deprecations, worker_deprecations=worker_run.deprecations, **shown)
    holds(worker_requests == module_requests, 'the worker sends the requests the module sends',
          module_requests=module_requests, worker_requests=worker_requests, **shown)
    if check_mode:
        written = [request for request in worker_requests + module_requests if request['method'] in WRITES]
        holds(written == [], 'check mode sends no write', written=written, **shown)


# A task's environment: none, what the worker applies (the connection's, a proxy, TZ), what a Python reads as it starts.
ENVIRONMENTS = [{}, {'TZ': 'UTC'}, {'UPTIME_API_URL': 'http://127.0.0.1:9', 'HTTPS_PROXY': 'http://127.0.0.1:9'},
                {'PYTHONTZPATH': '/nowhere'}, {'TZ': 'UTC', 'LANG': 'C'}]
# What the worker takes from ansible-core, one of them gone (as a later ansible-core may rename it), or none.
GONE = [None] + ['%s.%s' % (module, name) for module, names in _in_worker.CORE_NAMES.items() for name in names] + \
    ['ActionBase.%s' % step for step in _in_worker.ACTION_STEPS]


@contextlib.contextmanager
def gone(name):
    """``name`` (of GONE) missing from ansible-core, as if renamed."""
    where, dummy, attribute = name.rpartition('.') if name else ('', '', '')
    owner = ActionBase if where == 'ActionBase' else importlib.import_module(where) if where else None
    _in_worker.core_names.cache_clear()
    try:
        with mock.patch.object(owner, attribute, None) if owner is ActionBase else \
                mock.patch.dict(owner.__dict__ if owner else {}, clear=False) as namespace:
            if owner is not None and owner is not ActionBase:
                del namespace[attribute]
            yield
    finally:
        _in_worker.core_names.cache_clear()


# Where a task's ansible_python_interpreter may say: left to discovery, the controller's Python (as the usual template
# spells it, or in other words), or another Python.
INTERPRETERS = [None, '', 'auto', 'auto_silent', '{{ ansible_playbook_python }}', ' %s ' % sys.executable, sys.executable + '/',
                '/usr/bin/python3.6', '/usr/bin/env python3']


@st.composite
def task_settings(draw):
    """What decides a task's path: its connection, become, async, the switch, and the interpreter of the host the task
    runs for, or of the host it is delegated to."""
    host_vars = {'ansible_playbook_python': sys.executable}
    delegated = {'ansible_playbook_python': sys.executable}
    for variables in (host_vars, delegated):
        interpreter = draw(st.sampled_from(INTERPRETERS))
        if interpreter is not None:  # a host variable from the inventory: trusted as a template, as Ansible trusts it
            variables['ansible_python_interpreter'] = trust_as_template(interpreter)
    task = dict(transport=draw(st.sampled_from(['local', 'local', 'ssh'])), become=draw(st.booleans()),
                async_val=draw(st.sampled_from([0, 0, 30])), delegate_to=draw(st.sampled_from([None, 'controller'])),
                environment=draw(st.sampled_from(ENVIRONMENTS)))
    task_vars = dict(host_vars, ansible_delegated_vars={'controller': delegated} if task['delegate_to'] else {})
    return task, task_vars, draw(st.sampled_from([None, '', 'true', 'false', 'off', 'maybe'])), draw(st.sampled_from(GONE))


def interpreter_of(task, task_vars):
    """The interpreter the module would run on, as docs/performance.md reads it: the delegated host's when delegated,
    templated, None when left to discovery."""
    variables = task_vars['ansible_delegated_vars'][task['delegate_to']] if task['delegate_to'] else task_vars
    value = variables.get('ansible_python_interpreter', 'auto').replace('{{ ansible_playbook_python }}', sys.executable).strip()
    return None if value in ('', 'auto', 'auto_silent') else value


HOST = {'transport': 'local', 'become': False, 'async_val': 0, 'environment': {}}
OTHER_PYTHON, THIS_PYTHON = trust_as_template('/usr/bin/python3.6'), trust_as_template('{{ ansible_playbook_python }}')
PLAY = {'ansible_playbook_python': sys.executable}  # what every play's variables hold


@pytest.mark.parametrize('module', ACTIONS)
@budget(25)
@given(settings=task_settings())
@example(settings=(dict(HOST, delegate_to=None), dict(PLAY, ansible_python_interpreter=OTHER_PYTHON, ansible_delegated_vars={}),
                   None, None)).via('the host\'s own interpreter, another Python')
@example(settings=(dict(HOST, delegate_to='controller'), dict(PLAY, ansible_python_interpreter=OTHER_PYTHON, ansible_delegated_vars={
    'controller': dict(PLAY, ansible_python_interpreter=THIS_PYTHON)}), None, None)).via('delegated to the controller: its interpreter, not the host\'s')
@example(settings=(dict(HOST, delegate_to='controller'), dict(PLAY, ansible_delegated_vars={'controller': dict(PLAY, ansible_python_interpreter=OTHER_PYTHON)}),
                   None, None)).via('delegated to a host whose interpreter is another Python')
def test_a_task_runs_in_the_worker_unless_refused_and_says_which(module, settings):
    """The action plugin runs the module as Ansible does (its task's own tmp and variables) exactly when
    ``worker_refusal`` names a reason for the task's settings, and ``-vvv`` says which path, and why: a name the
    worker takes from ansible-core gone makes the task run as a module, never fail, with the switch on or off."""
    task, task_vars, switch, missing = settings
    reason = _in_worker.worker_refusal(task['transport'], task['async_val'], task['become'], interpreter_of(task, task_vars),
                                       switch=switch, missing=missing, environment=task['environment'])
    as_module, said = [], []
    environ = {name: value for name, value in os.environ.items() if name not in CONNECTION_ENV.values() and name != _in_worker.SWITCH}
    if switch is not None:
        environ[_in_worker.SWITCH] = switch
    with mock.patch.object(NormalAction, 'run', lambda self, tmp=None, task_vars=None: as_module.append((tmp, task_vars)) or {'ran': 'module'}), \
            mock.patch.object(_in_worker.display, 'vvv', said.append), mock.patch.dict(os.environ, environ, clear=True), gone(missing):
        out = run_action(module, {}, task_vars=task_vars, **task)
    shown = dict(module=module, task=task, task_vars=task_vars, switch=switch, missing=missing, reason=reason, result=out.result,
                 crash=out.crash, said=said)
    action = 'uptime.monitoring.%s' % module
    if reason is None:
        holds(as_module == [] and out.failed, 'a task with no reason to refuse it runs in the worker (here: fails its checks)', **shown)
        holds(said == ['%s runs inside the worker' % action], '-vvv says the task runs inside the worker', **shown)
    else:
        holds(as_module == [(None, task_vars)] and out.result == {'ran': 'module'},
              'a refused task runs as a module, with its own variables', **shown)
        holds(said == ['%s runs as a module: %s' % (action, reason)], '-vvv says the task runs as a module, and why', **shown)
