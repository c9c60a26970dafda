"""The inventory plugin uptime.monitoring.monitors: naming, grouping, host variables, requests and cache, against
the emulator. Its options are given directly here (the configuration file and the documentation that declares the
options are exercised through ansible-inventory by the examples of docs/inventory.md, tests/ecosystem/test_docs_examples.py,
and tests/ecosystem/test_inventory.py)."""

from __future__ import annotations

import datetime
import random

import pytest
from ansible.errors import AnsibleError, AnsibleParserError

from ansible_collections.uptime.monitoring.plugins.inventory import monitors as plugin_module
from ansible_collections.uptime.monitoring.plugins.module_utils import _incident
from ansible_collections.uptime.monitoring.plugins.module_utils._client import UptimeClient
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import is_sensitive_name, to_utc_timestamp
from emulator.control import OTHER_KEY, PRIMARY_KEY
from fake_client import add_monitor, open_incident, stamp
from module_runner import inventory_plugin, parse_inventory as parse

try:
    from ansible.template import trust_as_template as trusted
except ImportError:  # ansible-core 2.18 templates every string
    def trusted(value):
        return value

SECRET_PASSWORD = 'hunter2-basic-secret'
SECRET_HEADER = 'Bearer header-secret-value'
SECRET_WEBHOOK = 'https://hooks.slack.com/services/T000/B000/webhook-secret-part'


def instant(text):
    """The instant a returned timestamp means, whatever its text (the zone may be stated or not)."""
    return datetime.datetime.fromisoformat(to_utc_timestamp(text).replace('Z', '+00:00'))


def seed(emulator):
    """Two monitors on shop.example.com (one offline, one pending), a paused blog, an online api with a past incident."""
    ids = {}
    ids['shop'] = add_monitor(emulator, 'shop', 'https://shop.example.com/health', request_auth_username='uptime',
                              request_auth_password=SECRET_PASSWORD,
                              request_headers=[{'key': 'Authorization', 'value': SECRET_HEADER}],
                              alerts=[{'key': 'slack', 'value': SECRET_WEBHOOK}])
    ids['shop admin'] = add_monitor(emulator, 'shop admin', 'https://Shop.Example.com:8443/admin', interval=300)
    ids['blog'] = add_monitor(emulator, 'blog', 'https://admin:url-secret-pw@blog.example.com/?api_key=url-secret-key')
    ids['api'] = add_monitor(emulator, 'api', 'https://api.example.com/v1/status')
    emulator.api('PUT', '/api/v1/monitors/%d' % ids['blog'], data={'pause': 1})
    past = open_incident(emulator, ids['api'], stamp(7200))
    assert emulator.api('PUT', '/api/v1/incidents/%d' % past, data={'ended_at': stamp(3600)}).status == 200
    ids['shop incident'] = open_incident(emulator, ids['shop'], stamp(600), cause='Timeouts')
    return ids


def make_plugin(emulator, **options):
    return inventory_plugin(emulator.url, **options)


def groups_of(inventory):
    return {name: sorted(host.name for host in group.get_hosts())
            for name, group in inventory.groups.items() if name not in ('all', 'ungrouped')}


def host_vars(inventory, name):
    return inventory.get_host(name).get_vars()


def api_requests(emulator):
    return [(entry['method'], entry['path']) for entry in emulator.log()]


