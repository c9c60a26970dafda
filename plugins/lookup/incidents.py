# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: incidents
short_description: The incidents of an account, for templates and conditions
version_added: 1.0.0
description:
  - Returns the incidents M(uptime.monitoring.incident_info) would, one incident an item, with the same filters,
    time bounds and O(fields), so that a C(when:) or a template needs no task to register them first.
  - Secrets of the nested monitor are masked as in the module's results; the results are unsafe text, never
    templated again.
author:
  - Uptime Monitoring maintainers (@uptime-monitoring)
extends_documentation_fragment:
  - uptime.monitoring.connection
  - uptime.monitoring.connection.plugins
  - uptime.monitoring.connection.lookups
  - uptime.monitoring.lookup_cache
  - uptime.monitoring.info.incidents
  - uptime.monitoring.times
  - uptime.monitoring.times.plugins
  - uptime.monitoring.times.lookups
notes:
  - Use C(query()) (or C(lookup(..., wantlist=true))) to get a list, also of one incident.
seealso:
  - module: uptime.monitoring.incident_info
'''

EXAMPLES = r'''
- name: Say since when each monitor is down, and why
  ansible.builtin.debug:
    msg: "{{ item.monitor_name }} since {{ item.started_at }} ({{ item.cause }})"
  loop: "{{ query('uptime.monitoring.incidents', status='ongoing', fields=['monitor_name', 'started_at', 'cause']) }}"
  loop_control:
    label: "{{ item.monitor_name }}"
'''

RETURN = r'''
_list:
  description: The incidents, as M(uptime.monitoring.incident_info) returns them (only the O(fields) asked, when given).
  type: list
  elements: dict
'''

from ansible_collections.uptime.monitoring.plugins.module_utils._incident import INCIDENT_RESOURCE
from ansible_collections.uptime.monitoring.plugins.plugin_utils._info_lookup import InfoLookup


class LookupModule(InfoLookup):
    resource = INCIDENT_RESOURCE
    mutually_exclusive = [('id', 'monitor_id', 'monitor'), ('id', 'search'), ('id', 'status')]
    reads_times = True
