"""The one in-process module runner: a module's ``main()`` run in this process as Ansible runs a module process.

``run_module(main, args, check_mode=False, diff=False)`` returns a ``ModuleRun``: the JSON result, or the traceback
of a crash (an exception other than the module's own exit, which a user would see as a traceback).
``run_in_worker`` runs the same ``main`` as the module's action plugin runs it inside Ansible's worker, and
``run_lookup(name, options)`` a lookup of the collection as a template calls it.

And the inventory plugin in this process: ``inventory_plugin(url, **options)`` with its options given directly
(the configuration file and the documentation that declares them are exercised through ansible-inventory by
tests/ecosystem), and ``parse_inventory(plugin)``.
"""

from __future__ import annotations

import functools
import importlib
import io
import json
import os
import traceback
from contextlib import redirect_stdout
from unittest import mock

import yaml

from ansible.module_utils import _internal as module_internal
from ansible.module_utils._internal import _traceback
from ansible.module_utils.common import warnings as module_warnings
from ansible.module_utils.testing import patch_module_args

from emulator.control import PRIMARY_KEY

# What the inventory plugin is given beside the defaults it declares (see inventory_plugin).
INVENTORY_GIVEN = dict(plugin='uptime.monitoring.monitors', api_key=PRIMARY_KEY, retries=0)


class ModuleRun:
    """What one in-process module run produced."""

    def __init__(self, result=None, crash=None, stdout=''):
        self.result = result or {}
        self.crash = crash
        self.stdout = stdout
        self.new_secrets = []
        # The deprecations the run printed or returned (a module returns them; the worker's display prints them).
        self.deprecations = list((result or {}).get('deprecations', []))

    @property
    def failed(self):
        return self.crash is not None or bool(self.result.get('failed'))

    @property
    def changed(self):
        return self.result.get('changed')

    @property
    def msg(self):
        return str(self.result.get('msg', ''))

    def __getitem__(self, key):
        return self.result[key]

    def get(self, key, default=None):
        return self.result.get(key, default)

    def __repr__(self):
        return '<ModuleRun crash=%r result=%s>' % (self.crash and self.crash[-300:], json.dumps(self.result)[:600])


def run_module(main, args, check_mode=False, diff=False):
    """Run ``main()`` of a module with ``args`` like Ansible would, catching its exit."""
    args = dict(args)
    # Warnings are kept per process, as a module process runs once: start each run afresh. A test that imported
    # controller code (the inventory plugin's) makes warnings go to the display instead of the result: run the module
    # as the module process it is.
    module_warnings._global_warnings.clear()  # pylint: disable=protected-access
    module_warnings._global_deprecations.clear()  # pylint: disable=protected-access
    if check_mode:
        args['_ansible_check_mode'] = True
    if diff:
        args['_ansible_diff'] = True
    out = io.StringIO()
    crash = None
    # A module process asks its arguments whether tracebacks are wanted (_ansible_tracebacks_for); controller code,
    # once imported, asks the controller's configuration instead.
    controller, module_internal.is_controller = module_internal.is_controller, False
    asked_for, _traceback._is_traceback_enabled = _traceback._is_traceback_enabled, _traceback._is_module_traceback_enabled  # pylint: disable=protected-access
    _traceback._module_tracebacks_enabled_events = None  # pylint: disable=protected-access
    try:
        with patch_module_args(args), redirect_stdout(out):
            main()
    except SystemExit:
        pass
    except BaseException:  # pylint: disable=broad-except  # what a user would see as a traceback
        crash = traceback.format_exc()
    finally:
        module_internal.is_controller = controller
        _traceback._is_traceback_enabled = asked_for  # pylint: disable=protected-access
    text = out.getvalue()
    result = None
    if crash is None:
        try:
            result = json.loads(text)
        except ValueError:
            crash = 'module printed no JSON result:\n' + text
    run = ModuleRun(result, crash, text)
    # As the controller reads a module's result (2.22): the secrets the module registered are taken off, for the
    # display to hide; no user sees them.
    run.new_secrets = (result or {}).pop('_ansible_new_secrets', [])
    return run


