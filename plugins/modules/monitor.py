#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: monitor
short_description: Ensure a monitor of the uptime-monitoring service is present or absent
version_added: 1.0.0
description:
  - Creates, updates or deletes one monitor (a URL checked at an interval).
  - The monitor is found by O(id) when given, otherwise by its exact O(name).
  - Only the options you set are compared and sent; options left out keep the service's value.
  - Values are compared after normalisation (key/value lists without regard to order, timestamps as instants), so a
    second run with the same arguments changes nothing.
author:
  - Uptime Monitoring maintainers (@uptime-monitoring)
extends_documentation_fragment:
  - uptime.monitoring.connection
  - uptime.monitoring.times
  - uptime.monitoring.action_group
attributes:
  check_mode:
    support: full
    description: Reports the same change, result and diff as a real run, and sends no write.
  diff_mode:
    support: full
    description: Before and after of the managed options, with secrets masked.
options:
  id:
    description:
      - Identifier of the monitor. With O(id) and a new O(name), the monitor is renamed (not with O(state=absent),
        see O(name)).
      - "A rename to the name of another monitor fails before any change, in check mode too (the task looks the name
        up, one request). Whether a name that differs only in case clashes depends on the service's database (see
        O(name)): such a rename fails when the service refuses it, naming the monitor that holds the name."
      - A monitor cannot be created with a chosen id; if no monitor has this id the task fails.
    type: int
  state:
    description:
      - V(present) creates the monitor or updates it to match; V(absent) deletes it.
    type: str
    choices: [present, absent]
    default: present
  name:
    description:
      - Name of the monitor, unique in the account (1 to 128 characters). The natural key when O(id) is not given.
      - The monitor with exactly this name is used; a name that differs only in case is another monitor's, never
        renamed, updated or deleted by this task. Leading and trailing spaces are ignored, as the service trims them.
      - "A service that compares names without case (on MySQL) refuses to create C(API) while C(api) exists: the
        task then fails, naming that monitor and its id."
      - With O(id) and O(state=absent), the monitor with that id must have this name, or the task fails before any
        change.
      - Required unless O(id) is given.
    type: str
  url:
    description:
      - URL to be monitored (http or https, at most 2048 characters). Required to create a monitor.
      - Its host is a name whose dot-separated labels are none empty (a single label such as C(localhost) will do),
        or an IPv6 address in brackets; the same holds for the URL of an alert.
    type: str
  interval:
    description:
      - Seconds between two checks. Required to create a monitor.
    type: int
    choices: [60, 180, 300, 600, 900, 1800, 3600]
  alert_condition:
    description:
      - V(url_unavailable) alerts when the URL becomes unavailable, V(url_text) when the response contains
        O(alert_text_lookup), V(url_no_text) when it does not.
      - The service's default, V(url_unavailable), is sent on create when not set.
    type: str
    choices: [url_unavailable, url_text, url_no_text]
  alert_text_lookup:
    description:
      - Text to look up in the response (at most 255 characters). Required when O(alert_condition) is
        V(url_text) or V(url_no_text).
    type: str
  request_method:
    description:
      - HTTP method of the check. V(GET) is sent on create when not set.
    type: str
    choices: [GET, POST, HEAD, PUT, DELETE, PATCH, OPTIONS]
  request_headers:
    description:
      - Request headers sent with the check, compared without regard to order.
      - An empty list removes every header.
      - Values of sensitive headers (names with auth, cookie, token, key, secret, pass, session...) are masked in output.
    type: list
    elements: dict
    suboptions:
      key:
        description: Header name (at most 128 characters).
        type: str
        required: true
      value:
        description: Header value (at most 256 characters).
        type: str
        required: true
  request_auth_username:
    description:
      - Username for Basic HTTP authentication of the check. Set together with O(request_auth_password);
        empty strings for both remove the authentication.
    type: str
  request_auth_password:
    description:
      - Password for Basic HTTP authentication of the check. Set together with O(request_auth_username).
      - Masked in every result and diff.
    type: str
  update_password:
    description:
      - V(always) compares the password with the service's and updates it when it differs.
      - V(on_create) sends the password only when the monitor is created, for services that do not return it.
        It is still sent when O(request_auth_username) changes, because the service accepts the two only as a pair.
    type: str
    choices: [always, on_create]
    default: always
  cache_buster:
    description:
      - Whether the check adds a cache-busting query parameter. Sent as C(1)/C(0). A monitor created without it has
        V(false).
    type: bool
  ssl_alert_days:
    description:
      - Days before the SSL certificate expires to alert; V(0) disables the alert. A monitor created without it has
        V(0); the service's empty value means the same and is compared as V(0).
    type: int
    choices: [0, 1, 2, 3, 7, 14, 30, 60]
  domain_alert_days:
    description:
      - Days before the domain name expires to alert; V(0) disables the alert. A monitor created without it has
        V(0); the service's empty value means the same and is compared as V(0).
    type: int
    choices: [0, 1, 2, 3, 7, 14, 30, 60, 90, 180]
  maintenance_start_at:
    description:
      - Start of the maintenance window. C(Y-m-dTH:i:s) is the account's local time (see O(account_timezone));
        ISO 8601 with an offset (C(2031-01-10T06:00:00Z), C(2031-01-10T07:00:00+01:00)) is an instant.
      - Set together with O(maintenance_end_at); empty strings for both remove the window.
      - Compared as an instant, returned in UTC (C(Y-m-dTH:i:sZ)).
    type: str
  maintenance_end_at:
    description:
      - End of the maintenance window, after O(maintenance_start_at). Same formats.
    type: str
  alerts:
    description:
      - Alert channels, compared without regard to order. An empty list removes every alert.
      - Values are checked before anything is sent, per channel. V(email) takes an e-mail address, V(sms) digits and
        C(+) (at most 16), V(telegram) a bot token and a chat id separated by a space (at most 128 characters), the
        others an http(s) URL (at most 256 characters).
      - The URL of a V(webhook), V(slack), V(teams), V(discord) or V(flock) channel is a credential, so results, diffs,
        messages and the echoed arguments show only its scheme and host (C(https://hooks.slack.com/********)).
      - A V(telegram) value holds a bot token and is shown as C(********); V(email) and V(sms) values as they are.
      - A value given in its masked form keeps the stored one (see the notes).
    type: list
    elements: dict
    suboptions:
      key:
        description: The channel.
        type: str
        required: true
        choices: [email, webhook, slack, teams, discord, flock, telegram, sms]
      value:
        description: Where the channel sends the alert.
        type: str
        required: true
  paused:
    description:
      - Whether the monitor is paused. Compared with the service's status (C(paused)); sent as the service's
        C(pause) field.
      - A monitor created paused is created, then paused (the service does not accept the flag on create).
      - The same word as the returned RV(monitor.paused) and as the key of M(uptime.monitoring.monitor_info)'s export.
    type: bool
notes:
  - Secrets are masked in every result and diff (see L(README.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/README.md#secrets)).
  - A secret given in its masked form keeps what the monitor holds, so what M(uptime.monitoring.monitor_info) exports
    applies back without loss; one with nothing stored to stand for fails before any write.
'''

EXAMPLES = r'''
- name: Monitor the shop every minute, alert by e-mail and Slack
  uptime.monitoring.monitor:
    name: shop
    url: https://shop.example.com/health
    interval: 60
    alert_condition: url_no_text
    alert_text_lookup: OK
    alerts:
      - key: email
        value: oncall@example.com
      - key: slack
        value: https://hooks.slack.com/services/T000/B000/XXXX

- name: Open a maintenance window, in the account's local time
  uptime.monitoring.monitor:
    name: shop
    maintenance_start_at: "2026-12-01T22:00:00"
    maintenance_end_at: "2026-12-01T23:30:00"

- name: Open a maintenance window given as instants (UTC, and an offset)
  uptime.monitoring.monitor:
    name: blog
    maintenance_start_at: "2026-12-02T03:00:00Z"
    maintenance_end_at: "2026-12-02T05:30:00+01:00"

- name: Close the maintenance window and pause the monitor
  uptime.monitoring.monitor:
    name: staging
    maintenance_start_at: ""
    maintenance_end_at: ""
    paused: true

- name: Rename a monitor by id
  uptime.monitoring.monitor:
    id: 42
    name: shop-eu

- name: Remove a monitor
  uptime.monitoring.monitor:
    name: old-shop
    state: absent
'''

RETURN = r'''
monitor:
  description:
    - The monitor after the task, in option names, normalised; empty when it is absent.
    - The password, the values of sensitive request headers, the values of webhook and telegram alert channels, and the
      credentials of the URL's user-info and its secret query values are masked.
    - Other read-only keys a deployment returns are passed through as they come; those whose name looks
      secret (token, key, secret...) are masked.
    - In check mode, the values the monitor would have.
  returned: always
  type: dict
  contains:
    id:
      description: Identifier of the monitor (null for a monitor that check mode would create).
      type: int
    name:
      description: Name of the monitor.
      type: str
    url:
      description: Monitored URL.
      type: str
    interval:
      description: Seconds between checks.
      type: int
    alert_condition:
      description: Alert condition.
      type: str
    alert_text_lookup:
      description: Text looked up in the response.
      type: str
    request_method:
      description: HTTP method of the check.
      type: str
    request_headers:
      description: Request headers as a list of key/value dicts, sensitive values masked.
      type: list
      elements: dict
    request_auth_username:
      description: Basic authentication username.
      type: str
    request_auth_password:
      description: Masked Basic authentication password, or null when none is set.
      type: str
    cache_buster:
      description: Whether cache busting is on.
      type: bool
    ssl_alert_days:
      description: Days before SSL expiry to alert.
      type: int
    domain_alert_days:
      description: Days before domain expiry to alert.
      type: int
    maintenance_start_at:
      description: Start of the maintenance window in UTC, C(Y-m-dTH:i:sZ).
      type: str
    maintenance_end_at:
      description: End of the maintenance window in UTC, C(Y-m-dTH:i:sZ).
      type: str
    alerts:
      description:
        - Alert channels as a list of key/value dicts.
        - The URL of a V(webhook), V(slack), V(teams), V(discord) or V(flock) channel shows only its scheme and host,
          the rest masked (C(https://hooks.slack.com/********)).
      type: list
      elements: dict
    paused:
      description: Whether the monitor is paused.
      type: bool
    status:
      description:
        - Status reported by the service (pending, online, offline, paused, maintenance).
        - Right after a create, whose answer does not carry it, V(pending), the status the service gives a new monitor
          (V(paused) for a monitor created paused, which the task pauses after the create), or V(maintenance) when
          the maintenance window it was created with holds the time of the create.
        - In check mode, the status before the change; null for a monitor that check mode would create.
      type: str
    started_at:
      description:
        - When the current status began, in UTC (C(Y-m-dTH:i:sZ)); the service renews it at every change of status.
        - Only when the service returns it (not in the answer to a create).
      type: str
    checked_at:
      description:
        - When the service last checked the URL, in UTC (C(Y-m-dTH:i:sZ)); null before the first check.
        - Only when the service returns it (not in the answer to a create).
      type: str
    token:
      description:
        - A value the service renews when the status flips; masked, as every returned key whose name looks secret.
        - Only when the service returns it (not in the answer to a create).
      type: str
    created_at:
      description: Creation time reported by the service, in UTC (C(Y-m-dTH:i:sZ)).
      type: str
    updated_at:
      description: Last update time reported by the service, in UTC (C(Y-m-dTH:i:sZ)).
      type: str
'''

from ansible_collections.uptime.monitoring.plugins.module_utils._module import UptimeModule
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_RESOURCE
from ansible_collections.uptime.monitoring.plugins.module_utils._renamed import RENAMED
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import argument_spec

IDENTITY = ('id', 'name')
ARGUMENT_SPEC = dict(argument_spec(MONITOR_RESOURCE, IDENTITY),
                     update_password=dict(type='str', default='always', choices=['always', 'on_create'], no_log=False))


def main(runner=None):
    module = UptimeModule(ARGUMENT_SPEC, required_one_of=[('id', 'name')], schema=MONITOR_RESOURCE.schema,
                          renamed=RENAMED['monitor'], runner=runner)
    # The password is compared only when the service returns it: on_create leaves it to the create.
    ignore = ('request_auth_password',) if module.params['update_password'] == 'on_create' else ()
    module.ensure(MONITOR_RESOURCE, IDENTITY, ignore)


if __name__ == '__main__':
    main()
