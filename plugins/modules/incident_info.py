#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: incident_info
short_description: Read incidents of the uptime-monitoring service
version_added: 1.0.0
description:
  - Lists incidents with the service's filters and sorting, reading every page by default.
  - Reads one incident by O(id). An incident that is not found gives an empty list, not a failure.
  - A monitor name that no monitor has, in O(monitor), gives an empty list too.
  - Time bounds (O(started_since), O(started_until), O(ended_since), O(ended_until)) keep the incidents within them,
    both ends included, compared as instants.
author:
  - Uptime Monitoring maintainers (@uptime-monitoring)
extends_documentation_fragment:
  - uptime.monitoring.connection
  - uptime.monitoring.times
  - uptime.monitoring.action_group
  - uptime.monitoring.info.incidents
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Reads only; there is nothing to diff.
'''

EXAMPLES = r'''
- name: Every incident of the account
  uptime.monitoring.incident_info:
  register: all_incidents

- name: What is down? The ongoing incidents, acknowledged or not (reading stops at the first ended one), five keys each
  uptime.monitoring.incident_info:
    status: ongoing
    fields: [id, monitor_name, started_at, cause, status]
  register: ongoing

- name: Say what is down, since when and why
  ansible.builtin.debug:
    msg: "{{ item.monitor_name }} since {{ item.started_at }} ({{ item.cause }}), {{ item.status }}"
  loop: "{{ ongoing.incidents }}"
  loop_control:
    label: "{{ item.id }}"

- name: Ongoing incidents not acknowledged yet
  uptime.monitoring.incident_info:
    status: unresolved
  register: to_acknowledge

- name: Incidents of the shop monitor, oldest first
  uptime.monitoring.incident_info:
    monitor: shop
    sort_by: started_at
    sort: asc
  register: shop_incidents

- name: Incidents whose cause mentions certificates
  uptime.monitoring.incident_info:
    search: certificate
    search_by: cause
  register: certificate_incidents

- name: Incidents of the shop monitor resolved in the last day (reading stops at the first older one)
  uptime.monitoring.incident_info:
    monitor: shop
    ended_since: "{{ '%Y-%m-%dT%H:%M:%SZ' | ansible.builtin.strftime(second=now().timestamp() - 86400, utc=true) }}"
  register: resolved_last_day

- name: Incidents that started in January 2026 (UTC), oldest first
  uptime.monitoring.incident_info:
    started_since: "2026-01-01T00:00:00Z"
    started_until: "2026-01-31T23:59:59Z"
    sort_by: started_at
    sort: asc
  register: january

- name: One incident by id
  uptime.monitoring.incident_info:
    id: 12
  register: one
'''

RETURN = r'''
incidents:
  description:
    - The incidents, normalised as the result of M(uptime.monitoring.incident) (timestamps in UTC, C(Y-m-dTH:i:sZ),
      the monitor's id and name on top, the nested monitor's secrets masked).
  returned: always
  type: list
  elements: dict
  sample:
    - id: 12
      monitor_id: 7
      monitor_name: shop
      started_at: "2026-11-20T08:15:00Z"
      acknowledged_at: "2026-11-20T08:20:00Z"
      ended_at: null
      cause: Database connection pool exhausted
      comment: On it
      status: acknowledged
      duration: null
      created_at: "2026-11-20T08:16:02Z"
      updated_at: "2026-11-20T08:20:00Z"
      monitor:
        id: 7
        name: shop
        url: https://shop.example.com/health
        status: offline
'''

from ansible_collections.uptime.monitoring.plugins.module_utils._incident import INCIDENT_RESOURCE
from ansible_collections.uptime.monitoring.plugins.module_utils._module import UptimeModule
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import info_argument_spec

ARGUMENT_SPEC = info_argument_spec(INCIDENT_RESOURCE)


def main(runner=None):
    module = UptimeModule(ARGUMENT_SPEC,
                          mutually_exclusive=[('id', 'monitor_id', 'monitor'), ('id', 'search'), ('id', 'status')], runner=runner)
    module.info(INCIDENT_RESOURCE)


if __name__ == '__main__':
    main()
