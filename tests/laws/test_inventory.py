# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The laws of the inventory plugin uptime.monitoring.monitors, run in this process (``module_runner``) against the
emulator, over generated accounts: names that host patterns, groups and Ansible's implicit localhost make hard, URLs
with every credential form on loopback and remote hosts (ports, trailing dots, cases and spellings of one address),
every status, and a secret in each monitor's URL, headers, alerts or password. Monitors are read 10 a page, so that
another client deletes and creates monitors between the page reads (``meanwhile``) and the checker flips monitors
between any two reads (``check``), in a drawn order.

Whatever the account and the actors: no secret (nor the API key) is in a host's variables or in the cache file; one
host per endpoint (``url_host``) or per monitor (``monitor_name``), which a host pattern names alone, reached at its
endpoint, locally when that is the controller; every monitor that lived throughout the read is listed once, with a
status it had, in the groups of its statuses, none that never lived; or the read fails naming the list, when it moved
at each of its reads.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import certifi
import pytest
from ansible import constants as C
from ansible.errors import AnsibleParserError
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.template import trust_as_template
from hypothesis import assume, event, example, given, strategies as st

from emulator.control import OTHER_KEY, PRIMARY_KEY
from laws import ago, budget, fresh, holds
from module_runner import declared_options, inventory_plugin, parse_inventory
import strategies as gen

from ansible_collections.uptime.monitoring.plugins.inventory import monitors as inventory_monitors
from ansible_collections.uptime.monitoring.plugins.module_utils import _client, _incident, _resource

# The host of a URL as drawn, and the endpoint it is: cases, a trailing dot, a port and IPv6 spellings of one address.
ENDPOINTS = {'shop.example.com': 'shop.example.com', 'Shop.Example.COM.': 'shop.example.com',
             'shop.example.com:8443': 'shop.example.com', 'intranet.example.org': 'intranet.example.org',
             '10.0.0.5': '10.0.0.5', '[2001:db8::1]': '2001:db8::1', '[2001:DB8:0:0::1]:8443': '2001:db8::1',
             'localhost': 'localhost', 'LOCALHOST.': 'localhost', '127.0.0.1': '127.0.0.1', '127.8.9.10:9100': '127.8.9.10',
             '[::1]': '::1', 'all': 'all', 'ungrouped': 'ungrouped'}
LOOPBACK = {'localhost', '127.0.0.1', '127.8.9.10', '::1'}
# Names a host pattern splits, reads as a wildcard or an operator, or takes for a group or the controller.
HARD_NAMES = ['localhost', '127.0.0.1', '::1', 'all', 'ungrouped', 'uptime_offline', 'uptime offline', 'web1 admin',
              'web1_admin', 'shop.example.com.', 'a,b', 'x:y', 'web[1:2]', 'web*', '~web', '!web', '&web', '-web', 'Café']
# The controller's names drawn apart as well: a remote monitor so named must never become the controller.
NAMES = st.sampled_from(sorted(C.LOCALHOST)) | st.sampled_from(HARD_NAMES) | gen.names()
# What the account makes of a monitor: a check online or offline (an incident opens), acknowledged, paused, in its
# maintenance window; pending is never checked.
STATES = ['pending', 'online', 'offline', 'acknowledged', 'paused', 'maintenance']
STATUS_OF = {'acknowledged': 'offline'}
CHECKED = ('pending', 'online', 'offline', 'acknowledged')
PAGE = 10
SEARCH = 'seed'
URL_HOST = re.compile(r'^(https://(?:[^@/]*@)?)([^/]*)(/.*)$')


@st.composite
def monitors(draw):
    """A monitor's options with a secret where gen.monitors puts it, at a drawn host, and its state."""
    secret = draw(gen.SECRETS)
    args = draw(gen.monitors(name=NAMES, secret=secret))
    host = draw(st.sampled_from(sorted(ENDPOINTS)))
    args['url'] = URL_HOST.sub(lambda match: match.group(1) + host + match.group(3), args['url'])
    state = draw(st.sampled_from(STATES))
    # The state is the law's to draw: gen.monitors may pause a monitor or open a window around now.
    args.pop('paused', None)
    if state == 'maintenance':
        args.update(maintenance_start_at=gen.NOW_WINDOW[0], maintenance_end_at=gen.NOW_WINDOW[1])
    elif args.get('maintenance_start_at') == gen.NOW_WINDOW[0]:
        del args['maintenance_start_at'], args['maintenance_end_at']
    return {'args': args, 'secret': str(secret), 'endpoint': ENDPOINTS[host], 'state': state}


