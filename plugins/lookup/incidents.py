# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
name: incidents
short_description: The incidents of an account, for templates and conditions
version_added: 0.1.0
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
  - uptime.monitoring.times
  - uptime.monitoring.times.plugins
options:
  id:
    description: Only the incident with this id.
    type: int
  monitor_id:
    description: Only the incidents of the monitor with this id.
    type: int
  monitor:
    description: Only the incidents of the monitor with exactly this name.
    type: str
  search:
    description: Only incidents whose O(search_by) holds this text, as the service searches.
    type: str
  search_by:
    description: What O(search) searches.
    type: str
    choices: [monitor, cause]
  status:
    description: Only incidents of this status; V(ongoing) is V(unresolved) or V(acknowledged).
    type: str
    choices: [unresolved, acknowledged, resolved, ongoing]
  started_since:
    description: Only incidents that started at or after this time (a local time of the account, or an instant).
    type: str
  started_until:
    description: Only incidents that started at or before this time.
    type: str
  ended_since:
    description: Only incidents that ended at or after this time.
    type: str
  ended_until:
    description: Only incidents that ended at or before this time.
    type: str
  sort_by:
    description: The order of the list.
    type: str
    choices: [started_at, ended_at]
  sort:
    description: Ascending or descending.
    type: str
    choices: [asc, desc]
  per_page:
    description: Incidents read a request.
    type: int
    choices: [10, 25, 50, 100]
    default: 100
  limit:
    description: Stop after this many incidents. By default every page is read.
    type: int
  fields:
    description:
      - Return only these top-level keys of each incident, in this order (the nested C(monitor) only when named); by
        default every key.
      - A key no incident has is refused before any request, naming the keys there are.
    type: list
    elements: str
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

from ansible_collections.uptime.monitoring.plugins.module_utils._incident import INCIDENTS
from ansible_collections.uptime.monitoring.plugins.plugin_utils._info_lookup import InfoLookup


class LookupModule(InfoLookup):
    resource = INCIDENTS
    mutually_exclusive = [('id', 'monitor_id', 'monitor'), ('id', 'search'), ('id', 'status')]
    reads_times = True
