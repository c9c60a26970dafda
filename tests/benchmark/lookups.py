"""Benchmark: the lookups at a platform's scale, against an emulator that keeps the service's rate limit (120 requests
a minute per account).

Usage (from the repository root; the nox session benchmark runs its small form):

    ./scripts/test.sh -s benchmark -- lookups.py                           # 200 hosts, 2,000 monitors
    ./scripts/test.sh -s benchmark -- lookups.py --hosts 20 --monitors 200
    ./scripts/test.sh -s benchmark -- lookups.py --update-doc docs/performance.md

Two plays, each run once on one host (one evaluation of its lookup) and once on many, with what a lookup read kept
for the run (``cache_seconds``, 30 by default) and without (0):

    when    every host, forks 50: a task with ``when: query('uptime.monitoring.monitors', name='web-00001')``
    vars    12 hosts: play variables ``down: "{{ query('uptime.monitoring.monitors', status='offline') }}"``, used by
            two tasks (Ansible evaluates such a variable again for each host and task)

It fails when a play with the lookups' default sends more than 2 requests beyond one evaluation (and one more
evaluation each time ``cache_seconds`` passes during the play), or meets a 429; times are printed, never checked.
"""

from __future__ import annotations

import argparse
import os
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

RATE_LIMIT = 120
DOC_START, DOC_END = '<!-- lookups:start -->', '<!-- lookups:end -->'


def plays(hosts):
    when = [{'name': 'A when on every host', 'hosts': 'all', 'gather_facts': False, 'tasks': [
        {'name': 'Only while web-00001 is watched', 'ansible.builtin.debug': {'msg': 'watched'},
         'when': "query('uptime.monitoring.monitors', name='web-00001', fields=['status']) | length > 0"}]}]
    lazy = [{'name': 'Play variables', 'hosts': 'all[0:%d]' % (min(hosts, 12) - 1), 'gather_facts': False,
             'vars': {'down': "{{ query('uptime.monitoring.monitors', status='offline', fields=['name']) }}"},
             'tasks': [{'name': 'Count what is down', 'ansible.builtin.debug': {'msg': '{{ down | length }} down'}},
                       {'name': 'Name it', 'ansible.builtin.debug': {'msg': "{{ down | map(attribute='name') | join(', ') }}"}}]}]
    return {'when': when, 'vars': lazy}


def run_play(emulator, env, workdir, name, inventory, cache):
    """(seconds, requests, 429s) of one run of play ``name`` on ``inventory``."""
    emulator.clear_log()
    started = time.monotonic()
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', inventory, '--forks', '50',
                           os.path.join(workdir, name + '.yml')], env=dict(env, UPTIME_LOOKUP_CACHE_SECONDS=str(cache)), cwd=workdir,
                          capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit('%s: the play failed' % name)
    log = emulator.log()
    return seconds, len(log), sum(entry['status'] == 429 for entry in log)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--hosts', type=int, default=200, help='hosts of the when play (default 200)')
    parser.add_argument('--monitors', type=int, default=2000, help='monitors of the account (default 2000)')
    parser.add_argument('--collections-path', help='ANSIBLE_COLLECTIONS_PATH holding the collection')
    parser.add_argument('--update-doc', metavar='PATH', help='write the table into PATH between %s and %s' % (DOC_START, DOC_END))
    args = parser.parse_args(argv)
    emulator = Emulator.start(api_keys=(PRIMARY_KEY,))
    rows, failures = [], []
    try:
        emulator.records(monitors=[{'name': 'web-%05d' % number, 'url': 'https://web-%05d.example.com/' % number,
                                    'interval': 300, 'request_method': 'GET', 'alert_condition': 'url_unavailable'}
                                   for number in range(args.monitors)])
        emulator.rate_limit(RATE_LIMIT)
        with tempfile.TemporaryDirectory(prefix='uptime-lookups-') as workdir:
            env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path(args.collections_path), UPTIME_API_URL=emulator.url,
                       UPTIME_API_KEY=PRIMARY_KEY, ANSIBLE_LOCALHOST_WARNING='False', **ANSIBLE_SETTINGS)
            with open(os.path.join(workdir, 'one'), 'w', encoding='utf-8') as handle:
                handle.write('host00001 ansible_connection=local\n')
            with open(os.path.join(workdir, 'many'), 'w', encoding='utf-8') as handle:
                handle.write(''.join('host%05d ansible_connection=local\n' % number for number in range(1, args.hosts + 1)))
            for name, play in plays(args.hosts).items():
                with open(os.path.join(workdir, name + '.yml'), 'w', encoding='utf-8') as handle:
                    handle.write(yaml.safe_dump(play, sort_keys=False))
                dummy, once, dummy = run_play(emulator, env, workdir, name, 'one', 30)
                hosts = args.hosts if name == 'when' else min(args.hosts, 12)
                for cache in (30, 0):
                    emulator.rate_limit(0)
                    emulator.rate_limit(RATE_LIMIT)  # a new window: each run starts with the whole minute's budget
                    seconds, requests, refused = run_play(emulator, env, workdir, name, 'many', cache)
                    rows.append('| %s | %d | %s | %d | %d | %d | %.1f |' % (
                        name, hosts, 'off' if cache == 0 else '%d s' % cache, once, requests, refused, seconds))
                    print(rows[-1], flush=True)
                    # Each time the bound passes during the run (a slow machine), one evaluation more may be read.
                    allowed = once * (int(seconds // cache) + 1) + 2 if cache else None
                    if cache and (requests > allowed or refused):
                        failures.append('%s: %d requests for %d of one evaluation (%d allowed in %.0f s), %d answered 429'
                                        % (name, requests, once, allowed, seconds, refused))
    finally:
        emulator.stop()
    text = '\n'.join(['| play | hosts | cache_seconds | requests, one host | requests | 429 | seconds |',
                      '|---|---:|---|---:|---:|---:|---:|'] + rows)
    print('\n' + text + '\n')
    print('\n'.join(failures) if failures else 'requests: within 2 of one evaluation with the default, no 429')
    if args.update_doc:
        update_doc(args.update_doc, text, DOC_START, DOC_END)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
