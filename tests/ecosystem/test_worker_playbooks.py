"""The modules inside Ansible's worker, as ansible-playbook runs them (the law of the two paths in-process is
tests/laws/test_in_worker.py).

- The law: a drawn playbook of drawn tasks (accepted ones and invalid ones), its connection given in a drawn way
  (the controller's environment, the task's arguments, ``module_defaults`` of the action group, the play's
  ``environment:``), a proxy or a CA bundle in a task's ``environment:``, ``no_log`` on a task, a task run twice by
  ``loop`` (one worker process runs every item), the play on the
  implicit localhost or on another host with ``delegate_to: localhost``, in ``--check --diff`` or not, registers the
  same results and sends the same requests with the in-worker path on and off (``UPTIME_RUN_IN_WORKER=false``), and
  with it on, every task of the collection runs in the worker.
- Each task runs where its host and options say: as a module when its connection is not local after
  ``delegate_to``, it is ``async``, ``become`` is set, or its host's ``ansible_python_interpreter`` is another Python;
  in the worker on a local host whose interpreter is left to discovery.
"""

from __future__ import annotations

import datetime
import json
import os
import sys

import yaml
from hypothesis import example, given, strategies as st

from ecosystem_support import PRIMARY_KEY, REPO_ROOT

sys.path.append(os.path.join(REPO_ROOT, 'tests', 'laws'))
from laws import budget, fresh, holds, requests_sent, settled  # noqa: E402  pylint: disable=wrong-import-position
from test_bad_input import bad_tasks  # noqa: E402  pylint: disable=wrong-import-position
from test_laws import START, tasks  # noqa: E402  pylint: disable=wrong-import-position
import strategies as gen  # noqa: E402  pylint: disable=wrong-import-position

MISSING_CA = '/nonexistent/uptime-ca.pem'
CLOSED_PROXY = 'http://127.0.0.1:9'
OFF = {'UPTIME_RUN_IN_WORKER': 'false'}
# What is left to the drawn connection form: the controller's environment without the service's address and key.
NO_CONTROLLER_CONNECTION = {'UPTIME_API_URL': '', 'UPTIME_API_KEY': ''}


def literal(value):
    """Whether ``value`` holds no text Ansible would read as a template (task arguments in a playbook are templates)."""
    if isinstance(value, dict):
        return all(literal(item) for item in value.values())
    if isinstance(value, list):
        return all(literal(item) for item in value)
    return '{' not in str(value)


def keep_registered(count):
    """The last task of a drawn play: what the ``count`` tasks before it registered, into registered.json."""
    return {'name': 'Keep what each task registered', 'delegate_to': 'localhost', 'check_mode': False,
            'ansible.builtin.copy': {'dest': '{{ playbook_dir }}/registered.json', 'mode': '0600',
                                     'content': '{{ [%s] | to_json }}' % ', '.join('result_%d' % i for i in range(count))}}


