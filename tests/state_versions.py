# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A state file of the event source as each earlier version wrote it, from one that the current version wrote.

Read from the history of ``extensions/eda/plugins/event_source/events.py`` (``Tracker.to_state`` of each version):
version 1 (af2ca6f), 2 (186ec67), 3 (c472955), 4 (03cd367), 5 (261ba54, released in 1.0.0). Used by the law of
migrations (tests/unit/extensions/eda) and by the restarts under ansible-rulebook (tests/eda).
"""

from __future__ import annotations

EARLIER_VERSIONS = (1, 2, 3, 4, 5)


def written_by(state, version, key):
    """``state`` (a dict the current version wrote) as version ``version`` wrote it for the key whose
    ``account_fingerprint`` is ``key`` (versions 2 to 5 named the account by it)."""
    state = dict(state, version=5, account=key)
    if version == 5:
        return state
    # 4 kept no baseline_at, and no read_at in its monitors.
    state = {name: value for name, value in state.items() if name != 'baseline_at'}
    state['monitors'] = _entries(state['monitors'], lambda entry: {name: value for name, value in entry.items() if name != 'read_at'})
    if version == 4:
        return dict(state, version=4)
    # 3 kept the newest end seen.
    ends = [entry['ended_at'] for entry in state['incidents'] or () if entry['ended_at']]
    state = dict(state, version=3, cutoff=max(ends) if ends else None)
    if version == 3:
        return state
    # 2 read the whole monitor list at each poll: no sweep; a monitor missing from one reading was counted.
    state = {name: value for name, value in state.items() if name not in ('sweep', 'baselined', 'polled_at')}
    state['monitors'] = _entries(state['monitors'], lambda entry: dict(
        {name: value for name, value in entry.items() if name != 'sweep'}, missed=0))
    if version == 2:
        return dict(state, version=2)
    # 1 named no account.
    return dict({name: value for name, value in state.items() if name != 'account'}, version=1)


def _entries(entries, change):
    return None if entries is None else [change(entry) for entry in entries]