# Another client after a page read of the monitors (monitors deleted by their place in the account, one created; or
# one renamed into or out of the search), or the checker before a read of the monitors or the incidents (a monitor of
# a drawn place flipped).
ACTORS = st.lists(st.one_of(
    st.fixed_dictionaries({'delete': st.lists(st.integers(0, 40), max_size=2), 'create': st.integers(0, 1)}),
    st.fixed_dictionaries({'toggle': st.integers(0, 40)}),
    st.fixed_dictionaries({'flip': st.integers(0, 5), 'status': st.sampled_from(['online', 'offline']),
                           'before': st.sampled_from(['/api/v1/monitors', '/api/v1/incidents'])})), max_size=4)
ACCOUNT = st.fixed_dictionaries({
    'monitors': st.lists(monitors(), max_size=6, unique_by=lambda monitor: monitor['args']['name']),
    'filler': st.sampled_from([0, 0, 12, 25]),  # monitors of the account the law draws nothing of, for more pages
    'host_names': st.sampled_from(['url_host', 'monitor_name']),
    'status': st.none() | st.lists(st.sampled_from(sorted(set(STATES) - {'acknowledged'})), min_size=1, unique=True),
    # The service's search: the filler's names hold SEARCH, but those of the places in outside (renamed before the read).
    'search': st.sampled_from([None, SEARCH]),
    'outside': st.lists(st.integers(0, 24), max_size=2),
    'actors': ACTORS,
})


@pytest.fixture
def cache_dir(tmp_path):
    return str(tmp_path / 'cache')


@pytest.fixture
def quick_pages(monkeypatch):
    """Pages of 10 (a size the service serves), and no pause before a list is read again."""
    monkeypatch.setattr(_resource, 'PAGE_SIZE', PAGE)
    monkeypatch.setattr(_incident, 'PAGE_SIZE', PAGE)
    monkeypatch.setattr(_client.UptimeClient, '_backoff', lambda self, attempt, retry_after: 0)


def make_account(emulator, account):
    """The account: the filler (online), then the drawn monitors in their states. Their ids, and the ongoing incident
    of each offline one by monitor id."""
    fresh(emulator)
    filler = emulator.seed(account['filler'])
    ids = list(range(filler['first_id'], filler['last_id'] + 1)) if account['filler'] else []
    for place in account['outside']:
        if place < len(ids):
            emulator.api('PUT', '/api/v1/monitors/%d' % ids[place], data={'name': renamed(ids[place], False)})
    drawn = emulator.records(monitors=[gen.record(monitor['args']) for monitor in account['monitors']])['monitors']
    for monitor_id, monitor in zip(drawn, account['monitors']):
        if monitor['state'] == 'paused':
            emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 1})
        elif monitor['state'] in ('online', 'offline', 'acknowledged'):
            emulator.check(monitor_id, STATUS_OF.get(monitor['state'], monitor['state']))
    incidents = {}
    for record in emulator.api('GET', '/api/v1/incidents', params={'per_page': 100}).json['data']:
        incidents[record['monitor']['id']] = record['id']
        if account['monitors'][drawn.index(record['monitor']['id'])]['state'] == 'acknowledged':
            emulator.api('PUT', '/api/v1/incidents/%d' % record['id'], data={'acknowledged_at': ago(1)})
    return ids, drawn, incidents


def renamed(monitor_id, searched):
    return '%s-%d' % ('seed-back' if searched else 'moved', monitor_id)


def searched(name):
    """Whether the service's search finds SEARCH in ``name`` (LIKE folds the case of ASCII letters only)."""
    return SEARCH in ''.join(char.lower() if char.isascii() else char for char in name)


