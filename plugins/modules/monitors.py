#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: monitors
short_description: Sync many monitors of the uptime-monitoring service in one task
version_added: 1.0.0
description:
  - Manages a whole list of monitors in one task, in the style of Ansible resource modules (O(state=merged),
    V(replaced), V(overridden), V(deleted), V(gathered)).
  - Monitors are matched by their exact O(config[].name), as M(uptime.monitoring.monitor) finds them.
  - Reads the account once (one request per 100 monitors), compares in memory as M(uptime.monitoring.monitor) does,
    and sends only the writes needed, from a pool of O(workers).
author:
  - Uptime Monitoring maintainers (@uptime-monitoring)
extends_documentation_fragment:
  - uptime.monitoring.connection
  - uptime.monitoring.times
  - uptime.monitoring.action_group
attributes:
  check_mode:
    support: full
    description:
      - Reads the account and returns the full plan (RV(changes), RV(summary), RV(after), the diff) without any write.
      - "In check mode every count and change is planned, not made: RV(summary.planned) is V(true) and the diff's
        after side is headed C(planned changes (check mode: nothing was written))."
  diff_mode:
    support: full
    description:
      - Per monitor name, the before and after of the keys that change, with secrets masked.
      - "The before side is headed C(monitors on the service); the after side C(monitors after the sync), or in check
        mode C(planned changes (check mode: nothing was written))."