@st.composite
def playbooks(draw):
    """(the play's YAML, the monitors the account holds, the controller's environment, ``--check --diff`` or not)."""
    monitors = draw(START.filter(literal))
    names = [each['name'] for each in monitors]
    drawn = draw(st.lists(st.one_of(tasks(names), tasks(names), bad_tasks().map(lambda task: task[:2])).filter(
        lambda task: literal(task[1])), min_size=1, max_size=4))
    connection = draw(st.sampled_from(['controller', 'arguments', 'module_defaults', 'environment']))
    delegated = draw(st.booleans())
    play = {'name': 'Drawn tasks', 'hosts': 'elsewhere' if delegated else 'localhost', 'gather_facts': False, 'tasks': []}
    service = {'api_url': '{{ service_url }}', 'api_key': '{{ service_key }}'}
    if connection == 'module_defaults':
        play['module_defaults'] = {'group/uptime.monitoring.all': service}
    if connection == 'environment':
        play['environment'] = {'UPTIME_API_URL': '{{ service_url }}', 'UPTIME_API_KEY': '{{ service_key }}'}
    for index, (module, args) in enumerate(drawn):
        task = {'name': 'Task %d' % index, 'uptime.monitoring.%s' % module: dict(args, **(service if connection == 'arguments' else {})),
                'register': 'result_%d' % index, 'ignore_errors': True}
        if delegated:
            task['delegate_to'] = 'localhost'
        extra = draw(st.sampled_from([None, None, 'no_log', 'loop', 'proxy', 'ca_bundle']))
        if extra == 'no_log':
            task['no_log'] = True
        elif extra == 'loop':  # twice in one worker process: nothing of the first run may reach the second
            task['loop'] = [1, 2]
        elif extra == 'proxy':  # every request through a proxy that is not there
            task['environment'] = {'HTTP_PROXY': CLOSED_PROXY, 'http_proxy': CLOSED_PROXY}
            task['uptime.monitoring.%s' % module]['retries'] = 0
        elif extra == 'ca_bundle':  # over TLS, with a CA bundle that is not there
            task['environment'] = {'REQUESTS_CA_BUNDLE': MISSING_CA}
            task['uptime.monitoring.%s' % module].update(api_url='https://127.0.0.1:9/', retries=0)
        play['tasks'].append(task)
    play['tasks'].append(keep_registered(len(drawn)))
    controller = {} if connection == 'controller' else NO_CONTROLLER_CONNECTION
    return yaml.safe_dump([play], allow_unicode=True, sort_keys=False), monitors, controller, draw(st.booleans())


INVENTORY = '''\
localhost ansible_connection=local ansible_python_interpreter="{{ ansible_playbook_python }}"
elsewhere ansible_host=192.0.2.1 ansible_connection=ssh
'''


def run_path(ansible, emulator, monitors, check, env):
    """One run of the play on a fresh account: the run, what its tasks registered and the requests it sent."""
    fresh(emulator, stored=[gen.record(args) for args in monitors])
    began = datetime.datetime.now(datetime.timezone.utc)
    run = ansible.playbook('play.yml', '-vvv', *(['--check', '--diff'] if check else []), '-e', 'service_url=%s' % emulator.url,
                           '-e', 'service_key=%s' % PRIMARY_KEY, inventory=ansible.write('hosts', INVENTORY), env=env, check=False)
    path = os.path.join(ansible.workdir, 'registered.json')
    assert os.path.exists(path), run
    with open(path, encoding='utf-8') as handle:
        registered = json.load(handle)
    os.remove(path)
    return run, settled(registered, began), requests_sent(emulator, began)


# The connection in the play's environment, and in a task's a proxy, then a CA bundle, that are not there.
THROUGH_THE_ENVIRONMENT = yaml.safe_dump([{
    'name': 'Drawn tasks', 'hosts': 'localhost', 'gather_facts': False,
    'environment': {'UPTIME_API_URL': '{{ service_url }}', 'UPTIME_API_KEY': '{{ service_key }}'},
    'tasks': [{'name': 'Task 0', 'uptime.monitoring.monitor_info': {'fields': ['name'], 'retries': 0}, 'register': 'result_0',
               'ignore_errors': True, 'environment': {'HTTP_PROXY': CLOSED_PROXY, 'http_proxy': CLOSED_PROXY}},
              {'name': 'Task 1', 'uptime.monitoring.monitor_info': {'api_url': 'https://127.0.0.1:9/', 'retries': 0},
               'register': 'result_1', 'ignore_errors': True, 'environment': {'REQUESTS_CA_BUNDLE': MISSING_CA}},
              {'name': 'Task 2', 'uptime.monitoring.monitor_info': {'fields': ['name']}, 'register': 'result_2'},
              keep_registered(3)]}], sort_keys=False)


