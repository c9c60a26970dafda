"""The law of the two paths: a task run inside Ansible's worker (the action plugins) gives what the module gives.

For a drawn account and a drawn task of any module (one the service accepts, one of the bad-input law's invalid ones,
or one of its invalid combinations), in check mode or not, the task runs once as a module process runs it and once
as its action plugin runs it in the worker, each on the same fresh account. The results are equal, every key (the
``invocation``, the masks, the messages, the warnings) and the requests the service logged are the same, in order.
The times the service chose at the moment of each run are the one thing that may differ. What Ansible adds around
the action plugin (its choice of path, the task's environment, ``module_defaults``) is tests/ecosystem/test_worker_playbooks.py.
"""

from __future__ import annotations

import datetime

from hypothesis import example, given, strategies as st

from laws import MODULES, budget, holds, requests_sent, settled
from module_runner import run_in_worker, run_module
from test_bad_input import RELATIONS, WEB, bad_tasks
from test_laws import MODES, START, start, tasks
import strategies as gen

PATHS = {'module': run_module, 'worker': run_in_worker}


def warning_texts(result):
    """The warnings as text: a module process sends each as a record of its message, the worker as the message."""
    return [warning if isinstance(warning, str) else warning.get('event', {}).get('msg', warning)
            for warning in result.get('warnings', [])]


def run_both(emulator, connection, mode, monitors, module, args, check_mode):
    task = dict(connection, _ansible_module_name='uptime.monitoring.%s' % module, **args)
    runs = {}
    for path, runner in PATHS.items():
        start(emulator, mode, monitors)
        began = datetime.datetime.now(datetime.timezone.utc)
        out = runner(MODULES[module].main, task, check_mode=check_mode, diff=True)
        result = dict(out.result, warnings=warning_texts(out.result))
        runs[path] = (out, settled(result, began, mode['zone']), requests_sent(emulator, began, mode['zone']))
    return runs


@st.composite
def echoed(draw):
    """A monitor whose secret is also a word of its name: what a censor of secret values would wrongly hide."""
    name = draw(st.sampled_from(['staging web', 'shop api 2', 'café prod']))
    return 'monitor', draw(gen.monitors(name=name, secret=draw(st.sampled_from(name.split())).ljust(3, 'x')))


ANY_TASK = st.one_of(
    st.just('accepted'),
    echoed(),
    bad_tasks().map(lambda task: task[:2]),
    st.sampled_from([task[:2] for task in RELATIONS]))


@budget(60)
@given(mode=MODES, monitors=START, check_mode=st.booleans(), data=st.data())
@example(mode={'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}, monitors=[], check_mode=False,
         data=('monitors', {'config': 'web'})).via('a list given as text: the module\'s own check, before Ansible\'s')
@example(mode={'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}, monitors=[], check_mode=False,
         data=('monitor', dict(WEB, colour='red'))).via('an option no module takes: Ansible\'s message')
def test_the_worker_gives_what_the_module_gives(emulator, connection, mode, monitors, check_mode, data):
    if isinstance(data, tuple):
        module, args = data
    else:
        drawn = data.draw(ANY_TASK)
        module, args = data.draw(tasks([each['name'] for each in monitors])) if drawn == 'accepted' else drawn
    runs = run_both(emulator, connection, mode, monitors, module, args, check_mode)
    (module_run, module_result, module_requests), (worker_run, worker_result, worker_requests) = runs['module'], runs['worker']
    shown = dict(module=module, args=args, check_mode=check_mode, module_result=module_run.result, worker_result=worker_run.result)
    holds(module_run.crash is None, 'the module ends with a result', crash=module_run.crash, **shown)
    holds(worker_run.crash is None, 'the worker ends with a result', crash=worker_run.crash, **shown)
    holds(worker_result == module_result, 'the worker gives the result the module gives', **shown)
    holds(worker_requests == module_requests, 'the worker sends the requests the module sends',
          module_requests=module_requests, worker_requests=worker_requests, **shown)
