"""Helpers shared by the reliability tests: running a module in-process, seeding, snapshots, recording."""

from __future__ import annotations

import datetime
import io
import json
import os
import subprocess
import sys
import time
import traceback
from contextlib import redirect_stdout

from ansible.module_utils.common import warnings as module_warnings
from ansible.module_utils.testing import patch_module_args

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
OUTPUT_DIR = os.path.join(REPO_ROOT, 'tests', 'output', 'reliability')
RESULTS_DIR = os.path.join(OUTPUT_DIR, 'results')
# The collection under test, staged (nox sessions stage a copy of their own).
COLLECTIONS_DIR = os.environ.get('UPTIME_COLLECTIONS') or os.path.join(REPO_ROOT, 'build', 'collections')

MONITORS = '/api/v1/monitors'
INCIDENTS = '/api/v1/incidents'
TS = '%Y-%m-%dT%H:%M:%S'


# -- recording ---------------------------------------------------------------------------

# The running test's place in the collection (conftest.py sets it): report.py orders rows by it, so that the report
# reads the same whichever pytest-xdist worker recorded a row first.
RUNNING = {'order': 0}


def record(group, key, **row):
    """Append one result row to tests/output/reliability/results/<group>.jsonl (the last row of a key wins)."""
    os.makedirs(RESULTS_DIR, exist_ok=True)
    row = dict(row, group=group, key=key, order=RUNNING['order'])
    with open(os.path.join(RESULTS_DIR, '%s.jsonl' % group), 'a', encoding='utf-8') as handle:
        handle.write(json.dumps(row, sort_keys=True) + '\n')


# -- running a module in-process -----------------------------------------------------------

class ModuleRun:
    """What one in-process module run produced: the JSON result, or the traceback of a crash."""

    def __init__(self, result=None, crash=None, stdout='', seconds=0.0):
        self.result = result or {}
        self.crash = crash
        self.stdout = stdout
        self.seconds = seconds

    @property
    def failed(self):
        return self.crash is not None or bool(self.result.get('failed'))

    @property
    def msg(self):
        return str(self.result.get('msg', ''))

    def __repr__(self):
        return '<ModuleRun crash=%r result=%s>' % (self.crash and self.crash[-300:], json.dumps(self.result)[:600])


def run_module(main, args, check_mode=False):
    """Run ``main()`` of a module with ``args`` like Ansible would, catching its exit.

    Any exception other than the module's own exit counts as a crash (a Python traceback
    the user would see).
    """
    args = dict(args)
    # Warnings are kept per process, as a module process runs once: start each in-process run afresh.
    module_warnings._global_warnings.clear()  # pylint: disable=protected-access
    module_warnings._global_deprecations.clear()  # pylint: disable=protected-access
    if check_mode:
        args['_ansible_check_mode'] = True
    out = io.StringIO()
    start = time.monotonic()
    crash = None
    try:
        with patch_module_args(args), redirect_stdout(out):
            main()
    except SystemExit:
        pass
    except BaseException:  # pylint: disable=broad-except  # what a user would see as a traceback
        crash = traceback.format_exc()
    seconds = time.monotonic() - start
    text = out.getvalue()
    result = None
    if crash is None:
        try:
            result = json.loads(text)
        except ValueError:
            crash = 'module printed no JSON result:\n' + text
    return ModuleRun(result, crash, text, seconds)


# -- service state -----------------------------------------------------------------------

def api_ok(emulator, method, path, **kwargs):
    answer = emulator.api(method, path, **kwargs)
    if answer.status >= 300:
        raise AssertionError('%s %s: %s' % (method, path, answer))
    return answer.json


def list_all(emulator, path, params=None):
    """Every record of a list, straight from the emulator (all pages)."""
    records, page = [], 1
    while True:
        query = dict(params or {}, per_page=100, page=page)
        body = api_ok(emulator, 'GET', path, params=query)
        records.extend(body['data'])
        if body['meta']['current_page'] >= body['meta']['last_page']:
            return records
        page += 1