@pytest.mark.parametrize('function, given, expected', [('url_host',) + pair for pair in [
    ('https://shop.example.com/health', 'shop.example.com'), ('https://Shop.Example.COM:8443/admin', 'shop.example.com'),
    ('http://user:pass@10.0.0.5:8080/', '10.0.0.5'), ('https://[2001:db8::1]/status', '2001:db8::1'),
    ('https://[2001:DB8:0:0::1]:8443/', '2001:db8::1'), ('not a url', None), ('', None), (None, None),
    ('https://Shop.Example.COM.:8443/', 'shop.example.com'), ('http://localhost./', 'localhost'),  # a trailing dot: the same host
]] + [('host_name',) + pair for pair in [
    ('web1', 'web1'), ('shop.example.com', 'shop.example.com'), ('db-01_eu', 'db-01_eu'), ('web1 admin', 'web1_admin'),
    ('  padded ', '__padded_'), ('a,b:c', 'a_b_c'), ('web[1:3]', 'web_1_3_'), ('*.example.com', '_.example.com'),
    ('what?', 'what_'), ('~web', '_web'), ('!web', '_web'), ('&web', '_web'), ('-web-', '_web-'),
    ('Café API/v2', 'Café_API_v2'), ('10.0.0.5', '10.0.0.5'), ('2001:db8::1', '2001:db8::1'),
]] + [('is_loopback',) + pair for pair in [
    ('127.0.0.1', True), ('127.8.9.10', True), ('::1', True), ('localhost', True), ('LocalHost', True), ('10.0.0.5', False),
    ('128.0.0.1', False), ('2001:db8::1', False), ('localhost.example.com', False), ('mylocalhost', False),
]])
def test_url_host_and_host_name(function, given, expected):
    assert getattr(plugin_module, function)(given) == expected


def test_names_that_make_the_same_host_name_stay_apart_whatever_the_order():
    monitors = [dict(id=12, name='web1 admin', url='https://a.example.com/'),
                dict(id=3, name='web1_admin', url='https://b.example.com/'),
                dict(id=20, name='web1_admin_12', url='https://c.example.com/'),
                dict(id=7, name='all', url='https://d.example.com/'),
                dict(id=8, name='uptime offline', url='https://e.example.com/'),
                # Ansible's implicit localhost: kept only by a monitor of the controller itself.
                dict(id=9, name='localhost', url='https://f.example.com/'),
                dict(id=10, name='127.0.0.1', url='http://LOCALHOST.:9100/'),
                dict(id=11, name='::1', url='https://127.0.0.1.example.com/')]
    expected_hosts = {'web1_admin': [3], 'web1_admin_12': [12], 'web1_admin_12_20': [20], 'all_7': [7],
                      'uptime_offline_8': [8], 'localhost_9': [9], '127.0.0.1': [10], '__1_11': [11]}
    expected_renamed = {'web1_admin_12': 'web1_admin', 'web1_admin_12_20': 'web1_admin_12', 'all_7': 'all',
                        'uptime_offline_8': 'uptime_offline', 'localhost_9': 'localhost', '__1_11': '::1'}
    for seed_value in range(5):
        random.Random(seed_value).shuffle(monitors)
        hosts, nameless, renamed = plugin_module.hosts_of(monitors, 'monitor_name')
        assert {host: [monitor['id'] for monitor in listed] for host, listed in hosts.items()} == expected_hosts
        assert renamed == expected_renamed and nameless == []


@pytest.mark.parametrize('ongoing, ended, expected_requests', [(9, 3, 1), (10, 3, 2), (12, 0, 2), (0, 4, 1)])
def test_ongoing_reads_pages_until_an_ended_incident(emulator, monkeypatch, ongoing, ended, expected_requests):
    monkeypatch.setattr(_incident, 'PAGE_SIZE', 10)
    wanted = set()
    for number in range(ongoing + ended):
        monitor_id = add_monitor(emulator, 'm%d' % number, 'https://m%d.example.com/' % number)
        if number < ongoing:
            wanted.add(open_incident(emulator, monitor_id, stamp(600), acknowledged_at=stamp(60) if number % 2 else None))
        else:
            open_incident(emulator, monitor_id, stamp(7200), ended_at=stamp(3600))
    emulator.clear_log()
    found = _incident.INCIDENT_RESOURCE.ongoing(UptimeClient(emulator.url, PRIMARY_KEY))
    assert {incident['id'] for incident in found} == wanted
    assert len(emulator.log()) == expected_requests


