# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection as users get it, for tests/eda: the work tree staged (scripts/stage-collection.sh), built with
``ansible-galaxy collection build`` and installed with ``ansible-galaxy collection install``. The emulator is
tests/conftest.py's.

The event source is tested from such an install, never from the work tree: that is where ansible-rulebook
loads it, with nothing of the collection on ``sys.path``.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
SOURCE_IN_COLLECTION = os.path.join('ansible_collections', 'uptime', 'monitoring', 'extensions', 'eda', 'plugins',
                                    'event_source', 'events.py')


def _run(command, tmp_dir):
    environment = {key: value for key, value in os.environ.items() if not key.startswith(('ANSIBLE_', 'UPTIME_'))}
    environment.update(PATH=BIN + os.pathsep + environment.get('PATH', ''), ANSIBLE_LOCAL_TEMP=tmp_dir,
                       ANSIBLE_NOCOLOR='1')
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
    assert done.returncode == 0, '%s failed:\n%s\n%s' % (' '.join(command), done.stdout, done.stderr)
    return done.stdout


@pytest.fixture(scope='session')
def collection_tarball(tmp_path_factory):
    """The tarball ``ansible-galaxy collection build`` makes of the staged work tree (as the session publish does)."""
    work = tmp_path_factory.mktemp('collection-build')
    staged = _run([os.path.join(REPO_ROOT, 'scripts', 'stage-collection.sh'), str(work / 'staged')],
                  str(work)).strip().splitlines()[-1]
    _run([os.path.join(BIN, 'ansible-galaxy'), 'collection', 'build', '--force', '--output-path', str(work / 'dist'),
          staged], str(work))
    (tarball,) = glob.glob(str(work / 'dist' / 'uptime-monitoring-*.tar.gz'))
    return tarball


@pytest.fixture(scope='session')
def install_collection(collection_tarball, tmp_path_factory):
    """``install(path)``: the tarball installed with ``ansible-galaxy collection install -p path``; returns the
    path of the installed event source."""
    def install(path):
        _run([os.path.join(BIN, 'ansible-galaxy'), 'collection', 'install', '--offline', '--force', '-p', str(path),
              collection_tarball], str(tmp_path_factory.mktemp('galaxy-tmp')))
        source = os.path.join(str(path), SOURCE_IN_COLLECTION)
        assert os.path.isfile(source)
        return source
    return install


@pytest.fixture(scope='session')
def installed_collections(install_collection, tmp_path_factory):
    """A collections path holding the installed collection (what ANSIBLE_COLLECTIONS_PATH names for ansible-rulebook)."""
    path = tmp_path_factory.mktemp('installed-collections')
    install_collection(path)
    return str(path)