def run_in_worker(main, args, check_mode=False, diff=False):
    """Run ``main(runner)`` of a module with ``args`` as its action plugin runs it inside Ansible's worker (controller
    code), catching the end of its task; a ``ModuleRun`` as ``run_module`` returns."""
    from ansible_collections.uptime.monitoring.plugins.plugin_utils._in_worker import (  # pylint: disable=import-outside-toplevel
        TaskEnded,
        WorkerRunner,
    )
    args = dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff)
    controller, module_internal.is_controller = module_internal.is_controller, True
    try:
        main(runner=WorkerRunner.bound(args))
    except TaskEnded as ended:
        return ModuleRun(ended.result)
    except BaseException:  # pylint: disable=broad-except
        return ModuleRun(crash=traceback.format_exc())
    finally:
        module_internal.is_controller = controller
    return ModuleRun(crash='main() returned without ending its task')


def run_action(name, args, check_mode=False, diff=False, task_vars=None, environment=None, tracebacks=(), **task):
    """Run the action plugin of module ``name`` as a play's strategy runs it for a task on the implicit localhost
    (``check_mode``, ``diff``: the task's, as ``--check``, ``--diff`` or its keywords set them): what it does with the
    task (its choice of path, the arguments it gives the module) is run too; a ``ModuleRun`` of the registered result.

    ``task_vars``: the host's variables; ``environment``: the task's ``environment:``; ``tracebacks``: the events
    ``ANSIBLE_DISPLAY_TRACEBACK`` names; ``task``: ``transport`` (the connection plugin), ``become``, ``async_val``,
    ``delegate_to``."""
    # Controller code, as inventory_plugin's.
    from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel
    from ansible.playbook.play_context import PlayContext  # pylint: disable=import-outside-toplevel
    from ansible.playbook.task import Task  # pylint: disable=import-outside-toplevel
    from ansible.plugins import loader as plugin_loader  # pylint: disable=import-outside-toplevel
    from ansible.template import Templar  # pylint: disable=import-outside-toplevel
    from ansible.utils.display import Display  # pylint: disable=import-outside-toplevel
    module = importlib.import_module('ansible_collections.uptime.monitoring.plugins.action.%s' % name)
    play_task = Task()
    play_task.action = 'uptime.monitoring.%s' % name
    play_task.args = dict(args)
    play_task.check_mode, play_task.diff = check_mode, diff
    play_task.async_val, play_task.delegate_to = task.get('async_val', 0), task.get('delegate_to')
    play_task.environment = [environment] if environment else []
    play_context = PlayContext()
    play_context.check_mode, play_context.diff, play_context.become = check_mode, diff, task.get('become', False)
    connection = plugin_loader.connection_loader.get(task.get('transport', 'local'), play_context, os.devnull)
    loader = DataLoader()
    plugin = module.ActionModule(play_task, connection, play_context, loader, Templar(loader=loader, variables=task_vars or {}),
                                 plugin_loader)
    controller, module_internal.is_controller = module_internal.is_controller, True
    asked_for, _traceback.traceback_for = _traceback.traceback_for, lambda: list(tracebacks)
    printed = []
    try:
        with mock.patch.object(Display, 'deprecated', lambda self, *args, **kwargs: printed.append((args, kwargs))):
            run = ModuleRun(plugin.run(task_vars=task_vars or {}))
    except BaseException:  # pylint: disable=broad-except
        run = ModuleRun(crash=traceback.format_exc())
    finally:
        module_internal.is_controller = controller
        _traceback.traceback_for = asked_for
    run.deprecations += printed
    return run


