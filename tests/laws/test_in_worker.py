"""The law of the two paths: a task run inside Ansible's worker (the action plugins) gives what the module gives.

For every action plugin of the collection (the modules it runs in the worker, listed from plugins/action/), in check
mode or not, with diff or not, a drawn account and a drawn task of that module (one the service accepts, one of the
bad-input law's invalid ones, or one of its invalid combinations) run once as a module process runs it and once as a
play's strategy runs the action plugin for a task on the controller (a Task whose check mode and diff are the play's,
``module_runner.run_action``: the plugin's choice of path and the arguments it gives the module are part of the run),
each on the same fresh account. The results are equal, every key (the ``invocation``, the masks, the messages, the
warnings), the requests the service logged are the same, in order, and in check mode none of them writes. The times
the service chose at the moment of each run are the one thing that may differ. What Ansible adds around the action
plugin (its choice of path, the task's environment, ``module_defaults``) is tests/ecosystem/test_worker_playbooks.py.
"""

from __future__ import annotations

import datetime
import os

import pytest
from hypothesis import example, given, strategies as st

from laws import MODULES, budget, holds, requests_sent, settled
from module_runner import run_action, run_module
from test_bad_input import RELATIONS, WEB, bad_tasks
from test_laws import MODES, START, start, tasks
import strategies as gen

ACTION_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'plugins', 'action')
# Every module the collection runs in the worker: the day an action plugin is added, the law runs it.
ACTIONS = sorted(name[:-3] for name in os.listdir(ACTION_DIR) if name.endswith('.py') and not name.startswith('_'))
WRITES = ('POST', 'PUT', 'PATCH', 'DELETE')


def warning_texts(result):
    """The warnings as text: a module process sends each as a record of its message, the worker as the message."""
    return [warning if isinstance(warning, str) else warning.get('event', {}).get('msg', warning)
            for warning in result.get('warnings', [])]


def run_both(emulator, connection, mode, monitors, module, args, check_mode, diff):
    task = dict(connection, **args)
    if module == 'monitors':  # one write at a time: side by side, the ids the service gives follow the threads' race
        task.setdefault('workers', 1)
    paths = {'module': lambda: run_module(MODULES[module].main, dict(task, _ansible_module_name='uptime.monitoring.%s' % module),
                                          check_mode=check_mode, diff=diff),
             'worker': lambda: run_action(module, task, check_mode=check_mode, diff=diff)}
    runs = {}
    for path, runner in paths.items():
        start(emulator, mode, monitors)
        began = datetime.datetime.now(datetime.timezone.utc)
        out = runner()
        result = dict(out.result, warnings=warning_texts(out.result))
        runs[path] = (out, settled(result, began, mode['zone']), requests_sent(emulator, began, mode['zone']))
    return runs


@st.composite
def echoed(draw):
    """A monitor whose secret is also a word of its name: what a censor of secret values would wrongly hide."""
    name = draw(st.sampled_from(['staging web', 'shop api 2', 'café prod']))
    return 'monitor', draw(gen.monitors(name=name, secret=draw(st.sampled_from(name.split())).ljust(3, 'x')))


def any_task(module):
    """Accepted, echoed (a monitor's), invalid, or invalid together (RELATIONS): 'accepted' stands for a task drawn
    against the account's monitors."""
    return st.one_of(
        st.just('accepted'), st.just('accepted'), st.just('accepted'),  # half the tasks: most write when run
        *([echoed(), echoed()] if module == 'monitor' else []),
        bad_tasks(modules=[module]).map(lambda task: task[:2]),
        *([st.sampled_from([task[:2] for task in RELATIONS if task[0] == module])]
          if any(task[0] == module for task in RELATIONS) else []))


@pytest.mark.parametrize('diff', [False, True])
@pytest.mark.parametrize('check_mode', [False, True])
@pytest.mark.parametrize('module', ACTIONS)
@budget(6)
@given(mode=MODES, monitors=START, data=st.data())
@example(mode={'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}, monitors=[],
         data=('monitors', {'config': 'web'})).via('a list given as text: the module\'s own check, before Ansible\'s')
@example(mode={'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}, monitors=[],
         data=('monitor', dict(WEB, colour='red'))).via('an option no module takes: Ansible\'s message')
@example(mode={'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}, monitors=[],
         data=('monitor', {'name': 'staging web', 'url': 'https://web.example.com/', 'interval': 60, 'request_auth_username': 'u',
                           'request_auth_password': 'web'})).via('a password that is a word of the name: never censored in true results')
def test_the_worker_gives_what_the_module_gives(emulator, connection, module, check_mode, diff, mode, monitors, data):
    if isinstance(data, tuple):
        if data[0] != module:
            return  # an example of another module
        args = data[1]
    else:
        drawn = data.draw(any_task(module))
        dummy, args = data.draw(tasks([each['name'] for each in monitors], modules=(module,))) if drawn == 'accepted' else drawn
    runs = run_both(emulator, connection, mode, monitors, module, args, check_mode, diff)
    (module_run, module_result, module_requests), (worker_run, worker_result, worker_requests) = runs['module'], runs['worker']
    shown = dict(module=module, args=args, check_mode=check_mode, diff=diff, module_result=module_run.result, worker_result=worker_run.result)
    holds(module_run.crash is None, 'the module ends with a result', crash=module_run.crash, **shown)
    holds(worker_run.crash is None, 'the worker ends with a result', crash=worker_run.crash, **shown)
    holds(worker_result == module_result, 'the worker gives the result the module gives', **shown)
    holds(worker_requests == module_requests, 'the worker sends the requests the module sends',
          module_requests=module_requests, worker_requests=worker_requests, **shown)
    if check_mode:
        written = [request for request in worker_requests + module_requests if request['method'] in WRITES]
        holds(written == [], 'check mode sends no write', written=written, **shown)
