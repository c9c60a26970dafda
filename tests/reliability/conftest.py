"""Setup of the reliability tests (issue #7): import paths, emulator fixtures, result recording.

* ``import ansible_collections.uptime.monitoring...`` and ``from emulator.control import Emulator``
  work from a plain checkout through ``tests/conftest.py``.
* ``emulator_server`` is one emulator for the session; ``emulator`` is the same server, reset.
* ``record`` stores one result row of the run (see ``reliability_support.record``); ``report.py``
  turns the rows into ``docs/reliability.md``.
"""

from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

if HERE not in sys.path:
    sys.path.insert(0, HERE)

from emulator.control import NOPLAN_KEY, OTHER_KEY, PRIMARY_KEY, Emulator  # noqa: E402  pylint: disable=wrong-import-position

import matrix_settings  # noqa: E402  pylint: disable=wrong-import-position
import reliability_support  # noqa: E402  pylint: disable=wrong-import-position


COLLECTION_ORDER = {}


def pytest_collection_modifyitems(items):
    COLLECTION_ORDER.update((item.nodeid, order) for order, item in enumerate(items))


@pytest.fixture(autouse=True)
def recording_order(request):
    """The rows this test records carry its place in the collection (the same in every xdist worker)."""
    reliability_support.RUNNING['order'] = COLLECTION_ORDER.get(request.node.nodeid, 0)


@pytest.fixture(scope='session')
def emulator_server():
    """One emulator process for the session (in-memory database, rate limit off)."""
    server = Emulator.start(api_keys=(PRIMARY_KEY, OTHER_KEY), no_api_keys=(NOPLAN_KEY,))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope='session')
def tls_emulator_server():
    """One emulator serving HTTPS with a test PKI (``.ca_path`` is its CA) for the session."""
    server = Emulator.start(api_keys=(PRIMARY_KEY, OTHER_KEY), tls=True)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def tls_emulator(tls_emulator_server):  # pylint: disable=redefined-outer-name
    """The session's HTTPS emulator after a wait for stragglers and a reset (faults cleared too)."""
    tls_emulator_server.wait_idle()
    tls_emulator_server.reset()
    return tls_emulator_server


@pytest.fixture
def emulator(emulator_server):  # pylint: disable=redefined-outer-name
    """The session's emulator after a wait for stragglers and a reset."""
    emulator_server.wait_idle()
    emulator_server.reset()
    return emulator_server


@pytest.fixture
def connection(emulator, monkeypatch):  # pylint: disable=redefined-outer-name
    """Connection options of an in-process module run: short timeout, two retries."""
    monkeypatch.delenv('UPTIME_API_URL', raising=False)
    monkeypatch.delenv('UPTIME_API_KEY', raising=False)
    return dict(api_url=emulator.url, api_key=PRIMARY_KEY, timeout=matrix_settings.TIMEOUT, retries=matrix_settings.RETRIES)


@pytest.fixture
def record():
    """``record(group, key, **row)``: keep one result row for the report."""
    return reliability_support.record
