"""Shared setup of the unit tests: import paths, the emulator fixtures and the Hypothesis profiles are those
of ``tests/conftest.py``; the keys are PRIMARY_KEY, OTHER_KEY and NOPLAN_KEY (an account whose plan has no API access),
also importable from ``emulator.control``.

The unit tests of ``plugins/module_utils`` use ``service`` (a ``fake_client.FakeService``: the emulator's rules in this
process) and ``fake_connection`` (the module options of a connection whose clients are ``FakeClient``\\ s of
``service``) instead of the emulator process.
"""

from __future__ import annotations

import os
import sys

import pytest
from emulator.control import NOPLAN_KEY, OTHER_KEY, PRIMARY_KEY

# ansible-test puts neither tests/unit nor the test's own directory on sys.path.
if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fake_client import FakeService, install  # noqa: E402  # pylint: disable=wrong-import-position

__all__ = ['NOPLAN_KEY', 'OTHER_KEY', 'PRIMARY_KEY']


@pytest.fixture
def service():
    return FakeService()


@pytest.fixture
def fake_connection(service, monkeypatch):
    return install(service, monkeypatch)
