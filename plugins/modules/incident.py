#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: incident
short_description: Ensure an incident of a monitor is present or absent
version_added: 1.0.0
description:
  - Opens, updates (acknowledges, resolves, comments on) or deletes one incident, a recorded period of trouble of a
    monitor. O(state) says what the incident should be; the service derives RV(incident.status) from its times.
  - The incident is found by O(id); else by its monitor and O(started_at); else, given only a monitor, it is the
    monitor's ongoing incident, so acknowledging or resolving the current incident is one task.
  - Only the options given are compared and sent, so a second run with the same arguments changes nothing.
notes:
  - "Without an ongoing incident, the monitor's latest incident decides: a task asking nothing it does not hold
    changes nothing (RV(msg) says why); V(acknowledged) or V(resolved) with a value it does not hold fails; V(present)
    opens an incident started now. See
    L(docs/operator-guide.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/operator-guide.md#the-current-incident-of-a-monitor)."
  - To record a recurrence of an incident that has ended, give O(started_at).
  - "A time the task takes as now is the service's clock (the C(Date) of its latest answer), else the controller's; RV(msg) says which."
  - "The service's checker opens and ends incidents at any moment: an incident it opened after the task looked gets the
    values of a task without O(started_at), a time it set meanwhile is kept, and RV(msg) says so. See
    L(docs/operator-guide.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/operator-guide.md#the-checker-acts-at-the-same-time)."
  - Times are checked before any request; a monitor and O(started_at) never change, and O(acknowledged_at) and
    O(ended_at) are set once, so asking another value fails before any write.
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
    description: Before and after of the incident's timestamps, cause, comment and status.
options:
  id:
    description:
      - Identifier of the incident.
      - An incident cannot be opened with a chosen id; if no incident has this id the task fails (or, with
        O(state=absent), reports no change).
    type: int
  state:
    description:
      - V(present) opens the incident or updates it to match; V(absent) deletes it.
      - V(acknowledged) is V(present) and sets O(acknowledged_at) to now when it is not set yet.
      - V(resolved) is V(present) and sets O(ended_at) to now when it is not set yet; O(acknowledged_at) stays as
        it is.
      - An explicit O(acknowledged_at) or O(ended_at) wins over the time a state would set.
      - With O(state=absent) and only a monitor, the monitor's ongoing incident is deleted; a past incident is
        deleted only by O(id) or O(started_at).
      - "Deleting the ongoing incident of a paused monitor makes the service resume the monitor (its status goes back
        to C(pending)): the task pauses it again, and RV(msg) and the diff's header say so, in check mode too."
    type: str
    choices: [present, acknowledged, resolved, absent]
    default: present
  monitor_id:
    description:
      - Identifier of the monitor the incident belongs to.
      - One of O(id), O(monitor_id) and O(monitor) is required. An incident cannot be moved to another monitor.
      - An id that no monitor of the account has fails (C(no monitor has the id N)).
      - With O(id), the incident must belong to this monitor, or the task fails before any change (also with
        O(state=absent)).
    type: int
  monitor:
    description:
      - Name of the monitor the incident belongs to, resolved to its id. A name no monitor has is an error
        (with O(state=absent), no change).
      - The monitor with exactly this name is used, as for O(uptime.monitoring.monitor#module:name); a name that
        differs only in case is another monitor's.
      - With O(id), the incident must belong to this monitor, or the task fails before any change.
    type: str
  started_at:
    description:
      - When the incident started. C(Y-m-dTH:i:s) is the account's local time (see O(account_timezone)); ISO 8601 with
        an offset (C(2026-01-31T23:00:00Z), C(2026-02-01T00:00:00+01:00)) is an instant. Not in the future.
      - With the monitor, the natural key of the incident.
      - When not given, the task addresses the monitor's ongoing incident; one that O(state=present) opens starts
        now, and a re-run opens no second one.
      - Cannot be changed once the incident exists. With O(id) and O(state=absent), it must be that incident's start,
        or the task fails before any change.
      - The service refuses an incident that starts before the monitor's last one ended, and a second ongoing one.
    type: str
  acknowledged_at:
    description:
      - When the incident was acknowledged. Same formats; not in the future and not before O(started_at).
      - Write-once, the service sets it only while it is empty.
    type: str
  ended_at:
    description:
      - When the incident ended (it is then resolved). Same formats; not in the future and after O(started_at).
      - Write-once, the service sets it only while it is empty.
    type: str
  cause:
    description:
      - Cause of the incident, at most 255 characters. An empty string clears it.
    type: str
  comment:
    description:
      - Comment on the incident, at most 1024 characters. An empty string clears it; with O(comment_mode=append) it
        appends nothing and the comment stays as it is.
      - "An incident has one comment field, not a thread: by default (O(comment_mode=replace)) a comment given when
        resolving replaces the one given when acknowledging. Use O(comment_mode=append) to keep both."
    type: str
  comment_mode:
    description:
      - How O(comment) is applied to an incident that has a comment already.
      - V(replace) makes O(comment) the whole comment.
      - V(append) adds O(comment) on a new line, after the time of the task in UTC
        (C([2026-11-20T09:05:00Z] Pool size raised)); an empty comment becomes O(comment) alone.
      - Nothing is appended when the comment already holds the text, so a re-run reports no change.
      - The appended comment must fit in 1024 characters, or the task fails before anything is sent.
    type: str
    choices: [replace, append]
    default: replace
'''

EXAMPLES = r'''
- name: Open an incident of the shop monitor
  uptime.monitoring.incident:
    monitor: shop
    started_at: "2026-11-20T08:15:00Z"
    cause: Database connection pool exhausted

- name: Acknowledge the current incident of the shop monitor
  uptime.monitoring.incident:
    monitor: shop
    state: acknowledged
    comment: On it

- name: Resolve the current incident of the shop monitor, keeping the acknowledgement's comment
  uptime.monitoring.incident:
    monitor: shop
    state: resolved
    comment: Pool size raised, connections back to normal
    comment_mode: append
  register: resolved

- name: Record a past incident with its end, by monitor id and times with an offset
  uptime.monitoring.incident:
    monitor_id: 7
    started_at: "2026-11-19T23:10:00+01:00"
    ended_at: "2026-11-19T23:40:00+01:00"
    cause: Certificate expired

- name: Delete an incident by id (no change once it is gone)
  uptime.monitoring.incident:
    id: 3
    state: absent

- name: Open an incident of the payments monitor now (or find the one ongoing)
  # Changes nothing when the monitor's last incident has ended and already holds this cause: a re-run of a
  # playbook that opens and resolves an incident is a no-op. To record a recurrence, give started_at (below).
  uptime.monitoring.incident:
    monitor: payments
    cause: Payment provider unreachable

- name: Record a recurrence of the blog's timeouts, although its last incident (cause Timeout) has ended
  uptime.monitoring.incident:
    monitor: blog
    started_at: "2026-11-02T08:00:00Z"
    cause: Timeout
'''

RETURN = r'''
msg:
  description:
    - What the task found when it addressed a monitor without an ongoing incident, for example that there was nothing
      to acknowledge or resolve.
    - When the task chose a time as now (O(started_at) of an incident it opened, O(acknowledged_at) or O(ended_at) set
      by O(state)), that time and whose clock it was read from (C(started_at is now by the service's clock,
      2026-11-20T08:15:00Z)), and when it waited for that clock to pass the start of the incident.
    - "When another actor acted between the task's lookup and its write: the incident opened meanwhile that the task
      applied its values to, or the time set meanwhile that the service kept."
    - When the task paused again the monitor whose ongoing incident it deleted.
  returned: when the task was addressed to a monitor that has no ongoing incident and changed nothing, chose a time,
    met a change made meanwhile, or paused a monitor again
  type: str
  sample: "monitor 'shop' has no ongoing incident: nothing to acknowledge (its latest incident (id 12) ended at 2026-11-20T09:05:00Z)"
incident:
  description:
    - The incident after the task, in option names, normalised (timestamps in UTC, C(Y-m-dTH:i:sZ)); empty when it is absent.
    - For a task addressed to a monitor without an ongoing incident, the monitor's latest incident (empty when it has none).
    - In check mode, the values the incident would have.
  returned: always
  type: dict
  contains:
    id:
      description: Identifier of the incident (null for an incident that check mode would open).
      type: int
    monitor_id:
      description: Identifier of the monitor the incident belongs to.
      type: int
    monitor_name:
      description: Name of that monitor.
      type: str
    started_at:
      description: When the incident started.
      type: str
    acknowledged_at:
      description: When the incident was acknowledged, or null.
      type: str
    ended_at:
      description: When the incident ended, or null while it is ongoing.
      type: str
    cause:
      description: Cause of the incident.
      type: str
    comment:
      description: Comment on the incident.
      type: str
    status:
      description:
        - V(resolved) when O(ended_at) is set, else V(acknowledged) when O(acknowledged_at) is set, else V(unresolved).
      type: str
    duration:
      description: Seconds from O(started_at) to O(ended_at); null while the incident is ongoing.
      type: int
    created_at:
      description: When the incident was recorded, as reported by the service.
      type: str
    updated_at:
      description: When the incident was last changed, as reported by the service.
      type: str
    monitor:
      description:
        - The monitor the incident belongs to, as returned by M(uptime.monitoring.monitor_info), with its secrets masked.
        - Null when it is not known (check mode opening an incident by O(monitor_id) reads it; it is always known otherwise).
      type: dict
  sample:
    id: 12
    monitor_id: 7
    monitor_name: shop
    started_at: "2026-11-20T08:15:00Z"
    acknowledged_at: "2026-11-20T08:20:00Z"
    ended_at: "2026-11-20T09:05:00Z"
    cause: Database connection pool exhausted
    comment: Pool size raised, connections back to normal
    status: resolved
    duration: 3000
    created_at: "2026-11-20T08:16:02Z"
    updated_at: "2026-11-20T09:05:00Z"
    monitor:
      id: 7
      name: shop
      url: https://shop.example.com/health
      status: online
'''

from ansible_collections.uptime.monitoring.plugins.module_utils._incident import INCIDENT_RESOURCE, STATE_TIMESTAMPS
from ansible_collections.uptime.monitoring.plugins.module_utils._module import UptimeModule
from ansible_collections.uptime.monitoring.plugins.module_utils._renamed import RENAMED
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import argument_spec

IDENTITY = ('id', 'monitor_id', 'monitor', 'started_at')
STATES = ['present'] + sorted(STATE_TIMESTAMPS) + ['absent']
ARGUMENT_SPEC = argument_spec(INCIDENT_RESOURCE, IDENTITY, STATES)


def main(runner=None):
    module = UptimeModule(ARGUMENT_SPEC, required_one_of=[('id', 'monitor_id', 'monitor')],
                          mutually_exclusive=[('monitor_id', 'monitor')], renamed=RENAMED['incident'], runner=runner)
    module.ensure(INCIDENT_RESOURCE, IDENTITY)


if __name__ == '__main__':
    main()
