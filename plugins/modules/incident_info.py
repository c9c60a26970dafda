#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: incident_info
short_description: Read incidents of the uptime-monitoring service
version_added: 0.1.0
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
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Reads only; there is nothing to diff.
options:
  id:
    description:
      - Identifier of one incident to read.
    type: int
  monitor_id:
    description:
      - Only incidents of the monitor with this identifier.
    type: int
  monitor:
    description:
      - Only incidents of the monitor with this name, resolved to its id first.
      - The monitor with exactly this name is used, as for O(uptime.monitoring.monitor#module:name); a name that
        differs only in case is another monitor's.
    type: str
  search:
    description:
      - Substring to search for in the field named by O(search_by).
    type: str
  search_by:
    description:
      - What O(search) looks in, V(monitor) (the monitor's name) or V(cause).
      - Sent with every O(search); V(monitor) when not set. Not sent without O(search).
    type: str
    choices: [monitor, cause]
  status:
    description:
      - Only incidents with this status. V(unresolved) is neither acknowledged nor ended, V(acknowledged) is
        acknowledged and not ended, V(resolved) is ended, V(ongoing) is not ended (unresolved or acknowledged).
      - The service has no filter for V(ongoing), so it is applied here to what the list returns.
      - In the default order (O(sort_by=ended_at), O(sort=desc)) the ongoing incidents come first, so reading stops at
        the first ended one; in any other order every page is read.
    type: str
    choices: [unresolved, acknowledged, resolved, ongoing]
  sort_by:
    description:
      - Sort key. The service's default is V(ended_at), with ongoing incidents first in descending order.
    type: str
    choices: [started_at, ended_at]
  sort:
    description:
      - Sort direction. The service's default is V(desc).
    type: str
    choices: [asc, desc]
  per_page:
    description:
      - Records asked for per page. Larger pages mean fewer requests.
    type: int
    choices: [10, 25, 50, 100]
    default: 100
  limit:
    description:
      - Stop after this many incidents (within the time bounds, when given). By default every page is read.
    type: int
  fields:
    description:
      - Return only these top-level keys of each incident, in this order (for example
        V([id, monitor_name, started_at, cause]), which leaves out the nested C(monitor)), so that an
        answer fits a terminal or a template; by default every key.
      - A key no returned incident has is refused before any request, naming the keys there are.
    type: list
    elements: str
  started_since:
    description:
      - Only incidents that started at or after this time. C(Y-m-dTH:i:s) is the account's local time (see
        O(account_timezone)); ISO 8601 with an offset (C(2026-01-01T00:00:00Z)) is an instant.
      - Reading stops at the first incident beyond the bound when the list is sorted by O(sort_by=started_at) with
        O(sort=desc); otherwise every page is read and filtered. See
        L(docs/operator-guide.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/operator-guide.md#incidents-of-a-period).
    type: str
  started_until:
    description:
      - Only incidents that started at or before this time. Same formats as O(started_since).
      - Reading stops at the first incident beyond the bound when the list is sorted by O(sort_by=started_at) with
        O(sort=asc).
    type: str
  ended_since:
    description:
      - Only incidents that ended (were resolved) at or after this time. Same formats as O(started_since).
      - Ongoing incidents have not ended and are left out by O(ended_since) and O(ended_until).
      - The service's default order (by V(ended_at), newest first) lets reading stop at the first incident that
        ended earlier, so "resolved in the last day" reads only the pages it needs.
    type: str
  ended_until:
    description:
      - Only incidents that ended at or before this time. Same formats as O(started_since).
    type: str
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

from ansible_collections.uptime.monitoring.plugins.module_utils._incident import INCIDENTS
from ansible_collections.uptime.monitoring.plugins.module_utils._module import UptimeModule
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import info_argument_spec

ARGUMENT_SPEC = info_argument_spec(INCIDENTS)


def main(runner=None):
    module = UptimeModule(ARGUMENT_SPEC,
                          mutually_exclusive=[('id', 'monitor_id', 'monitor'), ('id', 'search'), ('id', 'status')], runner=runner)
    module.info(INCIDENTS)


if __name__ == '__main__':
    main()
