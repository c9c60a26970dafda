"""The emulator of setup_emulator, driven on the controller, in the task's worker process: start it, reset it, queue
a fault, stop it. Done with modules (uri, shell, wait_for, slurp...), each
of these steps was a module run of its own, about half a second of CPU: a fifth of the module runs of an integration
run. The work is done by tests/emulator/control.py, the client every test drives the emulator with."""

from __future__ import annotations

import os
import signal
import sys

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

# tests/emulator, as ansible-test copies it beside the targets (aliases: needs/file/tests/emulator/...).
EMULATOR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'emulator')
READY_TIMEOUT = 60


def emulator_client():
    if EMULATOR_DIR not in sys.path:
        sys.path.insert(0, EMULATOR_DIR)
    from control import Emulator  # pylint: disable=import-error,import-outside-toplevel
    return Emulator


def start(args):
    # Detached (log=): the server outlives the worker process that runs this task, until the handler stops it.
    emulator = emulator_client().start(api_keys=args['api_keys'], no_api_keys=args.get('no_api_keys', ()), log=args['log'],
                                       extra_args=('--verbose', '--lifetime', str(args['lifetime'])), timeout=READY_TIMEOUT)
    return {'url': emulator.url, 'pid': emulator.process.pid}


def stop(args):
    try:
        os.kill(int(args['pid']), signal.SIGTERM)
    except ProcessLookupError:
        return {'changed': False}
    return {}


def control(args):
    emulator = emulator_client()(args['url'])
    requests = {
        'reset': emulator.reset,
        'fault': lambda: emulator.fault(**args['fault']),
    }
    requests[args['do']]()
    return {}


# What each step does, and the arguments it needs.
ACTIONS = {'start': (start, ('log', 'lifetime', 'api_keys')), 'stop': (stop, ('pid',)), 'reset': (control, ('url',)),
           'fault': (control, ('url', 'fault'))}


class ActionModule(ActionBase):
    """``emulator: {do: start|stop|reset|fault, ...}``: see setup_emulator's task files."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('do', 'url', 'log', 'lifetime', 'api_keys', 'no_api_keys', 'pid', 'fault'))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        if args.get('do') not in ACTIONS:
            raise AnsibleActionFail('do must be one of %s, not %r' % (', '.join(ACTIONS), args.get('do')))
        step, needs = ACTIONS[args['do']]
        missing = [name for name in needs if name not in args]
        if missing:
            raise AnsibleActionFail('do: %s needs %s' % (args['do'], ', '.join(missing)))
        try:
            result.update({'changed': True}, **step(args))
        except (OSError, RuntimeError, KeyError, TypeError, ValueError) as error:
            raise AnsibleActionFail('emulator %s: %s' % (args['do'], error)) from error
        return result