def test_parse_makes_hosts_groups_and_variables_with_the_ongoing_incident_of_offline_monitors(emulator):
    """Returned times are UTC: the plugin does not ask the account for its zone."""
    ids = seed(emulator)
    acknowledged = open_incident(emulator, add_monitor(emulator, 'acknowledged', 'https://ack.example.com/'), stamp(300),
                                 acknowledged_at=stamp(200))
    start, end = stamp(600), stamp(-3600)
    add_monitor(emulator, 'docs', 'https://docs.example.com/', maintenance_start_at=start, maintenance_end_at=end)
    emulator.clear_log()
    inventory = parse(make_plugin(emulator))

    assert api_requests(emulator) == [('GET', '/api/v1/monitors'), ('GET', '/api/v1/incidents')]
    assert groups_of(inventory) == {
        'uptime_pending': ['shop.example.com'], 'uptime_online': ['api.example.com'], 'uptime_maintenance': ['docs.example.com'],
        'uptime_offline': ['ack.example.com', 'shop.example.com'], 'uptime_paused': ['blog.example.com']}
    shop = host_vars(inventory, 'shop.example.com')
    assert [monitor['id'] for monitor in shop['uptime_monitors']] == [ids['shop'], ids['shop admin']]
    assert shop['uptime_statuses'] == ['offline', 'pending'] and 'ansible_host' not in shop
    first = shop['uptime_monitors'][0]
    assert set(first) == set(plugin_module.MONITOR_KEYS) | {'incident', 'check_withheld'}
    assert (first['url'], first['interval'], first['maintenance_start_at']) == ('https://shop.example.com/health', 60, None)
    # What the check sends is told, but what may hold a secret (Basic authentication, headers) only named.
    assert (first['request_method'], first['alert_condition'], first['check_withheld']) == ('GET', 'url_unavailable', ['request_auth', 'request_headers'])
    blog, = host_vars(inventory, 'blog.example.com')['uptime_monitors']
    assert (shop['uptime_monitors'][1]['check_withheld'], blog['check_withheld']) == ([], ['url_secrets'])
    assert abs(instant(first['started_at']) - instant(stamp())) < datetime.timedelta(seconds=30)
    assert first['incident']['id'] == ids['shop incident'] and first['incident']['acknowledged'] is False
    assert abs(instant(first['incident']['started_at']) - instant(stamp(600))) < datetime.timedelta(seconds=5)
    assert shop['uptime_monitors'][1]['incident'] is None
    assert host_vars(inventory, 'ack.example.com')['uptime_monitors'][0]['incident']['acknowledged'] is True
    assert host_vars(inventory, 'ack.example.com')['uptime_monitors'][0]['incident']['id'] == acknowledged
    # Only offline monitors carry an incident: the online api's incident has ended.
    assert host_vars(inventory, 'api.example.com')['uptime_monitors'][0]['incident'] is None
    docs, = host_vars(inventory, 'docs.example.com')['uptime_monitors']
    assert (docs['status'], docs['maintenance_start_at'], docs['maintenance_end_at']) == ('maintenance', start + 'Z', end + 'Z')
    # No host variable of a monitor can hold a secret (that none shows one is tests/laws/test_inventory.py's law).
    for key in plugin_module.MONITOR_KEYS:
        field = MONITOR_SCHEMA.by_name.get(key)
        assert not is_sensitive_name(key), key
        assert field is None or not (field.secret or field.sensitive_items), key


def test_parse_by_monitor_name_sets_ansible_host(emulator):
    seed(emulator)
    add_monitor(emulator, 'shop.example.com', 'https://shop.example.com/login')
    add_monitor(emulator, 'metrics', 'http://127.0.0.1:9100/metrics')
    inventory = parse(make_plugin(emulator, host_names='monitor_name'))
    assert sorted(inventory.hosts) == ['api', 'blog', 'metrics', 'shop', 'shop.example.com', 'shop_admin']
    # A loopback address is the controller: reached as Ansible reaches its implicit localhost, not over ssh.
    metrics = host_vars(inventory, 'metrics')
    assert (metrics['ansible_connection'], metrics['ansible_python_interpreter']) == ('local', plugin_module.sys.executable)
    assert 'ansible_connection' not in host_vars(inventory, 'shop_admin')
    shop_admin = host_vars(inventory, 'shop_admin')
    assert shop_admin['ansible_host'] == 'shop.example.com'
    assert [monitor['name'] for monitor in shop_admin['uptime_monitors']] == ['shop admin']
    assert 'ansible_host' not in host_vars(inventory, 'shop.example.com')  # named as its URL's host already
    assert groups_of(inventory)['uptime_offline'] == ['shop']
    assert groups_of(inventory)['uptime_pending'] == ['metrics', 'shop.example.com', 'shop_admin']


