"""Run the integration targets against the phpUptime service emulator.

Usage (with the development virtualenv's Python):

    .venv/bin/python tests/integration/run.py [--no-stage] [--list] [TARGET ...]

Every directory of tests/integration/targets/ holding tasks/main.yml is a
target (unless its ``aliases`` file says ``disabled``; ``setup_*`` and
``prepare_*`` directories are helper roles and are never run on their own).
Each target is applied as a role to localhost by ansible-playbook, with
``--diff``, against one emulator started for the whole run. The output of a
target goes to tests/output/integration/<target>.log.

The targets get these environment variables:

    UPTIME_API_URL          base URL of the emulator
    UPTIME_API_KEY          API key of the primary account
    UPTIME_OTHER_API_KEY    API key of a second account
    UPTIME_NOPLAN_API_KEY   API key of an account whose plan has no API access
    UPTIME_EMULATOR_URL     base URL for the emulator's control endpoints
                            (/_emulator/reset, /_emulator/log)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGETS_DIR = os.path.join(ROOT, 'tests', 'integration', 'targets')
OUTPUT_DIR = os.path.join(ROOT, 'tests', 'output', 'integration')
COLLECTIONS_DIR = os.path.join(ROOT, 'build', 'collections')
EMULATOR = os.path.join(ROOT, 'tests', 'emulator', 'server.py')
STAGE_SCRIPT = os.path.join(ROOT, 'scripts', 'stage-collection.sh')

API_KEY = 'test-key-primary'
OTHER_API_KEY = 'test-key-other'
NOPLAN_API_KEY = 'test-key-noplan'

HELPER_PREFIXES = ('setup_', 'prepare_')
READY_TIMEOUT = 60
TARGET_TIMEOUT = int(os.environ.get('UPTIME_TARGET_TIMEOUT', '900'))
LOG_TAIL_LINES = 60


class EmulatorError(Exception):
    """The emulator could not be started."""


class Emulator:
    """The service emulator, run as a child process for the whole run."""

    def __init__(self, server, log_path):
        self.server = server
        self.log_path = log_path
        self.process = None
        self.url = None
        self._log = None
        self._pump = None

    def start(self):
        """Start the emulator and wait for its READY line."""
        if not os.path.exists(self.server):
            raise EmulatorError('%s does not exist' % os.path.relpath(self.server, ROOT))

        command = [
            sys.executable, self.server,
            '--host', '127.0.0.1', '--port', '0', '--db', ':memory:',
            '--api-key', API_KEY, '--api-key', OTHER_API_KEY,
            '--no-api-key', NOPLAN_API_KEY,
        ]
        self._log = open(self.log_path, 'ab')  # pylint: disable=consider-using-with
        self._log.write(('$ %s\n' % ' '.join(command)).encode())
        self._log.flush()
        self.process = subprocess.Popen(  # pylint: disable=consider-using-with
            command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._log,
        )

        found = []
        reader = threading.Thread(target=self._read_ready, args=(found,), daemon=True)
        reader.start()
        reader.join(READY_TIMEOUT)

        if not found:
            self.stop()
            raise EmulatorError('no "READY <url>" line within %ds (see %s)' % (READY_TIMEOUT, os.path.relpath(self.log_path, ROOT)))

        self.url = found[0].rstrip('/')
        # keep draining stdout so that the emulator never blocks on a full pipe
        self._pump = threading.Thread(target=self._copy_stdout, daemon=True)
        self._pump.start()

    def _read_ready(self, found):
        for raw in iter(self.process.stdout.readline, b''):
            self._log.write(raw)
            self._log.flush()
            line = raw.decode(errors='replace').strip()
            if line.startswith('READY '):
                found.append(line.split(None, 1)[1])
                return

    def _copy_stdout(self):
        for raw in iter(self.process.stdout.readline, b''):
            self._log.write(raw)
            self._log.flush()

    def alive(self):
        """Return True while the emulator process runs."""
        return self.process is not None and self.process.poll() is None

    def stop(self):
        """Stop the emulator (terminate, then kill)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._pump is not None:
            self._pump.join(5)
        if self._log is not None:
            self._log.close()
            self._log = None


def parse_args(argv):
    """Parse the command line."""
    parser = argparse.ArgumentParser(description='Run the integration targets against the service emulator.')
    parser.add_argument('targets', nargs='*', metavar='TARGET', help='targets to run (default: all)')
    parser.add_argument('--no-stage', action='store_true',
                        help='do not re-stage the collection into build/collections first (it must be staged already)')
    parser.add_argument('--list', action='store_true', help='list the targets that would run and exit')
    parser.add_argument('--emulator', default=EMULATOR, metavar='PATH', help='emulator server script (default: %(default)s)')
    parser.add_argument('-v', '--verbose', action='store_true', help='also print the output of every target')
    return parser.parse_args(argv)


def read_aliases(target_dir):
    """Return the words of a target's aliases file."""
    path = os.path.join(target_dir, 'aliases')
    if not os.path.exists(path):
        return []
    with open(path, encoding='utf-8') as handle:
        return [line.split('#', 1)[0].strip() for line in handle if line.split('#', 1)[0].strip()]


def discover_targets():
    """Return (runnable, disabled) target names, sorted."""
    runnable, disabled = [], []
    if not os.path.isdir(TARGETS_DIR):
        return runnable, disabled
    for name in sorted(os.listdir(TARGETS_DIR)):
        target_dir = os.path.join(TARGETS_DIR, name)
        if not os.path.isfile(os.path.join(target_dir, 'tasks', 'main.yml')):
            continue
        if name.startswith(HELPER_PREFIXES):
            continue
        if 'disabled' in read_aliases(target_dir):
            disabled.append(name)
        else:
            runnable.append(name)
    return runnable, disabled


