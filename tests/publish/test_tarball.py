# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tarball ``ansible-galaxy collection build`` makes, as Galaxy gets it (nox session ``publish``: UPTIME_TARBALL)."""

from __future__ import annotations

import os
import re
import tarfile

import pytest


@pytest.fixture(scope='module')
def tarball():
    path = os.environ.get('UPTIME_TARBALL')
    if not path:
        pytest.fail('UPTIME_TARBALL names no tarball: run these tests with `nox -s publish`')
    with tarfile.open(path) as tar:
        names = set(tar.getnames())
        readme = tar.extractfile('README.md').read().decode('utf-8')
    return names, readme


def test_no_tests_are_shipped(tarball):
    names, dummy = tarball
    assert not sorted(name for name in names if re.match(r'(\./)?(tests|scripts)(/|$)', name))


def test_relative_links_of_the_readme_name_files_of_the_tarball(tarball):
    """README.md is the collection's page on Galaxy: a relative link must name a file the tarball holds."""
    names, readme = tarball
    links = re.findall(r'\]\(([^)#\s]+)(?:#[^)]*)?\)', readme)
    relative = [link for link in links if '://' not in link and not link.startswith('mailto:')]
    assert relative, 'README.md has no relative link: the pattern above no longer finds them'
    assert not sorted({link for link in relative if link.rstrip('/') not in names})
