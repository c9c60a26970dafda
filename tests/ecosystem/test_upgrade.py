"""An upgrade as an operator makes it: the newest release installed from its tarball (built from its git tag, as the
release procedure tagged it), its demo run; then the build of the work tree installed over it without ``--force``, as
ansible-galaxy installs a newer release, and the demo run again by the new version."""

from __future__ import annotations

import json
import os
import subprocess

from ecosystem_support import BIN, RELEASE_VERSION, REPO_ROOT, versions


def installed_version(collections):
    with open(os.path.join(collections, 'ansible_collections', 'uptime', 'monitoring', 'MANIFEST.json'), encoding='utf-8') as handle:
        return json.load(handle)['collection_info']['version']


def release_commit(version):
    """The commit of release ``version``: its tag, or in a clone without tags the commit the release procedure made."""
    def git(*args):
        return subprocess.run(['git', *args], cwd=REPO_ROOT, capture_output=True, text=True, check=False).stdout.strip()
    commit = git('rev-parse', '-q', '--verify', 'refs/tags/%s^{commit}' % version) or \
        git('log', '--format=%H', '-1', '--grep', '^Release %s$' % version.replace('.', '\\.'))
    assert commit, 'neither the tag %s nor its commit "Release %s" is in this clone' % (version, version)
    return commit


def test_the_work_tree_installs_over_the_newest_release_and_runs_the_demo(ansible, tmp_path, collection_tarball):
    newest = max(versions.released(REPO_ROOT), key=versions.parsed)
    source, built, collections = tmp_path / 'release', tmp_path / 'built', str(tmp_path / 'collections')
    source.mkdir()
    archive = subprocess.run(['git', 'archive', release_commit(newest)], cwd=REPO_ROOT, check=True, capture_output=True).stdout
    subprocess.run(['tar', '-x', '-C', str(source)], input=archive, check=True)
    subprocess.run([os.path.join(BIN, 'ansible-galaxy'), 'collection', 'build', '--output-path', str(built), str(source)],
                   check=True, capture_output=True)
    env = ansible.environment(collections=(collections,))
    for tarball, version in ((str(built / ('uptime-monitoring-%s.tar.gz' % newest)), newest), (collection_tarball, RELEASE_VERSION)):
        install = subprocess.run([os.path.join(BIN, 'ansible-galaxy'), 'collection', 'install', '-p', collections, tarball],
                                 env=env, capture_output=True, text=True, check=False)
        assert install.returncode == 0 and 'was installed successfully' in install.stdout, install
        assert installed_version(collections) == version
        ansible.playbook('uptime.monitoring.demo', collections=(collections,))
