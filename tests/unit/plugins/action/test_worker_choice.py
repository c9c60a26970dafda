"""When a task of the collection runs inside Ansible's worker, and when as a module: ``worker_refusal``'s table (that
Ansible hands it the task's own connection, options and interpreter is tests/ecosystem/test_worker_playbooks.py); and on
every ansible-core line, the worker's result is the module's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from ansible.module_utils.common.parameters import PASS_VARS

from ansible_collections.uptime.monitoring.plugins.modules import incident, monitor, monitor_info, monitors
from ansible_collections.uptime.monitoring.plugins.plugin_utils._in_worker import CORE_NAMES, same_python, worker_refusal
from module_runner import run_in_worker, run_module

MODULES = {'monitor': monitor, 'monitors': monitors, 'monitor_info': monitor_info, 'incident': incident}

HERE = dict(transport='local', async_val=0, become=False, interpreter=None, has_requests=True, switch=None)
ROWS = [
    ({}, None),
    ({'interpreter': sys.executable}, None),
    ({'interpreter': sys.executable + '/'}, None),  # the same path, spelled otherwise
    ({'switch': 'true'}, None), ({'switch': ''}, None), ({'switch': 'yes'}, None),
    ({'switch': 'false'}, 'UPTIME_RUN_IN_WORKER is false'), ({'switch': '0'}, 'UPTIME_RUN_IN_WORKER is 0'),
    ({'switch': 'no'}, 'UPTIME_RUN_IN_WORKER is no'),
    ({'switch': 'maybe'}, 'UPTIME_RUN_IN_WORKER is maybe'),  # not read as true: the module's path, which is always right
    ({'transport': 'ssh'}, 'the connection is ssh, not local'),
    ({'transport': 'ansible.netcommon.httpapi'}, 'the connection is ansible.netcommon.httpapi, not local'),
    ({'async_val': 30}, 'the task is async'),
    ({'become': True}, 'become is set'),
    ({'interpreter': '/usr/bin/python3.6'}, 'ansible_python_interpreter is /usr/bin/python3.6'),
    ({'interpreter': '/usr/bin/env python3'}, 'ansible_python_interpreter is /usr/bin/env python3'),
    ({'has_requests': False}, 'requests does not import in the controller'),
    # The first reason the table meets: the switch, then the connection.
    ({'switch': 'off', 'transport': 'ssh'}, 'UPTIME_RUN_IN_WORKER is off'),
    ({'transport': 'ssh', 'become': True}, 'the connection is ssh, not local'),
]


@pytest.mark.parametrize('given, reason', ROWS)
def test_a_task_runs_in_the_worker_unless_a_reason_says_otherwise(given, reason):
    found = worker_refusal(**dict(HERE, **given))
    if reason is None:
        assert found is None
    else:
        assert found is not None
        assert found.startswith(reason), found


def test_one_python_under_two_names_is_one_python(tmp_path):
    """A name of the controller's Python spelled as inventories spell it (``python`` beside ``python3``) is that
    Python; the same file reached from another folder (a virtualenv's link to its base Python) is not."""
    base, venv = tmp_path / 'usr' / 'bin', tmp_path / 'venv' / 'bin'
    base.mkdir(parents=True)
    venv.mkdir(parents=True)
    (base / 'python3.11').write_text('')
    (base / 'python3').symlink_to('python3.11')
    (venv / 'python3').symlink_to(base / 'python3.11')
    (venv / 'python').symlink_to('python3')
    assert same_python(str(venv / 'python'), str(venv / 'python3'))
    assert same_python(str(base / 'python3'), str(base / 'python3.11'))
    assert same_python(str(venv / 'python3') + '/', str(venv / 'python3'))
    assert not same_python(str(base / 'python3.11'), str(venv / 'python3'))
    assert not same_python(str(venv / 'python3'), str(base / 'python3'))
    assert not same_python(str(base / 'python3.12'), str(base / 'python3.11'))


# The law of the two paths (tests/laws/test_in_worker.py, every line) leaves the invocation to the line's default; here
# a task accepted, refused by the module's own check, by ansible-core's validator, and by the service's answer, with
# the invocation asked for, not asked for, or left to the line's default (2.19 always returns it, 2.21 only when asked).
TASKS = [
    ('monitor', {'name': 'staging web', 'url': 'https://web.example.com/', 'interval': 60,
                 'request_auth_username': 'u', 'request_auth_password': 'web'}),
    ('monitors', {'config': 'web'}),
    ('monitor_info', {'colour': 'red'}), ('monitor_info', {'_ansible_colour': 'red'}),
    ('incident', {'monitor': 'nope', 'started_at': '2026-01-02T10:00:00'}),
]


@pytest.mark.parametrize('inject', [None, True, False])
@pytest.mark.parametrize('module, args', TASKS)
def test_the_worker_returns_what_the_module_returns(emulator, connection, module, args, inject):
    if inject is not None and 'inject_invocation' not in PASS_VARS:
        pytest.skip('this ansible-core always returns the invocation')
    task = dict(connection, _ansible_module_name='uptime.monitoring.' + module, **args)
    if inject is not None:
        task['_ansible_inject_invocation'] = inject
    main = MODULES[module].main
    emulator.reset()
    as_module = run_module(main, task)
    module_requests = [(entry['method'], entry['path'], entry['form']) for entry in emulator.log()]
    emulator.reset()
    in_worker = run_in_worker(main, task)
    worker_requests = [(entry['method'], entry['path'], entry['form']) for entry in emulator.log()]
    assert in_worker.crash is None, in_worker.crash
    assert without_times(in_worker.result) == without_times(as_module.result)
    assert worker_requests == module_requests
    assert ('invocation' in in_worker.result) is (inject is not False and (inject or 'inject_invocation' not in PASS_VARS))


def without_times(result):
    monitor = dict(result.get('monitor') or {}, created_at=None, updated_at=None)
    diff = {side: dict(values, created_at=None, updated_at=None) for side, values in (result.get('diff') or {}).items()}
    return dict(result, monitor=monitor, diff=diff)


def test_a_controller_without_requests_loads_the_action_plugins_and_runs_the_modules_as_modules():
    # In a process of its own: requests made unimportable there, and every plugin of the collection imported afresh.
    code = '''
import sys
sys.modules['requests'] = None
from ansible_collections.uptime.monitoring.plugins.action import incident, incident_info, monitor, monitor_info, monitors
from ansible_collections.uptime.monitoring.plugins.plugin_utils._in_worker import CORE_NAMES, same_python, worker_refusal
print(worker_refusal('local', 0, False, None, switch=None))
'''
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=False, timeout=120,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == 'requests does not import in the controller'


@pytest.mark.parametrize('module, name', [(module, name) for module, names in CORE_NAMES.items() for name in names])
def test_the_action_plugins_load_whatever_ansible_core_lacks(module, name):
    # In a process of its own: the name removed from ansible-core (once ansible-core's own module code has it) before
    # any plugin of the collection is imported, as a later ansible-core that renamed it; the task runs as a module, and
    # says why (tests/laws/test_in_worker.py).
    code = '''
import importlib, sys
import ansible.module_utils.basic, ansible.plugins.action.normal
del importlib.import_module(sys.argv[1]).__dict__[sys.argv[2]]
from ansible_collections.uptime.monitoring.plugins.action import incident, incident_info, monitor, monitor_info, monitors
from ansible_collections.uptime.monitoring.plugins.plugin_utils._in_worker import core_names
print(core_names()[1])
'''
    done = subprocess.run([sys.executable, '-c', code, module, name], capture_output=True, text=True, check=False, timeout=120,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '%s.%s' % (module, name)