@functools.lru_cache(maxsize=None)
def declared_options(module):
    """Every option a plugin declares, its doc fragments' first (the collection's and ansible-core's, as Ansible's plugin
    loader reads them), each with the fragment that declares it (None: the plugin's own DOCUMENTATION). Read once per
    plugin: the result is shared, not to be changed."""
    doc = yaml.safe_load(module.DOCUMENTATION)
    options = {}
    for fragment in doc.get('extends_documentation_fragment') or []:
        package, name = ('ansible_collections.uptime.monitoring.plugins.doc_fragments', fragment[len('uptime.monitoring.'):]) \
            if fragment.startswith('uptime.monitoring.') else ('ansible.plugins.doc_fragments', fragment.split('ansible.builtin.')[-1])
        name, part = (name.split('.', 1) + [''])[:2]
        source = importlib.import_module('%s.%s' % (package, name)).ModuleDocFragment
        declared = yaml.safe_load(getattr(source, (part or 'documentation').upper())).get('options') or {}
        for option, spec in declared.items():  # a later fragment adds to an option (its env, vars), as Ansible merges them
            first, known = options.get(option, (fragment, {}))
            options[option] = (first, dict(known, **spec))
    for option, spec in (doc.get('options') or {}).items():
        first, known = options.get(option, (None, {}))
        options[option] = (first, dict(known, **spec))
    return options


def documented_options(module):
    """The options a plugin's DOCUMENTATION declares, its doc fragments' first, as Ansible's plugin loader reads them."""
    return {option: spec for option, (dummy, spec) in declared_options(module).items()}


def run_lookup(name, options):
    """Run the collection's lookup ``name`` with ``options`` as ``query()`` calls it, its documented options given to
    Ansible's configuration as the plugin loader gives them: a ``ModuleRun`` whose result is ``{'records': [...]}``, or
    a failed one with the message Ansible shows."""
    # Controller code, as inventory_plugin's.
    from ansible import constants as C  # pylint: disable=import-outside-toplevel
    from ansible.errors import AnsibleError  # pylint: disable=import-outside-toplevel
    module = importlib.import_module('ansible_collections.uptime.monitoring.plugins.lookup.%s' % name)
    load_name = 'uptime.monitoring.%s' % name
    if not C.config.has_configuration_definition('lookup', load_name):
        C.config.initialize_plugin_configuration_definitions('lookup', load_name, documented_options(module))
    plugin = module.LookupModule()
    plugin._load_name = load_name  # pylint: disable=protected-access
    try:
        return ModuleRun({'records': plugin.run([], variables={}, **options)})
    except AnsibleError as exc:
        return ModuleRun({'failed': True, 'msg': exc.message})
    except BaseException:  # pylint: disable=broad-except
        return ModuleRun(crash=traceback.format_exc())


def inventory_plugin(url, **options):
    """The inventory plugin with ``options`` over the defaults its DOCUMENTATION and doc fragments declare and
    INVENTORY_GIVEN (``api_url`` the service at ``url`` unless given); its cache a dict, unless ``load_cache_plugin()``
    loads the one the options name."""
    # Controller code: imported where a test runs the plugin, never by a test of a module (ansible-test units runs
    # those where only module code can be imported).
    from ansible_collections.uptime.monitoring.plugins.inventory import monitors  # pylint: disable=import-outside-toplevel
    plugin = monitors.InventoryModule()
    declared = {option: spec.get('default') for option, (dummy, spec) in declared_options(monitors).items()}
    plugin._options = dict(declared, **dict(INVENTORY_GIVEN, **dict({'api_url': url}, **options)))  # pylint: disable=protected-access
    plugin._read_config_data = lambda path: None  # pylint: disable=protected-access
    plugin._cache = {}  # pylint: disable=protected-access
    return plugin


def parse_inventory(plugin, cache=True, path='/inventories/production.uptime.yml'):
    from ansible.inventory.data import InventoryData  # pylint: disable=import-outside-toplevel
    from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel
    inventory = InventoryData()
    plugin.parse(inventory, DataLoader(), path, cache=cache)
    return inventory
