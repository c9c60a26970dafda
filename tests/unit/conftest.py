"""Shared setup of the unit tests (import paths: ``tests/conftest.py``).

* Fixtures: ``emulator_server`` (one emulator process per session) and ``emulator`` (the same server,
  reset before each test).  The keys are PRIMARY_KEY, OTHER_KEY and NOPLAN_KEY (an account whose plan has
  no API access); they are also importable from ``emulator.control``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from emulator.control import NOPLAN_KEY, OTHER_KEY, PRIMARY_KEY, Emulator

# The laws over generated input: in CI the same examples every run (a failure found is kept as an @example), and no
# deadline, which a loaded machine would miss.
settings.register_profile('ci', derandomize=True, deadline=None, database=None)
settings.register_profile('default', deadline=None)
settings.load_profile('ci' if os.environ.get('CI') else 'default')

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
