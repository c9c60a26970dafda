"""The inventory plugin uptime.monitoring.monitors as Ansible runs it: ansible-doc, and every EXAMPLES configuration
and example configuration file of extras/inventory/ read by ``ansible-inventory --list`` against the emulator.

The status groups, the host variables, the constructed options (strict included), the cache on disk and a source that
fails as Ansible's settings say are the examples of docs/inventory.md (test_docs_examples.py); the plugin's own rules
(host names, filters, incidents, keys, bad options, the cache's keys) are proven in
tests/unit/plugins/inventory/test_inventory_monitors.py."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from ansible_collections.uptime.monitoring.plugins.module_utils._connection import CONNECTION_ENV
from ecosystem_support import BIN, PRIMARY_KEY, REPO_ROOT, documentation, plain, seed_inventory_account

PLUGIN = os.path.join(REPO_ROOT, 'plugins', 'inventory', 'monitors.py')
EXAMPLE_CONFIGS = os.path.join(REPO_ROOT, 'extras', 'inventory')
EXAMPLES = list(yaml.safe_load_all(documentation(PLUGIN, 'EXAMPLES')))


def test_ansible_doc(ansible):
    result = subprocess.run([os.path.join(BIN, 'ansible-doc'), '-t', 'inventory', '--json', 'uptime.monitoring.monitors'],
                            env=ansible.environment(), capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    options = json.loads(result.stdout)['uptime.monitoring.monitors']['doc']['options']
    assert {'api_url', 'api_key', 'validate_certs', 'ca_path', 'timeout', 'retries', 'host_names', 'status', 'search',
            'search_by', 'status_page_id', 'compose', 'groups', 'keyed_groups', 'strict', 'cache'} <= set(options)
    # The modules' environment variables, from the modules' own table of them, but the time zone's: the plugin sends no time.
    env = {name: [entry['name'] for entry in options.get(name, {}).get('env', [])] for name in CONNECTION_ENV}
    assert env == dict({name: [variable] for name, variable in CONNECTION_ENV.items()}, account_timezone=[])


@pytest.mark.parametrize('number', range(len(EXAMPLES)))
def test_plugin_examples(ansible, emulator, number, tmp_path):
    """Each EXAMPLES configuration works (pointed at the emulator, and with its cache in a temporary directory)."""
    ids = seed_inventory_account(emulator)
    emulator.status_page(PRIMARY_KEY, 3, [ids['shop'], ids['blog']])
    example = dict(EXAMPLES[number])
    example.pop('api_url', None)
    if 'cache_connection' in example:
        example['cache_connection'] = str(tmp_path / 'cache')
    source = ansible.write('example.uptime.yml', yaml.safe_dump(example))
    hostvars = plain(json.loads(ansible.inventory(source, '--list').stdout))['_meta']['hostvars']
    assert 'shop.example.com' in hostvars or 'shop' in hostvars


@pytest.mark.parametrize('name', sorted(name for name in os.listdir(EXAMPLE_CONFIGS) if name.endswith(('.uptime.yml', '.uptime.yaml'))))
def test_example_configurations(ansible, emulator, name):
    seed_inventory_account(emulator)
    inventory = plain(json.loads(ansible.inventory(os.path.join(EXAMPLE_CONFIGS, name), '--list').stdout))
    assert inventory['uptime_offline']['hosts']
