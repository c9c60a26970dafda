# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Run a module's task inside Ansible's worker process, when the module would run on the controller anyway.

A module task costs a new Python process: AnsiballZ, then importing ansible's module code and requests, many times
what a task of the collection does once they are imported. When the task runs on the controller (a local connection
after ``delegate_to``, no ``become``, not ``async``, the controller's own Python), the action plugin of the module's
name runs the same ``main()`` here instead, with a runner that stands for AnsibleModule: the same arguments Ansible
would send the module, the same checks (the module's own, then ansible-core's argument-spec validator with the
module's rules), the same result, encoded and decoded as a module's is. Anything else runs the module as Ansible
always does.

The worker may only ever be faster, never the reason a run fails: what it takes from ansible-core beyond the action
plugin it extends is named in CORE_NAMES and ACTION_STEPS only, looked up when a task runs; one that this
ansible-core lacks makes the task run as a module.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import sys
import time
import traceback
import types

from ansible import constants as C
from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action.normal import ActionModule as NormalAction
from ansible.utils.display import Display

# Imported here, not per task: the strategy loads the action plugin before it forks each task's worker, so the
# imports are paid once a run. A controller without requests still loads the plugin (the client guards its import);
# its tasks then run as modules, which fail with the module's own message.
from ansible_collections.uptime.monitoring.plugins.module_utils._client import HAS_REQUESTS
from ansible_collections.uptime.monitoring.plugins.module_utils._connection import CONNECTION_ENV, account_fingerprint, connection_settings
from ansible_collections.uptime.monitoring.plugins.module_utils._module import check_as_given, secrets_as_given, shown_arguments, task_result
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import ValidationError
from ansible_collections.uptime.monitoring.plugins.plugin_utils._lookup_cache import forget

display = Display()

SWITCH = 'UPTIME_RUN_IN_WORKER'
# How ansible-core encodes a module's arguments and its result (AnsibleModule's profile).
PROFILE = 'legacy'
LOCAL_TRANSPORTS = ('local',)
# The values of ansible_python_interpreter that leave the choice to interpreter discovery.
DISCOVERY = ('', 'auto', 'auto_silent', 'auto_legacy', 'auto_legacy_silent')
# What the worker takes from ansible-core's module code, by module: how AnsibleModule reads its settings, validates
# its arguments and encodes them and its result. Looked up when a task runs (core_names).
CORE_NAMES = {
    'ansible.module_utils.common.arg_spec': ('ModuleArgumentSpecValidator',),
    'ansible.module_utils.common.json': ('Direction', 'get_module_decoder', 'get_module_encoder'),
    'ansible.module_utils.common.parameters': ('PASS_VARS',),
    'ansible.module_utils.errors': ('UnsupportedError',),
}
# The steps of the action plugin that the worker takes as a module's task takes them (private to ansible-core): the
# arguments Ansible adds for a module, and the task's environment.
ACTION_STEPS = ('_update_module_args', '_compute_environment_string')
# The variables of a task's environment the worker applies as a module's process would read them: the connection's,
# those requests reads at each request (proxies, CA bundles), and TZ (applied with time.tzset). Any other (PYTHONPATH,
# PYTHONTZPATH, LANG, ...) may be read once, as a Python starts: a task that sets one runs as a module.
WORKER_ENVIRONMENT = frozenset(
    list(CONNECTION_ENV.values()) + ['TZ', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'SSL_CERT_FILE', 'SSL_CERT_DIR']
    + [name for proxy in ('http_proxy', 'https_proxy', 'no_proxy', 'all_proxy') for name in (proxy, proxy.upper())])


@functools.lru_cache(maxsize=None)
def core_names():
    """``(names, None)``: the names of CORE_NAMES; or ``(None, what)``: the first one this ansible-core lacks."""
    found = {}
    for module_name, names in CORE_NAMES.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            return None, module_name
        for name in names:
            if not hasattr(module, name):
                return None, '%s.%s' % (module_name, name)
            found[name] = getattr(module, name)
    return types.SimpleNamespace(**found), None


def worker_refusal(transport, async_val, become, interpreter, has_requests=None, switch=None, missing=None, environment=()):
    """Why a task must run as a module, or None when it can run in the worker.

    ``interpreter``: the Python the module would run on (the (delegated) host's ``ansible_python_interpreter`` or
    its setting), templated, or None when it is left to interpreter discovery;
    ``switch``: the value of the environment variable ``UPTIME_RUN_IN_WORKER``, or None when unset;
    ``missing``: what the worker needs of ansible-core and this one lacks, or None;
    ``environment``: the names the task's ``environment:`` sets.
    """
    if switch not in (None, '') and not boolean(switch, strict=False):
        return '%s is %s' % (SWITCH, switch)
    if missing is not None:
        return 'this ansible-core has no %s' % missing
    if transport not in LOCAL_TRANSPORTS:
        return 'the connection is %s, not local' % transport
    if async_val:
        return 'the task is async'
    if become:
        return 'become is set'
    if interpreter is not None and not same_python(interpreter):
        return 'ansible_python_interpreter is %s, not the controller\'s %s' % (interpreter, sys.executable)
    unapplied = sorted(set(environment) - WORKER_ENVIRONMENT)
    if unapplied:
        return 'the task\'s environment sets %s, which a Python reads as it starts' % ', '.join(unapplied)
    if not (HAS_REQUESTS if has_requests is None else has_requests):
        return 'requests does not import in the controller'
    return None


def same_python(path, executable=None):
    """Whether ``path`` names the Python this process runs (``executable``, by default ``sys.executable``): the same
    file, reached from the same folder. A virtualenv's ``python`` beside its ``python3``, or ``/usr/bin/python3``
    beside ``/usr/bin/python3.11``, is one Python; a virtualenv's link to its base Python is not (other packages)."""
    path, executable = os.path.abspath(os.path.expanduser(path)), os.path.abspath(executable or sys.executable)
    return os.path.dirname(path) == os.path.dirname(executable) and os.path.realpath(path) == os.path.realpath(executable)


def plain(value, direction, core):
    """``value`` as the other side of a module's pipe reads it (``direction``: a name of ``core.Direction``): JSON
    types only, no templating tags."""
    direction = getattr(core.Direction, direction)
    return json.loads(json.dumps(value, cls=core.get_module_encoder(PROFILE, direction)),
                      cls=core.get_module_decoder(PROFILE, direction))


def forget_written(result, params):
    """After a task that changed the account ``params`` name (``api_url``, ``api_key``), forget what the lookups
    kept of it, so that a lookup after the task reads its write."""
    if result.get('changed') and params.get('api_url') and params.get('api_key'):
        forget(account_fingerprint(params))


class TaskEnded(BaseException):
    """The end of a task run in the worker, carrying its result and the arguments it ran with: a BaseException, as
    sys.exit ends a module, so that a module's catch of unexpected errors lets it pass."""

    def __init__(self, result, params=None):
        super().__init__()
        self.result = result
        self.params = params or {}


class WorkerRunner:
    """What a task of the collection uses of AnsibleModule, for a task run in the worker (see ``UptimeModule``).

    Built by :meth:`bound` on the arguments Ansible would send the module; the steps and messages are AnsibleModule's:
    the module's own checks of the arguments as given, then ansible-core's validator; ``exit_json`` and ``fail_json``
    end the task with the result the module would print.
    """

    @classmethod
    def bound(cls, module_args, core=None):
        """``core``: the names of CORE_NAMES (by default, looked up)."""
        core = core or core_names()[0]
        return lambda *args, **kwargs: cls(core, module_args, *args, **kwargs)

    def __init__(self, core, module_args, secret_names, fields, precheck, argument_spec, **relations):
        """``relations``: the module's mutually_exclusive, required_one_of, ... as AnsibleModule takes them. Every
        module of the collection supports check mode, and no task of theirs is sent ``_ansible_ignore_unknown_opts``
        (only action plugins that run another module set it), so neither has a step here."""
        self._core = core
        self._warnings = []
        self._shown_arguments = None
        self.params = plain(module_args, 'CONTROLLER_TO_MODULE', core)
        # As AnsibleModule reads them: those this ansible-core sends, each with its default; any other name starting
        # with _ansible_ is an unsupported parameter.
        settings = {attribute: self.params.pop('_ansible_%s' % name, default) for name, (attribute, default) in core.PASS_VARS.items()}
        self.check_mode = boolean(settings['check_mode'])
        self._name = settings['_name']
        # 2.19 sends no such setting: its modules always return the invocation.
        self._inject_invocation = boolean(settings.get('_inject_invocation', True))
        self._tracebacks = settings['_tracebacks_for']
        self.no_log_values = set(secrets_as_given(self.params, secret_names, fields))
        try:
            check_as_given(self.params, argument_spec, precheck)
        except ValidationError as exc:
            self.fail_json(msg=str(exc), field=exc.field)
        validation = core.ModuleArgumentSpecValidator(argument_spec, **relations).validate(self.params)
        self.params.update(validation.validated_parameters)
        if validation.errors.errors:
            msg = validation.errors.msg
            if isinstance(validation.errors.errors[0], core.UnsupportedError):
                msg = 'Unsupported parameters for (%s) module: %s' % (self._name, msg)
            self.fail_json(msg=msg)
        self._shown_arguments = shown_arguments(self.params, argument_spec, fields)
        self.no_log_values.clear()

    def warn(self, warning):
        self._warnings.append(warning)

    def exit_json(self, **result):
        raise TaskEnded(self._formatted(result), self.params)

    def fail_json(self, msg, exception=None, **result):
        result.update(failed=True, msg=str(msg))
        if 'error' in self._tracebacks:  # as AnsibleModule: the one given, or the current exception's, or the stack
            result['exception'] = str(exception) if exception is not None else traceback.format_exc() \
                if sys.exc_info()[1] is not None else 'Traceback (most recent call last):\n%sMessage: %s\n' % (
                    ''.join(traceback.format_stack()), msg)
        raise TaskEnded(self._formatted(result), self.params)

    def _formatted(self, result):
        result = task_result(result, self.params, self._shown_arguments, self.no_log_values)
        if not self._inject_invocation:
            result.pop('invocation')
        if self._warnings:
            result['warnings'] = list(self._warnings)
        return plain(result, 'MODULE_TO_CONTROLLER', self._core)


@contextlib.contextmanager
def task_environment(environment):
    """The task's ``environment:`` in this process's environment, as the module's process would have it (of
    WORKER_ENVIRONMENT only: see worker_refusal)."""
    saved = {name: os.environ.get(name) for name in environment}
    try:
        os.environ.update((name, str(value)) for name, value in environment.items())
        if 'TZ' in environment:
            time.tzset()
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if 'TZ' in environment:
            time.tzset()


class ModuleInWorker(NormalAction):
    """The action plugin of a module of the collection: its ``main(runner)`` in the worker when it can run there
    (:func:`worker_refusal`), the module as Ansible runs it otherwise. A subclass sets ``module``."""

    module = None

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        core, missing = core_names()
        missing = missing or next(('ActionBase.%s' % step for step in ACTION_STEPS if not callable(getattr(self, step, None))), None)
        environment = {}
        if missing is None:
            self._compute_environment_string(environment)
        refusal = worker_refusal(getattr(self._connection, 'transport', None), self._task.async_val,
                                 self._play_context.become, self._interpreter(task_vars), switch=os.environ.get(SWITCH),
                                 missing=missing, environment=environment)
        if refusal is not None:
            display.vvv('%s runs as a module: %s' % (self._task.action, refusal))
            result = super().run(tmp, task_vars)
            if result.get('changed'):
                # The account as the module read it, where the controller can tell: its arguments, else the task's
                # environment or (on this machine) the controller's.
                given = dict(os.environ) if getattr(self._connection, 'transport', None) in LOCAL_TRANSPORTS else {}
                given.update(environment)
                try:
                    forget_written(result, connection_settings(self._task.args.get, ('api_url', 'api_key'), environ=given))
                except ValidationError:  # no account the controller can tell
                    pass
            return result
        display.vvv('%s runs inside the worker' % self._task.action)
        module_args = dict(self._task.args)
        self._update_module_args(self._task.action, module_args, task_vars)
        with task_environment(environment):
            try:
                self.module.main(runner=WorkerRunner.bound(module_args, core))
            except TaskEnded as ended:
                forget_written(ended.result, ended.params)
                return ended.result
        raise AnsibleActionFail('%s ended without a result' % self._task.action)

    def _interpreter(self, task_vars):
        """The Python the module would run on, as ansible-core reads it (the host's ansible_python_interpreter, then
        ANSIBLE_PYTHON_INTERPRETER or ansible.cfg), templated; None when that is left to discovery (auto, the default
        but for the implicit localhost), which the worker does not run: it has the controller's Python."""
        host_vars = task_vars
        if self._task.delegate_to:
            host_vars = (task_vars.get('ansible_delegated_vars') or {}).get(self._task.delegate_to) or {}
        # The setting has a default (auto): never None.
        value = str(self._templar.template(C.config.get_config_value('INTERPRETER_PYTHON', variables=host_vars))).strip()
        return None if value in DISCOVERY else value
