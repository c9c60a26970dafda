"""What the module tests share: running a module's ``main()`` in this process as a module process, and the
connection options of the emulator."""

from __future__ import annotations

import json

import pytest
from ansible.module_utils import _internal as module_internal
from ansible.module_utils.common import warnings as module_warnings
from ansible.module_utils.testing import patch_module_args
from emulator.control import PRIMARY_KEY


@pytest.fixture
def run(capsys):
    """``run(module_main, args, check_mode=False)``: the module's JSON result."""
    def run_module(module_main, args, check_mode=False):
        # Warnings are kept per process (a module process runs once): start each in-process run afresh. A test
        # that imported controller code (the inventory plugin's) makes warnings go to the display instead of the
        # result: run the module as the module process it is.
        module_warnings._global_warnings.clear()  # pylint: disable=protected-access
        controller, module_internal.is_controller = module_internal.is_controller, False
        if check_mode:
            args = dict(args, _ansible_check_mode=True)
        try:
            with patch_module_args(args):
                with pytest.raises(SystemExit):
                    module_main()
        finally:
            module_internal.is_controller = controller
        return json.loads(capsys.readouterr().out)
    return run_module


@pytest.fixture
def connection(emulator, monkeypatch):
    """The emulator's address and key as options; the environment holds neither."""
    monkeypatch.delenv('UPTIME_API_URL', raising=False)
    monkeypatch.delenv('UPTIME_API_KEY', raising=False)
    return {'api_url': emulator.url, 'api_key': PRIMARY_KEY}
