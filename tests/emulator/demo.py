"""The main job (``scripts/demo.sh``): the collection built and installed as users get it, the emulator started, and
``playbooks/demo.yml`` run against it; or, with ``--serve``, the emulator kept running on a fixed address, to try the
collection by hand.

    ./scripts/demo.sh                       # the demo; extra arguments go to ansible-playbook (-v, --check...)
    ./scripts/demo.sh --serve [--port N]    # the emulator on 127.0.0.1:8765 until Ctrl-C, with the lines to paste

Both have two accounts: DEMO_KEY in UTC and SECOND_KEY in America/New_York (a zone with daylight saving time).
Runs with the interpreter of ``.nox/demo`` (the nox session ``demo``: ansible-core, requests and tzdata only).
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import subprocess
import sys
import tempfile

try:
    from .control import Emulator
except ImportError:  # run as a script: tests/emulator is sys.path[0]
    from control import Emulator  # type: ignore[no-redef]

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO_DIR = os.path.join(REPO_ROOT, 'build', 'demo')
COLLECTIONS = os.path.join(DEMO_DIR, 'collections')
INVENTORY = os.path.join(DEMO_DIR, 'inventory.ini')
MONITORS_INVENTORY = os.path.join(DEMO_DIR, 'uptime.yml')
VENV_BIN = os.path.dirname(sys.executable)
PLAYBOOK = 'playbooks/demo.yml'
DEMO_KEY = 'demo-key'
SECOND_KEY = 'demo-key-new-york'
SECOND_ZONE = 'America/New_York'
DEFAULT_PORT = 8765


def step(title):
    print('\n==> %s' % title, flush=True)


def relative(path):
    return os.path.relpath(path, REPO_ROOT)


def install_collection():
    """Stage the work tree, build its tarball and install that into build/demo/collections; return the tarball's name.

    Staged and built in a directory of its own, so that the demo never disturbs build/collections, which the test
    suites use, nor another demo running beside it.
    """
    step('build and install the collection')
    os.makedirs(DEMO_DIR, exist_ok=True)
    ansible_galaxy = os.path.join(VENV_BIN, 'ansible-galaxy')
    with tempfile.TemporaryDirectory(dir=DEMO_DIR, prefix='build-') as work:
        staged = subprocess.run([os.path.join(REPO_ROOT, 'scripts', 'stage-collection.sh'), work],
                                check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
        dist = os.path.join(work, 'dist')
        subprocess.run([ansible_galaxy, 'collection', 'build', '--output-path', dist, staged],
                       check=True, stdout=subprocess.DEVNULL)
        (tarball,) = os.listdir(dist)
        subprocess.run([ansible_galaxy, 'collection', 'install', '--force', '--offline', '-p', COLLECTIONS,
                        os.path.join(dist, tarball)], check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS))
    with open(INVENTORY, 'w', encoding='utf-8') as inventory:
        # An explicit localhost that runs modules with this virtualenv's Python (which has requests).
        inventory.write('localhost ansible_connection=local ansible_python_interpreter=%s\n' % sys.executable)
    with open(MONITORS_INVENTORY, 'w', encoding='utf-8') as inventory:
        inventory.write('# The monitors of the account of UPTIME_API_KEY at UPTIME_API_URL, as hosts.\n'
                        'plugin: uptime.monitoring.monitors\n')
    print('installed %s into %s' % (tarball, relative(COLLECTIONS)))
    return tarball


def start_emulator(host, port):
    step('start the emulator')
    try:
        emulator = Emulator.start(api_keys=(DEMO_KEY, SECOND_KEY), host=host, port=port,
                                  extra_args=('--timezone', '%s=%s' % (SECOND_KEY, SECOND_ZONE)))
    except RuntimeError as error:
        # The last line of the server's error output says why (e.g. "OSError: [Errno 98] Address already in use").
        sys.exit('demo: the emulator did not start on %s:%s (--port picks another port): %s'
                 % (host, port, str(error).strip().splitlines()[-1]))
    print('emulator at %s' % emulator.url)
    return emulator


def environment(emulator):
    """What the playbooks need: the service's address and key, the installed collection and this virtualenv first."""
    return {
        'UPTIME_API_URL': emulator.url,
        'UPTIME_API_KEY': DEMO_KEY,
        'ANSIBLE_COLLECTIONS_PATH': COLLECTIONS,
        'PATH': '%s:%s' % (VENV_BIN, os.environ.get('PATH', '')),
        'ANSIBLE_RETRY_FILES_ENABLED': '0',
    }


