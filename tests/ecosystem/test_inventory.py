"""The inventory plugin uptime.monitoring.monitors as Ansible runs it: ``ansible-inventory --graph`` / ``--list``
against the emulator, with the configuration files a user writes (and the example ones the collection ships)."""

from __future__ import annotations

import ast
import datetime
import json
import os
import subprocess

import pytest
import yaml

from ansible_collections.uptime.monitoring.plugins.module_utils._connection import CONNECTION_ENV
from ecosystem_support import BIN, OTHER_KEY, PRIMARY_KEY, REPO_ROOT, create_incident, create_monitor, update_monitor

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


def graph(result):
    """``--graph`` output as {group: [host, ...]} (direct members only)."""
    groups, current = {}, None
    for line in result.stdout.splitlines():
        name = line.strip().lstrip(' |-')
        if name.startswith('@'):
            current = name[1:].rstrip(':')
            groups.setdefault(current, [])
        elif name and current:
            groups[current].append(name)
    return {group: sorted(hosts) for group, hosts in groups.items()}


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


def test_host_variables_of_one_host(ansible, emulator, config):
    seed(emulator)
    result = ansible.inventory(config(), '--host', 'blog.example.com')
    blog = plain(json.loads(result.stdout))
    assert [(monitor['name'], monitor['status']) for monitor in blog['uptime_monitors']] == [('blog', 'paused')]


def test_an_incident_acknowledged_meanwhile_shows_as_acknowledged(ansible, emulator, config):
    ids = seed(emulator)
    emulator.api('PUT', '/api/v1/incidents/%d' % ids['shop incident'], data={'acknowledged_at': stamp(60)})
    inventory = listed(ansible.inventory(config(), '--list'))
    assert inventory['_meta']['hostvars']['shop.example.com']['uptime_monitors'][0]['incident']['acknowledged'] is True


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


def test_strict_makes_a_bad_expression_fail(ansible, emulator, config):
    seed(emulator)
    expression = 'compose:\n  broken: uptime_monitors.no_such_key.deeper\n'
    lenient = listed(ansible.inventory(config(expression), '--list'))
    assert 'broken' not in lenient['_meta']['hostvars']['shop.example.com']
    result = ansible.inventory(config('strict: true\n' + expression), '--list', check=False)
    assert result.returncode != 0
    assert 'Could not set broken' in result.stderr


def test_monitor_names_as_host_names(ansible, emulator, config):
    seed(emulator)
    source = config('host_names: monitor_name\n')
    inventory = listed(ansible.inventory(source, '--list'))
    hostvars = inventory['_meta']['hostvars']
    assert sorted(hostvars) == ['api', 'blog', 'docs', 'shop', 'shop_admin']
    assert hostvars['shop_admin']['ansible_host'] == 'shop.example.com'
    assert members(inventory, 'uptime_offline') == ['shop']
    assert members(inventory, 'uptime_pending') == ['shop_admin']
    # The monitor "shop admin" is a host a pattern can name; the variables keep the monitor's own name.
    shop_admin = plain(json.loads(ansible.inventory(source, '--host', 'shop_admin').stdout))
    assert [monitor['name'] for monitor in shop_admin['uptime_monitors']] == ['shop admin']
    matched = subprocess.run([os.path.join(BIN, 'ansible'), '-i', source, 'shop_admin', '--list-hosts'],
                             env=ansible.environment(extra={'ANSIBLE_INVENTORY_UNPARSED_FAILED': '1'}),
                             capture_output=True, text=True, timeout=120, check=False)
    assert matched.returncode == 0, matched.stderr
    assert matched.stdout.split() == ['hosts', '(1):', 'shop_admin']


def test_names_that_make_one_host_name_make_two_hosts_with_a_warning(ansible, emulator, config):
    first = create_monitor(emulator, 'web1_admin', url='https://web1.example.com/admin')['id']
    second = create_monitor(emulator, 'web1 admin', url='https://web1.example.com/')['id']
    result = ansible.inventory(config('host_names: monitor_name\n'), '--list', check=False)
    assert result.returncode == 0
    hostvars = listed(result)['_meta']['hostvars']
    assert {host: [monitor['id'] for monitor in values['uptime_monitors']] for host, values in hostvars.items()} == {
        'web1_admin': [first], 'web1_admin_%d' % second: [second]}
    assert ("the host name web1_admin is taken by monitor 'web1_admin' (id %d): monitor 'web1 admin' (id %d) is the "
            "host web1_admin_%d" % (first, second, second)) in ' '.join(result.stderr.split())


