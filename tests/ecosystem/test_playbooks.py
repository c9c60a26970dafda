"""Run each example playbook of playbooks/ (as a collection playbook, uptime.monitoring.NAME) against the
emulator and check what it did to the account. A second run is kept where the playbook's own logic decides what it
does again (an export file left as it is, notes appended once, an import that names what it left out); that a module
task run twice changes nothing is the idempotence law of tests/laws/."""

from __future__ import annotations

import json
import os
import stat

import pytest
import yaml

from ecosystem_support import (
    APPENDED,
    OTHER_KEY,
    PRIMARY_KEY,
    assert_changed_nothing,
    create_incident,
    create_monitor,
    monitors_by_name,
    records,
    stamp,
    update_monitor,
)

INVENTORY = '''\
[webservers]
web1.example.com
web2.example.com uptime_monitor_url=https://web2.example.com/health uptime_monitor_interval=60
web3.example.com uptime_monitor_name=web3 uptime_monitor_alerts='[{"key": "email", "value": "web@example.com"}]'

[webservers:vars]
ansible_connection=local
'''

# Deploy tasks for rolling_deploy: record how the host's monitor looks while the host is deployed, reach a host
# that has a connection of its own, include a missing file on the hosts listed in deploy_broken_include, and fail on
# those listed in deploy_fail_on.
DEPLOY_TASKS = '''\
---
- name: Read the monitor while the host is deployed
  uptime.monitoring.monitor_info:
    name: "{{ inventory_hostname }}"
  delegate_to: localhost
  register: during_deploy

- name: Record it
  # Hosts of one batch run this at the same time: one writer at a time, or a line may be lost.
  throttle: 1
  # A task tagged always runs where tags alone would skip it: it must still run only while the monitor is held.
  tags: [always]
  ansible.builtin.lineinfile:
    path: "{{ deploy_record }}"
    line: "{{ {'host': inventory_hostname, 'monitor': during_deploy.monitors | first | default(none)} | to_json }}"
    create: true
    mode: "0600"
  delegate_to: localhost

- name: Reach the host
  ansible.builtin.ping:
  when: ansible_connection != 'local'

- name: Include a step that is not there
  ansible.builtin.include_tasks: /nonexistent/deploy-step.yml
  when: inventory_hostname in deploy_broken_include | default([])

- name: Break the deploy
  ansible.builtin.fail:
    msg: the deploy of {{ inventory_hostname }} failed
  when: inventory_hostname in deploy_fail_on | default([])
'''


def rolling_deploy(ansible, emulator, inventory, *arguments, name='inventory.ini'):
    """rolling_deploy of the group webservers of ``inventory`` (file ``name``) with DEPLOY_TASKS (the log cleared before):
    the run, and what the deploy recorded of each host's monitor."""
    inventory = ansible.write(name, inventory)
    record = os.path.join(ansible.workdir, 'record.jsonl')
    emulator.clear_log()
    run = ansible.playbook('uptime.monitoring.rolling_deploy', '-e', 'deploy_hosts=webservers', '-e', 'deploy_record=%s' % record,
                           '-e', 'deploy_tasks_file=%s' % ansible.write('deploy.yml', DEPLOY_TASKS), *arguments,
                           inventory=inventory, check=False)
    if not os.path.exists(record):  # check mode records nothing
        return run, []
    with open(record, encoding='utf-8') as handle:
        return run, [yaml.safe_load(line) for line in handle if line.strip()]


def writes_to(emulator, monitor_id):
    return [entry for entry in emulator.writes() if entry['path'] == '/api/v1/monitors/%d' % monitor_id]


def test_monitor_hosts_one_monitor_per_host(ansible, emulator):
    inventory = ansible.write('inventory.ini', INVENTORY + '\n[db]\ndb1.example.com ansible_connection=local\n[v6]\n2001:db8::5 ansible_connection=local\n')

    preview = ansible.playbook('uptime.monitoring.monitor_hosts', '--check', '-e', 'uptime_hosts=webservers,v6', inventory=inventory)
    assert '2001:db8::5 would check https://[2001:db8::5]/ every 300 s' in preview.output and emulator.writes() == [], preview
    # The groups uptime_hosts names, only: db1 is left out.
    first = ansible.playbook('uptime.monitoring.monitor_hosts', '-e', 'uptime_hosts=webservers,v6', inventory=inventory)
    assert first.changed() == 4

    monitors = monitors_by_name(emulator)
    assert sorted(monitors) == ['2001:db8::5', 'web1.example.com', 'web2.example.com', 'web3']
    assert monitors['2001:db8::5']['url'] == 'https://[2001:db8::5]/'
    assert (monitors['web1.example.com']['url'], int(monitors['web1.example.com']['interval'])) == ('https://web1.example.com/', 300)
    assert (monitors['web2.example.com']['url'], int(monitors['web2.example.com']['interval'])) == ('https://web2.example.com/health', 60)
    assert monitors['web3']['alerts'] == [{'key': 'email', 'value': 'web@example.com'}]

    # A host leaves monitoring; the others are left alone.
    second = ansible.playbook('uptime.monitoring.monitor_hosts', '-e', 'uptime_hosts=webservers', '--limit', 'web1.example.com',
                              '-e', 'uptime_monitor_state=absent', inventory=inventory)
    assert second.changed() == 1
    assert sorted(monitors_by_name(emulator)) == ['2001:db8::5', 'web2.example.com', 'web3']


