# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A state file of the event source as each earlier version wrote it, from one that the current version wrote.

Read from the history of ``extensions/eda/plugins/event_source/events.py`` (``Tracker.to_state`` of each version):
version 1 (af2ca6f), 2 (186ec67), 3 (c472955), 4 (03cd367; from d9654bc on, version 4 kept ``baseline_at`` and the
monitors' ``read_at`` too: "4 with baseline_at"), 5 (261ba54, released in 1.0.0). Version 1's incident records were
the service's, masked, where the later ones keep the view: no matter, as a file of version 1 is refused by its number
(it named no account). Used by the laws of migrations (tests/unit/extensions/eda, tests/laws) and by the restarts
under ansible-rulebook (tests/eda).
"""

from __future__ import annotations

EARLIER_SHAPES = ('1', '2', '3', '4', '4 with baseline_at', '5')


def written_by(state, shape, key):
    """``state`` (a dict the current version wrote) as the version of ``shape`` (one of EARLIER_SHAPES) wrote it for
    the key whose ``account_fingerprint`` is ``key`` (versions 2 to 5 named the account by it)."""
    version = int(shape.split()[0])
    state = dict(state, version=5, account=key)
    if shape in ('5', '4 with baseline_at'):
        return dict(state, version=version)
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
