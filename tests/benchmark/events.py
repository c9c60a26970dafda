"""Benchmark: what the event source and the inventory plugin cost a big account, against the service emulator.

Usage (from the repository root; the nox session benchmark runs it in its virtualenv; about 15 minutes):

    ./scripts/test.sh -s benchmark -- events.py                                  # 100, 1,000 and 10,000 monitors
    ./scripts/test.sh -s benchmark -- events.py --sizes 100 --no-busy            # a smoke run (about 4 minutes)
    ./scripts/test.sh -s benchmark -- events.py --update-doc docs/performance.md

For each size, the emulator is seeded (monitors online, a tenth of them up to 10 offline with an ongoing
incident, and up to 300 resolved incidents), and uptime.monitoring.events runs under the real
ansible-rulebook, from the collection built and installed with ansible-galaxy. Time runs ``--scale`` times
faster than the service's (default 10): ``interval`` 60 s and ``sweep_period`` 900 s become 6 s and 90 s, and
the account's limit of 120 requests a minute, with its reserve of 30, becomes 1,200 and 300. After the first
sweep, during one more sweep, monitors go offline and back online (the emulator's checker) and are paused
(PUT): the requests the source sent (GET) are counted, and each event's delay from the change to the
rulebook's action is measured. Then ``ansible-inventory --list`` runs once with the inventory plugin.

The busy run (10,000 monitors, unscaled limit of 120 a minute, reserve 30) adds other traffic that takes the
account's remaining requests down to 35 in every window: the source must never send a request that leaves
fewer than 30, and its events must still come. Figures are printed (and written into the document with
``--update-doc``); the exit status is 1 only when a bound that no machine's speed explains is broken: a
request below the reserve, a 429 answered to the source, or an event that never came.

Waits follow the source, not the clock: the changes begin once the emulator's request log shows that the
source finished its first sweep (the baseline: a change before it is part of what the source records, not
news), and an event is missing only when the source has read what shows the change (a poll's incidents after
an offline or online change; after a pause, the page of the monitor list that holds the monitor), has begun
the poll after that one (so the events were handed to ansible-rulebook), and ansible-rulebook still did not act
on it within DELIVERY seconds. A busy machine makes polls slower and events later (the figures), never missing.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import parse_qs

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, 'tests'), os.path.join(ROOT, 'tests', 'eda'), HERE]

# pylint: disable=wrong-import-position
from emulator.control import PRIMARY_KEY, Emulator  # noqa: E402
from run import update_doc  # noqa: E402
from test_rulebook import BIN, Rulebook  # noqa: E402

DOC_START, DOC_END = '<!-- events-benchmark:start -->', '<!-- events-benchmark:end -->'
SOURCE_AGENT = 'uptime.monitoring/'
EVENT = 'EVENT {{ event.uptime.type }} {{ event.uptime.monitor_id }} {{ event.uptime.status }} {{ event.uptime.late }}'
LIMIT, RESERVE, INTERVAL, SWEEP_PERIOD = 120, 30, 60, 900
INCIDENTS_PATH, MONITORS_PATH = '/api/v1/incidents', '/api/v1/monitors'
# Seconds ansible-rulebook gets to act on an event the source has handed over: its own pace, not the source's.
DELIVERY = 60
# Seconds without a request of the source (it polls every interval) after which it has stopped.
STALLED = 120


def build_collection(workdir):
    """The collection as users install it: staged, built and installed with ansible-galaxy."""
    staged = subprocess.run([os.path.join(ROOT, 'scripts', 'stage-collection.sh'), os.path.join(workdir, 'staged')],
                            check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    galaxy = os.path.join(BIN, 'ansible-galaxy')
    subprocess.run([galaxy, 'collection', 'build', '--force', '--output-path', os.path.join(workdir, 'dist'), staged],
                   check=True, capture_output=True)
    tarball = [name for name in os.listdir(os.path.join(workdir, 'dist')) if name.endswith('.tar.gz')][0]
    installed = os.path.join(workdir, 'collections')
    subprocess.run([galaxy, 'collection', 'install', '--offline', '--force', '-p', installed,
                    os.path.join(workdir, 'dist', tarball)], check=True, capture_output=True)
    return installed


def environment(emulator, collections, workdir):
    env = {key: value for key, value in os.environ.items() if not key.startswith(('UPTIME_', 'ANSIBLE_'))}
    env.update(ANSIBLE_COLLECTIONS_PATH=collections, PATH=BIN + os.pathsep + env.get('PATH', ''), ANSIBLE_NOCOLOR='1',
               ANSIBLE_LOCAL_TEMP=os.path.join(workdir, 'ansible-tmp'), UPTIME_API_URL=emulator.url,
               UPTIME_API_KEY=PRIMARY_KEY)
    return env


def rulebook(interval, sweep_period, reserve):
    source = {'interval': interval, 'sweep_period': sweep_period, 'reserve': reserve}
    return [{'name': 'Benchmark', 'hosts': 'all', 'sources': [{'uptime.monitoring.events': source}],
             'rules': [{'name': 'Every event', 'condition': 'event.uptime.type is defined',
                        'action': {'debug': {'msg': EVENT}}}]}]


def events_of(process):
    found = []
    for moment, line in list(process.lines):
        if 'EVENT ' in line:
            kind, monitor_id, status, late = line.split('EVENT ', 1)[1].strip().strip('"').split()[:4]
            found.append((moment, kind, int(monitor_id), status, late == 'True'))
    return found


def source_requests(emulator):
    return [entry for entry in emulator.log() if entry['headers'].get('User-Agent', '').startswith(SOURCE_AGENT)]


def _page(entry):
    return int(parse_qs(entry['query']).get('page', ['1'])[0])


def reads(requests, path, page=1):
    """When the source read ``page`` of the list at ``path``."""
    return [entry['time'] for entry in requests if entry['method'] == 'GET' and entry['path'] == path and _page(entry) == page]


def poll_starts(requests):
    """When each poll of the source began (the emulator's wall clock): a poll reads the first page of the incidents first."""
    return reads(requests, INCIDENTS_PATH)


def handed_over(requests, since, page=None):
    """Whether the source has found a change made at ``since`` and handed its events to ansible-rulebook: a poll
    begun after it read the incidents (with ``page``, that page of the monitor list), and the next poll began."""
    found = [moment for moment in (reads(requests, MONITORS_PATH, page) if page else poll_starts(requests)) if moment >= since]
    return bool(found) and any(moment > found[0] for moment in poll_starts(requests))


class Change:
    """A change made to the account, on both clocks: the rulebook's lines carry the monotonic one, the emulator's log the wall clock."""

    def __init__(self):
        self.monotonic, self.wall = time.monotonic(), time.time()


class Stopped(Exception):
    """ansible-rulebook ended, or the source stopped polling: nothing more will come."""


class Watch:
    """The source as the emulator's request log shows it, beside the ansible-rulebook process that runs it."""

    def __init__(self, process, emulator):
        self.process, self.emulator = process, emulator
        self.count, self.progress = None, time.monotonic()

    def requests(self):
        """The source's requests so far (Stopped when ansible-rulebook ended or the source sent none for STALLED s)."""
        if self.process.process.poll() is not None:
            raise Stopped('ansible-rulebook ended (rc %s):\n%s' % (self.process.process.returncode, self.process.output()[-3000:]))
        requests = source_requests(self.emulator)
        if len(requests) != self.count:
            self.count, self.progress = len(requests), time.monotonic()
        elif time.monotonic() - self.progress > STALLED:
            raise Stopped('the source sent no request for %d s' % STALLED)
        return requests

    def wait(self, holds):
        """Until ``holds(requests)``."""
        while not holds(self.requests()):
            time.sleep(0.2)

    def event(self, change, kind, monitor_id, status, page=None):
        """``(delay, None)`` of the event of ``change``; ``(None, why)`` when it never came: the source found the
        change (see handed_over) and ansible-rulebook did not act on it within DELIVERY seconds after that."""
        handed_at = None
        while True:
            for moment, found_kind, found_id, found_status, dummy in events_of(self.process):
                if moment >= change.monotonic and (found_kind, found_id, found_status) == (kind, monitor_id, status):
                    return moment - change.monotonic, None
            try:
                requests = self.requests()
            except Stopped as exc:
                return None, str(exc)
            if handed_at is None and handed_over(requests, change.wall, page):
                handed_at = time.monotonic()
            if handed_at is not None and time.monotonic() - handed_at > DELIVERY:
                where = 'page %d of the monitor list' % page if page else 'the incidents'
                return None, ('the source read %s after the change and polled again; ansible-rulebook did not act on '
                              'the event within %d s after that' % (where, DELIVERY))
            time.sleep(0.2)


def put(emulator, monitor_id, **fields):
    answer = emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data=fields)
    assert answer.status == 200, answer.text