def queue_actors(emulator, account, ids, drawn):
    """The actors' faults, in their order. What the law may expect: each monitor's possible statuses, the ids that
    were not in the list throughout (deleted, renamed out of the search or into it), how many changes moved the list
    (a create, a delete of a monitor still there, a rename across the search) and the endpoints of those created."""
    everyone = ids + drawn
    possible = {monitor_id: {'online'} for monitor_id in ids}
    possible.update((monitor_id, {STATUS_OF.get(monitor['state'], monitor['state'])})
                    for monitor_id, monitor in zip(drawn, account['monitors']))
    names = ['outside' if place in account['outside'] else 'seed' for place in range(len(ids))]
    found = {monitor_id: searched(name) for monitor_id, name in zip(everyone, names + [monitor['args']['name'] for monitor in account['monitors']])}
    listed = {monitor_id for monitor_id in everyone if found[monitor_id] or not account['search']}
    deleted, absent, moved, endpoints = set(), set(everyone) - listed, 0, {}
    for number, actor in enumerate(account['actors']):
        if 'toggle' in actor and actor['toggle'] < len(everyone):
            monitor_id = everyone[actor['toggle']]
            found[monitor_id] = not found[monitor_id]
            if account['search'] and monitor_id not in deleted:
                moved += 1
                listed ^= {monitor_id}
                absent.add(monitor_id)
            emulator.fault('meanwhile', method='GET', path='/api/v1/monitors',
                           update=[{'id': monitor_id, 'name': renamed(monitor_id, found[monitor_id])}])
        if 'delete' in actor:
            gone = {everyone[place] for place in actor['delete'] if place < len(everyone)}
            # A monitor created is named new-N: the search leaves it out.
            moved += bool((actor['create'] and not account['search']) or gone & listed)
            deleted |= gone
            absent |= gone
            listed -= gone
            if actor['create']:  # numbered on from the last id, in the order of the page reads
                endpoints[max(everyone, default=0) + len(endpoints) + 1] = 'new-%d.example.com' % number
            emulator.fault('meanwhile', method='GET', path='/api/v1/monitors', delete=sorted(gone),
                           create=[gen.record(gen.entry('new-%d' % number))] if actor['create'] else [])
    for actor in account['actors']:
        # The checker never checks a paused monitor or one in maintenance; nor one another client deletes.
        if 'flip' in actor and actor['flip'] < len(drawn) and account['monitors'][actor['flip']]['state'] in CHECKED \
                and drawn[actor['flip']] not in deleted:
            possible[drawn[actor['flip']]].add(actor['status'])
            emulator.fault('check', method='GET', path=actor['before'], check={'monitor_id': drawn[actor['flip']], 'status': actor['status']})
    possible.update((monitor_id, {'pending'}) for monitor_id in endpoints)
    return possible, absent, moved, endpoints


def host_vars(inventory):
    return {host: inventory.get_host(host).get_vars() for host in inventory.hosts}


def cached(directory):
    text = ''
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        with open(os.path.join(directory, name), encoding='utf-8') as handle:
            text += handle.read()
    return text


@budget(150)
@given(account=ACCOUNT)
# Issue 44, item 7: read oldest first, a monitor deleted by another job after the first page hid a live one.
@example(account={'monitors': [], 'filler': 12, 'host_names': 'monitor_name', 'status': None, 'search': None, 'outside': [],
                  'actors': [{'delete': [0], 'create': 0}]})
# Another client deletes a monitor after each first page: every read of the list moves, and the read fails naming it.
@example(account={'monitors': [], 'filler': 12, 'host_names': 'url_host', 'status': None, 'search': None, 'outside': [],
                  'actors': [{'delete': [place], 'create': 0} for place in range(3)]})
# Searched, three pages: a monitor of the first deleted after it is read hides one of the second, and one renamed into
# the search after the second brings the count back: only the total of each page tells the list moved.
@example(account={'monitors': [], 'filler': 25, 'host_names': 'url_host', 'status': None, 'search': SEARCH, 'outside': [0],
                  'actors': [{'delete': [19], 'create': 0}, {'toggle': 0}]})
