"""Setup of the reliability session: its HTTPS emulator, its pytest-xdist groups and the report it writes.

``emulator`` and ``connection`` come from tests/conftest.py; ``tls_emulator`` (HTTPS with a test PKI) is this
suite's own. Run as ``pytest -n 2 --dist loadgroup tests/reliability``: the rate-limit test (group
``rate_limit``, two minutes of waiting for the service's limit) is collected first, so that it runs on one worker
beside all the others on the second. Each test's outcome and the figures it recorded (``record_property``) are
written to tests/output/reliability/report.md at the end of the session: what this run saw, never committed.
"""

from __future__ import annotations

import datetime
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from emulator.control import OTHER_KEY, PRIMARY_KEY, Emulator  # noqa: E402  pylint: disable=wrong-import-position
from reliability_support import OUTPUT_DIR  # noqa: E402  pylint: disable=wrong-import-position

REPORT = os.path.join(OUTPUT_DIR, 'report.md')
_reports = []


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.get_closest_marker('xdist_group') is None)


@pytest.fixture(scope='session')
def tls_emulator_server():
    """One emulator serving HTTPS with a test PKI (``.ca_path`` is its CA) for the session."""
    server = Emulator.start(api_keys=(PRIMARY_KEY, OTHER_KEY), tls=True, timeout=120)
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


def pytest_runtest_logreport(report):
    if report.when == 'call' or report.outcome != 'passed':
        _reports.append(report)


def pytest_sessionfinish(session):
    """Write the report (in the controller of an xdist run, which sees every worker's reports)."""
    if hasattr(session.config, 'workerinput') or not _reports:
        return
    if all(report.nodeid.startswith('tests/reliability/test_secrets.py') for report in _reports):
        return  # the secrets scan of an integration session: not this session's report
    lines = ['# Reliability run of %s' % datetime.datetime.now().strftime('%Y-%m-%d %H:%M'), '',
             'What each test of `tests/reliability` saw (see docs/reliability.md); the laws are in `tests/laws`.', '',
             '| test | outcome | seconds | figures |', '|---|---|---|---|']
    for report in sorted(_reports, key=lambda report: report.nodeid):
        figures = '; '.join('%s: %s' % (name, value) for name, value in report.user_properties)
        outcome = report.outcome if report.when == 'call' else '%s (%s)' % (report.outcome, report.when)
        lines.append('| `%s` | %s | %.1f | %s |' % (report.nodeid.split('::', 1)[-1], outcome, report.duration,
                                                    figures.replace('|', '\\|')))
    os.makedirs(OUTPUT_DIR, exist_ok=True)
    with open(REPORT, 'w', encoding='utf-8') as handle:
        handle.write('\n'.join(lines) + '\n')