def measure_source(emulator, env, workdir, size, scale, problems):
    """Requests a minute (at the service's pace) and event delays of one sweep after the first."""
    interval, sweep_period = INTERVAL / scale, SWEEP_PERIOD / scale
    started_at = time.monotonic()
    process = Rulebook(workdir, rulebook(interval, sweep_period, int(RESERVE * scale)), env)
    watch = Watch(process, emulator)
    try:
        pages = math.ceil(size / 100)
        try:  # the first sweep: the baseline, over once the last page is read and the next poll began
            watch.wait(lambda requests: handed_over(requests, 0, pages))
        except Stopped as exc:
            problems.append('%d monitors: no baseline: %s' % (size, exc))
            return None
        baseline = time.monotonic() - started_at
        emulator.clear_log()
        started = time.monotonic()
        flips, pauses, pause_delays = [], [], []
        online = list(range(min(10, size // 10) + 1, size + 1))  # the seed makes its first monitors offline
        for index in range(3):  # pause three monitors spread over the list
            monitor_id = online[(index * len(online)) // 3 + 1]
            pauses.append((Change(), monitor_id))
            put(emulator, monitor_id, pause=1)
        for index in range(4):  # offline, then online again, four monitors one after the other
            monitor_id = online[-1 - index]
            for status in ('offline', 'online'):
                change = Change()
                emulator.check(monitor_id, status)
                delay, why = watch.event(change, 'monitor_status_changed', monitor_id, status)
                if delay is None:
                    problems.append('%d monitors: no %s event for monitor %d: %s' % (size, status, monitor_id, why))
                else:
                    flips.append(delay)
                time.sleep(interval * 0.7)
        for change, monitor_id in pauses:
            delay, why = watch.event(change, 'monitor_status_changed', monitor_id, 'paused', page=(monitor_id - 1) // 100 + 1)
            if delay is None:
                problems.append('%d monitors: no paused event for monitor %d: %s' % (size, monitor_id, why))
            else:
                pause_delays.append(delay)
        time.sleep(max(0.0, sweep_period + interval - (time.monotonic() - started)))
        elapsed = time.monotonic() - started
        requests = [entry for entry in source_requests(emulator) if entry['method'] == 'GET']
        refused = [entry for entry in requests if entry['status'] == 429]
        if refused:
            problems.append('%d monitors: %d requests of the source refused with 429' % (size, len(refused)))
        left = [entry['rate_remaining'] for entry in requests if entry.get('rate_remaining') is not None]
        if left and min(left) < int(RESERVE * scale):
            problems.append('%d monitors: the source left the account %d requests, below its reserve of %d'
                            % (size, min(left), int(RESERVE * scale)))
        return {'requests_per_minute': len(requests) / (elapsed * scale / 60.0), 'flip_max': max(flips or [0]),
                'pause_max': max(pause_delays or [0]) * scale, 'interval': interval, 'baseline': baseline,
                'polls_per_minute': len(poll_starts(requests)) / (elapsed / 60.0)}
    finally:
        process.stop()


def measure_inventory(emulator, env, workdir):
    config = os.path.join(workdir, 'benchmark.uptime.yml')
    with open(config, 'w', encoding='utf-8') as handle:
        handle.write('plugin: uptime.monitoring.monitors\n')
    emulator.clear_log()
    started = time.monotonic()
    subprocess.run([os.path.join(BIN, 'ansible-inventory'), '-i', config, '--list'], env=env, check=True,
                   capture_output=True)
    return len(emulator.log()), time.monotonic() - started


def measure_busy(emulator, env, workdir, problems):
    """The source beside other traffic that leaves the account little more than the reserve in every window."""
    stop, lowest = threading.Event(), []

    def others():
        window_start = None  # of the window the other traffic has been spending, as far as it can tell
        while not stop.is_set():
            sent = time.monotonic()
            answer = emulator.api('GET', '/api/v1/account')
            window_start = window_start or sent
            if int(answer.headers.get('X-RateLimit-Remaining', 0)) <= RESERVE + 5:
                stop.wait(max(0.1, window_start + 60.5 - time.monotonic()))  # until the count is renewed
                window_start = None
    emulator.rate_limit(LIMIT)
    process = Rulebook(workdir, rulebook(INTERVAL / 10, SWEEP_PERIOD / 10, RESERVE), env)
    watch = Watch(process, emulator)
    traffic = threading.Thread(target=others, daemon=True)
    try:
        time.sleep(5)
        traffic.start()
        time.sleep(60)
        emulator.clear_log()
        change = Change()
        emulator.check(10000, 'offline')  # the last of the seeded monitors, online
        delay, why = watch.event(change, 'monitor_status_changed', 10000, 'offline')
        time.sleep(max(0.0, 120 - (time.monotonic() - change.monotonic)))
        lowest += [entry['rate_remaining'] for entry in source_requests(emulator) if entry.get('rate_remaining') is not None]
        refused = [entry for entry in source_requests(emulator) if entry['status'] == 429]
        output = process.output()
    finally:
        stop.set()
        process.stop()
    if delay is None:
        problems.append('busy: the offline event never came: %s' % why)
    if lowest and min(lowest) < RESERVE:
        problems.append('busy: the source left the account %d requests, below the reserve' % min(lowest))
    if refused:
        problems.append('busy: %d requests of the source refused with 429' % len(refused))
    return {'delay': delay, 'lowest': min(lowest) if lowest else None, 'requests': len(source_requests(emulator)),
            'busy_told': output.count('kept for playbooks and people'), 'spare_told': output.count('at full pace')}


def report(results, busy, scale):
    lines = ['| monitors | event source: requests a minute | offline / online: slowest event | pause: slowest event '
             '| inventory: requests, seconds |', '|---:|---:|---:|---:|---:|']
    for size, source, inventory in results:
        lines.append('| {:,} | {:.2f} | {:.1f} s (interval {:g} s) | {:.0f} s | {}, {:.1f} s |'.format(
            size, source['requests_per_minute'], source['flip_max'], source['interval'], source['pause_max'],
            inventory[0], inventory[1]))
    lines += ['', 'Time scaled %g times (interval %g s, sweep_period %g s); the delays of pause events are given at the '
              "service's pace (measured times %g)." % (scale, INTERVAL / scale, SWEEP_PERIOD / scale, scale)]
    if busy:
        lines.append('')
        lines.append('Busy account (10,000 monitors, other traffic down to %d of %d requests in every window, '
                     'reserve %d): the source sent %d requests in 2 minutes, the fewest it left the account was %s, '
                     'the offline event came after %s; "kept for playbooks and people" told %d times, '
                     '"at full pace" %d times.' % (
                         RESERVE + 5, LIMIT, RESERVE, busy['requests'], busy['lowest'],
                         '%.0f s' % busy['delay'] if busy['delay'] is not None else 'never', busy['busy_told'],
                         busy['spare_told']))
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sizes', default='100,1000,10000', help='numbers of monitors, comma-separated')
    parser.add_argument('--scale', type=float, default=10.0, help='how many times faster time runs (default 10)')
    parser.add_argument('--no-busy', action='store_true', help='skip the busy run')
    parser.add_argument('--update-doc', metavar='PATH', help='write the table between %s and %s' % (DOC_START, DOC_END))
    args = parser.parse_args(argv)
    problems, results, busy = [], [], None
    with tempfile.TemporaryDirectory(prefix='events-benchmark-') as workdir:
        collections = build_collection(workdir)
        for size in [int(text) for text in args.sizes.split(',')]:
            with Emulator.start(api_keys=(PRIMARY_KEY,)) as emulator:
                emulator.rate_limit(int(LIMIT * args.scale))
                emulator.seed(size, offline=min(10, size // 10), resolved=min(300, size // 2))
                env = environment(emulator, collections, workdir)
                source = measure_source(emulator, env, workdir, size, args.scale, problems)
                if source is None:
                    continue
                inventory = measure_inventory(emulator, env, workdir)
                results.append((size, source, inventory))
                print('%d monitors: %s; inventory %d requests, %.1f s' % (size, source, inventory[0], inventory[1]),
                      flush=True)
        if not args.no_busy:
            with Emulator.start(api_keys=(PRIMARY_KEY,)) as emulator:
                emulator.seed(10000, offline=10, resolved=300)
                busy = measure_busy(emulator, environment(emulator, collections, workdir), workdir, problems)
                print('busy: %s' % busy, flush=True)
    text = report(results, busy, args.scale)
    print(text)
    if args.update_doc:
        update_doc(args.update_doc, text, DOC_START, DOC_END)
    for problem in problems:
        print('PROBLEM: %s' % problem)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