def test_every_live_monitor_is_one_addressable_host_or_in_one_and_no_secret_is_shown(
        emulator, quick_pages, cache_dir, account):  # pylint: disable=unused-argument
    ids, drawn, incidents = make_account(emulator, account)
    secrets = [monitor['secret'] for monitor in account['monitors']]
    assume(not any(secret in monitor['args']['name'] for secret in secrets for monitor in account['monitors']))
    possible, absent, moved, created = queue_actors(emulator, account, ids, drawn)
    shutil.rmtree(cache_dir, ignore_errors=True)
    plugin = inventory_plugin(emulator.url, host_names=account['host_names'], status=account['status'], search=account['search'], cache=True,
                              cache_plugin='jsonfile', cache_connection=cache_dir)
    plugin.load_cache_plugin()
    try:
        inventory = parse_inventory(plugin)
    except AnsibleParserError as exc:
        event('the read failed: the list moved')
        holds('the list changed while its pages were read' in str(exc), 'a read fails only naming the list', error=str(exc))
        holds(moved >= _client.LIST_READS, 'a read fails only when the list moved at each of its reads', moved=moved, account=account)
        return
    finally:
        event('actors left waiting: %d' % len(emulator.faults()))
        emulator.clear_faults()
    plugin.update_cache_if_changed()
    variables = host_vars(inventory)
    event('hosts: %s' % ('none' if not variables else 'one' if len(variables) == 1 else 'several'))
    if any(monitor['args']['name'] in C.LOCALHOST and monitor['endpoint'] not in LOOPBACK for monitor in account['monitors']):
        event('a remote monitor named as the controller, hosts named by %s' % account['host_names'])
    shown = dict(account=account, hosts=variables)

    text = json.dumps(variables, default=str) + cached(cache_dir)
    for secret in secrets + [PRIMARY_KEY]:
        holds(secret not in text, 'no secret in host variables or the cache', secret=secret, **shown)

    listed = [monitor['id'] for host in variables.values() for monitor in host.get('uptime_monitors', [])]
    holds(len(listed) == len(set(listed)), 'each monitor listed once', listed=listed, **shown)
    wanted = set(account['status'] or STATES)
    lived = (set(ids) | set(drawn)) - absent
    missing = sorted(monitor_id for monitor_id in lived if possible[monitor_id] <= wanted and monitor_id not in listed)
    holds(missing == [], 'every monitor that lived throughout the read, of the statuses asked, is listed', missing=missing, **shown)
    strangers = sorted(monitor_id for monitor_id in listed if monitor_id not in possible)
    holds(strangers == [], 'no monitor that never lived', strangers=strangers, **shown)

    endpoints = {monitor_id: 'seed-%05d.example.com' % (place + 1) for place, monitor_id in enumerate(ids)}
    endpoints.update(zip(drawn, [monitor['endpoint'] for monitor in account['monitors']]))
    endpoints.update(created)
    manager = InventoryManager(DataLoader())
    manager._inventory = inventory  # pylint: disable=protected-access
    owners = {}
    for host, values in variables.items():
        found = {monitor['id']: monitor for monitor in values.get('uptime_monitors', [])}
        at = {endpoints[monitor_id] for monitor_id in found}
        holds(len(at) == 1, 'a host is one endpoint', host=host, endpoints=sorted(at), **shown)
        endpoint = at.pop()
        key = endpoint if account['host_names'] == 'url_host' else next(iter(found))
        holds(key not in owners, 'one host per endpoint or monitor', host=host, other=owners.get(key), **shown)
        owners[key] = host
        holds(len(found) == 1 or account['host_names'] == 'url_host', 'one monitor a host, by monitor name', host=host, **shown)
        holds([match.name for match in manager.get_hosts(host)] == [host], 'a host pattern names the host alone', host=host,
              matched=[match.name for match in manager.get_hosts(host)], **shown)
        holds(values.get('ansible_host', host) == endpoint, 'the host is reached at its endpoint', host=host, endpoint=endpoint, **shown)
        local = endpoint in LOOPBACK
        holds((values.get('ansible_connection') == 'local') == local, 'the controller alone is reached locally', host=host, **shown)
        holds(local or host not in C.LOCALHOST, 'a remote host is never named as the controller', host=host, **shown)
        statuses = set()
        for monitor_id, monitor in found.items():
            holds(monitor['status'] in possible[monitor_id], 'a status the monitor had', monitor=monitor, **shown)
            holds(monitor['status'] in wanted, 'a status asked for', monitor=monitor, **shown)
            statuses.add(monitor['status'])
            incident = (monitor['incident'] or {}).get('id')
            if possible[monitor_id] == {'offline'} and monitor_id in lived:
                holds(incident == incidents[monitor_id], 'the ongoing incident of an offline monitor', monitor=monitor,
                      expected=incidents[monitor_id], **shown)
            if monitor['status'] != 'offline':
                holds(incident is None, 'no incident but for an offline monitor', monitor=monitor, **shown)
        groups = {group.name for group in inventory.get_host(host).get_groups()} - {'all', 'ungrouped'}
        holds(groups == {'uptime_' + status for status in statuses}, 'the host is in the groups of its statuses',
              host=host, groups=sorted(groups), **shown)