def test_a_host_name_taken_makes_another_host_with_a_warning(emulator, monkeypatch):
    first = add_monitor(emulator, 'web1_admin', 'https://web1.example.com/admin')
    second = add_monitor(emulator, 'web1 admin', 'https://web1.example.com:8443/')
    third = add_monitor(emulator, 'uptime offline', 'https://[2001:db8::1]/')
    fourth = add_monitor(emulator, 'localhost', 'https://status.example.com/')
    plugin = make_plugin(emulator, host_names='monitor_name')
    warnings = []
    monkeypatch.setattr(plugin.display, 'warning', warnings.append)
    inventory = parse(plugin)
    assert {host: [monitor['id'] for monitor in host_vars(inventory, host)['uptime_monitors']]
            for host in inventory.hosts} == {'web1_admin': [first], 'web1_admin_%d' % second: [second],
                                             'uptime_offline_%d' % third: [third], 'localhost_%d' % fourth: [fourth]}
    assert host_vars(inventory, 'uptime_offline_%d' % third)['ansible_host'] == '2001:db8::1'
    assert warnings == [
        "uptime.monitoring.monitors: the host name web1_admin is taken by monitor 'web1_admin' (id %d): "
        "monitor 'web1 admin' (id %d) is the host web1_admin_%d" % (first, second, second),
        "uptime.monitoring.monitors: the host name uptime_offline is taken by a group: "
        "monitor 'uptime offline' (id %d) is the host uptime_offline_%d" % (third, third),
        "uptime.monitoring.monitors: the host name localhost is taken by Ansible's implicit localhost (this controller): "
        "monitor 'localhost' (id %d) is the host localhost_%d" % (fourth, fourth)]


def test_a_monitor_without_a_host_name_is_left_out_with_a_warning(emulator, monkeypatch):
    add_monitor(emulator, 'web', 'https://web.example.com/')
    plugin = make_plugin(emulator)
    warnings = []
    monkeypatch.setattr(plugin.display, 'warning', warnings.append)
    monkeypatch.setattr(plugin_module, 'url_host', lambda url: None if 'web' in url else 'x')
    inventory = parse(plugin)
    assert list(inventory.hosts) == []
    assert warnings == ["uptime.monitoring.monitors: monitor 'web' (id 1) is left out: its URL has no host name"]


def test_constructed_options_and_strict_failing_on_a_bad_expression(emulator):
    seed(emulator)
    compose = {'ansible_user': trusted("'deploy'"), 'monitor_count': trusted('uptime_monitors | length'),
               'x': trusted('uptime_monitors.no_such_key.deeper')}
    plugin = make_plugin(emulator, compose=compose,
                         keyed_groups=[{'key': trusted("uptime_monitors | map(attribute='interval')"), 'prefix': 'interval'}],
                         groups={'unacknowledged': trusted("uptime_monitors | selectattr('incident') "
                                                           "| rejectattr('incident.acknowledged') | list | length > 0")})
    inventory = parse(plugin)
    groups = groups_of(inventory)
    assert groups['unacknowledged'] == ['shop.example.com']
    assert groups['interval_60'] == ['api.example.com', 'blog.example.com', 'shop.example.com']
    assert groups['interval_300'] == ['shop.example.com']
    assert host_vars(inventory, 'shop.example.com')['monitor_count'] == 2
    assert host_vars(inventory, 'blog.example.com')['ansible_user'] == 'deploy'
    assert 'x' not in host_vars(inventory, 'shop.example.com')  # not strict: the variable is left out
    with pytest.raises(AnsibleError, match='Could not set x for host'):
        parse(make_plugin(emulator, strict=True, compose=compose))


