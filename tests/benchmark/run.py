"""Benchmark: syncing N monitors three ways, against the service emulator.

Usage (from the repository root; the nox session benchmark runs it in its virtualenv):

    ./scripts/test.sh -s benchmark -- run.py                      # N = 200 and 1000 (takes about an hour)
    ./scripts/test.sh -s benchmark -- run.py --n 20               # a smoke run (under a minute)
    ./scripts/test.sh -s benchmark -- run.py --update-doc docs/performance.md
    ./scripts/test.sh -s benchmark -- run.py --n 300 --approaches bulk --rate-limit 120

For each N, on an emulator reset before each approach:

    (a) loop    a loop of uptime.monitoring.monitor tasks (one task per monitor)
    (b) bulk    one uptime.monitoring.monitors task
    (c) uri     a hand-written playbook with ansible.builtin.uri (search, then POST or PUT)

each run three times: the first run (creates every monitor), a second run (no change) and a run
that changes 10 % of the monitors. It prints, per run, the wall time of ansible-playbook and the
HTTP requests the emulator logged (refused ones included), then checks the request counts of (b): one read per 100
monitors, one write per created or updated monitor. The exit status is 1 when a check fails;
times are reported, never checked.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests'))

from emulator.control import PRIMARY_KEY, Emulator  # noqa: E402  pylint: disable=wrong-import-position

APPROACHES = {'loop': '(a) loop of monitor tasks', 'bulk': '(b) one monitors task', 'uri': '(c) ansible.builtin.uri playbook'}
RUNS = (('create', 'first run (create all)'), ('same', 'second run (no change)'), ('change', 'change 10 %'))
# What a user with many monitors would set: pipelining (no temporary module files, one process
# a task), no per-item "skipped" lines. Forks do not help: every task runs on one host, localhost.
ANSIBLE_SETTINGS = {'ANSIBLE_PIPELINING': 'True', 'ANSIBLE_DISPLAY_SKIPPED_HOSTS': 'False', 'ANSIBLE_NOCOLOR': '1',
                    'ANSIBLE_RETRY_FILES_ENABLED': 'False'}
READ_PAGE = 100
DOC_START, DOC_END = '<!-- benchmark:start -->', '<!-- benchmark:end -->'


def monitors(count, changed=False):
    """``count`` monitors; with ``changed``, every tenth one gets another interval."""
    fleet = []
    for number in range(count):
        fleet.append({'name': 'bench-%05d' % number, 'url': 'https://host-%05d.example.com/health' % number,
                      'interval': 600 if changed and number % 10 == 0 else 300,
                      'alerts': [{'key': 'email', 'value': 'oncall-%d@example.com' % (number % 7)}]})
    return fleet


def collections_path(explicit):
    """A directory holding ansible_collections/uptime/monitoring that points at this checkout."""
    if explicit:
        return explicit
    parts = ROOT.split(os.sep)
    if len(parts) >= 3 and parts[-3] == 'ansible_collections':
        return os.sep.join(parts[:-3])
    base = os.path.join(ROOT, 'build', 'benchmark', 'collections')
    link = os.path.join(base, 'ansible_collections', 'uptime', 'monitoring')
    if os.path.realpath(link) != os.path.realpath(ROOT):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(ROOT, link)
    return base


class Bench:
    """Runs the playbooks against one emulator and counts what they sent."""

    def __init__(self, emulator, collections, workdir, workers, rate_limit=0, verbose=False):
        self.emulator, self.rate_limit, self.workdir, self.workers, self.verbose = emulator, rate_limit, workdir, workers, verbose
        self.env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, UPTIME_API_URL=emulator.url,
                        UPTIME_API_KEY=PRIMARY_KEY, **ANSIBLE_SETTINGS)
        self.playbook = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')

    def play(self, approach, fleet):
        """Run one playbook; returns (seconds, requests, writes, refused with 429)."""
        extra = os.path.join(self.workdir, 'vars.json')
        with open(extra, 'w', encoding='utf-8') as handle:
            json.dump({'monitors': fleet, 'bulk_workers': self.workers}, handle)
        command = [self.playbook, '-i', 'localhost,', '-c', 'local',
                   '-e', 'ansible_python_interpreter=%s' % sys.executable, '-e', '@' + extra,
                   os.path.join(HERE, 'playbooks', approach + '.yml')]
        self.emulator.clear_log()
        started = time.monotonic()
        done = subprocess.run(command, env=self.env, cwd=self.workdir, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - started
        if done.returncode != 0 or self.verbose:
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        if done.returncode != 0:
            raise SystemExit('%s playbook failed (exit %d)' % (approach, done.returncode))
        log = self.emulator.log()
        refused = [entry for entry in log if entry['status'] == 429]
        writes = [entry for entry in log if entry['method'] in ('POST', 'PUT', 'PATCH', 'DELETE') and entry['status'] != 429]
        return seconds, len(log), len(writes), len(refused)

    def measure(self, approach, count):
        self.emulator.reset()
        if self.rate_limit:
            self.emulator.rate_limit(self.rate_limit)
        results = {}
        for run, dummy in RUNS:
            results[run] = self.play(approach, monitors(count, changed=(run == 'change')))
            print('  N=%-5d %-34s %-24s %8.1f s %6d requests %6d writes %5d refused (429)'
                  % ((count, APPROACHES[approach], dict(RUNS)[run]) + results[run]), flush=True)
        return results


def expected_bulk_requests(count):
    """Requests of (b): one read per page of 100 (at least one), one write per created or updated monitor."""
    reads_empty, reads_full = 1, max(1, math.ceil(count / READ_PAGE))
    changed = len([number for number in range(count) if number % 10 == 0])
    return {'create': (reads_empty + count, count), 'same': (reads_full, 0), 'change': (reads_full + changed, changed)}


def check(measured):
    """The request-count targets of (b); returns the lines of failures."""
    failures = []
    for count, by_approach in measured.items():
        if 'bulk' not in by_approach:
            continue
        for run, (requests, writes) in expected_bulk_requests(count).items():
            got, refused = by_approach['bulk'][run][1:3], by_approach['bulk'][run][3]
            if got != (requests + refused, writes):
                failures.append('N=%d %s: (b) sent %d requests (%d writes), expected %d (%d writes)'
                                % ((count, run) + got + (requests, writes)))
        same = by_approach['bulk']['same']
        if count >= 1000 and same[1] - same[3] > 11:
            failures.append('N=%d: a no-change sync took %d requests, the target is at most 11' % (count, same[1] - same[3]))
    return failures


def table(measured, approaches):
    """The results as a Markdown table."""
    head = ['N', 'run'] + ['%s: time, requests' % APPROACHES[name] for name in approaches]
    if 'loop' in approaches and 'bulk' in approaches:
        head.append('(a) time / (b) time')
    lines = ['| %s |' % ' | '.join(head), '|%s|' % '|'.join(['---:', '---'] + ['---:'] * (len(head) - 2))]
    for count, by_approach in measured.items():
        for run, label in RUNS:
            cells = [str(count), label]
            for name in approaches:
                seconds, requests = by_approach[name][run][:2]
                cells.append('%.1f s, %d' % (seconds, requests))
            if len(head) > len(cells):
                cells.append('%.0f×' % (by_approach['loop'][run][0] / by_approach['bulk'][run][0]))
            lines.append('| %s |' % ' | '.join(cells))
    return '\n'.join(lines)


def update_doc(path, text, start=DOC_START, end=DOC_END):
    """Put ``text`` between the lines ``start`` and ``end`` of the document at ``path``."""
    with open(path, encoding='utf-8') as handle:
        content = handle.read()
    pattern = re.compile(re.escape(start) + '.*?' + re.escape(end), re.DOTALL)
    if not pattern.search(content):
        raise SystemExit('%s has no %s ... %s block to replace' % (path, start, end))
    content = pattern.sub(lambda match: '%s\n%s\n%s' % (start, text, end), content)
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write(content)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', 1)[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--n', type=int, nargs='+', default=[200, 1000], metavar='N',
                        help='monitor counts to measure (default: 200 1000)')
    parser.add_argument('--approaches', nargs='+', choices=list(APPROACHES), default=list(APPROACHES),
                        help='approaches to measure (default: all three)')
    parser.add_argument('--workers', type=int, default=4, help='workers option of the monitors task (default 4)')
    parser.add_argument('--rate-limit', type=int, default=0, metavar='PER_MINUTE',
                        help='make the emulator refuse more than this many requests a minute with 429 and '
                             'Retry-After, as the real service does at 120 (default: no limit)')
    parser.add_argument('--collections-path', help='ANSIBLE_COLLECTIONS_PATH holding the collection '
                                                   '(default: a link to this checkout under build/benchmark)')
    parser.add_argument('--update-doc', metavar='PATH',
                        help='write the table into PATH between %s and %s' % (DOC_START, DOC_END))
    parser.add_argument('-v', '--verbose', action='store_true', help='print the output of every playbook')
    args = parser.parse_args(argv)

    collections = collections_path(args.collections_path)
    emulator = Emulator.start(api_keys=(PRIMARY_KEY,))
    measured = {}
    try:
        with tempfile.TemporaryDirectory(prefix='uptime-bench-') as workdir:
            bench = Bench(emulator, collections, workdir, args.workers, args.rate_limit, args.verbose)
            print('ansible settings: %s' % ' '.join('%s=%s' % item for item in sorted(ANSIBLE_SETTINGS.items())))
            if args.rate_limit:
                print('emulator rate limit: %d requests a minute' % args.rate_limit)
            for count in args.n:
                measured[count] = {name: bench.measure(name, count) for name in args.approaches}
    finally:
        emulator.stop()

    text, failures = table(measured, args.approaches), check(measured)
    print('\n' + text + '\n')
    print('\n'.join(failures) if failures else 'request counts of (b): as expected (one read per 100 monitors, '
                                               'one write per created or updated monitor)')
    if args.update_doc:
        update_doc(args.update_doc, text)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
