# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rate limit: 300 monitor changes under the service's 120 requests a minute, no failure.

An emulator of its own holds 200 monitors, then its limit is switched on; one playbook updates 100 monitors, creates
100 and deletes 100 with ``monitors``. It ends with no failure and exactly the asked monitors, and the log shows that
the client waited when told to (few 429 answers, long idle gaps) rather than hammering the service.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys

import pytest
from reliability_support import MONITORS, OUTPUT_DIR, list_all, recap, run_playbook

from emulator.control import PRIMARY_KEY, Emulator

HERE = os.path.dirname(os.path.abspath(__file__))
PLAYBOOK = os.path.join(HERE, 'playbooks', 'rate_limit.yml')
PER_MINUTE = 120
WINDOW = 60
# At most this share of the requests may be refused with 429: a client that waits
# for Retry-After is refused about once per worker per window.
MAX_REFUSED_SHARE = 0.1
IDLE_GAP = 2.0
MONITOR = {'url': 'https://m.example.com/', 'interval': 60, 'request_method': 'GET', 'alert_condition': 'url_unavailable'}


def changes():
    return {
        'rate_limit_updates': [{'name': 'm%d' % index, 'interval': 300} for index in range(0, 100)],
        'rate_limit_creates': [{'name': 'm%d' % index, 'url': 'https://m%d.example.com/' % index, 'interval': 60}
                               for index in range(200, 300)],
        'rate_limit_deletes': [{'name': 'm%d' % index} for index in range(100, 200)],
    }


def analyse(log):
    """Accepted and refused requests per window, and the idle gaps of the client."""
    times = sorted(entry['time'] for entry in log)
    if not times:
        return [], []
    start = times[0]
    windows = {}
    for entry in log:
        index = int((entry['time'] - start) // WINDOW)
        counts = windows.setdefault(index, {'accepted': 0, 'refused': 0})
        counts['refused' if entry['status'] == 429 else 'accepted'] += 1
    gaps = [later - earlier for earlier, later in zip(times, times[1:]) if later - earlier > IDLE_GAP]
    return [windows.get(index, {'accepted': 0, 'refused': 0}) for index in range(max(windows) + 1)], gaps


@pytest.mark.xdist_group('rate_limit')
def test_300_changes_under_the_rate_limit(record_property):
    out = os.path.join(OUTPUT_DIR, 'rate_limit')
    os.makedirs(out, exist_ok=True)
    extra_vars = os.path.join(out, 'changes.json')
    with open(extra_vars, 'w', encoding='utf-8') as handle:
        json.dump(changes(), handle)
    inventory = os.path.join(out, 'inventory.ini')
    with open(inventory, 'w', encoding='utf-8') as handle:
        handle.write('localhost ansible_connection=local ansible_python_interpreter=%s\n' % sys.executable)
    with Emulator.start(api_keys=(PRIMARY_KEY,)) as emu:
        emu.records(monitors=[dict(MONITOR, name='m%d' % index) for index in range(200)])
        emu.clear_log()
        emu.rate_limit(PER_MINUTE, WINDOW)
        returncode, seconds, output = run_playbook(['-i', inventory, '-e', '@' + extra_vars, PLAYBOOK], os.path.join(out, 'playbook.log'),
                                                   env={'UPTIME_API_URL': emu.url, 'UPTIME_API_KEY': PRIMARY_KEY}, timeout=900)
        log = emu.log()
        emu.rate_limit(0)
        found = {monitor['name']: int(monitor['interval']) for monitor in list_all(emu, MONITORS)}

    windows, gaps = analyse(log)
    accepted = sum(window['accepted'] for window in windows)
    refused = sum(window['refused'] for window in windows)
    minimum = (math.ceil(accepted / PER_MINUTE) - 1) * WINDOW
    summary = re.search(r'RATE_LIMIT_SUMMARY (\{.*\})', output)
    summary = json.loads(summary.group(1).replace('\\"', '"')) if summary else {}
    failed = sum(counts.get('failed', 0) for counts in recap(output).values())
    for name, value in (('requests', len(log)), ('accepted', accepted), ('refused (429)', refused),
                        ('per window', [window['accepted'] for window in windows]), ('idle seconds', round(sum(gaps), 1)),
                        ('seconds (minimum)', '%.0f (%d)' % (seconds, minimum)), ('summary', summary)):
        record_property(name, value)

    assert returncode == 0, output[-4000:]
    assert failed == 0, output[-4000:]
    assert log, 'the playbook sent no request'

    expected = dict({'m%d' % index: 300 for index in range(100)}, **{'m%d' % index: 60 for index in range(200, 300)})
    assert found == expected
    # the limit did bite, and the client waited for it instead of hammering
    assert refused <= MAX_REFUSED_SHARE * accepted, (refused, accepted)
    assert all(window['accepted'] <= PER_MINUTE for window in windows)
    assert seconds >= minimum - 1, (seconds, minimum)
    assert sum(gaps) >= minimum / 2, gaps
