# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped rulebook acknowledge_offline_job_template.yml under the real ansible-rulebook, against the emulator and
a fake controller (fake_controller.py): its run_job_template launches the job template, whose job runs the playbook
uptime.monitoring.acknowledge_incident with ansible-playbook, as the controller would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
import yaml
from fake_controller import FakeController
# env and running are fixtures: imported, pytest finds them here.
from test_rulebook import BIN, INTERVAL, create_monitor, env, open_incident, running, wait_polls  # noqa: F401  # pylint: disable=unused-import

TOKEN = 'fake-controller-token-8086'
TEMPLATE, ORGANIZATION = 'Acknowledge uptime incident', 'Default'


def test_the_shipped_job_template_rulebook_launches_the_template_once_and_catches_up_on_a_restart(  # pylint: disable=redefined-outer-name
        emulator, running, env, tmp_path):
    inventory = str(tmp_path / 'job-inventory.yml')
    with open(inventory, 'w', encoding='utf-8') as handle:
        yaml.safe_dump({'all': {'hosts': {'localhost': {'ansible_connection': 'local',
                                                        'ansible_python_interpreter': sys.executable}}}}, handle)
    playbook_runs = []

    def on_launch(extra_vars):
        """The job template's job: the playbook with the monitor's id alone (not the event: see the playbook)."""
        command = [os.path.join(BIN, 'ansible-playbook'), '-i', inventory, 'uptime.monitoring.acknowledge_incident',
                   '-e', 'uptime_monitor_id=%s' % extra_vars['uptime_monitor_id']]
        done = subprocess.run(command, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300,
                              check=False)
        playbook_runs.append(done)
        if done.returncode:
            raise RuntimeError('%s: rc %d\n%s\n%s' % (' '.join(command), done.returncode, done.stdout, done.stderr))

    web = create_monitor(emulator, 'web')
    started = time.monotonic()
    with FakeController(TOKEN, on_launch=on_launch) as controller:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(controller.url + '/api/v2/config/', timeout=10)  # pylint: disable=consider-using-with
        assert refused.value.code == 401
        controller.requests.clear()
        env['EDA_JOB_TEMPLATE_REFRESH_DELAY'] = '1'  # ansible-rulebook polls a job every 10 s by default
        rulebook = running('uptime.monitoring.acknowledge_offline_job_template',
                           ['--controller-url', controller.url, '--controller-token', TOKEN, '-v'],  # -v: INFO, the job's end
                           {'uptime_events_interval': INTERVAL})
        wait_polls(emulator, path='/api/v1/monitors')  # the rulebook watches monitors only
        offline = time.monotonic()
        incident_id = open_incident(emulator, web)
        (job,) = controller.wait_jobs(1)
        acknowledged = time.monotonic()
        wait_polls(emulator, polls=3, path='/api/v1/monitors')  # no second launch for the same transition
        rulebook.stop()
        output = rulebook.output()
        # Issue 56: an activation has no storage. While it is stopped, db goes offline; the restarted one catches up
        # (catch_up, the rulebook's default): web and db are offline, found on start, and the job of each runs. web's
        # changes nothing (its incident is acknowledged already); db's acknowledges db's incident.
        db = create_monitor(emulator, 'db')
        db_incident_id = open_incident(emulator, db)
        restarted = running('uptime.monitoring.acknowledge_offline_job_template',
                            ['--controller-url', controller.url, '--controller-token', TOKEN],
                            {'uptime_events_interval': INTERVAL})
        controller.wait_jobs(3)
        wait_polls(emulator, polls=3, path='/api/v1/monitors')
        restarted.stop()

    assert job['status'] == 'successful', (job, output)
    launch = controller.launches[0]
    assert len(controller.launches) == 3, controller.launches
    assert (launch['template'], launch['organization']) == (TEMPLATE, ORGANIZATION)
    extra_vars = launch['body']['extra_vars']
    print('\nposted to the launch: %s' % json.dumps(launch['body'], indent=1, sort_keys=True))
    assert extra_vars['uptime_monitor_id'] == web, extra_vars  # an integer, not its text
    assert extra_vars['ansible_eda']['event']['uptime']['monitor_id'] == web
    assert extra_vars['ansible_eda']['rule'] == 'Launch the acknowledging job template for a monitor that went offline'
    assert launch['body']['limit'] == 'all'  # the rule's hosts: the template does not prompt for it, the job ignores it
    playbook = playbook_runs[0]
    record = emulator.api('GET', '/api/v1/incidents/%d' % incident_id).json['data']
    assert record['status'] == 'acknowledged', (record, playbook.stdout)
    assert record['comment'].startswith('Acknowledged by Event-Driven Ansible'), record
    assert "Incident %d of monitor 'web' is acknowledged." % incident_id in playbook.stdout
    # Exactly the calls fake_controller.py serves, all with the token, and nothing the fake does not know.
    answered = {(method, path, status) for method, path, query, status in controller.requests}
    assert answered == {('GET', '/api/v2/config/', 200), ('GET', '/api/v2/unified_job_templates/', 200),
                        ('POST', '/api/v2/job_templates/7/launch/', 201), ('GET', '/api/v2/jobs/', 200)}, controller.requests
    # What ansible-rulebook made of it: the version read at start-up, one launch, polled to its end, no error.
    assert 'AAP Version 4.6.0-fake' in output, output
    assert "Job template '%s' completed successfully (job_id: 1)" % TEMPLATE in output, output
    assert 'job results url: %s/#/jobs/1/details' % controller.url in output, output
    assert len(re.findall('Job Launched', output)) == 1, output
    assert not re.search(r' - (ERROR|CRITICAL) - ', output), output
    caught_up = controller.launches[1:]
    assert sorted(launch['body']['extra_vars']['uptime_monitor_id'] for launch in caught_up) == sorted([web, db]), restarted.output()
    assert all(launch['body']['extra_vars']['ansible_eda']['event']['uptime']['found_on_start'] for launch in caught_up)
    assert [job['status'] for job in controller.jobs.values()] == ['successful'] * 3, controller.jobs
    assert emulator.api('GET', '/api/v1/incidents/%d' % db_incident_id).json['data']['status'] == 'acknowledged'
    writes = [entry['path'] for entry in emulator.writes() if entry['path'].startswith('/api/v1/incidents/')]
    assert sorted(writes) == sorted(['/api/v1/incidents/%d' % incident_id, '/api/v1/incidents/%d' % db_incident_id]), writes
    print('offline -> job successful: %.1f s; test %.1f s' % (acknowledged - offline, time.monotonic() - started))
