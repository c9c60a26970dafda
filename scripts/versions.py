"""The collection's versions, for the release procedure (nox session ``release``): galaxy.yml's, the released ones
(changelogs/changelog.yaml), and the rules a release's version keeps. galaxy.yml on main carries a development
version (``1.1.0-dev0``), never a released one: a build of main and a release cannot be told apart otherwise."""

from __future__ import annotations

import os
import re

RELEASE = re.compile(r'(\d+)\.(\d+)\.(\d+)')
VERSION_LINE = re.compile(r'^version: *(\S+) *$', re.M)


def parsed(version):
    found = RELEASE.fullmatch(version)
    return tuple(int(part) for part in found.groups()) if found else None


def galaxy_version(root):
    with open(os.path.join(root, 'galaxy.yml'), encoding='utf-8') as handle:
        return VERSION_LINE.search(handle.read()).group(1)


# Where the collection's version is written: galaxy.yml, and the User-Agent the client sends the service.
VERSION_PLACES = {
    'galaxy.yml': (VERSION_LINE, 'version: %s'),
    'plugins/module_utils/_client.py': (re.compile(r"^COLLECTION_VERSION = '[^']*'$", re.M), "COLLECTION_VERSION = '%s'"),
}


def set_version(root, version):
    """Write ``version`` wherever the collection in ``root`` names its version."""
    for name, (pattern, line) in VERSION_PLACES.items():
        path = os.path.join(root, name)
        with open(path, encoding='utf-8') as handle:
            text, count = pattern.subn(line % version, handle.read(), count=1)
        if count != 1:
            raise ValueError('%s names no version where %s expects it' % (name, pattern.pattern))
        with open(path, 'w', encoding='utf-8') as handle:
            handle.write(text)


def released(root):
    """The released versions, as changelogs/changelog.yaml files them (the keys of ``releases``: read without a YAML
    parser, which the virtualenv running nox lacks)."""
    with open(os.path.join(root, 'changelogs', 'changelog.yaml'), encoding='utf-8') as handle:
        return sorted(re.findall(r"^  '?(\d+\.\d+\.\d+[^:'\s]*)'?:\s*$", handle.read(), re.M))


def release_of(development):
    """The release a development version leads to: ``1.1.0-dev0`` -> ``1.1.0``."""
    return development.split('-', 1)[0]


def next_development(version):
    """The development version that follows the release ``version``: its next minor version, ``-dev0``."""
    major, minor, dummy = parsed(version)
    return '%d.%d.0-dev0' % (major, minor + 1)


def release_problem(version, released_versions):
    """Why ``version`` cannot be released after ``released_versions``, or None."""
    if parsed(version) is None:
        return 'a release is MAJOR.MINOR.PATCH (semantic versioning), got %r' % version
    if version in released_versions:
        return '%s is released already' % version
    newest = max((parsed(each) for each in released_versions if parsed(each)), default=None)
    if newest is not None and parsed(version) < newest:
        return '%s is older than the newest release, %s' % (version, '.'.join(str(part) for part in newest))
    return None