def test_an_ipv6_endpoint_is_a_host_a_pattern_names(ansible, emulator, config):
    create_monitor(emulator, 'v6', url='https://[2001:DB8:0::1]:8443/status')
    source = config()
    assert graph(ansible.inventory(source, '--graph'))['uptime_pending'] == ['2001:db8::1']
    v6 = plain(json.loads(ansible.inventory(source, '--host', '2001:db8::1').stdout))
    assert 'ansible_host' not in v6
    assert v6['uptime_monitors'][0]['url'] == 'https://[2001:DB8:0::1]:8443/status'


def test_filters(ansible, emulator, config):
    ids = seed(emulator)
    emulator.status_page(PRIMARY_KEY, 4, [ids['shop'], ids['shop admin'], ids['api']])
    emulator.clear_log()
    source = config('status_page_id: 4\nsearch: shop\nsearch_by: url\nstatus: [pending]\n')
    inventory = listed(ansible.inventory(source, '--list'))
    assert inventory['_meta']['hostvars']['shop.example.com']['uptime_monitors'][0]['name'] == 'shop admin'
    assert len(inventory['_meta']['hostvars']) == 1
    assert members(inventory, 'uptime_offline') == []
    # No listed monitor is offline: one request.
    assert [entry['query'] for entry in emulator.log()] == [
        'search=shop&status_page_id=4&search_by=url&sort_by=id&sort=asc&per_page=100']


def test_no_offline_monitor_no_incident_request(ansible, emulator, config):
    create_monitor(emulator, 'web', url='https://web.example.com/')
    emulator.clear_log()
    inventory = listed(ansible.inventory(config(), '--list'))
    assert [entry['path'] for entry in emulator.log()] == ['/api/v1/monitors']
    assert members(inventory, 'uptime_pending') == ['web.example.com']
    assert members(inventory, 'uptime_offline') == []


def test_the_key_comes_from_the_environment_or_the_config(ansible, emulator, config):
    create_monitor(emulator, 'theirs', url='https://theirs.example.com/', api_key=OTHER_KEY)
    source = config('api_key: %s\n' % OTHER_KEY)
    result = ansible.inventory(source, '--list')  # the environment holds the primary key; the file wins
    assert sorted(listed(result)['_meta']['hostvars']) == ['theirs.example.com']
    assert OTHER_KEY not in result.stdout + result.stderr
    assert {entry['api_key'] for entry in emulator.log()} == {OTHER_KEY}


@pytest.mark.parametrize('text, message', [
    # ansible-core checks the choices of the documentation itself (the plugin checks again, naming the allowed values).
    ('status: [offline, down]\n', "Invalid value ['offline', 'down'] for config 'status'"),
    ('api_url: uptime.example.com\n',
     "api_url: must be an http:// or https:// address such as https://uptime.example.com, got 'uptime.example.com'"),
])
def test_bad_configuration_fails_before_any_request(ansible, emulator, config, text, message):
    result = ansible.inventory(config(text), '--list', check=False)
    assert result.returncode != 0
    assert message in ' '.join(result.stderr.split())
    assert emulator.log() == []


def test_a_refused_key_fails_clearly_without_showing_it(ansible, emulator, config):
    result = ansible.inventory(config(), '--list', '-vvv', api_key='wrong-key-0123456789', check=False)
    assert result.returncode != 0
    assert 'uptime.monitoring.monitors: GET /api/v1/monitors failed: HTTP 401: authentication failed: check api_key' \
        in result.stderr
    assert 'ANSIBLE_INVENTORY_UNPARSED_FAILED' not in result.stderr  # it is set: no advice to set it
    assert 'wrong-key-0123456789' not in result.stdout + result.stderr


@pytest.mark.parametrize('setting', [{}, {'ANSIBLE_INVENTORY_UNPARSED_FAILED': 'true'},
                                     {'ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED': 'true'}])
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


def test_a_file_with_another_name_is_not_read(ansible, emulator, config):
    source = config(name='inventory.yml')
    result = ansible.inventory(source, '--list', check=False)
    assert result.returncode != 0
    assert emulator.log() == []


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