def test_cache_serves_the_second_run_and_a_refresh_reads_again(emulator):
    seed(emulator)
    disabled = make_plugin(emulator)
    parse(disabled)
    assert disabled._cache == {}, 'a disabled cache was written'  # pylint: disable=protected-access
    plugin = make_plugin(emulator, cache=True)
    emulator.clear_log()
    first = parse(plugin)
    assert len(emulator.log()) == 2

    emulator.clear_log()
    second = parse(plugin)
    assert emulator.log() == []
    assert groups_of(second) == groups_of(first)
    assert host_vars(second, 'shop.example.com') == host_vars(first, 'shop.example.com')

    add_monitor(emulator, 'new', 'https://new.example.com/')
    emulator.clear_log()
    refreshed = parse(plugin, cache=False)  # --flush-cache, or meta: refresh_inventory
    assert len(emulator.log()) == 2
    assert 'new.example.com' in refreshed.hosts
    emulator.clear_log()
    assert 'new.example.com' in parse(plugin).hosts and emulator.log() == []


def test_cache_entries_are_per_account_and_filters(emulator):
    plugin = make_plugin(emulator)

    def key_of(path='/a.uptime.yml', api_url=emulator.url, api_key=PRIMARY_KEY, query=None, statuses=()):
        return plugin._cache_key(path, {'api_url': api_url, 'api_key': api_key}, query or {}, list(statuses))  # pylint: disable=protected-access
    key = key_of()
    assert key == key_of(api_url=emulator.url + '/api/v1/')
    others = {key_of(path='/b.uptime.yml'), key_of(api_url='https://other.example.com'), key_of(api_key=OTHER_KEY),
              key_of(query={'search': 'x', 'search_by': 'name'}), key_of(statuses=['offline'])}
    assert key not in others and len(others) == 5
    assert PRIMARY_KEY not in key and OTHER_KEY not in key


def test_filters_reach_the_request_and_templated_connection_options_are_rendered(emulator):
    ids = seed(emulator)
    emulator.status_page(PRIMARY_KEY, 7, [ids['blog'], ids['api']])
    emulator.clear_log()
    # The configuration file is trusted as a source of templates (ansible-core 2.19 marks what it reads so); the key
    # as written would be refused (HTTP 401: the parse would fail).
    inventory = parse(make_plugin(emulator, status_page_id=7, search='example', search_by='url', status=['online'],
                                  api_key=trusted("{{ 'test-key-' ~ 'primary' }}")))
    assert sorted(inventory.hosts) == ['api.example.com']
    assert [entry['query'] for entry in emulator.log()] == [
        'search=example&status_page_id=7&search_by=url&sort_by=id&sort=desc&per_page=100']


# The plugin's own options, and the connection's required ones (test_connection checks the others).
@pytest.mark.parametrize('options, message', [
    ({'status': ['offline', 'down']}, "status: down is not a monitor status (choose from pending, online, offline, paused, maintenance)"),
    ({'api_url': None}, 'api_url: is required: set the api_url option or the UPTIME_API_URL environment variable'),
    ({'api_key': ''}, 'api_key: is required: set the api_key option or the UPTIME_API_KEY environment variable'),
    ({'api_url': lambda url: url.replace('//', '//bob:pw-123456@', 1)}, 'api_url: holds a user name or password before its host (http://********@'),
])
def test_bad_options_fail_before_any_request(emulator, options, message):
    options = {name: value(emulator.url) if callable(value) else value for name, value in options.items()}
    with pytest.raises(AnsibleParserError) as error:
        parse(make_plugin(emulator, **options))
    assert message in str(error.value)
    assert emulator.log() == []


def test_an_account_timezone_left_in_a_configuration_is_ignored_with_a_deprecation(emulator, monkeypatch):
    """The option once documented here (it changed nothing) would otherwise be dropped by Ansible without a word."""
    plugin, deprecations = make_plugin(emulator), []
    plugin._read_config_data = lambda path: {'plugin': plugin_module.InventoryModule.NAME, 'account_timezone': 'Mars/Olympus'}
    monkeypatch.setattr(plugin.display, 'deprecated', lambda msg, **kwargs: deprecations.append((msg, kwargs)))
    parse(plugin, path='/inventories/old.uptime.yml')
    assert deprecations == [('uptime.monitoring.monitors: account_timezone in /inventories/old.uptime.yml is ignored, as the '
                             'plugin sends no timestamp and reads UTC ones: remove it',
                             {'version': '1.0.0', 'collection_name': 'uptime.monitoring'})]


