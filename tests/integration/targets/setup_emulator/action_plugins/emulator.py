"""The emulator of setup_emulator, driven from Ansible's own process: start it, reset it, clear its log, queue a fault,
set an account's time zone, stop it. Done with modules (uri, shell, wait_for, slurp...), each of these steps was a
module run of its own, about half a second of CPU: a fifth of the module runs of an integration run."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

# tests/emulator, as ansible-test copies it beside the targets (aliases: needs/file/tests/emulator/...).
EMULATOR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'emulator')
READY_TIMEOUT = 60


def control(url):
    """The control client of tests/emulator/control.py (urllib only), so that every test drives the emulator alike."""
    if EMULATOR_DIR not in sys.path:
        sys.path.insert(0, EMULATOR_DIR)
    from control import Emulator  # pylint: disable=import-error,import-outside-toplevel
    return Emulator(url)


def start(args):
    command = [sys.executable, os.path.join(EMULATOR_DIR, 'server.py'), '--host', '127.0.0.1', '--port', '0',
               '--db', ':memory:', '--verbose', '--lifetime', str(args['lifetime'])]
    command += [word for key in args['api_keys'] for word in ('--api-key', key)]
    command += [word for key in args.get('no_api_keys', []) for word in ('--no-api-key', key)]
    with open(args['log'], 'ab') as log:
        # A session of its own: the server outlives the worker process that runs this task.
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,  # pylint: disable=consider-using-with
                                   start_new_session=True)
    with process.stdout:
        ready = select.select([process.stdout], [], [], READY_TIMEOUT)[0]
        line = process.stdout.readline().decode('utf-8', 'replace').split() if ready else []
    if line[:1] != ['READY']:
        process.kill()
        raise AnsibleActionFail('the emulator did not start within %ds (its log: %s)' % (READY_TIMEOUT, args['log']))
    return {'changed': True, 'url': line[1], 'pid': process.pid}


def stop(args):
    try:
        os.kill(int(args['pid']), signal.SIGTERM)
    except ProcessLookupError:
        return {'changed': False}
    return {'changed': True}


REQUESTS = {
    'reset': lambda emulator, args: emulator.reset(),
    'clear_log': lambda emulator, args: emulator.clear_log(),
    'fault': lambda emulator, args: emulator.fault(**args['fault']),
    'timezone': lambda emulator, args: emulator.timezone(args['timezone'], api_key=args['api_key']),
}


class ActionModule(ActionBase):
    """``emulator: {do: start|stop|reset|clear_log|fault|timezone, ...}``: see setup_emulator's task files."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('do', 'url', 'log', 'lifetime', 'api_keys', 'no_api_keys', 'pid', 'fault', 'timezone', 'api_key'))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        if args.get('do') == 'start':
            result.update(start(args))
        elif args.get('do') == 'stop':
            result.update(stop(args))
        elif args.get('do') in REQUESTS:
            try:
                REQUESTS[args['do']](control(args['url']), args)
            except (OSError, RuntimeError) as error:
                raise AnsibleActionFail('emulator %s at %s: %s' % (args['do'], args['url'], error)) from error
            result['changed'] = True
        else:
            raise AnsibleActionFail('do must be one of start, stop, %s, not %r' % (', '.join(REQUESTS), args.get('do')))
        return result
