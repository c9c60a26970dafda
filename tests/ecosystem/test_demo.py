"""The main job's own environment (the nox session ``demo``: ``.nox/demo``) and its playground
(``./scripts/demo.sh --serve``), run as a newcomer runs them: the scripts make the virtualenv, the playground prints the
lines to paste, and what it prints is pasted into a shell (the demo playbook among them: kept, then run again).

The playgrounds share ``.nox/demo`` and ``build/demo``: they run one after the other, in one test, so that no xdist
worker sits idle waiting for another's; ``demo_lock`` still keeps any test of this file to one at a time.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import time

import pytest

from ecosystem_support import APPENDED, REPO_ROOT, Emulator, PlaybookRun, assert_changed_nothing
from emulator.demo import DEMO_KEY, SECOND_KEY, SECOND_ZONE

DEMO_SCRIPT = os.path.join(REPO_ROOT, 'scripts', 'demo.sh')
DEMO_PYTHON = os.path.join(REPO_ROOT, '.nox', 'demo', 'bin', 'python')
# What a fresh .nox/demo may hold at most.
MOST_PACKAGES = 25


@pytest.fixture(autouse=True)
def demo_lock():
    """One test of this file at a time (.ci/run holds the lock too while its demo runs): two installs into a fresh
    .nox/demo at once would break each other."""
    os.makedirs(os.path.join(REPO_ROOT, 'build'), exist_ok=True)
    with open(os.path.join(REPO_ROOT, 'build', 'demo.lock'), 'w', encoding='utf-8') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def assert_demo_virtualenv_holds_what_the_main_job_needs_only():
    """.nox/demo as the session demo made it (scripts/demo.sh runs that session): Python 3.11, few packages."""
    listed = json.loads(subprocess.run([DEMO_PYTHON, '-c', 'import importlib.metadata as m, json, sys; print(json.dumps(['
                                        '"%d.%d" % sys.version_info[:2], {d.metadata["Name"].lower(): d.version for d in m.distributions()}]))'],
                                       check=True, stdout=subprocess.PIPE, text=True).stdout)
    version, packages = listed
    assert version == '3.11', listed
    assert len(packages) <= MOST_PACKAGES, listed
    assert packages['ansible-core'].startswith('2.19.'), packages
    assert 'requests' in packages, packages
    # scripts/demo.sh runs it outside nox: its bytecode is compiled at install, next to the sources.
    compiled = os.path.join(REPO_ROOT, '.nox', 'demo', 'lib', 'python3.11', 'site-packages', 'ansible', '__pycache__')
    assert any(name.endswith('.pyc') for name in os.listdir(compiled)), compiled


class Playground:
    """``scripts/demo.sh --serve --port 0`` in the background, its output written to ``path`` and read as it grows."""

    def __init__(self, path):
        self.path, self.read = path, 0
        with open(path, 'w', encoding='utf-8') as output:
            self.process = subprocess.Popen([DEMO_SCRIPT, '--serve', '--port', '0'],  # pylint: disable=consider-using-with
                                            stdout=output, stderr=subprocess.STDOUT)

    def read_until(self, pattern, timeout):
        """The lines after those read, up to the first that matches ``pattern`` (the bootstrap may have a virtualenv to make)."""
        deadline = time.monotonic() + timeout
        while True:
            ended = self.process.poll() is not None
            with open(self.path, encoding='utf-8') as handle:
                lines = handle.read().split('\n')[self.read:-1]
            found = [number for number, line in enumerate(lines, start=1) if re.search(pattern, line)]
            if found:
                self.read += found[0]
                return lines[:found[0]]
            assert not ended, 'the playground printed no %r:\n%s' % (pattern, '\n'.join(lines))
            assert time.monotonic() < deadline, 'the playground printed no %r:\n%s' % (pattern, '\n'.join(lines))
            time.sleep(0.1)

    def stop(self, signum):
        self.process.send_signal(signum)
        return self.process.wait(30)


@pytest.fixture
def playgrounds(tmp_path):
    """Starts a playground on each call; any still running at the end of the test is killed."""
    started = []

    def start():
        started.append(Playground(str(tmp_path / ('playground-%d.log' % len(started)))))
        return started[-1]
    yield start
    for playground in started:
        if playground.process.poll() is None:
            playground.process.kill()
            playground.process.wait()


def paste_and_run(paste, commands):
    """Run ``commands`` in a shell, after the lines the playground told to paste (errexit: every command must pass)."""
    script = '\n'.join(['set -euo pipefail'] + paste + commands)
    finished = subprocess.run(['bash', '-c', script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              env={key: value for key, value in os.environ.items()
                                   if not key.startswith(('ANSIBLE_', 'UPTIME_', 'EMULATOR_'))}, check=False)
    assert finished.returncode == 0, finished.stdout
    return finished.stdout


def read_paste_and_examples(started):
    """The lines to paste (cd and export) and the example commands, as the playground prints them."""
    lines = started.read_until(r'^Then, for example:$', timeout=600)
    return ([line for line in lines if line.startswith(('cd ', 'export '))],
            [line.split('#', 1)[0].strip() for line in started.read_until(r'^$', timeout=10)[:-1]])


def zones(emulator):
    return {key: emulator.api('GET', '/api/v1/account', api_key=key).json['data']['timezone'] for key in emulator.api_keys}


def test_playground_prints_what_to_paste_and_both_accounts_work(playgrounds):
    """The playground as a newcomer uses it, stopped with Ctrl-C (SIGINT); then started again and stopped with SIGTERM.
    One test, so that the other xdist worker never waits on demo_lock for a second one."""
    playground = playgrounds()
    paste, examples = read_paste_and_examples(playground)
    exports = dict(re.fullmatch(r'export (\w+)=(.*)', line).groups() for line in paste if line.startswith('export '))
    assert set(exports) == {'UPTIME_API_URL', 'UPTIME_API_KEY', 'ANSIBLE_COLLECTIONS_PATH', 'EMULATOR_URL', 'PATH'}
    assert exports['UPTIME_API_KEY'] == DEMO_KEY
    emulator = Emulator(exports['UPTIME_API_URL'], api_keys=(DEMO_KEY, SECOND_KEY))
    assert zones(emulator) == {DEMO_KEY: None, SECOND_KEY: SECOND_ZONE}

    # Every example as printed: ansible-doc, the demo kept in the first account, a monitor of it taken offline with
    # control.py and found by monitor_info, ansible-inventory over it, the demo in the second account (which removes its
    # own monitors), and a time zone set with control.py.
    assert [example.split()[0] for example in examples] == [
        'ansible-doc', 'ansible-playbook', 'python', 'ansible', 'ansible-inventory', 'UPTIME_API_KEY=%s' % SECOND_KEY, 'python']
    output = paste_and_run(paste, examples[:4] + [examples[4] + ' >inventory-graph.txt', examples[5], examples[6],
                                                  'cat inventory-graph.txt', 'rm inventory-graph.txt'])
    assert os.path.join('build', 'demo', 'collections', 'ansible_collections', 'uptime', 'monitoring') in output
    down = json.loads(re.search(r'^localhost \| SUCCESS => (\{.*?^\})$', output, re.M | re.S).group(1))
    assert down['monitors'] == [{'name': 'demo-api', 'url': 'https://api.example.com/ping', 'status': 'offline'}], output
    # Nothing skipped but what was asked: the kept demo leaves out its removal, the default demo runs every task.
    assert re.findall(r'\bskipped=(\d+)', output) == ['1', '0'], output
    graph = output[output.index('@all:'):]
    assert re.search(r'@uptime_offline:\n\W*api\.example\.com\n', graph), graph
    for host in ('shop.example.com', 'blog.example.com'):
        assert host in graph
    names = {key: sorted(monitor['name'] for monitor in emulator.api('GET', '/api/v1/monitors', api_key=key).json['data'])
             for key in (DEMO_KEY, SECOND_KEY)}
    assert names == {DEMO_KEY: ['demo-api', 'demo-blog', 'demo-shop'], SECOND_KEY: []}
    assert zones(emulator) == {DEMO_KEY: 'Europe/Paris', SECOND_KEY: SECOND_ZONE}
    assert_demo_virtualenv_holds_what_the_main_job_needs_only()

    # The demo kept its monitors and its incident (demo_cleanup=false): run again, it changes nothing and writes
    # nothing. (By default it removes them: the second account's example above left no monitor.)
    incidents = emulator.api('GET', '/api/v1/incidents').json['data']
    assert [(incident['monitor']['name'], incident['status'], incident['cause']) for incident in incidents] == [
        ('demo-api', 'unresolved', 'HTTP 503'), ('demo-shop', 'resolved', 'Checkout answers 502')]
    assert APPENDED.fullmatch(incidents[1]['comment']).groups() == ('On it', 'Upstream restarted'), incidents[1]
    emulator.clear_log()
    assert_changed_nothing(PlaybookRun(examples[1], 0, paste_and_run(paste, [examples[1]])))
    assert emulator.writes() == []
    assert emulator.api('GET', '/api/v1/incidents').json['data'] == incidents

    assert playground.stop(signal.SIGINT) == 0
    assert playground.read_until(r'^emulator stopped$', timeout=10)
    with pytest.raises(OSError):
        emulator.api('GET', '/api/v1/status', timeout=2)

    # Started again, it stops on SIGTERM too.
    playground = playgrounds()
    paste = read_paste_and_examples(playground)[0]
    url = next(line.split('=', 1)[1] for line in paste if line.startswith('export UPTIME_API_URL='))
    emulator = Emulator(url, api_keys=(DEMO_KEY,))
    assert emulator.api('GET', '/api/v1/status').status == 200
    assert playground.stop(signal.SIGTERM) == 0
    assert playground.read_until(r'^emulator stopped$', timeout=10)
    with pytest.raises(OSError):
        emulator.api('GET', '/api/v1/status', timeout=2)