@pytest.mark.parametrize('playbook, arguments, message', [  # the hosts keyword; the argument spec on entry; an assert
    ('monitor_hosts', (), 'uptime_hosts is required'),
    ('rolling_deploy', (), 'deploy_hosts is required'),
    ('rolling_deploy', ('-e', 'deploy_hosts=all', '-e', 'uptime_deploy_mode=off'), 'uptime_deploy_mode must be one of: pause, maintenance, got: off'),
    ('health_check', ('-e', 'uptime_health_hosts=all', '-e', 'uptime_health_statuses=up'), 'uptime_health_statuses must be one or more of: pending, online'),
    ('respond_to_incident', ('-e', 'uptime_monitor=shop', '-e', 'uptime_incident_action=close'), 'uptime_incident_action must be one of: acknowledge, resolve'),
    ('respond_to_incident', (), "Set uptime_monitor (the monitor's name) or uptime_incident_id"),
    ('import_account', ('-e', 'uptime_import_state=merged'), 'missing required arguments: uptime_import_file'),
    # The deploy tasks are loaded before any monitor is read, let alone held.
    ('rolling_deploy', ('-e', 'deploy_hosts=webservers', '-e', 'deploy_tasks_file={workdir}/missing.yml'),
     "Could not find or access '{workdir}/missing.yml'"),
    ('rolling_deploy', ('-e', 'deploy_hosts=webservers', '-e', 'deploy_tasks_file={workdir}/broken.yml'), 'YAML parsing failed'),
    ('acknowledge_incident', ('-e', 'uptime_monitor_id=shop'), "'uptime_monitor_id' is of type str and we were unable to convert to int"),
])
def test_a_playbook_refuses_what_it_cannot_do_before_any_request(ansible, emulator, playbook, arguments, message):
    inventory = ansible.write('inventory.ini', INVENTORY)
    ansible.write('broken.yml', '- name: Deploy\n  ansible.builtin.command: [\n')
    run = ansible.playbook('uptime.monitoring.' + playbook, *[arg.format(workdir=ansible.workdir) for arg in arguments],
                           inventory=inventory, check=False)
    assert run.rc != 0, run
    assert message.format(workdir=ansible.workdir) in run.output, run
    assert emulator.log() == []


def test_rolling_deploy_pauses_and_restores(ansible, emulator):
    web1 = create_monitor(emulator, 'web1.example.com')  # pending: never checked
    web2 = create_monitor(emulator, 'web2.example.com')
    update_monitor(emulator, web2['id'], pause=1)  # paused before the deploy: stays paused
    preview, dummy = rolling_deploy(ansible, emulator, INVENTORY, '--check', '--limit', 'web1.example.com')
    assert emulator.writes() == [], preview
    run, recorded = rolling_deploy(ansible, emulator, INVENTORY)
    assert run.rc == 0, run
    # The preview counts the changes of the real run, the put-back of what it would hold included.
    assert preview.recap['web1.example.com']['changed'] == run.recap['web1.example.com']['changed'], (preview, run)
    pending = ("Monitor 'web1.example.com' was pending (not checked yet) before the deploy; the service resumes a monitor as "
               "online or offline, never pending: %s")
    assert pending % 'it would come back online or offline' in preview.output, preview
    assert pending % 'it is online now' in run.output, run
    during = {entry['host']: entry['monitor'] for entry in recorded}
    assert during['web1.example.com']['status'] == 'paused'
    assert during['web2.example.com']['status'] == 'paused'
    assert during['web3.example.com'] is None  # no monitor: deployed without touching the service, and said
    assert 'WARNING: web3.example.com has no monitor (looked for web3)' in run.output, run

    # Every run is a deploy, so no second run: this one's true changes are counted. Each host's deploy records a
    # line (one change); web1 is paused and resumed (two more), nothing fails.
    assert {host: (counts['changed'], counts['failed']) for host, counts in run.recap.items()} == {
        'web1.example.com': (3, 0), 'web2.example.com': (1, 0), 'web3.example.com': (1, 0)}, run
    # The only writes pause web1 and resume it; web2 was already paused: nothing to pause, nothing to resume.
    assert [(entry['path'], entry['form'].get('pause')) for entry in emulator.writes()] == [
        ('/api/v1/monitors/%d' % web1['id'], '1'), ('/api/v1/monitors/%d' % web1['id'], '0')]
    # Every monitor is left as the deploy found it.
    monitors = monitors_by_name(emulator)
    assert monitors['web1.example.com']['status'] != 'paused'
    assert monitors['web2.example.com']['status'] == 'paused'


