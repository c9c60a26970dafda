# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What was renamed before the first release (1.0.0), which no deprecation covered.

A task that still writes an old spelling fails before any request, naming the new one, instead of with
ansible-core's list of every supported parameter. From 1.0.0 on a rename goes through a deprecation first
(``deprecated_aliases``, see CONTRIBUTING.md), never this table.
"""

from __future__ import annotations

from ._schema import ValidationError

# By module: an option's old name -> its new name, the value carried over as given. ``config[].`` stands for each
# entry of the option ``config``.
RENAMED = {
    'monitor': {'pause': 'paused'},
    'monitors': {'config[].pause': 'paused'},
    'incident': {'status': 'state'},
}
FIRST_RELEASE = '1.0.0'


def _places(params, path):
    """(where, dict) of each dict ``path`` (``config[].`` parts) reaches in ``params``, as given."""
    places = [('', params)]
    for part in path:
        name = part[:-2]
        places = [('%s%s[%d].' % (where, name, index), item) for where, place in places
                  for index, item in enumerate(place.get(name) if isinstance(place.get(name), list) else [])
                  if isinstance(item, dict)]
    return places


def refuse_renamed(params, renamed):
    """Raise ValidationError at the first option of ``params`` (as given) written in an old spelling of ``renamed``
    (a module's part of RENAMED), naming the new one with the value given."""
    for old, new in renamed.items():
        *path, name = old.split('.')
        for where, place in _places(params, path):
            if name in place:
                value = place[name]
                shown = str(value).lower() if isinstance(value, bool) else value
                raise ValidationError(where + name, 'was renamed %s before uptime.monitoring %s: write %s: %s'
                                      % (new, FIRST_RELEASE, new, shown))