@pytest.mark.parametrize('unparsed_is_failed, any_unparsed_is_failed, hint', [
    (False, False, True), (True, False, False), (False, True, False)])
def test_an_error_says_how_to_make_ansible_fail_where_it_would_only_warn(
        emulator, monkeypatch, unparsed_is_failed, any_unparsed_is_failed, hint):
    monkeypatch.setattr(plugin_module.C, 'INVENTORY_UNPARSED_IS_FAILED', unparsed_is_failed, raising=False)
    monkeypatch.setattr(plugin_module.C, 'INVENTORY_ANY_UNPARSED_IS_FAILED', any_unparsed_is_failed, raising=False)
    with pytest.raises(AnsibleParserError) as error:
        parse(make_plugin(emulator, api_url=emulator.url + '/wrong'))
    assert 'api_url must be the base address of the service' in str(error.value)
    assert ('set ANSIBLE_INVENTORY_UNPARSED_FAILED=true' in str(error.value)) is hint


@pytest.mark.parametrize('name, text, accepted, warned', [
    ('uptime.yml', 'plugin: uptime.monitoring.monitors', True, False), ('uptime.yaml', '', True, False),
    ('production.uptime.yml', '', True, False), ('a.b.uptime.yaml', '', True, False),
    ('myuptime.yml', 'plugin: uptime.monitoring.monitors', False, 'myuptime.uptime.yml'),
    ('inventory.yaml', '# ours\nplugin: "uptime.monitoring.monitors"  # a comment\napi_url: x', False, 'inventory.uptime.yml'),
    ('inventory.yml', 'plugin: netbox.netbox.nb_inventory', False, False), ('hosts.yml', 'all:\n  hosts: {}', False, False),
    ('uptime.yml.bak', 'plugin: uptime.monitoring.monitors', False, False), ('uptime.json', '{}', False, False),
    ('missing.uptime.yml', None, False, False),
])
def test_verify_file_accepts_the_configuration_names_and_warns_of_a_file_of_ours_named_otherwise(tmp_path, monkeypatch, name, text,
                                                                                                 accepted, warned):
    path, warnings = tmp_path / name, []
    if text is not None:
        path.write_text(text + '\n', encoding='utf-8')
    plugin = plugin_module.InventoryModule()
    monkeypatch.setattr(plugin.display, 'warning', warnings.append)
    assert plugin.verify_file(str(path)) is accepted
    if warned:
        assert len(warnings) == 1, warnings
        assert 'must be uptime.yml or end in .uptime.yml' in warnings[0]
        assert '(for example %s)' % warned in warnings[0]
    else:
        assert warnings == []


def test_every_monitor_page_is_read_once(emulator):
    """105 monitors, 3 offline: two pages of monitors and one incident listing."""
    for number in range(105):
        monitor_id = add_monitor(emulator, 'm%03d' % number, 'https://host%d.example.com/' % (number % 50))
        if number % 40 == 0:
            open_incident(emulator, monitor_id, stamp(600))
    emulator.clear_log()
    inventory = parse(make_plugin(emulator))
    assert [(entry['path'], entry['query']) for entry in emulator.log()] == [
        ('/api/v1/monitors', 'sort_by=id&sort=desc&per_page=100'), ('/api/v1/monitors', 'sort_by=id&sort=desc&per_page=100&page=2'),
        ('/api/v1/incidents', 'sort_by=ended_at&sort=desc&per_page=100')]
    assert len(inventory.hosts) == 50
    assert sum(len(host_vars(inventory, host)['uptime_monitors']) for host in inventory.hosts) == 105
    assert groups_of(inventory)['uptime_offline'] == ['host0.example.com', 'host30.example.com', 'host40.example.com']
