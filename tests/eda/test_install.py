# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source, installed with ``ansible-galaxy collection install``, uses the module_utils beside it.

Each case loads the installed ``events.py`` with ``runpy.run_path`` (as ansible-rulebook does) in a fresh
``python -I`` (no PYTHONPATH, no user site, a clean environment) and polls the emulator with it: from a
collections path that is not on ``sys.path``, from the layout of a decision environment
(``/usr/share/ansible/collections``), and with another, stale ``ansible_collections`` tree (a regular package)
imported first. A broken install stops ``main()`` with one line, never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from emulator.control import PRIMARY_KEY

MONITOR = {'name': 'web', 'url': 'https://web.example.com', 'interval': '60', 'request_method': 'GET',
           'alert_condition': 'url_unavailable'}

# argv: the source file, the service, a JSON list of directories to put first on sys.path, and what to break.
PROBE = r'''
import asyncio, json, runpy, sys
path, url, key, first_on_path, breaking = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
for directory in reversed(first_on_path):
    sys.path.insert(0, directory)
shadowed = None
if first_on_path:
    # Another uptime.monitoring is importable, and imported, before the source loads.
    from ansible_collections.uptime.monitoring.plugins.module_utils import _connection as shadow
    shadowed = shadow.__file__
if breaking == 'requests':
    sys.modules['requests'] = None
source = runpy.run_path(path)
report = {'sys_path': sys.path, 'shadowed': shadowed, 'load_error': source['LOAD_ERROR']}
if source['LOAD_ERROR'] is None:
    report['files'] = {name: source[name].__file__ for name in ('_client', '_schema', '_connection')}
    report['module_names'] = {name: source[name].__name__ for name in ('_client', '_connection')}
    poller = source['Poller'](source['parse_args']({'api_url': url, 'api_key': key + '\n', 'emit_existing': True,
                                                    'watch': ['monitors']}, environ={}))
    report['events'] = [event['uptime']['type'] for event in poller.poll()]
else:
    class Queue:
        async def put(self, event):
            pass
    try:
        asyncio.run(asyncio.wait_for(source['main'](Queue(), {'api_url': url, 'api_key': key}), 10))
    except Exception as exc:
        report['main'] = [exc.__class__.__name__, str(exc)]
print(json.dumps(report))
'''


def probe(source, url, first_on_path=(), breaking=''):
    """What the installed source does in a fresh, isolated interpreter."""
    environment = {'PATH': os.environ.get('PATH', ''), 'HOME': os.environ.get('HOME', '/tmp'), 'LANG': 'C.UTF-8'}
    done = subprocess.run([sys.executable, '-I', '-c', PROBE, source, url, PRIMARY_KEY, json.dumps(list(first_on_path)),
                           breaking], env=environment, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == '', done.stderr
    return json.loads(done.stdout)


def collection_root(source):
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(source)))))


def assert_uses_its_own_module_utils(report, source):
    assert report['load_error'] is None
    module_utils = os.path.join(collection_root(source), 'plugins', 'module_utils')
    for name, path in report['files'].items():
        assert os.path.dirname(path) == module_utils, (name, path)
    assert not any(name.startswith('ansible_collections.') for name in report['module_names'].values())
    assert report['events'] == ['monitor_status_changed']


@pytest.fixture(scope='module')
def service(emulator_server):
    emulator_server.wait_idle()
    emulator_server.reset()
    assert emulator_server.api('POST', '/api/v1/monitors', data=MONITOR).status == 201
    return emulator_server


def test_installed_in_a_collections_path_that_is_not_on_sys_path(service, install_collection, tmp_path):
    source = install_collection(tmp_path / 'collections')
    report = probe(source, service.url)
    assert not any(entry.startswith(str(tmp_path)) for entry in report['sys_path'])
    assert_uses_its_own_module_utils(report, source)


def test_installed_in_the_layout_of_a_decision_environment(service, install_collection, tmp_path):
    source = install_collection(tmp_path / 'usr' / 'share' / 'ansible' / 'collections')
    assert source.startswith(str(tmp_path / 'usr' / 'share' / 'ansible' / 'collections' / 'ansible_collections'))
    assert_uses_its_own_module_utils(probe(source, service.url), source)


def test_another_ansible_collections_tree_first_on_sys_path_does_not_shadow_it(service, install_collection, tmp_path):
    source = install_collection(tmp_path / 'collections')
    # A stale uptime.monitoring in a regular package, as an old pip-installed tree may hold it.
    stale = tmp_path / 'site' / 'ansible_collections' / 'uptime' / 'monitoring' / 'plugins' / 'module_utils'
    stale.mkdir(parents=True)
    for directory in (stale, stale.parent, stale.parent.parent, stale.parent.parent.parent,
                      stale.parent.parent.parent.parent):
        (directory / '__init__.py').write_text('')
    for name in ('_client', '_schema', '_connection', '_monitor', '_incident', '_resource'):
        (stale / (name + '.py')).write_text('raise ImportError("the stale uptime.monitoring was used")\n'
                                            if name != '_connection' else 'STALE = True\n')
    report = probe(source, service.url, first_on_path=[str(tmp_path / 'site')])
    assert report['shadowed'] == str(stale / '_connection.py')
    assert_uses_its_own_module_utils(report, source)


@pytest.mark.parametrize('breaking, words', [
    ('module_utils', ['plugins/module_utils', 'ansible-galaxy collection install']),
    ('requests', ['requests is required', 'pip install requests']),
])
def test_a_broken_install_stops_main_with_one_line(service, install_collection, tmp_path, breaking, words):
    source = install_collection(tmp_path / 'collections')
    if breaking == 'module_utils':
        shutil.rmtree(os.path.join(collection_root(source), 'plugins', 'module_utils'))
    report = probe(source, service.url, breaking=breaking)
    assert report['load_error']
    kind, message = report['main']
    assert kind == 'SourceError'
    assert '\n' not in message
    for word in words:
        assert word in message
