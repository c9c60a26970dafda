# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:

    # Modules only: other plugin types take no module_defaults.
    DOCUMENTATION = r'''
options: {}
notes:
  - The modules of this collection form the action group C(uptime.monitoring.all), so the connection options can be
    set once with C(module_defaults).
'''