def test_rolling_deploy_holds_every_monitor_the_inventory_plugin_lists(ansible, emulator):
    ids = [create_monitor(emulator, name, url=url)['id'] for name, url in [
        ('metrics', 'http://127.0.0.1:9100/metrics'), ('admin', 'http://127.0.0.1:8443/admin'), ('home', 'http://localhost/')]]
    run, recorded = rolling_deploy(ansible, emulator, 'plugin: uptime.monitoring.monitors\ngroups:\n  webservers: uptime_monitors | length > 0\n',
                                   name='deploy.uptime.yml')
    assert [entry['host'] for entry in recorded] == ['127.0.0.1', 'localhost'], run  # loopback hosts: a local connection
    assert [(entry['path'], entry['form'].get('pause')) for entry in emulator.writes()] == [
        ('/api/v1/monitors/%d' % ids[number], pause) for number, pause in [(0, '1'), (1, '1'), (0, '0'), (1, '0'), (2, '1'), (2, '0')]]


def test_rolling_deploy_stops_after_the_batch_that_failed(ansible, emulator):
    hosts = ['web%d.example.com' % number for number in range(1, 7)]
    monitors = {host: create_monitor(emulator, host) for host in hosts}
    update_monitor(emulator, monitors[hosts[2]]['id'], pause=1)  # paused before the deploy: stays paused
    # Batches of two: web1+web2, then web3+web4 (web4 fails), then web5+web6.
    run, recorded = rolling_deploy(ansible, emulator, '[webservers]\n%s\n\n[webservers:vars]\nansible_connection=local\n' % '\n'.join(hosts),
                                   '-e', 'deploy_serial=2', '-e', '{"deploy_fail_on": ["web4.example.com"]}')
    assert run.rc != 0 and 'the deploy of web4.example.com failed' in run.output, run
    assert sorted(entry['host'] for entry in recorded) == hosts[:4]
    # Every monitor of the first two batches is back as it was, the failed host's included.
    after = monitors_by_name(emulator)
    for host in hosts[:4]:
        assert (after[host]['status'] == 'paused') == (host == hosts[2]), host
    assert [entry['form'].get('pause') for entry in writes_to(emulator, monitors[hosts[3]]['id'])] == ['1', '0']
    assert writes_to(emulator, monitors[hosts[2]]['id']) == []
    # The rollout stopped: the hosts of the third batch were neither deployed nor touched, nor even read.
    for host in hosts[4:]:
        assert writes_to(emulator, monitors[host]['id']) == [], host
        assert host not in run.recap, run
    assert not any(host in str(entry) for entry in emulator.log() for host in hosts[4:])


def test_rolling_deploy_maintenance_window(ansible, emulator):
    web1 = create_monitor(emulator, 'web1.example.com')
    web2 = create_monitor(emulator, 'web2.example.com', maintenance_start_at='2030-01-01T01:00:00',
                          maintenance_end_at='2030-01-01T02:00:00')
    run, recorded = rolling_deploy(ansible, emulator, INVENTORY, '-e', 'uptime_deploy_mode=maintenance', '-e', 'uptime_maintenance_minutes=45',
                                   '-e', '{"deploy_broken_include": ["web2.example.com"]}')
    # One host at a time (deploy_serial's default): the rollout stops at web2's failure (a tasks file its deploy
    # includes is not there), web3 is not deployed.
    assert run.rc != 0, run
    assert 'The deploy of web2.example.com failed (a tasks file it includes could not be loaded' in run.output, run
    assert [entry['host'] for entry in recorded] == ['web1.example.com', 'web2.example.com']
    assert 'web3.example.com' not in run.recap, run
    during = {entry['host']: entry['monitor'] for entry in recorded}
    for host in ('web1.example.com', 'web2.example.com'):
        assert during[host]['status'] == 'maintenance'
        assert during[host]['paused'] is False
    start, end = during['web1.example.com']['maintenance_start_at'], during['web1.example.com']['maintenance_end_at']
    assert start < end
    # Afterwards: no window where there was none, the old window where there was one (also after the failure).
    monitors = monitors_by_name(emulator)
    assert monitors['web1.example.com']['maintenance_start_at'] is None
    assert monitors['web2.example.com']['maintenance_start_at'].startswith('2030-01-01T01:00:00')
    assert monitors['web2.example.com']['maintenance_end_at'].startswith('2030-01-01T02:00:00')
    assert all('pause' not in entry['form'] for entry in writes_to(emulator, web1['id']) + writes_to(emulator, web2['id']))


