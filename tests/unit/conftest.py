"""Shared setup of the unit tests.

* ``import ansible_collections.uptime.monitoring...`` works from a plain checkout: when the repository
  does not already live at ``.../ansible_collections/uptime/monitoring`` a symlink tree is made under
  ``build/pytest_collections`` and put on ``sys.path``.
* ``from emulator.control import Emulator`` works (``tests/`` goes on ``sys.path``).
* Fixtures: ``emulator_server`` (one emulator process per session) and ``emulator`` (the same server,
  reset before each test).  The keys are PRIMARY_KEY, OTHER_KEY and NOPLAN_KEY (an account whose plan has
  no API access); they are also importable from ``emulator.control``.
"""

from __future__ import annotations

import os
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _collections_path():
    """Return a directory that contains ``ansible_collections/uptime/monitoring`` pointing at this repository."""
    namespace_dir = os.path.dirname(REPO_ROOT)
    if os.path.basename(os.path.dirname(namespace_dir)) == 'ansible_collections':
        return os.path.dirname(os.path.dirname(namespace_dir))
    base = os.path.join(REPO_ROOT, 'build', 'pytest_collections')
    link = os.path.join(base, 'ansible_collections', 'uptime', 'monitoring')
    if os.path.realpath(link) != os.path.realpath(REPO_ROOT):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if os.path.islink(link):
            os.unlink(link)
        try:
            os.symlink(REPO_ROOT, link)
        except FileExistsError:  # a parallel run made it first
            pass
    return base


for _path in (os.path.join(REPO_ROOT, 'tests'), _collections_path()):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from emulator.control import NOPLAN_KEY, OTHER_KEY, PRIMARY_KEY, Emulator  # noqa: E402  pylint: disable=wrong-import-position

__all__ = ['NOPLAN_KEY', 'OTHER_KEY', 'PRIMARY_KEY']

EMULATOR_FIXTURES = frozenset(('emulator', 'emulator_server', 'emulator_url'))
_shared = {}


def _shared_emulator():
    if 'server' not in _shared:
        _shared['server'] = Emulator.start(api_keys=(PRIMARY_KEY, OTHER_KEY), no_api_keys=(NOPLAN_KEY,))
    return _shared['server']


def pytest_collection_modifyitems(items):
    """Start the emulator before any test runs when a collected test needs it.

    ``ansible-test units`` runs every test in a forked child, where a session fixture would be set up
    (and never torn down) once per test; starting the server here, in the process that forks, gives all
    tests one server and lets ``pytest_sessionfinish`` stop it.
    """
    if any(EMULATOR_FIXTURES.intersection(getattr(item, 'fixturenames', ())) for item in items):
        _shared_emulator()


def pytest_sessionfinish():
    server = _shared.pop('server', None)
    if server is not None:
        server.stop()


@pytest.fixture(scope='session')
def emulator_server():
    """One emulator process for the whole session (in-memory database)."""
    return _shared_emulator()


@pytest.fixture
def emulator(emulator_server):  # pylint: disable=redefined-outer-name
    """The session's emulator, reset to an empty state (no records, log, faults, rate limit or quirks)."""
    emulator_server.reset()
    return emulator_server


@pytest.fixture
def emulator_url(emulator):  # pylint: disable=redefined-outer-name
    """Base URL of a freshly reset emulator."""
    return emulator.url