options:
  config:
    description:
      - The monitors, each with the options of M(uptime.monitoring.monitor) (except C(id), C(state) and
        C(update_password)).
      - Required with O(state=merged), O(state=replaced) and O(state=overridden); left out with V(gathered).
      - With O(state=deleted), only O(config[].name) is used. Left out with O(state=deleted), every monitor of the
        account is deleted; O(config=[]) deletes none.
      - An empty list with O(state=overridden) is refused before any request (a lookup or filter that yields nothing
        gives one); to delete every monitor on purpose, use O(state=deleted) without O(config).
      - With O(state=replaced) and O(state=overridden), O(config[].url) and O(config[].interval) are required.
      - "With those states every option left out goes back to what a monitor created without it has:
        O(config[].alert_condition=url_unavailable), O(config[].request_method=GET), O(config[].cache_buster=false),
        O(config[].paused=false), O(config[].ssl_alert_days=0), O(config[].domain_alert_days=0), no
        O(config[].request_headers) or O(config[].alerts); the text lookup, Basic authentication and the maintenance
        window are cleared."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - Name of the monitor, unique in the account (1 to 128 characters). The key that matches a config entry to a monitor.
        type: str
        required: true
      url:
        description:
          - URL to be monitored (http or https). Required to create a monitor.
          - Its credentials (the password of its user-info, or the whole user-info when it has no password) and the
            values of its query parameters whose names look secret are masked in results; given in that masked form,
            it keeps the stored URL.
        type: str
      interval:
        description:
          - Seconds between two checks. Required to create a monitor.
        type: int
        choices: [60, 180, 300, 600, 900, 1800, 3600]
      alert_condition:
        description:
          - When to alert, see O(uptime.monitoring.monitor#module:alert_condition).
        type: str
        choices: [url_unavailable, url_text, url_no_text]
      alert_text_lookup:
        description:
          - Text to look up in the response; required with the conditions V(url_text) and V(url_no_text).
        type: str
      request_method:
        description:
          - HTTP method of the check.
        type: str
        choices: [GET, POST, HEAD, PUT, DELETE, PATCH, OPTIONS]
      request_headers:
        description:
          - Request headers of the check, compared without regard to order; values of sensitive headers are masked.
        type: list
        elements: dict
        suboptions:
          key:
            description: Header name.
            type: str
            required: true
          value:
            description: Header value.
            type: str
            required: true
      request_auth_username:
        description:
          - Username for Basic HTTP authentication, set together with O(config[].request_auth_password).
        type: str
      request_auth_password:
        description:
          - Password for Basic HTTP authentication, set together with O(config[].request_auth_username). Masked in every
            result and diff.
        type: str
      cache_buster:
        description:
          - Whether the check adds a cache-busting query parameter.
        type: bool
      ssl_alert_days:
        description:
          - Days before the SSL certificate expires to alert.
        type: int
        choices: [0, 1, 2, 3, 7, 14, 30, 60]
      domain_alert_days:
        description:
          - Days before the domain name expires to alert.
        type: int
        choices: [0, 1, 2, 3, 7, 14, 30, 60, 90, 180]
      maintenance_start_at:
        description:
          - Start of the maintenance window, see O(uptime.monitoring.monitor#module:maintenance_start_at).
        type: str
      maintenance_end_at:
        description:
          - End of the maintenance window, after O(config[].maintenance_start_at).
        type: str
      alerts:
        description:
          - Alert channels, compared without regard to order; see O(uptime.monitoring.monitor#module:alerts).
          - The URL of a webhook channel (V(webhook), V(slack), V(teams), V(discord), V(flock)) is masked in results
            and diffs but for its scheme and host, and a V(telegram) value whole; given in that masked form, an alert
            keeps the stored one.
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
          - Whether the monitor is paused. A monitor created paused costs a second request (create, then pause).
        type: bool
  state:
    description:
      - V(merged) creates the listed monitors that do not exist and updates the options given of those that do;
        monitors not listed and options not given are left alone.
      - V(replaced) sets the listed monitors to exactly their entry, options left out going back to their defaults
        (see O(config)); monitors not listed are left alone.
      - V(overridden) is V(replaced), and also deletes every monitor of the account that is not listed.
        O(config) must list at least one monitor.
      - V(deleted) deletes the listed monitors that exist; without O(config), every monitor of the account (in check
        mode, RV(summary.deleted) and the message say how many it would delete).
      - V(gathered) changes nothing and returns every monitor of the account in O(config) form (RV(gathered)).
    type: str
    choices: [merged, replaced, overridden, deleted, gathered]
    default: merged
  workers:
    description:
      - How many writes are sent at the same time (1 to 32), each worker with its own connection.
      - When the service answers HTTP 429, the wait it asks for (C(Retry-After)) holds every worker, not only the one
        that was refused.
    type: int
    default: 4
  reveal_secrets:
    description:
      - "With O(state=gathered), RV(gathered) holds the real secrets instead of their masked forms: to copy monitors
        to another account, which does not hold them. Refused with the other states."
      - "The result then holds secrets. Put C(no_log: true) on the task and keep what you write of it in a vault."
    type: bool
    default: false
  unresolved_masks:
    description:
      - What to do with a secret of O(config) given in its masked form that no stored secret answers for (a monitor to
        create, another account, a secret removed since the export, or a masked item that several stored ones could
        stand for).
      - V(fail) fails the task before any write, naming every monitor and item.
      - V(leave_out) applies the rest and names in RV(left_out) what it left out, never a value.
      - Left out are a masked header or alert alone; a password with its user name (the service takes them as a pair);
        a monitor to create with a masked O(config[].url) (an existing one keeps its URL); masked items beyond the
        stored ones.
      - Applied to the account it was read from, an export loses nothing either way. Used with O(state=merged),
        V(replaced) and V(overridden).
    type: str
    choices: [fail, leave_out]
    default: fail
notes:
  - A monitor cannot be renamed here; use M(uptime.monitoring.monitor) with O(uptime.monitoring.monitor#module:id).
  - An entry whose name differs only in case from a monitor that no entry names is refused before any write, naming
    both.
  - A list that another job changes while its pages are read is read again, at most 3 times, else the task fails
    before any write.
  - "When some writes fail, the others are still made, and the task fails naming each monitor written and each
    failure, and whether a re-run finishes the job (RV(changes[].transient)). See
    L(docs/operator-guide.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/operator-guide.md#errors-about-monitors-entries)."
  - Deleting a monitor also deletes its incidents; the service does so.
  - Secrets are masked in every result (see L(README.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/README.md#secrets)).
  - A masked secret given back keeps what the monitor holds, so RV(gathered) applies back changing nothing; one that
    nothing stored answers for fails before any write, or is left out with O(unresolved_masks=leave_out).
'''

EXAMPLES = r'''
- name: Create or update these monitors, leave the others alone
  uptime.monitoring.monitors:
    config:
      - name: shop
        url: https://shop.example.com/health
        interval: 60
        alerts:
          - key: email
            value: oncall@example.com
      - name: blog
        url: https://blog.example.com/
        interval: 300

- name: Delete two monitors
  uptime.monitoring.monitors:
    state: deleted
    config:
      - name: old-shop
      - name: old-blog

- name: The account holds exactly these monitors (every other one is deleted)
  uptime.monitoring.monitors:
    state: overridden
    config: "{{ monitors_from_inventory }}"

- name: Count the monitors that deleting every monitor of the account would delete, without deleting them
  uptime.monitoring.monitors:
    state: deleted
  check_mode: true
  changed_when: false
  register: wipe

- name: Show what a sync would do, without doing it
  uptime.monitoring.monitors:
    state: replaced
    config: "{{ monitors_from_inventory }}"
  check_mode: true
  diff: true
  register: plan

- name: Export the account
  uptime.monitoring.monitors:
    state: gathered
  register: account

- name: Save it as the config of a later sync
  ansible.builtin.copy:
    content: "{{ account.gathered | to_nice_yaml }}"
    dest: monitors.yml
    mode: '0600'
'''

RETURN = r'''
before:
  description:
    - Every monitor of the account before the task, sorted by name, as in RV(uptime.monitoring.monitor#module:monitor),
      secrets masked.
  returned: when O(state) is not V(gathered)
  type: list
  elements: dict
after:
  description:
    - Every monitor of the account after the task (in check mode, as it would be), sorted by name, secrets masked.
    - Monitors whose write failed keep their RV(before) values.
    - Left out when the task changed nothing, since the account is then RV(before).
  returned: when the task changed the account (in check mode, would change it)
  type: list
  elements: dict
summary:
  description:
    - Counts of the sync.
    - "In check mode (RV(summary.planned=true)), V(created), V(updated) and V(deleted) count the planned changes:
      nothing was written."
  returned: when O(state) is not V(gathered)
  type: dict
  contains:
    planned:
      description:
        - V(true) in check mode, where the counts are of changes the task would make; V(false) when they were made.
      type: bool
    created:
      description: Monitors created (in check mode, planned to be created).
      type: int
    updated:
      description: Monitors updated (in check mode, planned to be updated).
      type: int
    deleted:
      description: Monitors deleted (in check mode, planned to be deleted).
      type: int
    unchanged:
      description: Listed monitors that already matched (with O(state=deleted), listed monitors that did not exist).
      type: int
    failed:
      description: Writes that failed.
      type: int
    not_attempted:
      description: Writes not sent because an earlier one failed in a way every write would repeat (authentication,
        no connection).
      type: int
    total:
      description: Monitors in the account after the task.
      type: int
    requests:
      description: HTTP requests this task sent, retries included.
      type: int
  sample:
    planned: false
    created: 2
    updated: 1
    deleted: 0
    unchanged: 997
    failed: 0
    not_attempted: 0
    total: 1002
    requests: 14
changes:
  description:
    - One entry per monitor the task creates, updates or deletes (in check mode, would), in config order, then the
      deletions of O(state=overridden).
  returned: when O(state) is not V(gathered)
  type: list
  elements: dict
  contains:
    name:
      description: Name of the monitor.
      type: str
    id:
      description: Identifier of the monitor (null for a monitor check mode would create).
      type: int
    action:
      description: V(create), V(update) or V(delete).
      type: str
    changed_keys:
      description: Options that change (for a create, the options set; for a delete, none).
      type: list
      elements: str
    before:
      description: Values of those options before, secrets masked.
      type: dict
    after:
      description: Values of those options after, secrets masked.
      type: dict
    status:
      description: V(done), V(failed) or V(not attempted). Not returned in check mode.
      type: str
    msg:
      description: Why the write failed.
      type: str
    transient:
      description:
        - Whether running the task again, its input unchanged, may get past the failure (HTTP 429, a server error, a
          timeout, a lost answer, a monitor deleted meanwhile). V(false) when the service refused what was sent; the
          entry, or the connection options, must then change first.
        - Returned when RV(changes[].status=failed).
      type: bool
  sample:
    - name: shop
      id: 7
      action: update
      changed_keys: [interval]
      before: {name: shop, interval: 300}
      after: {name: shop, interval: 60}
      status: done
gathered:
  description:
    - Every monitor of the account as a O(config) entry, sorted by name, unset options left out.
    - Secrets in their masked form, unless O(reveal_secrets=true); see RV(gathered_masked).
  returned: when O(state=gathered)
  type: list
  elements: dict
  sample:
    - name: shop
      url: https://shop.example.com/health
      interval: 60
      alert_condition: url_unavailable
      request_method: GET
      request_headers: []
      cache_buster: false
      alerts: []
      paused: false
gathered_masked:
  description:
    - Per monitor name, the options of RV(gathered) that hold a masked secret (with its partner, for Basic
      authentication), in the order of the options. Empty with O(reveal_secrets=true).
  returned: when O(state=gathered)
  type: dict
  sample:
    shop: [request_auth_username, request_auth_password, alerts]
left_out:
  description:
    - What O(unresolved_masks=leave_out) left out of O(config) (in check mode, would leave out), in config order, each
      a masked secret that no stored secret answers for. Empty when nothing was left out, and with
      O(unresolved_masks=fail).
  returned: with O(state=merged), V(replaced) and V(overridden)
  type: list
  elements: dict
  contains:
    name:
      description: Name of the monitor.
      type: str
    option:
      description:
        - The option left out, or the item of it named by RV(left_out[].key).
        - Null for the whole monitor, which is not created since its O(config[].url) is masked.
      type: str
    key:
      description: Of an item of O(config[].request_headers) or O(config[].alerts), its key (the header's name, the
        channel); null for a whole option.
      type: str
  sample:
    - {name: shop, option: alerts, key: slack}
    - {name: admin, option: request_auth_username, key: null}
    - {name: admin, option: request_auth_password, key: null}
    - {name: intranet, option: null, key: null}
requests:
  description: HTTP requests this task sent.
  returned: when O(state=gathered)
  type: int
msg:
  description:
    - With O(state=deleted) without O(config), how many monitors the task deleted (in check mode, would delete).
    - When the task fails part-way, what it wrote, each failure, and whether running it again finishes the job.
  returned: with O(state=deleted) without O(config), and on failure
  type: str
  sample: "check mode: state=deleted without config would delete every monitor of the account: 12 (nothing was written)"
'''

from ansible_collections.uptime.monitoring.plugins.module_utils._bulk import (
    MONITORS_ARGSPEC,
    MonitorSync,
    check_entries,
    client_factory,
)
from ansible_collections.uptime.monitoring.plugins.module_utils._module import UptimeModule
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA
from ansible_collections.uptime.monitoring.plugins.module_utils._renamed import RENAMED


def main(runner=None):
    module = UptimeModule(MONITORS_ARGSPEC, precheck=check_entries, schema=MONITOR_SCHEMA,
                          renamed=RENAMED['monitors'], runner=runner)
    sync = MonitorSync(module.client, client_factory(module.params), module.check_mode, module.params['workers'],
                       zone=module.zone)

    def action():
        result = sync.run(module.params)
        if result.get('failed'):
            module.ansible.fail_json(**result)
        return result

    module.run(action)


if __name__ == '__main__':
    main()
