# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The action of uptime.monitoring.monitor: the module's task inside Ansible's worker when it runs on the controller."""

from __future__ import annotations

from ansible_collections.uptime.monitoring.plugins.modules import monitor
from ansible_collections.uptime.monitoring.plugins.plugin_utils._in_worker import ModuleInWorker


class ActionModule(ModuleInWorker):
    module = monitor