def test_rolling_deploy_puts_back_the_monitor_of_a_host_gone_unreachable(ansible, emulator):
    monitors = {host: create_monitor(emulator, host) for host in ('web1.example.com', 'web2.example.com', 'web3')}
    unreachable = 'web2.example.com ansible_connection=ssh ansible_host=127.0.0.1 ansible_port=1'  # refused at once
    run, recorded = rolling_deploy(ansible, emulator, INVENTORY.replace('web2.example.com', unreachable, 1), '-e', 'deploy_serial=2')
    assert run.rc == 4 and run.recap['web2.example.com']['unreachable'] == 1, run
    # As it was held, the run named it with the command that puts it back, for a run that ends before it does.
    held = monitors['web2.example.com']['id']
    assert ("Monitor 'web2.example.com' (id %d) is held during the deploy of web2.example.com. Should this run end before "
            "putting it back (the host unreachable, the run stopped): ansible localhost -m uptime.monitoring.monitor -a "
            "'id=%d paused=false'" % (held, held)) in run.output, run
    # The other host of its batch put it back, and the rollout stopped: web3 was neither deployed nor touched.
    assert [entry['form'].get('pause') for entry in writes_to(emulator, held)] == ['1', '0']
    assert sorted(entry['host'] for entry in recorded) == ['web1.example.com', 'web2.example.com']
    assert writes_to(emulator, monitors['web3']['id']) == []
    assert [name for name, monitor in monitors_by_name(emulator).items() if monitor['status'] == 'paused'] == []


def incident_record(emulator, record):
    return emulator.api('GET', '/api/v1/incidents/%d' % record['id']).json['data']


def test_respond_to_incident_acknowledge_then_resolve(ansible, emulator):
    shop = create_monitor(emulator, 'shop')
    create_incident(emulator, shop['id'], '2026-01-10T08:00:00', ended_at='2026-01-10T09:00:00', cause='old')
    ongoing = create_incident(emulator, shop['id'], '2026-01-11T08:00:00', cause='Database connection pool exhausted')
    api_incident = create_incident(emulator, create_monitor(emulator, 'api')['id'], '2026-01-11T08:00:00')

    acknowledged = ansible.playbook('uptime.monitoring.respond_to_incident', '-e', 'uptime_monitor=shop',
                                    '-e', '{"uptime_incident_comment": "On it"}')
    assert acknowledged.changed() == 1
    record = incident_record(emulator, ongoing)
    assert (record['status'], record['comment'], record['ended_at']) == ('acknowledged', 'On it', None)
    assert 'Incident %d of shop (started 2026-01-11T08:00:00Z) is acknowledged.' % ongoing['id'] in acknowledged.output

    emulator.clear_log()
    assert_changed_nothing(ansible.playbook('uptime.monitoring.respond_to_incident', '-e', 'uptime_monitor=shop',
                                            '-e', '{"uptime_incident_comment": "On it"}'))
    assert emulator.writes() == []

    resolved = ansible.playbook('uptime.monitoring.respond_to_incident', '-e', 'uptime_monitor=shop',
                                '-e', 'uptime_incident_action=resolve', '-e', '{"uptime_incident_comment": "Pool size raised"}')
    assert resolved.changed() == 1
    record = incident_record(emulator, ongoing)
    # The resolution's note is appended: the acknowledgement's comment is kept.
    assert record['status'] == 'resolved' and record['acknowledged_at'] is not None and record['ended_at'] is not None
    assert APPENDED.fullmatch(record['comment']).groups() == ('On it', 'Pool size raised'), record['comment']

    emulator.clear_log()
    again = ansible.playbook('uptime.monitoring.respond_to_incident', '-e', 'uptime_monitor=shop',
                             '-e', 'uptime_incident_action=resolve', '-e', '{"uptime_incident_comment": "Pool size raised"}')
    assert_changed_nothing(again)
    assert emulator.writes() == []
    assert incident_record(emulator, ongoing)['comment'] == record['comment']

    # Resolved by id, never acknowledged: acknowledged first.
    ansible.playbook('uptime.monitoring.respond_to_incident', '-e', 'uptime_incident_id=%d' % api_incident['id'],
                     '-e', 'uptime_incident_action=resolve', '-e', '{"uptime_incident_cause": "Certificate expired"}')
    record = incident_record(emulator, api_incident)
    assert (record['status'], record['cause']) == ('resolved', 'Certificate expired') and record['acknowledged_at'] is not None