def snapshot(emulator):
    """The whole account as comparable data (monitors and incidents, without bookkeeping times)."""
    def clean(record):
        record = {key: value for key, value in record.items() if key not in ('created_at', 'updated_at', 'duration')}
        if isinstance(record.get('monitor'), dict):
            record['monitor'] = record['monitor'].get('id')
        return record
    monitors = sorted((clean(record) for record in list_all(emulator, MONITORS)), key=lambda r: r['id'])
    incidents = sorted((clean(record) for record in list_all(emulator, INCIDENTS)), key=lambda r: r['id'])
    return {'monitors': monitors, 'incidents': incidents}


def monitor_fields(name, url=None, interval=60, **extra):
    fields = {'name': name, 'url': url or 'https://%s.example.com/health' % name, 'interval': interval,
              'request_method': 'GET', 'alert_condition': 'url_unavailable'}
    fields.update(extra)
    return fields


def seed_monitor(emulator, name, **extra):
    return api_ok(emulator, 'POST', MONITORS, data=monitor_fields(name, **extra))['data']


def seed_incident(emulator, monitor_id, started_at, **extra):
    fields = dict({'monitor_id': monitor_id, 'started_at': started_at}, **extra)
    return api_ok(emulator, 'POST', INCIDENTS, data=fields)['data']


def utc_ago(**delta):
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    return (now - datetime.timedelta(**delta)).strftime(TS)


# -- ansible-playbook runs ---------------------------------------------------------------

def ansible_playbook():
    candidate = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    return candidate if os.path.exists(candidate) else 'ansible-playbook'


def playbook_env(extra=None):
    """The environment of an ansible-playbook run against the staged collection."""
    env = dict(os.environ)
    env.update(
        ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_DIR,
        ANSIBLE_NOCOLOR='1',
        ANSIBLE_RETRY_FILES_ENABLED='0',
        ANSIBLE_HOST_KEY_CHECKING='0',
        ANSIBLE_LOCAL_TEMP=os.path.join(OUTPUT_DIR, 'ansible-tmp', 'local'),
        ANSIBLE_REMOTE_TEMP=os.path.join(OUTPUT_DIR, 'ansible-tmp', 'remote'),
        PYTHONUNBUFFERED='1',
    )
    env.pop('ANSIBLE_FORCE_COLOR', None)
    env.update(extra or {})
    return env


def start_playbook(args, log_path, env=None, cwd=REPO_ROOT):
    """Start ``ansible-playbook ARGS`` with its output going to ``log_path``; returns the Popen."""
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    log = open(log_path, 'wb')  # pylint: disable=consider-using-with  # closed by finish_playbook
    command = [ansible_playbook()] + list(args)
    log.write(('$ %s\n' % ' '.join(command)).encode())
    log.flush()
    process = subprocess.Popen(command, cwd=cwd, env=playbook_env(env), stdin=subprocess.DEVNULL,  # pylint: disable=consider-using-with
                               stdout=log, stderr=subprocess.STDOUT)
    process.log_handle = log
    process.log_path = log_path
    process.started = time.monotonic()
    return process


def finish_playbook(process, timeout):
    """Wait for a playbook started by ``start_playbook``; returns ``(returncode, seconds, output)``."""
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    seconds = time.monotonic() - process.started
    process.log_handle.close()
    with open(process.log_path, encoding='utf-8', errors='replace') as handle:
        output = handle.read()
    return process.returncode, seconds, output


def recap(output):
    """``{host: {ok, changed, failed, ...}}`` from the PLAY RECAP of a playbook run."""
    hosts, in_recap = {}, False
    for line in output.splitlines():
        if line.startswith('PLAY RECAP'):
            in_recap = True
            continue
        if in_recap and ':' in line and '=' in line:
            host, counts = line.split(':', 1)
            hosts[host.strip()] = {key: int(value) for key, value in
                                   (pair.split('=') for pair in counts.split())}
    return hosts
