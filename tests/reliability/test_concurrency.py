# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Concurrency: several runs that ensure the same records at the same time end in one record each.

In-process races (the monitor module's is test_monitor_modules.py's), made deterministic: another client creates the
record between the module's lookup and its POST, which is refused (422): the module reads the record back and succeeds.
A real playbook: 5 hosts, ``forks: 5``, every host ensures the same 5 monitors and the same incident, all at once.
"""

from __future__ import annotations

import os
import sys

from module_runner import run_module
from reliability_support import INCIDENTS, MONITORS, OUTPUT_DIR, list_all, recap, run_playbook, seed_monitor, utc_ago

from emulator.control import PRIMARY_KEY, Emulator
from ansible_collections.uptime.monitoring.plugins.module_utils._bulk import MonitorSync
from ansible_collections.uptime.monitoring.plugins.module_utils._incident import IncidentResource
from ansible_collections.uptime.monitoring.plugins.modules import incident, monitors

HERE = os.path.dirname(os.path.abspath(__file__))
PLAYBOOK = os.path.join(HERE, 'playbooks', 'concurrency.yml')
# As many hosts as forks: every host runs each task at the same time as every other. (A host beyond the forks
# only starts once a fork is free, after a first host went through the whole loop: it finds every record made
# and proves idempotence, which every integration target proves already.)
HOSTS, FORKS, NAMES = 5, 5, ['web-%d' % index for index in range(1, 6)]
# The emulator stores a record at once; a real service takes a moment. Every POST is held
# this long before it is processed, so that forks searching meanwhile find nothing and
# post too: the races of a real deployment, on purpose.
WRITE_LATENCY = 0.5
ALPHA = {'name': 'alpha', 'url': 'https://alpha.example.com/health', 'interval': 60}


def refused_posts(log, path):
    return [entry for entry in log if entry['method'] == 'POST' and entry['path'] == path and entry['status'] == 422]


def after_first_call(monkeypatch, cls, name, side_effect):
    """Run ``side_effect()`` right after the first call of ``cls.name`` returned (the other client wins there)."""
    original = getattr(cls, name)
    calls = []

    def racing(self, *args, **kwargs):
        answer = original(self, *args, **kwargs)
        if not calls:
            side_effect()
        calls.append(args)
        return answer

    monkeypatch.setattr(cls, name, racing)


def test_incident_race_on_the_natural_key_ends_in_one_incident(emulator, connection, monkeypatch):
    mid = seed_monitor(emulator, 'shop')
    started = utc_ago(hours=1)
    after_first_call(monkeypatch, IncidentResource, 'find_by_start',
                     lambda: emulator.records(incidents=[{'monitor_id': mid, 'started_at': started, 'cause': 'first'}]))
    run = run_module(incident.main, dict(connection, monitor_id=mid, started_at=started, cause='db'))
    log = emulator.log()
    assert not run.failed, run
    assert [i['cause'] for i in list_all(emulator, INCIDENTS)] == ['db']
    assert len(refused_posts(log, INCIDENTS)) == 1


def test_bulk_race_on_the_name_ends_in_one_monitor(emulator, connection, monkeypatch):
    after_first_call(monkeypatch, MonitorSync, 'read_all', lambda: seed_monitor(emulator, 'alpha', interval=300))
    run = run_module(monitors.main, dict(connection, config=[dict(ALPHA)], workers=1))
    assert not run.failed, run
    assert [(m['name'], m['interval']) for m in list_all(emulator, MONITORS)] == [('alpha', 60)]
    assert len(refused_posts(emulator.log(), MONITORS)) == 1


def write_inventory(path):
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write('localhost ansible_connection=local ansible_python_interpreter=%s\n\n[fleet]\n' % sys.executable)
        for index in range(1, HOSTS + 1):
            handle.write('host%02d ansible_connection=local ansible_python_interpreter=%s\n' % (index, sys.executable))


def test_five_hosts_five_forks_same_five_monitors(record_property):
    out = os.path.join(OUTPUT_DIR, 'concurrency')
    os.makedirs(out, exist_ok=True)
    inventory = os.path.join(out, 'inventory.ini')
    write_inventory(inventory)
    with Emulator.start(api_keys=(PRIMARY_KEY,)) as emu:
        emu.fault('delay', count=10000, seconds=WRITE_LATENCY, method='POST')
        returncode, seconds, output = run_playbook(['-i', inventory, '--forks', str(FORKS), PLAYBOOK], os.path.join(out, 'playbook.log'),
                                                   env={'UPTIME_API_URL': emu.url, 'UPTIME_API_KEY': PRIMARY_KEY,
                                                        'INCIDENT_STARTED_AT': utc_ago(hours=1)})
        found = list_all(emu, MONITORS)
        incidents = list_all(emu, INCIDENTS)
        emu.wait_idle()
        log = emu.log()
    hosts = recap(output)
    fleet = {host: counts for host, counts in hosts.items() if host.startswith('host')}
    failed = sum(counts.get('failed', 0) + counts.get('unreachable', 0) for counts in hosts.values())
    monitor_posts = [entry for entry in log if entry['method'] == 'POST' and entry['path'] == MONITORS]
    incident_posts = [entry for entry in log if entry['method'] == 'POST' and entry['path'] == INCIDENTS]
    for name, value in (('seconds', round(seconds, 1)), ('monitors', len(found)), ('incidents', len(incidents)), ('requests', len(log)),
                        ('monitor POSTs (refused)', '%d (%d)' % (len(monitor_posts), len(refused_posts(log, MONITORS)))),
                        ('incident POSTs (refused)', '%d (%d)' % (len(incident_posts), len(refused_posts(log, INCIDENTS))))):
        record_property(name, value)
    assert returncode == 0, output[-3000:]
    assert len(fleet) == HOSTS, hosts
    assert failed == 0, hosts
    assert sorted(m['name'] for m in found) == NAMES
    assert len(incidents) == 1
    assert len([entry for entry in monitor_posts if entry['status'] == 201]) == len(NAMES)
    # the races did happen, and every one of them ended in a success
    assert refused_posts(log, MONITORS)