def test_respond_to_incident_with_nothing_to_do_says_so(ansible, emulator):
    """Without an incident, or (nothing asked to record) with one that already ended: nothing to do, said plainly."""
    create_monitor(emulator, 'api')
    shop = create_monitor(emulator, 'shop')
    past = create_incident(emulator, shop['id'], '2026-01-10T08:00:00', ended_at='2026-01-10T09:00:00', comment='Fixed')
    emulator.clear_log()
    for monitor, action, said in [('api', 'acknowledge', "monitor 'api' has no incident: nothing to acknowledge"),
                                  ('api', 'resolve', "monitor 'api' has no incident: nothing to resolve"),
                                  ('shop', 'acknowledge', "monitor 'shop' has no ongoing incident: nothing to acknowledge")]:
        run = ansible.playbook('uptime.monitoring.respond_to_incident', '-e', 'uptime_monitor=' + monitor,
                               '-e', 'uptime_incident_action=' + action)
        assert said in run.output and 'is resolved' not in run.output and run.changed() == 0, run

    # A comment that cannot be recorded fails the run, naming the incident, instead of a green run that drops it.
    commented = ansible.playbook('uptime.monitoring.respond_to_incident', '-e', 'uptime_monitor=shop',
                                 '-e', '{"uptime_incident_comment": "On it"}', check=False)
    assert commented.rc != 0, commented
    assert 'no ongoing incident to acknowledge: its latest incident (id %d) ended at' % past['id'] in commented.output
    assert 'comment would not be recorded' in commented.output
    assert emulator.writes() == []
    assert incident_record(emulator, past)['comment'] == 'Fixed'


def test_acknowledge_incident_of_the_event(ansible, emulator):
    """acknowledge_incident as the rulebook acknowledge_offline runs it (the event and the rule's name under
    ansible_eda): the incident of the event's monitor is acknowledged, the note appended to an operator's comment (the
    note alone, on an incident without a comment: docs/eda.md, test_docs_examples.py), once; a monitor without an
    ongoing incident is left alone."""
    shop = create_monitor(emulator, 'shop')
    other = create_monitor(emulator, 'other')
    quiet = create_monitor(emulator, 'quiet')['id']
    note = 'Known: the payment provider is down, see status.example.com'
    ongoing = create_incident(emulator, shop['id'], '2026-01-11T08:00:00', comment=note)
    untouched = create_incident(emulator, other['id'], '2026-01-11T08:00:00')
    rule = 'Acknowledge the incident of a monitor that went offline'
    event = json.dumps({'ansible_eda': {'rule': rule, 'ruleset': 'uptime', 'event': {'meta': {'uuid': 'x'}, 'uptime': {
        'type': 'monitor_status_changed', 'status': 'offline', 'previous_status': 'online', 'monitor_id': shop['id'], 'monitor_name': 'shop'}}}})

    run = ansible.playbook('uptime.monitoring.acknowledge_incident', '-e', event)
    assert run.changed() == 1 and "Incident %d of monitor 'shop' is acknowledged." % ongoing['id'] in run.output, run
    record = incident_record(emulator, ongoing)
    assert record['status'] == 'acknowledged' and incident_record(emulator, untouched)['status'] == 'unresolved'
    assert APPENDED.fullmatch(record['comment']).groups() == (note, 'Acknowledged by Event-Driven Ansible: ' + rule), record

    emulator.clear_log()
    assert_changed_nothing(ansible.playbook('uptime.monitoring.acknowledge_incident', '-e', event))
    left = ansible.playbook('uptime.monitoring.acknowledge_incident', '-e', 'uptime_monitor_id=%d' % quiet)
    assert left.changed() == 0 and "Monitor 'quiet' has no unacknowledged incident: nothing to acknowledge." in left.output, left
    unknown = ansible.playbook('uptime.monitoring.acknowledge_incident', '-e', 'uptime_monitor_id=99999', check=False)
    assert unknown.rc != 0, unknown
    assert 'No monitor has the id 99999 in the account of this API key' in unknown.output, unknown
    assert emulator.writes() == []
    assert incident_record(emulator, ongoing)['comment'] == record['comment']


