#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: monitor_info
short_description: Read monitors of the uptime-monitoring service
version_added: 1.0.0
description:
  - Lists monitors with the service's filters and sorting, reading every page by default.
  - Reads one monitor by O(id) or by O(name); one that is not found gives an empty list, not a failure.
  - With O(export=true), also returns the monitors as arguments of M(uptime.monitoring.monitor), which apply back
    without loss.
notes:
  - A whole list is read as it stood, newest first, and read again when another job changed it between two pages (at
    most 3 times, else the task fails); it is then put in the order of O(sort_by) and O(sort).
  - With O(limit), the pages are read in the order asked, O(per_page) at a time, without that check.
author:
  - Uptime Monitoring maintainers (@uptime-monitoring)
extends_documentation_fragment:
  - uptime.monitoring.connection
  - uptime.monitoring.times
  - uptime.monitoring.action_group
  - uptime.monitoring.info.monitors
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Reads only; there is nothing to diff.
options:
  export:
    description:
      - Also return RV(export), the monitors as arguments of M(uptime.monitoring.monitor).
    type: bool
    default: false
  reveal_secrets:
    description:
      - "With O(export=true), RV(export) holds the real secrets instead of their masked forms: to copy monitors to
        another account, which does not hold them."
      - "The result then holds secrets. Put C(no_log: true) on the task and keep what you write of it in a vault."
      - RV(monitors) stays masked.
    type: bool
    default: false
'''

EXAMPLES = r'''
- name: Every monitor of the account
  uptime.monitoring.monitor_info:
  register: all_monitors

- name: Monitors whose URL contains example.com, by name
  uptime.monitoring.monitor_info:
    search: example.com
    search_by: url
    sort_by: name
    sort: asc
  register: example_monitors

- name: What is down? The offline monitors, by name, three keys each
  uptime.monitoring.monitor_info:
    status: offline
    fields: [name, url, status]
    sort_by: name
    sort: asc
  register: down

- name: Say what is down
  ansible.builtin.debug:
    msg: "{{ down.monitors | map(attribute='name') | join(', ') or 'Nothing is down.' }}"

- name: One monitor by exact name
  uptime.monitoring.monitor_info:
    name: shop
  register: shop

- name: Export the account as monitor arguments
  uptime.monitoring.monitor_info:
    export: true
  register: exported

- name: Re-apply the export in one task (changes nothing)
  uptime.monitoring.monitors:
    state: merged
    config: "{{ exported.export }}"
'''

RETURN = r'''
monitors:
  description:
    - The monitors (of O(status), when given), normalised as the result of M(uptime.monitoring.monitor), secrets
      masked (the password, sensitive header values, webhook alert URLs but for their scheme and host, telegram alert
      values, and the password and secret query values of the monitored URL).
    - Other read-only keys a deployment returns are passed through as they come; those whose name looks
      secret (token, key, secret...) are masked.
  returned: always
  type: list
  elements: dict
  sample:
    - id: 7
      name: shop
      url: https://shop.example.com/health
      interval: 60
      alert_condition: url_unavailable
      alert_text_lookup: null
      request_method: GET
      request_headers: []
      request_auth_username: null
      request_auth_password: null
      cache_buster: false
      ssl_alert_days: 14
      domain_alert_days: 0
      maintenance_start_at: null
      maintenance_end_at: null
      alerts:
        - key: email
          value: oncall@example.com
      paused: false
      status: online
      started_at: "2026-11-19T22:41:07Z"
      created_at: "2026-11-01T10:00:00Z"
      updated_at: "2026-11-01T10:00:00Z"
export:
  description:
    - The monitors as argument dicts of M(uptime.monitoring.monitor), unset values left out.
    - Every option is there, secrets in their masked form (unless O(reveal_secrets=true)). Given back, a masked
      value keeps what the monitor holds, so the export applies to the same account without loss; to an account
      that does not hold those secrets, the task fails before any write and names each one.
  returned: when O(export=true)
  type: list
  elements: dict
export_masked:
  description:
    - Per monitor name, the options of RV(export) that hold a masked secret (with its partner, for Basic
      authentication), in the order of the options. Empty with O(reveal_secrets=true).
  returned: when O(export=true)
  type: dict
  sample:
    shop: [request_headers, request_auth_username, request_auth_password, alerts]
'''

from ansible_collections.uptime.monitoring.plugins.module_utils._module import UptimeModule
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_RESOURCE
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import info_argument_spec

ARGUMENT_SPEC = info_argument_spec(MONITOR_RESOURCE)


def main(runner=None):
    module = UptimeModule(ARGUMENT_SPEC, mutually_exclusive=[('id', 'name', 'search')], runner=runner)
    module.info(MONITOR_RESOURCE)


if __name__ == '__main__':
    main()
