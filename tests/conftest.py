"""Import paths shared by every pytest suite under tests/.

``import ansible_collections.uptime.monitoring...`` works from a plain checkout: when the repository
does not already live at ``.../ansible_collections/uptime/monitoring`` a symlink tree is made under
``build/pytest_collections`` and put on ``sys.path``. ``tests/`` goes on ``sys.path`` too, for
``from emulator.control import Emulator``.

The fixtures every suite shares: ``emulator_server`` (one emulator process for the session), ``emulator`` (the same
server, idle and reset before each test: no records, log, faults, rate limit, quirks or clock offset) and
``connection`` (the emulator's address and PRIMARY_KEY as module options; the environment holds neither).
A suite that needs an emulator of another kind (TLS, another account set) names its own fixture otherwise.
"""

from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


# pylint: disable=wrong-import-position,redefined-outer-name
import pytest  # noqa: E402
from hypothesis import Phase, settings  # noqa: E402

from emulator.control import NOPLAN_KEY, OTHER_KEY, PRIMARY_KEY, Emulator  # noqa: E402

# The laws over generated input. Unless asked otherwise, every run (CI's and a newcomer's) runs the same examples,
# with each law's fixed budget (a failure found is kept as an @example of its law): HYPOTHESIS_PROFILE=dev draws new
# examples at each run and replays failures from .hypothesis/, HYPOTHESIS_PROFILE=deep runs 1000 a law. No deadline:
# a loaded machine would miss it.
settings.register_profile('ci', derandomize=True, deadline=None, database=None, print_blob=True)
settings.register_profile('dev', deadline=None)
settings.register_profile('deep', deadline=None, max_examples=1000)
# The mutation check (tests/mutants): the CI's examples, and a failure is enough, unshrunk.
settings.register_profile('mutants', settings.get_profile('ci'), phases=[Phase.explicit, Phase.generate])
PROFILE = os.environ.get('HYPOTHESIS_PROFILE') or 'ci'
# The nox session that runs each suite under tests/, for the replay line of a failure.
SESSIONS = {'laws': 'laws', 'ecosystem': 'ecosystem', 'unit': 'units-2.19', 'reliability': 'reliability', 'eda': 'eda'}
settings.load_profile(PROFILE)

EMULATOR_FIXTURES = frozenset(('emulator', 'emulator_server', 'connection'))
_shared = {}


def _shared_emulator():
    if 'server' not in _shared:
        # A generous wait for its READY line: on a loaded machine the start can take longer than the default.
        _shared['server'] = Emulator.start(api_keys=(PRIMARY_KEY, OTHER_KEY), no_api_keys=(NOPLAN_KEY,), timeout=120)
    return _shared['server']


def pytest_collection_modifyitems(items):
    """Start the emulator before any test runs when a collected test needs it.

    ``ansible-test units`` runs every test in a forked child, where a session fixture would be set up (and never
    torn down) once per test; started here, in the process that forks, all tests share one server and
    ``pytest_sessionfinish`` stops it.
    """
    if any(EMULATOR_FIXTURES.intersection(getattr(item, 'fixturenames', ())) for item in items):
        _shared_emulator()


def pytest_terminal_summary(terminalreporter):
    """How to replay each failed test of generated input: the same command, the same profile (``ci`` draws the same
    examples every run; ``dev`` replays a failure it found from .hypothesis/)."""
    failed = [report for report in terminalreporter.stats.get('failed', []) if 'hypothesis' in report.keywords]
    if failed:
        terminalreporter.section('replay')
    for report in failed:
        suite = report.nodeid.split('/')[1] if report.nodeid.startswith('tests/') else ''
        session = SESSIONS.get(suite, suite)
        # ansible-test takes a file, pytest a test.
        target = report.nodeid.split('::')[0] if session.startswith('units') else report.nodeid
        terminalreporter.write_line("HYPOTHESIS_PROFILE=%s ./scripts/test.sh -s %s -- '%s'" % (PROFILE, session, target))


def pytest_sessionfinish():
    server = _shared.pop('server', None)
    if server is not None:
        server.stop()


@pytest.fixture(scope='session')
def emulator_server():
    return _shared_emulator()


@pytest.fixture
def emulator(emulator_server):
    # A client that gave up on a slow answer leaves the request in flight: wait for it before the reset.
    emulator_server.wait_idle()
    emulator_server.reset()
    return emulator_server


@pytest.fixture
def connection(emulator, monkeypatch):
    monkeypatch.delenv('UPTIME_API_URL', raising=False)
    monkeypatch.delenv('UPTIME_API_KEY', raising=False)
    return {'api_url': emulator.url, 'api_key': PRIMARY_KEY}