SLACK_WEBHOOK = 'https://hooks.slack.com/services/T000/B000/slack-s3cr3t-part'
SECRETS = ('hunter2-secret', 's3cr3t-token', 'slack-s3cr3t-part', 'intranet-s3cr3t')
# What import_account prints for a monitor applied without what the export masked and the account cannot stand for.
APPLIED_WITHOUT = "monitor '%s' was applied without %s: masked in the export, and nothing in the account stands for %s"
# What it prints for the monitors it left unchanged that still lack what the export masked.
STILL_WITHOUT = 'Unchanged, and still without what the export masks: monitor %s.'
EMAIL, SMS = {'key': 'email', 'value': 'oncall@example.com'}, {'key': 'sms', 'value': '+4912345'}
X_ENV, LANGUAGE = {'key': 'X-Env', 'value': 'prod'}, {'key': 'Accept-Language', 'value': 'de'}
AUTHORIZATION = {'key': 'Authorization', 'value': 'Bearer s3cr3t-token'}


def seed_account(emulator):
    shop = create_monitor(emulator, 'shop', url='https://shop.example.com/health', interval=60,
                          alert_condition='url_no_text', alert_text_lookup='OK',
                          alerts=[EMAIL, {'key': 'slack', 'value': SLACK_WEBHOOK}, SMS],
                          request_headers=[X_ENV, AUTHORIZATION, LANGUAGE])
    create_monitor(emulator, 'admin', request_auth_username='uptime', request_auth_password='hunter2-secret')
    staging = create_monitor(emulator, 'staging', interval=3600, cache_buster=1)
    update_monitor(emulator, staging['id'], pause=1)
    intranet = create_monitor(emulator, 'intranet', url='https://ops:intranet-s3cr3t@intranet.example.org/')
    create_incident(emulator, shop['id'], '2026-01-10T08:00:00', acknowledged_at='2026-01-10T08:05:00',
                    ended_at='2026-01-10T09:00:00', cause='Pool exhausted', comment='Raised the pool')
    create_incident(emulator, shop['id'], '2026-01-12T08:00:00', cause='Timeouts')
    create_incident(emulator, intranet['id'], '2026-01-11T08:00:00', ended_at='2026-01-11T08:30:00')


def import_account(ansible, *arguments, api_key=PRIMARY_KEY):
    run = ansible.playbook('uptime.monitoring.import_account', '-e', 'uptime_import_file=export/account.yml', *arguments,
                           api_key=api_key)
    assert not any(secret in run.output for secret in SECRETS), run
    return run


