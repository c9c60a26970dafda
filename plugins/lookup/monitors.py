# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: monitors
short_description: The monitors of an account, for templates and conditions
version_added: 1.0.0
description:
  - Returns the monitors M(uptime.monitoring.monitor_info) would, one monitor an item, with the same filters and
    O(fields), so that a C(when:) or a template needs no task to register them first.
  - Secrets are masked as in the module's results; the results are unsafe text, never templated again.
author:
  - Uptime Monitoring maintainers (@uptime-monitoring)
extends_documentation_fragment:
  - uptime.monitoring.connection
  - uptime.monitoring.connection.plugins
  - uptime.monitoring.connection.lookups
  - uptime.monitoring.lookup_cache
  - uptime.monitoring.info.monitors
notes:
  - Use C(query()) (or C(lookup(..., wantlist=true))) to get a list, also of one monitor.
seealso:
  - module: uptime.monitoring.monitor_info
'''

EXAMPLES = r'''
- name: Say what is down
  ansible.builtin.debug:
    msg: "{{ query('uptime.monitoring.monitors', status='offline', fields=['name']) | map(attribute='name') | join(', ') or 'Nothing is down.' }}"

- name: Deploy only while the shop's monitor is not paused
  ansible.builtin.debug:
    msg: The shop is watched.
  when: query('uptime.monitoring.monitors', name='shop', fields=['status']) | map(attribute='status') | first | default('') != 'paused'
'''

RETURN = r'''
_list:
  description: The monitors, as M(uptime.monitoring.monitor_info) returns them (only the O(fields) asked, when given).
  type: list
  elements: dict
'''

from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_RESOURCE
from ansible_collections.uptime.monitoring.plugins.plugin_utils._info_lookup import InfoLookup


class LookupModule(InfoLookup):
    resource = MONITOR_RESOURCE
    mutually_exclusive = [('id', 'name', 'search')]
