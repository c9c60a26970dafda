# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: monitors
short_description: The endpoints of uptime monitors as hosts, grouped by monitor status
version_added: 1.0.0
description:
  - Makes a host of each endpoint that the monitors of a phpUptime account check, named after the host name of the
    monitors' URL; the monitors of one endpoint make one host (or each monitor its own, see O(host_names)).
  - Puts each host in the groups of its monitors' statuses, C(uptime_pending), C(uptime_online), C(uptime_offline),
    C(uptime_paused) and C(uptime_maintenance), which always exist, empty or not.
  - No secret of a monitor and no connection option becomes a variable.
  - Uses a YAML configuration file named C(uptime.yml) or ending in C(.uptime.yml) (or C(.yaml)).
author:
  - Uptime Monitoring maintainers (@uptime-monitoring)
extends_documentation_fragment:
  - constructed
  - inventory_cache
  - uptime.monitoring.connection
  - uptime.monitoring.connection.plugins
options:
  plugin:
    description:
      - The name of this plugin; it makes a YAML file a configuration of this plugin.
    required: true
    type: str
    choices: [uptime.monitoring.monitors]
  host_names:
    description:
      - What names the hosts.
      - V(url_host), the host name of the monitor's URL (lowercase, without port or trailing dot), makes one host per
        endpoint. A monitor whose URL has no host name is left out, with a warning.
      - V(monitor_name) makes one host per monitor, named after it, which Ansible reaches at the host name of its URL.
      - A name keeps only letters, digits, dots, dashes and underscores, so that a host pattern can name it; any other
        character, and a leading dash, becomes an underscore (the monitor C(web1 admin) is the host C(web1_admin)).
      - A name taken by another host, a group or the controller (C(localhost)) gets its monitor's id appended
        (C(web1_admin_12)), with a warning.
      - See L(docs/inventory.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/inventory.md#host-names).
    type: str
    choices: [url_host, monitor_name]
    default: url_host
  status:
    description:
      - Only monitors with one of these statuses; by default, every status.
      - The service cannot filter monitors by status, so every page is still read.
    type: list
    elements: str
    choices: [pending, online, offline, paused, maintenance]
  search:
    description:
      - Only monitors whose field O(search_by) contains this text (the service's search, not case-sensitive).
    type: str
  search_by:
    description:
      - The field O(search) looks in.
    type: str
    choices: [name, url]
    default: name
  status_page_id:
    description:
      - Only the monitors of this status page.
    type: int
notes:
  - "Host variables, described in
    L(docs/inventory.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/inventory.md#variables):"
  - "C(uptime_monitors): the host's monitors: id, name, URL (its credentials masked), status and when it began,
    interval, maintenance window, what the check sends and looks for (and which of its secrets are left out), and the
    ongoing incident of an offline one."
  - "C(uptime_statuses): the sorted statuses of those monitors."
  - "C(ansible_host): the host name of the monitors' URL, when the host is named otherwise."
  - "C(ansible_connection) and C(ansible_python_interpreter): those of Ansible's implicit localhost, for a host on a
    loopback address; O(compose) or C(host_vars) override them."
  - O(api_url) and O(api_key) may be templates (for example a lookup of a vaulted value).
  - A source that fails only makes C(ansible-inventory) and C(ansible-playbook) warn; set
    E(ANSIBLE_INVENTORY_UNPARSED_FAILED) to V(true) to make it an error (AWX does for inventory updates).
  - A run sends one request per 100 monitors, and one more for the incidents when a listed monitor is offline; none
    when O(cache) serves it.
  - The cache holds no secret, and is keyed by the file, the account (a one-way fingerprint, never the key) and the
    filters.
  - In AWX / Automation Controller, use the file as an inventory source "Sourced from a Project", with a credential of
    the type in C(extras/awx/credential_type.yml).
seealso:
  - name: The inventory plugin's guide
    description: Configuration, groups, variables, AWX and event-driven use.
    link: https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/inventory.md
'''

EXAMPLES = r'''
# production.uptime.yml: every monitored endpoint, the address and key from
# UPTIME_API_URL and UPTIME_API_KEY (or an AWX credential).
plugin: uptime.monitoring.monitors
---
# shop.uptime.yml: the monitors of status page 3 whose URL contains "shop",
# named after the monitors, with groups of their own.
plugin: uptime.monitoring.monitors
api_url: https://uptime.example.com
status_page_id: 3
search: shop
search_by: url
host_names: monitor_name
keyed_groups:
  # uptime_interval_60, uptime_interval_300, ...
  - key: uptime_monitors | map(attribute='interval')
    prefix: uptime_interval
groups:
  # Offline, and nobody acknowledged the incident yet.
  needs_attention: >-
    uptime_monitors | selectattr('incident') | rejectattr('incident.acknowledged') | list | length > 0
compose:
  ansible_user: "'deploy'"
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/uptime-inventory
cache_timeout: 300
'''

import hashlib
import ipaddress
import json
import re
import sys
from urllib.parse import urlsplit

from ansible import constants as C
from ansible.errors import AnsibleParserError
from ansible.module_utils.basic import missing_required_lib
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.uptime.monitoring.plugins.module_utils._client import HAS_REQUESTS, UptimeApiError, is_loopback
from ansible_collections.uptime.monitoring.plugins.module_utils._connection import (
    PLUGIN_CONNECTION_NAMES,
    account_fingerprint,
    connect,
    connection_settings,
)
from ansible_collections.uptime.monitoring.plugins.module_utils._incident import INCIDENT_SCHEMA, INCIDENT_RESOURCE
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_RESOURCE, STATUSES
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import ValidationError, record_id, url_secret_spans

CONFIG_NAMES = ('uptime.yml', 'uptime.yaml')
PLUGIN_LINE = re.compile(r'^plugin:\s*(["\']?)uptime\.monitoring\.monitors\1\s*(#.*)?$', re.M)
GROUP_PREFIX = 'uptime_'
# The keys of a monitor that become host variables: nothing secret can be among them.
MONITOR_KEYS = ('id', 'name', 'url', 'status', 'started_at', 'interval', 'maintenance_start_at', 'maintenance_end_at',
                'request_method', 'alert_condition', 'alert_text_lookup')
# Raised when what a cached monitor holds changes otherwise than its keys (2: a URL's token user-info is masked), so
# that an entry written before, with what is now a secret in it, is never read.
CACHE_VERSION = 2
QUERY_OPTIONS = ('search', 'status_page_id')
STATUS_GROUPS = tuple(GROUP_PREFIX + status for status in STATUSES)
GROUP_NAMES = ('all', 'ungrouped') + STATUS_GROUPS
# A host pattern splits at whitespace, commas, colons and brackets, reads * ? [ as wildcards and a leading ~ ! & as
# operators, and a command line reads a leading dash as an option: outside IP addresses, a host name keeps only
# letters, digits, dots, dashes (not first) and underscores.
UNADDRESSABLE = re.compile(r'^-|[^\w.-]')


def url_host(url):
    """The host name of a monitor's URL (lowercase, no port; an IP address in its usual short form), or None when it
    has none."""
    try:
        host = urlsplit(str(url or '').strip()).hostname
    except ValueError:
        return None
    # A fully qualified name's trailing dot names the same endpoint as the name without it.
    host = (host or '').rstrip('.')
    if not host:
        return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def host_name(text):
    """``text`` as a host name Ansible host patterns can address: an IP address as it is, else every other character
    than a letter, digit, dot, dash or underscore (and a leading dash) replaced by an underscore."""
    try:
        ipaddress.ip_address(text)
        return text
    except ValueError:
        return UNADDRESSABLE.sub('_', text)


def monitor_summary(record):
    """A monitor as the host variables show it, read through the monitor's own description."""
    view = MONITOR_RESOURCE.record_view(record)
    # What the monitor's check sends that stays out of the variables, as it may hold a secret.
    withheld = {'request_auth': view.get('request_auth_username'), 'request_headers': view.get('request_headers'),
                'url_secrets': url_secret_spans(record.get('url') or '')}
    return dict({key: view.get(key) for key in MONITOR_KEYS}, check_withheld=[name for name, value in withheld.items() if value])


def monitor_list(monitors):
    """``monitor 'web' (id 3)``, or ``monitors 'web' (id 3), 'api' (id 5)``, for a message."""
    return 'monitor%s %s' % ('s' if len(monitors) > 1 else '',
                             ', '.join('%r (id %s)' % (monitor['name'], monitor['id']) for monitor in monitors))


def incident_summary(values):
    return {'id': values['id'], 'started_at': values['started_at'], 'acknowledged': values['acknowledged_at'] is not None}


def read_monitors(client, query, statuses=None):
    """The monitors (every page of the list, filtered by ``statuses``), each with its ongoing incident when offline.

    The incidents are read only when a listed monitor is offline, in one listing for all of them.
    """
    records = MONITOR_RESOURCE.read_all(client, query)
    monitors = [dict(monitor_summary(record), incident=None) for record in records]
    if statuses:
        monitors = [monitor for monitor in monitors if monitor['status'] in statuses]
    offline = {monitor['id']: monitor for monitor in monitors if monitor['status'] == 'offline'}
    if offline:
        for record in INCIDENT_RESOURCE.ongoing(client):
            values = dict(INCIDENT_SCHEMA.current(record), id=record_id(record))
            monitor = offline.get(values['monitor_id'])
            if monitor is not None and monitor['incident'] is None:
                monitor['incident'] = incident_summary(values)
    return monitors


def source_error(message):
    """The error that makes Ansible leave this inventory source out, saying how to make that a failure where
    Ansible only warns about it (its default; AWX sets ANSIBLE_INVENTORY_UNPARSED_FAILED for inventory updates)."""
    if not (C.INVENTORY_UNPARSED_IS_FAILED or C.INVENTORY_ANY_UNPARSED_IS_FAILED):
        message += (' (Ansible goes on without this inventory source: set ANSIBLE_INVENTORY_UNPARSED_FAILED=true, '
                    'or unparsed_is_failed = true in the [inventory] section of ansible.cfg, to make this an error)')
    return AnsibleParserError('uptime.monitoring.monitors: %s' % message)


def hosts_of(monitors, host_names='url_host'):
    """``({host: [monitor, ...]}, [monitor without a host name, ...], {host: host it would have been, ...})``,
    monitors in the order of their ids.

    The monitors of one endpoint (``url_host``), or a monitor (``monitor_name``), make one host, named by
    ``host_name``. Two whose names become the same host name stay two hosts: the one of the lower monitor id keeps
    the name, the other's gets ``_<its first monitor's id>`` appended (until it is free). So does a name of the
    groups every inventory of the plugin has, which a host pattern would take for the group.
    """
    endpoints, nameless = {}, []
    for monitor in sorted(monitors, key=lambda monitor: (monitor['id'] is None, monitor['id'] or 0)):
        endpoint = monitor['name'] if host_names == 'monitor_name' else url_host(monitor['url'])
        if not endpoint:
            nameless.append(monitor)
            continue
        endpoints.setdefault(endpoint, []).append(monitor)
    hosts, renamed = {}, {}
    for endpoint, endpoint_monitors in endpoints.items():
        host = wanted = host_name(endpoint)
        remote = not is_loopback(url_host(endpoint_monitors[0]['url']))
        # A name Ansible takes for its implicit localhost would make every task delegated to localhost go to the
        # monitor's endpoint: only the controller's own endpoint keeps it.
        while host in hosts or host in GROUP_NAMES or (remote and host in C.LOCALHOST):
            # Through host_name again: '::1' with an id appended is no address, and its colons would split a pattern.
            host = host_name('%s_%s' % (host, endpoint_monitors[0]['id']))
        if host != wanted:
            renamed[host] = wanted
        hosts[host] = endpoint_monitors
    return hosts, nameless, renamed


def names_this_plugin(path):
    """Whether the YAML file at ``path`` says ``plugin: uptime.monitoring.monitors`` (its first 64 KiB, read as text)."""
    if not str(path).endswith(('.yml', '.yaml')):
        return False
    try:
        with open(path, encoding='utf-8', errors='replace') as handle:
            return bool(PLUGIN_LINE.search(handle.read(65536)))
    except OSError:
        return False


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    """Hosts from the monitors of an uptime-monitoring account."""

    NAME = 'uptime.monitoring.monitors'

    def verify_file(self, path):
        if not super().verify_file(path):
            return False
        name = str(path).replace('\\', '/').rsplit('/', 1)[-1]
        if name in CONFIG_NAMES or name.endswith(tuple('.' + suffix for suffix in CONFIG_NAMES)):
            return True
        rule = 'the file name must be uptime.yml or end in .uptime.yml (or .yaml)'
        if names_this_plugin(path):
            # Ansible would only say the file "could not be verified by inventory plugin", which names no rule.
            self.display.warning('uptime.monitoring.monitors: %s names this plugin but is not read: %s (for example %s)'
                                 % (path, rule, name.rsplit('.', 1)[0] + '.uptime.yml'))
        else:
            self.display.vvv('uptime.monitoring.monitors: skipping %s: %s' % (path, rule))
        return False

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        config = self._read_config_data(path)
        if 'account_timezone' in (config or {}):
            # It was an option of this plugin (one that changed nothing): Ansible would drop the key without a word.
            self.display.deprecated('uptime.monitoring.monitors: account_timezone in %s is ignored, as the plugin sends no timestamp '
                                    'and reads UTC ones: remove it' % (path,), version='1.0.0', collection_name='uptime.monitoring')
        connection = self._connection_options()
        query, statuses = self._filters()
        if not HAS_REQUESTS:
            raise source_error(missing_required_lib('requests'))

        cache_key = self._cache_key(path, connection, query, statuses)
        caching = self.get_option('cache')
        monitors, update_cache = None, caching and not cache  # not cache: --flush-cache or a refresh
        if caching and cache:
            try:
                monitors = self._cache[cache_key]
            except KeyError:
                update_cache = True
        if monitors is None:
            monitors = self._read(connection, query, statuses)
        if update_cache:
            self._cache[cache_key] = monitors
        self._populate(monitors)

    def _connection_options(self):
        """The connection options, templated where they may be, checked before any request."""
        def option(name):
            value = self.get_option(name)
            if name in ('api_url', 'api_key') and isinstance(value, str) and self.templar.is_template(value):
                value = self.templar.template(value)
            return value
        try:
            return connection_settings(option, PLUGIN_CONNECTION_NAMES)  # no account_timezone: it sends no time
        except ValidationError as exc:
            raise source_error(str(exc)) from None

    def _filters(self):
        """The query of the monitor list and the wanted statuses, refused before any request when invalid."""
        statuses = self.get_option('status') or []
        unknown = [status for status in statuses if status not in STATUSES]
        if unknown:
            raise source_error('status: %s is not a monitor status (choose from %s)'
                               % (', '.join(map(str, unknown)), ', '.join(STATUSES)))
        query = {name: self.get_option(name) for name in QUERY_OPTIONS if self.get_option(name) is not None}
        if query.get('search') is not None:
            query['search_by'] = self.get_option('search_by')
        return query, sorted(statuses)

    def _cache_key(self, path, connection, query, statuses):
        """One cache entry per configuration file, account and filters: the account by its fingerprint, never its key.
        The keys of the cached monitors and CACHE_VERSION are part of it, so that an entry of an older version is never
        read."""
        # The query's names come in QUERY_OPTIONS' order: the same settings give the same text.
        scope = json.dumps([account_fingerprint(connection), query, statuses, MONITOR_KEYS, CACHE_VERSION])
        return '%s_%s' % (self.get_cache_key(path), hashlib.sha256(scope.encode('utf-8')).hexdigest()[:12])

    def _read(self, connection, query, statuses):
        client = connect(connection)
        for warning in client.transport_warnings:
            self.display.warning('uptime.monitoring.monitors: %s' % warning)
        try:
            monitors = read_monitors(client, query, statuses)
        except (UptimeApiError, ValidationError) as exc:
            raise source_error(client.redact(str(exc))) from None
        self.display.vvv('uptime.monitoring.monitors: %d monitors read with %d requests'
                         % (len(monitors), client.request_count))
        return monitors

    def _populate(self, monitors):
        hosts, nameless, renamed = hosts_of(monitors, self.get_option('host_names'))
        for monitor in nameless:
            self.display.warning('uptime.monitoring.monitors: monitor %r (id %s) is left out: its URL has no host name'
                                 % (monitor['name'], monitor['id']))
        for host, wanted in renamed.items():
            owner = monitor_list(hosts[wanted]) if wanted in hosts else \
                'a group' if wanted in GROUP_NAMES else "Ansible's implicit localhost (this controller)"
            self.display.warning('uptime.monitoring.monitors: the host name %s is taken by %s: %s is the host %s'
                                 % (wanted, owner, monitor_list(hosts[host]), host))
        for group in STATUS_GROUPS:
            self.inventory.add_group(group)
        strict = self.get_option('strict')
        for host, host_monitors in hosts.items():
            self.inventory.add_host(host)
            statuses = sorted({monitor['status'] for monitor in host_monitors if monitor['status']})
            for status in statuses:
                group = self.inventory.add_group(self._sanitize_group_name(GROUP_PREFIX + status))
                self.inventory.add_child(group, host)
            variables = {'uptime_monitors': host_monitors, 'uptime_statuses': statuses}
            address = url_host(host_monitors[0]['url'])
            if address and address != host:
                variables['ansible_host'] = address
            if address and is_loopback(address):
                # As Ansible's implicit localhost: no ssh to the controller itself, and the Python that runs Ansible.
                variables.update(ansible_connection='local', ansible_python_interpreter=sys.executable)
            for name, value in variables.items():
                self.inventory.set_variable(host, name, value)
            self._set_composite_vars(self.get_option('compose'), variables, host, strict=strict)
            self._add_host_to_composed_groups(self.get_option('groups'), variables, host, strict=strict)
            self._add_host_to_keyed_groups(self.get_option('keyed_groups'), variables, host, strict=strict)