def test_export_then_import_into_another_account_and_back(ansible, emulator, tmp_path_factory):
    seed_account(emulator)
    os.mkdir(os.path.join(ansible.workdir, 'export'))

    ansible.playbook('uptime.monitoring.export_account', '-e', 'uptime_export_file=export/account.yml')

    path = os.path.join(ansible.workdir, 'export', 'account.yml')
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    assert not any(secret in text for secret in SECRETS)
    export = yaml.safe_load(text)
    assert [monitor['name'] for monitor in export['uptime_monitors']] == ['admin', 'intranet', 'shop', 'staging']
    # Every option is there, the secrets masked, and the options that hold them named.
    assert export['uptime_monitors_masked'] == {'admin': ['request_auth_username', 'request_auth_password'],
                                                'intranet': ['url'], 'shop': ['request_headers', 'alerts']}
    assert export['uptime_monitors'][0]['request_auth_password'] == '********'
    assert export['uptime_incidents'] == [
        {'monitor': 'shop', 'started_at': '2026-01-10T08:00:00Z', 'acknowledged_at': '2026-01-10T08:05:00Z',
         'ended_at': '2026-01-10T09:00:00Z', 'cause': 'Pool exhausted', 'comment': 'Raised the pool'},
        {'monitor': 'intranet', 'started_at': '2026-01-11T08:00:00Z', 'ended_at': '2026-01-11T08:30:00Z'},
        {'monitor': 'shop', 'started_at': '2026-01-12T08:00:00Z', 'cause': 'Timeouts'},
    ]

    # Exported again from the same account: the same file, left as it is.
    assert_changed_nothing(ansible.playbook('uptime.monitoring.export_account', '-e', 'uptime_export_file=export/account.yml'))
    with open(path, encoding='utf-8') as handle:
        assert handle.read() == text

    # Into another account, only what the export masked is left out, each thing named: a masked item alone (its plain
    # neighbours arrive), a password with its user name, a monitor whose url is masked (with its incidents).
    imported = import_account(ansible, api_key=OTHER_KEY)
    assert APPLIED_WITHOUT % ('admin', 'request_auth_username, request_auth_password', 'them') in imported.output, imported
    assert APPLIED_WITHOUT % ('shop', "request_headers 'Authorization', alerts 'slack'", 'them') in imported.output, imported
    assert ("monitor 'intranet' was not created: its url is masked in the export, and nothing in the account stands for "
            "it (its incidents are left out with it)") in imported.output, imported
    assert '-e uptime_export_reveal_secrets=true' in imported.output, imported
    assert "monitor 'staging'" not in imported.output, imported
    copy = monitors_by_name(emulator, OTHER_KEY)
    assert sorted(copy) == ['admin', 'shop', 'staging']
    assert copy['admin']['request_auth_username'] is None
    assert (copy['shop']['alerts'], copy['shop']['request_headers']) == ([EMAIL, SMS], [X_ENV, LANGUAGE])
    incidents = records(emulator, '/api/v1/incidents', OTHER_KEY)
    assert sorted((incident['monitor']['name'], incident['started_at'][:19], incident['status']) for incident in incidents) == [
        ('shop', '2026-01-10T08:00:00', 'resolved'), ('shop', '2026-01-12T08:00:00', 'unresolved')]

    # The admin's credentials set from a vault, as the message says, then imported again: nothing changes (what
    # the vault set is kept), the admin is no longer named, and the shop, still without them, is.
    update_monitor(emulator, copy['admin']['id'], api_key=OTHER_KEY, request_auth_username='uptime',
                   request_auth_password='from-the-vault')
    emulator.clear_log()
    again = import_account(ansible, api_key=OTHER_KEY)
    assert_changed_nothing(again)
    assert emulator.writes() == []
    assert "monitor 'admin'" not in again.output, again
    # Unchanged by this run: named once, without the explanation of the run that applied it.
    assert "was applied without" not in again.output, again
    assert STILL_WITHOUT % "'shop' (request_headers 'Authorization', alerts 'slack')" in again.output, again

    # Restored into the account it came from after a drift, replaced: everything comes back, the secrets included,
    # and nothing is named.
    origin = monitors_by_name(emulator)
    update_monitor(emulator, origin['shop']['id'], interval=3600, request_headers=[AUTHORIZATION])
    update_monitor(emulator, origin['admin']['id'], interval=3600)
    replaced = import_account(ansible, '-e', 'uptime_import_state=replaced', '-e', 'uptime_import_incidents=false')
    assert 'stands for' not in replaced.output, replaced
    restored = monitors_by_name(emulator)
    assert int(restored['shop']['interval']) == 60
    assert restored['shop']['request_headers'] == [X_ENV, AUTHORIZATION, LANGUAGE]
    assert restored['shop']['alerts'] == [EMAIL, {'key': 'slack', 'value': SLACK_WEBHOOK}, SMS]
    assert restored['admin']['request_auth_password'] == 'hunter2-secret'

    # Overridden, after a drift that removed a secret and added a monitor: the account holds exactly the export, every
    # secret it still holds kept; the one removed cannot come back from a masked export, and is named.
    create_monitor(emulator, 'legacy')
    update_monitor(emulator, origin['shop']['id'], alerts=[SMS])
    overridden = import_account(ansible, '-e', 'uptime_import_state=overridden', '-e', 'uptime_import_incidents=false')
    assert APPLIED_WITHOUT % ('shop', "alerts 'slack'", 'it') in overridden.output, overridden
    assert "monitor 'admin'" not in overridden.output, overridden
    after = monitors_by_name(emulator)
    assert sorted(after) == ['admin', 'intranet', 'shop', 'staging']
    assert (after['shop']['alerts'], after['shop']['request_headers']) == ([EMAIL, SMS], [X_ENV, AUTHORIZATION, LANGUAGE])
    assert (after['admin']['request_auth_username'], after['admin']['request_auth_password']) == ('uptime', 'hunter2-secret')
    assert after['intranet']['url'] == 'https://ops:intranet-s3cr3t@intranet.example.org/'

    # With its secrets revealed (and without incidents, to an absolute path), the file holds them and no run shows
    # them; what a copy of it keeps is the round-trip law's.
    full = os.path.join(str(tmp_path_factory.mktemp('elsewhere')), 'full.yml')
    run = ansible.playbook('uptime.monitoring.export_account', '-e', 'uptime_export_file=%s' % full,
                           '-e', 'uptime_export_reveal_secrets=true', '-e', 'uptime_export_incidents=false')
    with open(full, encoding='utf-8') as handle:
        revealed = yaml.safe_load(handle)
    assert 'intranet-s3cr3t' in str(revealed) and revealed['uptime_incidents'] == []
    assert not any(secret in run.output for secret in SECRETS)


