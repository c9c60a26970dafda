"""Shared setup of the unit tests: import paths, the emulator fixtures and the Hypothesis profiles are those
of ``tests/conftest.py``; the keys are PRIMARY_KEY, OTHER_KEY and NOPLAN_KEY (an account whose plan has no API access),
also importable from ``emulator.control``.
"""

from __future__ import annotations

from emulator.control import NOPLAN_KEY, OTHER_KEY, PRIMARY_KEY

__all__ = ['NOPLAN_KEY', 'OTHER_KEY', 'PRIMARY_KEY']
