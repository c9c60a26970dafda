"""The inventory plugin uptime.monitoring.monitors as Ansible runs it: ``ansible-inventory --list`` / ``--host``
against the emulator, with the configuration files a user writes (and the example ones the collection ships).

What needs Ansible itself, once each: the plugin found and loaded by ansible-inventory, the constructed options
(compose, groups, keyed_groups, strict) evaluated by Ansible, a source that fails as Ansible's settings say,
ansible-doc, the cache plugin on disk (an EXAMPLES configuration). The plugin's own rules (host names, filters,
incidents, keys, bad options, the cache's keys) are proven in tests/unit/plugins/inventory/test_inventory_monitors.py."""

from __future__ import annotations

import ast
import datetime
import json
import os
import subprocess

import pytest
import yaml

from ansible_collections.uptime.monitoring.plugins.module_utils._connection import CONNECTION_ENV
from ecosystem_support import BIN, PRIMARY_KEY, REPO_ROOT, create_incident, create_monitor, update_monitor

PLUGIN = os.path.join(REPO_ROOT, 'plugins', 'inventory', 'monitors.py')
EXAMPLE_CONFIGS = os.path.join(REPO_ROOT, 'extras', 'inventory')
SECRETS = ('hunter2-basic-secret', 'header-secret-value')
STATUS_GROUPS = ('uptime_pending', 'uptime_online', 'uptime_offline', 'uptime_paused', 'uptime_maintenance')


def stamp(seconds_ago=0):
    moment = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return moment.strftime('%Y-%m-%dT%H:%M:%S')


def seed(emulator):
    """shop.example.com: an offline monitor (ongoing incident) and a pending one; blog paused; api online; docs in
    maintenance. The offline monitor holds every kind of secret a monitor can."""
    ids = {}
    ids['shop'] = create_monitor(emulator, 'shop', url='https://shop.example.com/health',
                                 request_auth_username='uptime', request_auth_password='hunter2-basic-secret',
                                 request_headers=[{'key': 'Authorization', 'value': 'Bearer header-secret-value'}])['id']
    ids['shop admin'] = create_monitor(emulator, 'shop admin', url='https://shop.example.com:8443/admin', interval=60)['id']
    ids['blog'] = create_monitor(emulator, 'blog', url='https://blog.example.com/')['id']
    update_monitor(emulator, ids['blog'], pause=1)
    ids['api'] = create_monitor(emulator, 'api', url='https://api.example.com/v1/status')['id']
    past = create_incident(emulator, ids['api'], stamp(7200))['id']
    assert emulator.api('PUT', '/api/v1/incidents/%d' % past, data={'ended_at': stamp(3600)}).status == 200
    ids['docs'] = create_monitor(emulator, 'docs', url='https://docs.example.com/',
                                 maintenance_start_at=stamp(600), maintenance_end_at=stamp(-3600))['id']
    ids['shop incident'] = create_incident(emulator, ids['shop'], stamp(900), cause='Timeouts')['id']
    return ids


def plain(value):
    """``ansible-inventory --list`` output without ansible-core 2.19's markers of untrusted strings."""
    if isinstance(value, dict):
        if set(value) == {'__ansible_unsafe'}:
            return value['__ansible_unsafe']
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def listed(result):
    return plain(json.loads(result.stdout))


def members(inventory, group):
    return sorted(inventory.get(group, {}).get('hosts', []))


def instant(text):
    text = text.rstrip('Z').split('.')[0].split('+')[0]
    return datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%S')


def assert_no_secret(*texts):
    for text in texts:
        for secret in SECRETS + (PRIMARY_KEY,):
            assert secret not in text


@pytest.fixture
def config(ansible):
    def write(text='', name='production.uptime.yml'):
        return ansible.write(name, '---\nplugin: uptime.monitoring.monitors\n' + text)
    return write


