# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:

    # For the plugins that send or compare timestamps; those that only read UTC ones (the inventory plugin) go without.
    DOCUMENTATION = r'''
options:
  account_timezone:
    description:
      - The account's time zone, an IANA name such as V(UTC) or V(America/New_York), in which the service reads the
        times it is sent.
      - If not set, the environment variable E(UPTIME_ACCOUNT_TIMEZONE) is used, else a task that sends or compares a
        timestamp reads it once from the service (one more request).
      - A time the service stored at another instant than intended (a wrong zone) fails the task, naming both.
      - See L(docs/timezones.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/timezones.md).
    type: str
notes:
  - "Timestamps: a time with an offset (V(2031-01-10T06:00:00Z)) is an instant; one without (V(2031-01-10T06:00:00)) is
    the account's local time. Returned timestamps are UTC, C(Y-m-dTH:i:sZ), and can be given back as they are.
    Values are compared as instants."
'''

    # For plugins other than modules, used together with DOCUMENTATION above.
    PLUGINS = r'''
options:
  account_timezone:
    env:
      - name: UPTIME_ACCOUNT_TIMEZONE
'''

    # For the lookups, with PLUGINS above (see connection.py's LOOKUPS).
    LOOKUPS = r'''
options:
  account_timezone:
    vars:
      - name: uptime_account_timezone
'''