def where_things_are(tarball):
    return '\n'.join((
        '  virtualenv   %s (ansible-core, requests and tzdata; nox session demo)' % relative(os.path.dirname(VENV_BIN)),
        '  collection   %s (%s, built from the work tree)' % (relative(COLLECTIONS), tarball),
        '  playbooks    playbooks/ (the demo: %s)' % PLAYBOOK,
        '  emulator     tests/emulator/README.md (control.py: monitor status, reset, log, faults, time zones)',
    ))


def run_demo(playbook_args):
    tarball = install_collection()
    with start_emulator('127.0.0.1', 0) as emulator:
        command = ['ansible-playbook', '-i', relative(INVENTORY), PLAYBOOK, '--diff'] + playbook_args
        step(' '.join(map(shlex.quote, command)))
        code = subprocess.run(command, env=dict(os.environ, **environment(emulator)), check=False).returncode
    if code == 0:
        step('next')
        print('The demo removed its monitors and stopped its emulator. To try the collection by hand against an\n'
              'emulator that keeps running (two accounts, the lines to paste into a shell):\n\n'
              '  ./scripts/demo.sh --serve\n\n' + where_things_are(tarball))
    return code


def paste_lines(emulator):
    """The shell lines that point ansible-playbook, ansible-doc, ansible-inventory and control.py at the emulator."""
    settings = dict(environment(emulator), EMULATOR_URL=emulator.url)
    lines = ['cd %s' % shlex.quote(REPO_ROOT)]
    lines += ['export %s=%s' % (name, shlex.quote(settings[name]))
              for name in ('UPTIME_API_URL', 'UPTIME_API_KEY', 'ANSIBLE_COLLECTIONS_PATH', 'EMULATOR_URL')]
    lines.append('export PATH=%s:"$PATH"' % shlex.quote(VENV_BIN))
    return lines


def serve(host, port):
    """Run the emulator until SIGINT or SIGTERM, after printing what to paste into another shell."""
    # Also when started with SIGINT ignored (in the background of a script), Ctrl-C and SIGTERM stop it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    tarball = install_collection()
    emulator = start_emulator(host, port)
    try:
        step('the emulator runs until Ctrl-C')
        print('Accounts: %s (UTC) and %s (%s). In another shell, paste:\n' % (DEMO_KEY, SECOND_KEY, SECOND_ZONE))
        print('\n'.join(paste_lines(emulator)))
        print('\nThen, for example:\n'
              '  ansible-doc uptime.monitoring.monitor\n'
              '  ansible-playbook -i %(inventory)s %(playbook)s -e demo_cleanup=false\n'
              '  python tests/emulator/control.py status demo-api offline --cause "HTTP 503"   # as the checker; online, pending\n'
              '  ansible -i %(inventory)s localhost -m uptime.monitoring.monitor_info -a "status=offline fields=name,url,status"   # what is down?\n'
              '  ansible-inventory -i %(monitors)s --graph\n'
              '  UPTIME_API_KEY=%(second)s ansible-playbook -i %(inventory)s %(playbook)s   # the other account\n'
              '  python tests/emulator/control.py timezone %(first)s Europe/Paris   # reset, log, fault...\n\n%(where)s'
              % {'inventory': relative(INVENTORY), 'playbook': PLAYBOOK, 'monitors': relative(MONITORS_INVENTORY),
                 'second': SECOND_KEY, 'first': DEMO_KEY, 'where': where_things_are(tarball)},
              flush=True)
        emulator.process.wait()
        print('demo: the emulator stopped by itself:\n%s' % emulator.stderr(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        emulator.stop()
        print('\nemulator stopped')
        return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    os.chdir(REPO_ROOT)
    if argv[:1] in (['-h'], ['--help']):
        print(__doc__.strip())
        return 0
    if argv[:1] != ['--serve']:
        return run_demo(argv)
    parser = argparse.ArgumentParser(prog='scripts/demo.sh --serve', description='Run the emulator until Ctrl-C.')
    parser.add_argument('--host', default='127.0.0.1', help='address to listen on (default 127.0.0.1)')
    parser.add_argument('--port', type=int, default=DEFAULT_PORT,
                        help='port to listen on (default %d; 0 picks a free one)' % DEFAULT_PORT)
    args = parser.parse_args(argv[1:])
    return serve(args.host, args.port)


if __name__ == '__main__':
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
