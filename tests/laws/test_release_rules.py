# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The release rules (CONTRIBUTING.md, Releases), read from the declarations: every deprecation of an option, a
plugin or a plugin's documented option names the collection and a version after the newest release, by which it goes;
the version the collection tells the service (its User-Agent) is galaxy.yml's; a fragment that names a number the code
holds names the code's."""

from __future__ import annotations

import glob
import importlib
import os
import re
import runpy

import pytest
import yaml

from ansible_collections.uptime.monitoring.plugins.module_utils import _client

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
COLLECTION = 'uptime.monitoring'


def newest_release():
    with open(os.path.join(ROOT, 'changelogs', 'changelog.yaml'), encoding='utf-8') as handle:
        releases = (yaml.safe_load(handle) or {}).get('releases') or {}
    return max((as_tuple(version) for version in releases), default=(0, 0, 0))


def as_tuple(version):
    return tuple(int(part) for part in re.match(r'(\d+)\.(\d+)\.(\d+)', str(version)).groups())


def spec_problems(spec, newest, where=''):
    """What an argument spec's deprecations lack: a version after ``newest`` and the collection, for each deprecated
    alias and each option to be removed (nested options too)."""
    problems = []
    for name, option in spec.items():
        here = where + name
        for alias in option.get('deprecated_aliases') or []:
            problems += version_problems(alias.get('version'), alias.get('collection_name'), newest, '%s alias %s' % (here, alias.get('name')))
        if 'removed_in_version' in option or 'removed_at_date' in option:
            problems += version_problems(option.get('removed_in_version'), option.get('removed_from_collection'), newest, here)
        problems += spec_problems(option.get('options') or {}, newest, here + '.')
    return problems


def version_problems(version, collection, newest, where):
    problems = []
    if collection != COLLECTION:
        problems.append('%s: names the collection %r, not %s' % (where, collection, COLLECTION))
    if not version or not re.fullmatch(r'\d+\.\d+\.\d+', str(version)):
        problems.append('%s: names no version (MAJOR.MINOR.PATCH) by which it goes: %r' % (where, version))
    elif as_tuple(version) <= newest:
        problems.append('%s: goes by %s, not after the newest release %s' % (where, version, '.'.join(map(str, newest))))
    return problems


def routing_problems(runtime, newest):
    problems = []
    for kind, plugins in (runtime.get('plugin_routing') or {}).items():
        for name, routing in plugins.items():
            for key in ('deprecation', 'tombstone'):
                if key in routing:
                    entry = routing[key]
                    problems += version_problems(entry.get('removal_version'), COLLECTION, newest, '%s %s %s' % (kind, name, key))
                    if not entry.get('warning_text'):
                        problems.append('%s %s %s: says nothing to the user (warning_text)' % (kind, name, key))
    return problems


def documented_problems(documentation, newest, where):
    problems = []
    for name, option in (documentation.get('options') or {}).items():
        deprecated = option.get('deprecated')
        if deprecated:
            problems += version_problems(deprecated.get('version'), deprecated.get('collection_name'), newest, where + name)
        problems += documented_problems(option.get('suboptions') and {'options': option['suboptions']} or {}, newest, where + name + '.')
    return problems


def plugin_files():
    return sorted(glob.glob(os.path.join(ROOT, 'plugins', '*', '*.py')) + glob.glob(os.path.join(ROOT, 'extensions', 'eda', 'plugins', '*', '*.py')))


def test_every_deprecation_names_the_collection_and_a_version_after_the_newest_release():
    newest = newest_release()
    problems = []
    for path in sorted(glob.glob(os.path.join(ROOT, 'plugins', 'modules', '*.py'))):
        name = os.path.splitext(os.path.basename(path))[0]
        module = importlib.import_module('ansible_collections.uptime.monitoring.plugins.modules.%s' % name)
        specs = [value for key, value in vars(module).items() if key.endswith(('ARGUMENT_SPEC', 'ARGSPEC')) and isinstance(value, dict)]
        assert specs, 'module %s: no argument spec found' % name
        for spec in specs:
            problems += spec_problems(spec, newest, 'module %s: ' % name)
    for path in plugin_files():
        with open(path, encoding='utf-8') as handle:
            found = re.search(r"^DOCUMENTATION = r?'''(.*?)'''", handle.read(), re.S | re.M)
        if found:
            problems += documented_problems(yaml.safe_load(found.group(1)), newest, '%s: ' % os.path.relpath(path, ROOT))
    with open(os.path.join(ROOT, 'meta', 'runtime.yml'), encoding='utf-8') as handle:
        problems += routing_problems(yaml.safe_load(handle), newest)
    assert problems == []


@pytest.mark.parametrize('spec, problem', [
    ({'paused': {'type': 'bool', 'deprecated_aliases': [{'name': 'pause', 'collection_name': COLLECTION}]}}, 'names no version'),
    ({'paused': {'type': 'bool', 'deprecated_aliases': [{'name': 'pause', 'version': '2.0.0'}]}}, 'names the collection None'),
    ({'paused': {'type': 'bool', 'removed_in_version': '1.0.0', 'removed_from_collection': COLLECTION}}, 'not after the newest release'),
    ({'config': {'type': 'list', 'options': {'pause': {'type': 'bool', 'removed_in_version': '3.0.0'}}}}, 'config.pause: names the collection'),
])
def test_a_deprecation_without_what_the_rule_asks_is_found(spec, problem):
    found = spec_problems(spec, (1, 0, 0))
    assert len(found) == 1 and problem in found[0], found


def test_the_version_told_to_the_service_is_galaxy_yml_s():
    with open(os.path.join(ROOT, 'galaxy.yml'), encoding='utf-8') as handle:
        assert _client.COLLECTION_VERSION == yaml.safe_load(handle)['version']


def test_a_fragment_names_the_event_source_state_version_the_code_writes():
    state_version = runpy.run_path(os.path.join(ROOT, 'extensions', 'eda', 'plugins', 'event_source', 'events.py'))['STATE_VERSION']
    named = []
    for path in glob.glob(os.path.join(ROOT, 'changelogs', 'fragments', '*.y*ml')):
        with open(path, encoding='utf-8') as handle:
            named += [(os.path.basename(path), int(number)) for number in re.findall(r'state file is (?:now )?version (\d+)', handle.read())]
    assert [(path, number) for path, number in named if number != state_version] == []