def find_ansible_playbook():
    """Return the ansible-playbook beside this interpreter, else the one on PATH."""
    candidate = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    if os.path.exists(candidate):
        return candidate
    found = shutil.which('ansible-playbook')
    if not found:
        raise SystemExit('ansible-playbook not found: run scripts/bootstrap.sh and use .venv/bin/python')
    return found


def target_environment(url):
    """Return the environment of an ansible-playbook run."""
    env = dict(os.environ)
    env.update(
        ANSIBLE_ROLES_PATH=TARGETS_DIR,
        ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_DIR,
        ANSIBLE_NOCOLOR='1',
        ANSIBLE_RETRY_FILES_ENABLED='0',
        ANSIBLE_DEPRECATION_WARNINGS='1',
        PYTHONUNBUFFERED='1',
        UPTIME_API_URL=url,
        UPTIME_API_KEY=API_KEY,
        UPTIME_OTHER_API_KEY=OTHER_API_KEY,
        UPTIME_NOPLAN_API_KEY=NOPLAN_API_KEY,
        UPTIME_EMULATOR_URL=url,
    )
    env.pop('ANSIBLE_FORCE_COLOR', None)
    return env


def write_support_files():
    """Write the inventory used by every target and return its path."""
    inventory = os.path.join(OUTPUT_DIR, 'inventory.ini')
    with open(inventory, 'w', encoding='utf-8') as handle:
        handle.write('localhost ansible_connection=local ansible_python_interpreter=%s\n' % sys.executable)
    return inventory


def run_target(name, playbook_cmd, inventory, env, verbose):
    """Run one target; return (passed, seconds, log path)."""
    playbook = os.path.join(OUTPUT_DIR, 'playbooks', '%s.yml' % name)
    with open(playbook, 'w', encoding='utf-8') as handle:
        handle.write('- hosts: localhost\n  gather_facts: false\n  roles: [%s]\n' % name)

    log_path = os.path.join(OUTPUT_DIR, '%s.log' % name)
    command = [playbook_cmd, '-i', inventory, '--diff', playbook]
    start = time.monotonic()
    with open(log_path, 'wb') as log:
        log.write(('$ %s\n' % ' '.join(command)).encode())
        log.flush()
        try:
            result = subprocess.run(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, timeout=TARGET_TIMEOUT, check=False)
            passed = result.returncode == 0
            if not passed:
                log.write(('\nansible-playbook exited with %d\n' % result.returncode).encode())
        except subprocess.TimeoutExpired:
            passed = False
            log.write(('\ntimed out after %ds\n' % TARGET_TIMEOUT).encode())
    seconds = time.monotonic() - start

    if verbose or not passed:
        with open(log_path, encoding='utf-8', errors='replace') as handle:
            lines = handle.read().splitlines()
        shown = lines if verbose else lines[-LOG_TAIL_LINES:]
        if len(shown) < len(lines):
            print('    ... (%d earlier lines in %s)' % (len(lines) - len(shown), os.path.relpath(log_path, ROOT)))
        for line in shown:
            print('    | %s' % line)
    return passed, seconds, log_path


def main(argv=None):
    """Entry point."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    sys.stdout.reconfigure(line_buffering=True)

    runnable, disabled = discover_targets()
    if args.targets:
        unknown = [t for t in args.targets if t not in runnable and t not in disabled]
        if unknown:
            print('unknown target(s): %s (known: %s)' % (', '.join(unknown), ', '.join(runnable + disabled) or 'none'), file=sys.stderr)
            return 2
        selected = [t for t in runnable if t in args.targets]
        skipped = [t for t in disabled if t in args.targets]
    else:
        selected, skipped = runnable, disabled

    if args.list:
        for name in selected:
            print(name)
        return 0

    for name in skipped:
        print('SKIP %s (aliases: disabled)' % name)
    if not selected:
        print('no integration targets to run (looked for %s/*/tasks/main.yml)' % os.path.relpath(TARGETS_DIR, ROOT), file=sys.stderr)
        print('0 passed, 0 failed')
        return 1

    if not args.no_stage:
        subprocess.run([STAGE_SCRIPT], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    if not os.path.isdir(os.path.join(COLLECTIONS_DIR, 'ansible_collections', 'uptime', 'monitoring')):
        print('the collection is not staged in %s: run scripts/stage-collection.sh' % COLLECTIONS_DIR, file=sys.stderr)
        return 1

    shutil.rmtree(OUTPUT_DIR, ignore_errors=True)
    os.makedirs(os.path.join(OUTPUT_DIR, 'playbooks'))
    inventory = write_support_files()
    playbook_cmd = find_ansible_playbook()

    emulator = Emulator(os.path.abspath(args.emulator), os.path.join(OUTPUT_DIR, 'emulator.log'))
    passed_targets = []
    try:
        for name in selected:
            if not emulator.alive():
                if emulator.process is not None:
                    print('emulator stopped (see %s); restarting it' % os.path.relpath(emulator.log_path, ROOT))
                    emulator.stop()
                emulator.start()
                print('emulator at %s' % emulator.url)
            env = target_environment(emulator.url)
            passed, seconds, log_path = run_target(name, playbook_cmd, inventory, env, args.verbose)
            if passed:
                passed_targets.append(name)
            print('%s %s (%.1fs, %s)' % ('PASS' if passed else 'FAIL', name, seconds, os.path.relpath(log_path, ROOT)))
    except EmulatorError as ex:
        print('cannot start the emulator: %s' % ex, file=sys.stderr)
    finally:
        emulator.stop()

    failed = [name for name in selected if name not in passed_targets]
    if failed:
        print('failed or not run: %s' % ', '.join(failed))
    print('%d passed, %d failed' % (len(passed_targets), len(failed)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
