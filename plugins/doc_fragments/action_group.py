# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:

    # Modules only: other plugin types take no module_defaults.
    DOCUMENTATION = r'''
options: {}
attributes:
  action:
    support: full
    description:
      - When the task runs on the controller (a local connection after C(delegate_to), no C(become), not C(async), the
        controller's own Python or one left to discovery), an action plugin of the same name runs it inside Ansible's
        worker, with the module's arguments, checks and result, and without starting a Python process for it.
        Otherwise the module runs as any module does.
      - The environment variable E(UPTIME_RUN_IN_WORKER=false) runs every task as a module. What differs is in docs/performance.md.
notes:
  - The modules of this collection form the action group C(uptime.monitoring.all), so the connection options can be
    set once with C(module_defaults).
'''