# The options of the inventory plugin as it declares them (its DOCUMENTATION and doc fragments): each drawn from the
# values below, or from its type and choices, so that an option is drawn the day it is declared. Those of ansible-core's
# inventory_cache fragment are the cache itself, and plugin names the plugin: not varied.
DECLARED = declared_options(inventory_monitors)
NOT_VARIED = {option for option, (fragment, dummy) in DECLARED.items() if fragment == 'inventory_cache'} | {'plugin'}
MEANINGFUL = {
    'api_key': st.sampled_from([PRIMARY_KEY, OTHER_KEY]),
    'ca_path': st.sampled_from([None, certifi.where()]),  # plain HTTP: a bundle is never used
    'search': st.sampled_from([None, 'seed', 'shop', 'example']),
    'status_page_id': st.sampled_from([None, 1, 2]),
    # Expressions of a configuration file, which Ansible trusts as templates.
    'compose': st.sampled_from([{}, {'uptime_first': trust_as_template('uptime_monitors[0].name')}]),
    'groups': st.sampled_from([{}, {'with_offline': trust_as_template("'offline' in uptime_statuses")}]),
    'keyed_groups': st.sampled_from([[], [{'key': trust_as_template('uptime_statuses'), 'prefix': 'status'}]]),
    'timeout': st.sampled_from([30, 5.5]),
    'retries': st.sampled_from([0, 1]),
}


def declared_values(option):
    """The values an option takes, from MEANINGFUL or from its declaration (its choices, else its type)."""
    spec = DECLARED[option][1]
    if option in MEANINGFUL:
        return MEANINGFUL[option]
    kind, choices = spec.get('type', 'str'), spec.get('choices')
    if kind == 'list' and choices:
        return st.none() | st.lists(st.sampled_from(choices), min_size=1, unique=True)
    if choices:
        return st.sampled_from(choices)
    if kind in ('bool', 'boolean'):
        return st.booleans()
    raise AssertionError('option %s of the inventory plugin (type %s) has no values to draw: add them to MEANINGFUL' % (option, kind))


VARIED = sorted(set(DECLARED) - NOT_VARIED)


def seen(plugin):
    """What a parse gives: each host's variables and groups, or the failure's message."""
    try:
        inventory = parse_inventory(plugin)
    except AnsibleParserError as exc:
        return 'failed: %s' % exc
    return {host: (inventory.get_host(host).get_vars(), sorted(group.name for group in inventory.get_host(host).get_groups()))
            for host in inventory.hosts}


@pytest.mark.parametrize('option', VARIED)
@budget(8)
@given(data=st.data())
def test_every_option_of_the_inventory_changes_its_cache_key_or_what_is_served(emulator, option, data):
    """Parsed with one value of each declared option, then with one option changed on the same cache: what is served
    is what a read without the cache gives. A changed filter, account or host naming never serves the hosts of another."""
    # Each filter's values (MEANINGFUL) keep some monitors and leave out others: names and URLs hold 'example', the
    # seeded ones 'seed', one 'shop'; statuses online, offline, paused and pending; two status pages; another account.
    fresh(emulator)
    seeded = emulator.seed(4)
    shop, blog = emulator.records(monitors=[
        gen.record({'name': 'shop example', 'url': 'https://shop.example.com/', 'interval': 60}),
        gen.record({'name': 'blog example', 'url': 'https://blog.example.org/', 'interval': 60})])['monitors']
    emulator.check(shop, 'offline')
    emulator.check(seeded['first_id'], 'online')
    emulator.api('PUT', '/api/v1/monitors/%d' % blog, data={'pause': 1})
    emulator.status_page(PRIMARY_KEY, 1, [shop, seeded['first_id']])
    emulator.status_page(PRIMARY_KEY, 2, [blog, seeded['last_id']])
    emulator.records(monitors=[gen.record({'name': 'other example', 'url': 'https://other.example.net/', 'interval': 60})],
                     api_key=OTHER_KEY)
    base = {name: data.draw(declared_values(name), label=name) for name in VARIED if name != 'api_url'}
    if option == 'api_url':  # the same service, spelled otherwise
        changed = dict(base, api_url=emulator.url + '/api/v1')
    else:
        changed = dict(base, **{option: data.draw(declared_values(option).filter(lambda value: value != base.get(option)),
                                                  label='changed ' + option)})
    shared = {}
    for options in (base, changed):
        plugin = inventory_plugin(emulator.url, **dict(options, cache=True))
        plugin._cache = shared  # pylint: disable=protected-access
        served = seen(plugin)
    read = seen(inventory_plugin(emulator.url, **dict(changed, cache=False)))
    holds(served == read, 'what the cache serves is what a read gives', option=option, base=base, changed=changed,
          served=served, read=read)
