"""Benchmark: what one task of the collection costs, against a hand-written ansible.builtin.uri GET of the same search.

Usage (from the repository root; the nox session benchmark runs it in its virtualenv):

    ./scripts/test.sh -s benchmark -- tasks.py                             # 7 runs of each playbook
    ./scripts/test.sh -s benchmark -- tasks.py --runs 3                    # a smoke run
    ./scripts/test.sh -s benchmark -- tasks.py --update-doc docs/performance.md

Each playbook holds 10 tasks of one kind, on the implicit localhost, against the emulator holding the monitor ``web``
and its acknowledged incident; every task changes nothing:

    uri           ansible.builtin.uri GET /api/v1/monitors?search=web&search_by=name (the yardstick)
    debug         ansible.builtin.debug (what Ansible itself costs a task: the floor)
    monitor       uptime.monitoring.monitor, web as it is
    monitor_info  uptime.monitoring.monitor_info name=web
    incident      uptime.monitoring.incident, web's incident as it is
    monitors      uptime.monitoring.monitors state=merged, config [web as it is]
    monitor-python  monitor, with ansible_python_interpreter the controller's Python under its other name
    monitor as a module, monitor_info as a module: the same with UPTIME_RUN_IN_WORKER=false

The playbooks run in turn (one of each, then again), so that a slow moment of the machine falls on all alike; each
figure is the median wall time of ansible-playbook over the runs, and its ratio to the uri playbook's median. The
request counts are checked (one search a task for uri, the same reads for a task in the worker as for a module);
times are printed, never checked.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
sys.path.insert(0, HERE)

from emulator.control import PRIMARY_KEY, Emulator  # noqa: E402  pylint: disable=wrong-import-position
from run import ANSIBLE_SETTINGS, collections_path, update_doc  # noqa: E402  pylint: disable=wrong-import-position

TASKS = 10
WEB = {'name': 'web', 'url': 'https://web.example.com/health', 'interval': 300,
       'alerts': [{'key': 'email', 'value': 'ops@example.com'}]}
STARTED = '2026-11-20T08:15:00'
SEARCH = "{{ lookup('ansible.builtin.env', 'UPTIME_API_URL') }}/api/v1/monitors?search=web&search_by=name"
# The controller's Python under its other name in its folder (python beside python3), as an inventory sets
# ansible_python_interpreter: the same Python, which the worker runs.
SIBLING = os.path.join(os.path.dirname(sys.executable), 'python3' if os.path.basename(sys.executable) == 'python' else 'python')
# name -> (label, the task, environment beside the benchmark's)
KINDS = {
    'uri': ('ansible.builtin.uri GET (the yardstick)',
            {'ansible.builtin.uri': {'url': SEARCH, 'headers': {
                'Authorization': "Bearer {{ lookup('ansible.builtin.env', 'UPTIME_API_KEY') }}", 'Accept': 'application/json'}}},
            {}),
    'debug': ('ansible.builtin.debug (the floor)', {'ansible.builtin.debug': {'msg': 'nothing'}}, {}),
    'monitor': ('monitor, no change', {'uptime.monitoring.monitor': WEB}, {}),
    'monitor_info': ('monitor_info name=web', {'uptime.monitoring.monitor_info': {'name': 'web'}}, {}),
    'incident': ('incident, no change', {'uptime.monitoring.incident': {'monitor': 'web', 'started_at': STARTED}}, {}),
    'monitors': ('monitors merged [web], no change', {'uptime.monitoring.monitors': {'config': [WEB]}}, {}),
    'monitor-python': ('monitor, no change, the interpreter named as inventories name it',
                       {'uptime.monitoring.monitor': WEB}, {'ANSIBLE_PYTHON_INTERPRETER': SIBLING}),
    'monitor-module': ('monitor, no change, as a module', {'uptime.monitoring.monitor': WEB}, {'UPTIME_RUN_IN_WORKER': 'false'}),
    'monitor_info-module': ('monitor_info name=web, as a module', {'uptime.monitoring.monitor_info': {'name': 'web'}},
                            {'UPTIME_RUN_IN_WORKER': 'false'}),
}
DOC_START, DOC_END = '<!-- tasks:start -->', '<!-- tasks:end -->'


def playbook(task):
    play = {'name': 'Ten tasks', 'hosts': 'localhost', 'gather_facts': False,
            'tasks': [dict({'name': 'Task %d' % number}, **task) for number in range(TASKS)]}
    return yaml.safe_dump([play], sort_keys=False)


def seed(emulator):
    """The monitor web and its acknowledged incident, as the tasks describe them."""
    emulator.reset()
    form = {'name': WEB['name'], 'url': WEB['url'], 'interval': WEB['interval'], 'alert_condition': 'url_unavailable', 'request_method': 'GET',
            'alerts[0][key]': 'email', 'alerts[0][value]': 'ops@example.com'}
    emulator.api('POST', '/api/v1/monitors', api_key=PRIMARY_KEY, data=form)
    emulator.records(incidents=[{'monitor': 'web', 'started_at': STARTED, 'acknowledged_at': STARTED}])


def play(emulator, env, workdir, kind):
    """Run the playbook of ``kind`` once: (seconds, requests logged, writes logged)."""
    path = os.path.join(workdir, kind + '.yml')
    command = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), path]
    emulator.clear_log()
    started = time.monotonic()
    done = subprocess.run(command, env=dict(env, **KINDS[kind][2]), cwd=workdir, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0 or 'changed=0' not in done.stdout:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit('%s: the playbook failed or changed something' % kind)
    log = emulator.log()
    return seconds, len(log), sum(entry['method'] != 'GET' for entry in log)


def table(medians, requests):
    yardstick = medians['uri']
    lines = ['| %d tasks of | median (s) | × %d uri tasks | requests |' % (TASKS, TASKS), '|---|---:|---:|---:|']
    for kind, seconds in medians.items():
        lines.append('| %s | %.2f | %.2f | %d |' % (KINDS[kind][0], seconds, seconds / yardstick, requests[kind]))
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=int, default=7, help='runs of each playbook, taken in turn (default 7)')
    parser.add_argument('--kinds', nargs='+', choices=list(KINDS), default=list(KINDS), help='the playbooks (default all)')
    parser.add_argument('--collections-path', help='ANSIBLE_COLLECTIONS_PATH holding the collection '
                                                   '(default: a link to this checkout under build/benchmark)')
    parser.add_argument('--update-doc', metavar='PATH', help='write the table into PATH between %s and %s' % (DOC_START, DOC_END))
    args = parser.parse_args(argv)
    kinds = ['uri'] + [kind for kind in args.kinds if kind != 'uri']
    emulator = Emulator.start(api_keys=(PRIMARY_KEY,))
    times = {kind: [] for kind in kinds}
    requests = {}
    failures = []
    try:
        with tempfile.TemporaryDirectory(prefix='uptime-tasks-') as workdir:
            env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path(args.collections_path), UPTIME_API_URL=emulator.url,
                       UPTIME_API_KEY=PRIMARY_KEY, ANSIBLE_LOCALHOST_WARNING='False', **ANSIBLE_SETTINGS)
            for kind in kinds:
                with open(os.path.join(workdir, kind + '.yml'), 'w', encoding='utf-8') as handle:
                    handle.write(playbook(KINDS[kind][1]))
            seed(emulator)
            print('ansible settings: %s; %d runs of each playbook, in turn' % (
                ' '.join('%s=%s' % item for item in sorted(ANSIBLE_SETTINGS.items())), args.runs), flush=True)
            for run in range(args.runs):
                for kind in kinds:
                    seconds, count, writes = play(emulator, env, workdir, kind)
                    times[kind].append(seconds)
                    if writes:
                        failures.append('%s wrote %d times' % (kind, writes))
                    if requests.setdefault(kind, count) != count:
                        failures.append('%s sent %d requests, then %d' % (kind, requests[kind], count))
                print('  run %d: %s' % (run + 1, '  '.join('%s %.2f s' % (kind, times[kind][-1]) for kind in kinds)), flush=True)
    finally:
        emulator.stop()
    if requests.get('uri') != TASKS:
        failures.append('the uri playbook sent %s requests, not one a task' % requests.get('uri'))
    for kind in kinds:
        module = kind + '-module'
        if module in requests and requests[module] != requests[kind]:
            failures.append('%s sent %d requests in the worker, %d as a module' % (kind, requests[kind], requests[module]))
    text = table({kind: statistics.median(times[kind]) for kind in kinds}, requests)
    print('\n' + text + '\n')
    print('\n'.join(failures) if failures else 'request counts: as expected (no write; the same reads in the worker as a module)')
    if args.update_doc:
        update_doc(args.update_doc, text, DOC_START, DOC_END)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