def test_groups_and_host_variables(ansible, emulator, config):
    """The status groups and the host variables, from ``--list`` (what ``--graph`` prints of the same groups is
    the sample of docs/inventory.md, test_docs_examples.py)."""
    seeded_from = instant(stamp(900))
    ids = seed(emulator)
    seeded_until = instant(stamp(900))
    source = config()
    emulator.clear_log()

    result = ansible.inventory(source, '--list')
    assert [(entry['method'], entry['path']) for entry in emulator.log()] == [
        ('GET', '/api/v1/monitors'), ('GET', '/api/v1/incidents')]
    assert_no_secret(result.stdout, result.stderr)
    inventory = listed(result)
    assert {group: members(inventory, group) for group in STATUS_GROUPS} == {
        'uptime_pending': ['shop.example.com'], 'uptime_online': ['api.example.com'],
        'uptime_offline': ['shop.example.com'], 'uptime_paused': ['blog.example.com'],
        'uptime_maintenance': ['docs.example.com']}
    hostvars = inventory['_meta']['hostvars']
    assert sorted(hostvars) == ['api.example.com', 'blog.example.com', 'docs.example.com', 'shop.example.com']
    shop = hostvars['shop.example.com']
    assert set(shop) == {'uptime_monitors', 'uptime_statuses'}
    assert shop['uptime_statuses'] == ['offline', 'pending']
    offline, pending = shop['uptime_monitors']
    assert {key: offline[key] for key in ('id', 'name', 'url', 'status', 'interval')} == {
        'id': ids['shop'], 'name': 'shop', 'url': 'https://shop.example.com/health', 'status': 'offline', 'interval': 300}
    assert set(offline) == {'id', 'name', 'url', 'status', 'started_at', 'interval', 'maintenance_start_at',
                            'maintenance_end_at', 'incident'}
    assert (offline['maintenance_start_at'], offline['maintenance_end_at']) == (None, None)
    assert set(offline['incident']) == {'id', 'started_at', 'acknowledged'}
    assert (offline['incident']['id'], offline['incident']['acknowledged']) == (ids['shop incident'], False)
    # Started 900 s before the seeding (bounds taken around it, not after the slow ansible-inventory runs).
    assert seeded_from - datetime.timedelta(seconds=1) <= instant(offline['incident']['started_at']) <= seeded_until
    assert (pending['name'], pending['status'], pending['incident']) == ('shop admin', 'pending', None)
    assert hostvars['api.example.com']['uptime_monitors'][0]['incident'] is None  # its incident has ended
    docs, = hostvars['docs.example.com']['uptime_monitors']
    assert docs['status'] == 'maintenance'
    assert instant(docs['maintenance_start_at']) <= instant(stamp()) < instant(docs['maintenance_end_at'])
    assert docs['maintenance_end_at'].endswith('Z')
    blog = plain(json.loads(ansible.inventory(source, '--host', 'blog.example.com').stdout))
    assert [(monitor['name'], monitor['status']) for monitor in blog['uptime_monitors']] == [('blog', 'paused')]


def test_constructed_options(ansible, emulator, config):
    seed(emulator)
    source = config('''\
strict: true
compose:
  ansible_connection: "'local'"
  uptime_incident_ids: uptime_monitors | selectattr('incident') | map(attribute='incident.id') | list
keyed_groups:
  - key: uptime_monitors | map(attribute='interval')
    prefix: interval
  - key: uptime_statuses
    prefix: state
groups:
  unacknowledged: uptime_monitors | selectattr('incident') | rejectattr('incident.acknowledged') | list | length > 0
''')
    inventory = listed(ansible.inventory(source, '--list'))
    assert members(inventory, 'unacknowledged') == ['shop.example.com']
    assert members(inventory, 'interval_60') == ['shop.example.com']
    assert members(inventory, 'interval_300') == ['api.example.com', 'blog.example.com', 'docs.example.com',
                                                  'shop.example.com']
    assert members(inventory, 'state_offline') == ['shop.example.com']
    hostvars = inventory['_meta']['hostvars']
    assert {host: values['ansible_connection'] for host, values in hostvars.items()} == dict.fromkeys(hostvars, 'local')
    assert len(hostvars['shop.example.com']['uptime_incident_ids']) == 1
    assert hostvars['blog.example.com']['uptime_incident_ids'] == []
    expression = 'compose:\n  broken: uptime_monitors.no_such_key.deeper\n'
    lenient = listed(ansible.inventory(config(expression), '--list'))
    assert 'broken' not in lenient['_meta']['hostvars']['shop.example.com']
    result = ansible.inventory(config('strict: true\n' + expression), '--list', check=False)
    assert result.returncode != 0
    assert 'Could not set broken' in result.stderr