def test_export_and_import_read_a_relative_name_in_the_working_directory_not_pwd(ansible, emulator, tmp_path_factory):
    """As under a command task's chdir, cron or a launcher that sets the working directory alone: PWD names another
    directory than the one ansible-playbook works in."""
    create_monitor(emulator, 'shop', url='https://shop.example.com/health', interval=60)
    elsewhere = str(tmp_path_factory.mktemp('pwd-elsewhere'))
    ansible.playbook('uptime.monitoring.export_account', '-e', 'uptime_export_file=backup.yml', env={'PWD': elsewhere})
    assert os.listdir(elsewhere) == []
    with open(os.path.join(ansible.workdir, 'backup.yml'), encoding='utf-8') as handle:
        assert [monitor['name'] for monitor in yaml.safe_load(handle)['uptime_monitors']] == ['shop']
    ansible.playbook('uptime.monitoring.import_account', '-e', 'uptime_import_file=backup.yml', api_key=OTHER_KEY,
                     env={'PWD': elsewhere})
    assert sorted(monitors_by_name(emulator, OTHER_KEY)) == ['shop']


HEALTH_INVENTORY = '''\
---
plugin: uptime.monitoring.monitors
'''
# Offline monitors of the emulator's page on 127.0.0.1 (HTTP 200, '{"emulator": "phpUptime"...'): what is said, and their incident.
HEALTH_CHECKS = [
    ({}, 'answers: HTTP 200', 'resolved'),
    ({'alert_condition': 'url_no_text', 'alert_text_lookup': 'phpUptime'}, "answers: HTTP 200, the text 'phpUptime' found", 'resolved'),
    ({'alert_condition': 'url_text', 'alert_text_lookup': 'phpUptime'}, "still fails: HTTP 200, the text 'phpUptime' found", 'acknowledged'),
    ({'alert_condition': 'url_no_text', 'alert_text_lookup': 'Welcome'}, "still fails: HTTP 200, the text 'Welcome' not found", 'acknowledged'),
    ({'request_method': 'POST'}, 'still fails: HTTP 404', 'acknowledged'),
    ({'request_auth_username': 'u', 'request_auth_password': 'hunter2-secret'},
     'cannot reproduce the check: it needs Basic authentication, which the inventory leaves out', 'unresolved'),
    ({'request_headers': [{'key': 'X-Env', 'value': 'prod'}]},
     'cannot reproduce the check: it needs its request headers, which the inventory leaves out', 'unresolved'),
]


def test_health_check_with_nothing_offline(ansible, emulator):
    create_monitor(emulator, 'web', url=emulator.url + '/_emulator/')
    inventory = ansible.write('production.uptime.yml', HEALTH_INVENTORY)
    run = ansible.playbook('uptime.monitoring.health_check', inventory=inventory)
    assert run.recap == {}
    assert 'skipping: no hosts matched' in run.output


def test_health_check_resolves_only_the_checks_it_reproduces(ansible, emulator):
    url = emulator.url + '/_emulator/'
    incidents = [create_incident(emulator, create_monitor(emulator, 'm%d' % number, url=url, **fields)['id'], stamp(600))['id']
                 for number, (fields, said, status) in enumerate(HEALTH_CHECKS)]
    inventory = ansible.write('production.uptime.yml', HEALTH_INVENTORY)
    arguments = ('-e', 'uptime_health_acknowledge=true', '-e', 'uptime_health_resolve=true')
    emulator.clear_log()
    preview = ansible.playbook('uptime.monitoring.health_check', '--check', *arguments, inventory=inventory)
    assert emulator.writes() == []
    run = ansible.playbook('uptime.monitoring.health_check', *arguments, inventory=inventory)
    for number, ((fields, said, status), incident) in enumerate(zip(HEALTH_CHECKS, incidents)):
        note = 'incident %d %%s %s' % (incident, status) if status != 'unresolved' else 'incident %d left as it is' % incident
        previewed = (said, note.replace('%s', 'would be'))
        if 'request_method' in fields:  # a preview sends only what reads
            previewed = ('would be requested by the real run (its check sends a POST, which --check does not send)',
                         'incident %d left as it is' % incident)
        assert 'm%d (%s) %s; %s.' % ((number, url) + previewed) in preview.output, preview
        assert 'm%d (%s) %s; %s.' % (number, url, said, note.replace('%s', 'is')) in run.output, run
        assert incident_record(emulator, {'id': incident})['status'] == status
