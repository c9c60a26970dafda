"""Shared setup of the ecosystem tests: the playbooks, the modules' EXAMPLES, the AWX credential type
and the execution environment, run with ``ansible-playbook`` against the service emulator.

* The collection is used from its staged copy (``build/collections``, made by
  ``scripts/stage-collection.sh``; ``./scripts/test.sh`` stages it before every section). When it is
  missing, it is staged here.
* Fixtures: ``emulator`` (one emulator for the session, reset before each test, with the accounts
  PRIMARY_KEY and OTHER_KEY) and ``ansible`` (runs ``ansible-playbook`` / ``ansible`` against it).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from ecosystem_support import OTHER_KEY, PRIMARY_KEY, REPO_ROOT, STAGED, Ansible, Emulator

_shared = {}


def pytest_sessionstart(session):  # pylint: disable=unused-argument
    if not os.path.isdir(STAGED):
        subprocess.run([os.path.join(REPO_ROOT, 'scripts', 'stage-collection.sh')], check=True, stdout=subprocess.DEVNULL)


def pytest_sessionfinish(session):  # pylint: disable=unused-argument
    server = _shared.pop('server', None)
    if server is not None:
        server.stop()


@pytest.fixture(scope='session')
def emulator_server():
    """One emulator for the whole session (accounts PRIMARY_KEY and OTHER_KEY)."""
    if 'server' not in _shared:
        _shared['server'] = Emulator.start(api_keys=(PRIMARY_KEY, OTHER_KEY))
    return _shared['server']


@pytest.fixture
def emulator(emulator_server):  # pylint: disable=redefined-outer-name
    """The session's emulator, reset to an empty state."""
    emulator_server.reset()
    return emulator_server


@pytest.fixture
def ansible(emulator, tmp_path):  # pylint: disable=redefined-outer-name
    """Runs ansible-playbook in a temporary directory against the freshly reset emulator."""
    return Ansible(emulator, tmp_path)