@pytest.mark.parametrize('setting', [{}, {'ANSIBLE_INVENTORY_UNPARSED_FAILED': 'true'}])
def test_a_wrong_address_fails_the_run_only_when_ansible_is_told_to(ansible, emulator, config, setting):
    """ansible-inventory only warns about a source that fails (return code 0, no host) unless
    [inventory] unparsed_is_failed (or any_unparsed_is_failed) is set; the plugin's message names the option and,
    when nothing is set, the setting."""
    create_monitor(emulator, 'web', url='https://web.example.com/')
    env = dict({'ANSIBLE_INVENTORY_UNPARSED_FAILED': 'false', 'ANSIBLE_INVENTORY_UNPARSED_WARNING': '1'}, **setting)
    result = ansible.inventory(config('api_url: %s/uptime\n' % emulator.url), '--graph', env=env, check=False)
    stderr = ' '.join(result.stderr.split())
    assert 'uptime.monitoring.monitors: GET /uptime/api/v1/monitors failed: HTTP 404' in stderr
    assert 'api_url must be the base address of the service' in stderr
    assert 'web.example.com' not in result.stdout
    if setting:
        assert result.returncode != 0
        assert 'set ANSIBLE_INVENTORY_UNPARSED_FAILED=true' not in stderr
    else:
        assert result.returncode == 0
        assert ('Ansible goes on without this inventory source: set ANSIBLE_INVENTORY_UNPARSED_FAILED=true, or '
                'unparsed_is_failed = true in the [inventory] section of ansible.cfg, to make this an error') in stderr


def test_ansible_doc(ansible):
    result = subprocess.run([os.path.join(BIN, 'ansible-doc'), '-t', 'inventory', '--json', 'uptime.monitoring.monitors'],
                            env=ansible.environment(), capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)['uptime.monitoring.monitors']['doc']
    options = doc['options']
    assert {'api_url', 'api_key', 'validate_certs', 'ca_path', 'timeout', 'retries', 'host_names', 'status', 'search',
            'search_by', 'status_page_id', 'compose', 'groups', 'keyed_groups', 'strict', 'cache'} <= set(options)
    # The modules' environment variables, from the modules' own table of them.
    env = {name: [entry['name'] for entry in options[name].get('env', [])] for name in CONNECTION_ENV}
    assert env == {name: [variable] for name, variable in CONNECTION_ENV.items()}
    assert set(CONNECTION_ENV) >= {'api_url', 'api_key', 'validate_certs'}


def plugin_examples():
    with open(PLUGIN, encoding='utf-8') as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == 'EXAMPLES':
            return list(yaml.safe_load_all(ast.literal_eval(node.value)))
    raise AssertionError('no EXAMPLES')


def example_configs():
    return sorted(name for name in os.listdir(EXAMPLE_CONFIGS) if name.endswith(('.uptime.yml', '.uptime.yaml')))


@pytest.mark.parametrize('number', range(len(plugin_examples())))
def test_plugin_examples(ansible, emulator, number, tmp_path):
    """Each EXAMPLES configuration works (pointed at the emulator, and with its cache in a temporary directory)."""
    ids = seed(emulator)
    emulator.status_page(PRIMARY_KEY, 3, [ids['shop'], ids['blog']])
    example = plugin_examples()[number]
    example.pop('api_url', None)
    if 'cache_connection' in example:
        example['cache_connection'] = str(tmp_path / 'cache')
    source = ansible.write('example.uptime.yml', yaml.safe_dump(example))
    inventory = listed(ansible.inventory(source, '--list'))
    assert 'shop.example.com' in inventory['_meta']['hostvars'] or 'shop' in inventory['_meta']['hostvars']


@pytest.mark.parametrize('name', example_configs())
def test_example_configurations(ansible, emulator, name):
    seed(emulator)
    inventory = listed(ansible.inventory(os.path.join(EXAMPLE_CONFIGS, name), '--list'))
    assert members(inventory, 'uptime_offline')