@budget(3)
@given(case=playbooks())
@example(case=(THROUGH_THE_ENVIRONMENT, [gen.entry('web')], NO_CONTROLLER_CONNECTION, False))
def test_the_worker_registers_what_the_module_registers(ansible, emulator, case):
    play, monitors, controller, check = case
    ansible.write('play.yml', play)
    worker_run, worker_results, worker_requests = run_path(ansible, emulator, monitors, check, controller)
    module_run, module_results, module_requests = run_path(ansible, emulator, monitors, check, dict(controller, **OFF))
    shown = dict(play=play, check=check, controller=controller)
    holds(worker_results == module_results, 'the worker registers what the module registers',
          worker=worker_results, module=module_results, **shown)
    holds(worker_requests == module_requests, 'the worker sends the requests the module sends',
          worker=worker_requests, module=module_requests, **shown)
    tasks_run = sum(len(task.get('loop', [None])) for task in yaml.safe_load(play)[0]['tasks']
                    if any(key.startswith('uptime.monitoring.') for key in task))
    holds(worker_run.output.count('runs inside the worker') == tasks_run, 'each task runs in the worker when it can',
          output=worker_run.output[-3000:], **shown)
    holds(module_run.output.count('runs as a module: UPTIME_RUN_IN_WORKER is false') == tasks_run,
          'UPTIME_RUN_IN_WORKER=false runs each task as a module', output=module_run.output[-3000:], **shown)


WHERE = '''\
- name: Where each task runs
  hosts: localhost
  gather_facts: false
  tasks:
    - name: On the implicit localhost
      uptime.monitoring.monitor_info: {fields: [name]}
    - name: With the controller's Python named
      uptime.monitoring.monitor_info: {fields: [name]}
      vars: {ansible_python_interpreter: "{{ ansible_playbook_python }}"}
    - name: With another Python
      uptime.monitoring.monitor_info: {fields: [name]}
      vars: {ansible_python_interpreter: /usr/bin/env python3}
      ignore_errors: true
    - name: Async
      uptime.monitoring.monitor_info: {fields: [name]}
      async: 30
      poll: 1
    - name: With become
      uptime.monitoring.monitor_info: {fields: [name]}
      become: true
      vars: {ansible_become_exe: /bin/false}
      ignore_errors: true
    - name: Delegated to a host over ssh
      uptime.monitoring.monitor_info: {fields: [name]}
      delegate_to: elsewhere
      ignore_unreachable: true
- name: On another host
  hosts: elsewhere
  gather_facts: false
  tasks:
    - name: Delegated to localhost
      uptime.monitoring.monitor_info: {fields: [name]}
      delegate_to: localhost
- name: On a local host whose Python is left to discovery
  hosts: plain
  gather_facts: false
  tasks:
    - name: Its interpreter not set
      uptime.monitoring.monitor_info: {fields: [name]}
'''
# What -vvv says of each task, in order.
WHERE_SAID = ['runs inside the worker', 'runs inside the worker',
              "runs as a module: ansible_python_interpreter is /usr/bin/env python3, not the controller's",
              'runs as a module: the task is async', 'runs as a module: become is set',
              'runs as a module: the connection is ssh, not local', 'runs inside the worker', 'runs inside the worker']


def test_each_task_runs_where_its_host_and_options_say(ansible):
    # No localhost in the inventory: Ansible's implicit one, with the controller's Python.
    hosts = 'elsewhere ansible_host=127.0.0.1 ansible_port=9 ansible_connection=ssh\nplain ansible_connection=local\n'
    run = ansible.playbook(ansible.write('where.yml', WHERE), '-vvv', inventory=ansible.write('hosts', hosts), check=False)
    said = [line.split('uptime.monitoring.monitor_info ', 1)[1] for line in run.output.splitlines()
            if line.startswith('uptime.monitoring.monitor_info runs ')]
    assert len(said) == len(WHERE_SAID), run
    for line, expected in zip(said, WHERE_SAID):
        assert line.startswith(expected), (line, expected)
