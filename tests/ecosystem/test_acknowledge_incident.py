"""The playbook acknowledge_incident (run by the rulebook uptime.monitoring.acknowledge_offline with the event as
ansible_eda.event), run as a collection playbook against the emulator."""

from __future__ import annotations

import json

from ecosystem_support import APPENDED, assert_changed_nothing, create_incident, create_monitor


def event_vars(monitor_id, rule='Acknowledge the incident of a monitor that went offline'):
    """The extra vars run_playbook hands a playbook: the event and the rule's name under ansible_eda."""
    event = {'uptime': {'type': 'monitor_status_changed', 'status': 'offline', 'previous_status': 'online',
                        'monitor_id': monitor_id, 'monitor_name': 'shop'}, 'meta': {'uuid': 'x'}}
    return json.dumps({'ansible_eda': {'event': event, 'rule': rule, 'ruleset': 'uptime'}})


def test_the_event_names_the_monitor_whose_incident_is_acknowledged(ansible, emulator):
    """The incident of the event's monitor is acknowledged, and the note appended: an operator's comment survives
    (the note alone, on an incident without a comment: the docs/eda.md example of test_docs_examples.py). A second
    run changes and appends nothing."""
    shop = create_monitor(emulator, 'shop')
    other = create_monitor(emulator, 'other')
    note = 'Known: the payment provider is down, see status.example.com'
    ongoing = create_incident(emulator, shop['id'], '2026-01-11T08:00:00', comment=note)
    untouched = create_incident(emulator, other['id'], '2026-01-11T08:00:00')

    run = ansible.playbook('uptime.monitoring.acknowledge_incident', '-e', event_vars(shop['id']))
    assert run.changed() == 1
    assert 'Incident %d of monitor %d is acknowledged.' % (ongoing['id'], shop['id']) in run.output
    incident = emulator.api('GET', '/api/v1/incidents/%d' % ongoing['id']).json['data']
    assert incident['status'] == 'acknowledged'
    assert APPENDED.fullmatch(incident['comment']).groups() == (
        note, 'Acknowledged by Event-Driven Ansible: Acknowledge the incident of a monitor that went offline'), incident['comment']
    assert emulator.api('GET', '/api/v1/incidents/%d' % untouched['id']).json['data']['status'] == 'unresolved'

    emulator.clear_log()
    again = ansible.playbook('uptime.monitoring.acknowledge_incident', '-e', event_vars(shop['id']))
    assert_changed_nothing(again)
    assert emulator.writes() == []
    assert emulator.api('GET', '/api/v1/incidents/%d' % ongoing['id']).json['data']['comment'] == incident['comment']


def test_a_monitor_without_an_ongoing_incident_is_left_alone(ansible, emulator):
    quiet = create_monitor(emulator, 'quiet')
    emulator.clear_log()
    run = ansible.playbook('uptime.monitoring.acknowledge_incident', '-e', 'uptime_monitor_id=%d' % quiet['id'])
    assert run.changed() == 0
    assert 'Monitor %d has no unacknowledged incident: nothing to acknowledge.' % quiet['id'] in run.output
    assert emulator.writes() == []


def test_without_an_event_or_a_monitor_id_it_says_what_is_missing(ansible, emulator):
    run = ansible.playbook('uptime.monitoring.acknowledge_incident', '-e', 'uptime_monitor_id=shop', check=False)
    assert run.rc != 0
    assert 'set uptime_monitor_id to the id of a monitor (got shop)' in run.output
    assert emulator.log() == []
