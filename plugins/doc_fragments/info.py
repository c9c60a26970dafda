# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:

    # The options that choose and shape the records read: of an info module, and of the lookup of the same records.
    DOCUMENTATION = r'''
options: {}
'''

    MONITORS = r'''
options:
  id:
    description:
      - Identifier of one monitor to read.
    type: int
  name:
    description:
      - Name of one monitor to read. The service's search matches substrings; this option keeps one monitor of
        the result, never a monitor whose name only contains O(name).
      - The monitor with exactly this name is read; a name that differs only in case is another monitor's. Leading
        and trailing spaces are ignored, as the service trims them.
    type: str
  search:
    description:
      - Substring to search for in the field named by O(search_by).
    type: str
  search_by:
    description:
      - Field that O(search) looks in. The service's default is V(name).
    type: str
    choices: [name, url]
  status_page_id:
    description:
      - Only monitors of this status page.
    type: int
  status:
    description:
      - Only monitors with one of these statuses, as the service reports them (V(paused) for a paused monitor whatever
        its checks, V(maintenance) inside its maintenance window); one status, or a list.
      - The service cannot list monitors by status, so the filter is applied here to what the list returns, with the
        other filters; every page is still read (one request per 100 monitors; with O(limit), per O(per_page)
        monitors until O(limit) monitors are kept). By default, monitors of every status.
    type: list
    elements: str
    choices: [pending, online, offline, paused, maintenance]
  sort_by:
    description:
      - Sort key; V(id) sorts by creation. The service's default is V(id).
      - V(name) and V(url) sort by the text without regard to case, then by V(id), as the service does on MySQL
        (another database may order some letters otherwise).
    type: str
    choices: [id, name, url]
  sort:
    description:
      - Sort direction. The service's default is V(desc).
    type: str
    choices: [asc, desc]
  per_page:
    description:
      - Records asked for per page with O(limit). Larger pages mean fewer requests. Without O(limit) the whole list
        is read 100 a page.
    type: int
    choices: [10, 25, 50, 100]
    default: 100
  limit:
    description:
      - Stop after this many monitors, for very large accounts. By default every page is read.
    type: int
  fields:
    description:
      - Return only these top-level keys of each monitor, in this order (for example V([name, status, url])), so that
        an answer fits a terminal or a template; by default every key.
      - A key no returned monitor has is refused before any request, naming the keys there are.
    type: list
    elements: str
'''

    INCIDENTS = r'''
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
