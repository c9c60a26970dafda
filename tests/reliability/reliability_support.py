"""Helpers shared by the reliability tests: reading and seeding the emulator, running ansible-playbook."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUTPUT_DIR = os.path.join(REPO_ROOT, 'tests', 'output', 'reliability')
# The collection under test, staged (nox sessions stage a copy of their own).
COLLECTIONS_DIR = os.environ.get('UPTIME_COLLECTIONS') or os.path.join(REPO_ROOT, 'build', 'collections')
MONITORS = '/api/v1/monitors'
INCIDENTS = '/api/v1/incidents'


def list_all(emulator, path):
    records, page = [], 1
    while True:
        body = emulator.api('GET', path, params={'per_page': 100, 'page': page}).json
        records.extend(body['data'])
        if body['meta']['current_page'] >= body['meta']['last_page']:
            return records
        page += 1


def seed_monitor(emulator, name, **extra):
    fields = dict({'name': name, 'url': 'https://%s.example.com/health' % name, 'interval': 60, 'request_method': 'GET',
                   'alert_condition': 'url_unavailable'}, **extra)
    return emulator.records(monitors=[fields])['monitors'][0]


def utc_ago(**delta):
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    return (now - datetime.timedelta(**delta)).strftime('%Y-%m-%dT%H:%M:%S')


def ansible_playbook():
    candidate = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    return candidate if os.path.exists(candidate) else 'ansible-playbook'


def playbook_env(extra=None):
    """The environment of an ansible-playbook run against the staged collection."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_DIR, ANSIBLE_NOCOLOR='1', ANSIBLE_RETRY_FILES_ENABLED='0',
               ANSIBLE_HOST_KEY_CHECKING='0', ANSIBLE_LOCAL_TEMP=os.path.join(OUTPUT_DIR, 'ansible-tmp', 'local'),
               ANSIBLE_REMOTE_TEMP=os.path.join(OUTPUT_DIR, 'ansible-tmp', 'remote'), PYTHONUNBUFFERED='1')
    env.pop('ANSIBLE_FORCE_COLOR', None)
    env.update(extra or {})
    return env


def run_playbook(args, log_path, env=None, timeout=600):
    """Run ``ansible-playbook ARGS``, its output kept in ``log_path``; returns ``(returncode, seconds, output)``."""
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    start = time.monotonic()
    try:
        done = subprocess.run([ansible_playbook()] + list(args), cwd=REPO_ROOT, env=playbook_env(env), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, check=False)
        returncode, output = done.returncode, done.stdout.decode('utf-8', 'replace')
    except subprocess.TimeoutExpired as exc:
        returncode, output = None, (exc.output or b'').decode('utf-8', 'replace') + '\n(timed out)'
    with open(log_path, 'w', encoding='utf-8') as handle:
        handle.write(output)
    return returncode, time.monotonic() - start, output


def recap(output):
    """``{host: {ok, changed, failed, ...}}`` from the PLAY RECAP of a playbook run."""
    hosts, in_recap = {}, False
    for line in output.splitlines():
        in_recap = in_recap or line.startswith('PLAY RECAP')
        if in_recap and ':' in line and '=' in line:
            host, counts = line.split(':', 1)
            hosts[host.strip()] = {key: int(value) for key, value in (pair.split('=') for pair in counts.split())}
    return hosts
