# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:

    # What the lookups share beyond the connection: how long what one read serves again.
    DOCUMENTATION = r'''
options:
  cache_seconds:
    description:
      - "How long, in seconds, what a lookup read serves the same lookup again within one run, for every host and
        every fork of Ansible: one read of the account however many hosts ask (a C(when:) on 200 hosts, play
        variables that Ansible evaluates again for each task). V(0) reads the service each time."
      - Kept in the run's private temporary directory (Ansible's C(local_tmp), removed when the run ends), by
        account and every option of the lookup; forks asking at once wait for the one that reads.
      - A task of the collection's modules that reports a change makes the next lookup of its account read again,
        where the controller can tell the account (the task's O(api_url) and O(api_key), else its C(environment) or,
        on the controller, the controller's). What changes the account otherwise (an C(async) task, another run, the
        service's web interface, another client) is seen at the latest after this bound.
      - A failed read is kept too, for the same bound, so that the forks waiting for it fail at once. Where the
        directory cannot be used (no file locks, a full disk), the lookup reads the service each time.
    type: float
    default: 30
    env:
      - name: UPTIME_LOOKUP_CACHE_SECONDS
    vars:
      - name: uptime_lookup_cache_seconds
'''
