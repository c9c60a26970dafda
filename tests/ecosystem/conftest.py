"""Shared setup of the ecosystem tests. The collection is used from its staged copy (UPTIME_COLLECTIONS: the nox
session stages it under ``build/collections-ecosystem``; by default ``build/collections``, staged here when missing).
Fixtures: ``emulator`` (``tests/conftest.py``), ``ansible`` (runs ``ansible-playbook`` against it) and
``collection_tarball`` (the collection built once for the whole run, shared by the xdist workers)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess

import pytest

from ecosystem_support import BIN, COLLECTIONS, RELEASE_VERSION, REPO_ROOT, STAGED, Ansible, versions


def pytest_sessionstart(session):  # pylint: disable=unused-argument
    if not os.path.isdir(STAGED):
        subprocess.run([os.path.join(REPO_ROOT, 'scripts', 'stage-collection.sh'), COLLECTIONS], check=True,
                       stdout=subprocess.DEVNULL)


@pytest.fixture
def ansible(emulator, tmp_path):  # pylint: disable=redefined-outer-name
    """Runs ansible-playbook in a temporary directory against the freshly reset emulator."""
    return Ansible(emulator, tmp_path)


@pytest.fixture(scope='session')
def collection_tarball(tmp_path_factory):
    """The path of the collection's tarball, built from the staged copy as ``ansible-galaxy collection build`` builds
    it, with the version of the release galaxy.yml's development version leads to (``1.1.0-dev0``: ``1.1.0``), as
    the release procedure stamps it: ``ansible-galaxy collection install`` takes no pre-release unless told to, and
    users install releases. Built once for the whole run: the xdist workers share one (the first that needs it builds
    it, under a lock). Tests read it and never change it."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get('PYTEST_XDIST_WORKER'):
        root = root.parent  # the run's directory, above the workers' own
    output = root / 'collection-tarball'
    with open(str(root / 'collection-tarball.lock'), 'w', encoding='utf-8') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not output.is_dir():
            building, release = root / 'collection-tarball.building', root / 'collection-release'
            shutil.rmtree(str(release), ignore_errors=True)
            shutil.copytree(STAGED, str(release), symlinks=True)
            versions.set_version(str(release), RELEASE_VERSION)
            subprocess.run([os.path.join(BIN, 'ansible-galaxy'), 'collection', 'build', '--force', '--output-path',
                            str(building), str(release)], check=True, capture_output=True, timeout=300,
                           env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS))
            building.rename(output)
    (tarball,) = output.glob('uptime-monitoring-*.tar.gz')
    return str(tarball)
