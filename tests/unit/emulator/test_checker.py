# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's stand-in for the service's checker (POST /_emulator/check): the monitor's started_at and the
incidents an online/offline flip opens and ends."""

from __future__ import annotations

import datetime
import time

import pytest

MONITOR = {'name': 'web', 'url': 'https://web.example.com', 'interval': '60',
           'request_method': 'GET', 'alert_condition': 'url_unavailable'}


def create(emulator, **extra):
    answer = emulator.api('POST', '/api/v1/monitors', data=dict(MONITOR, **extra))
    assert answer.status == 201, answer.text
    return answer.json['data']['id']


def show(emulator, monitor_id):
    return emulator.api('GET', '/api/v1/monitors/%d' % monitor_id).json['data']


def incidents(emulator):
    answer = emulator.api('GET', '/api/v1/incidents')
    assert answer.status == 200, answer.text
    return answer.json['data']


def test_a_check_that_flips_the_status_moves_started_at_and_token_but_not_updated_at(emulator):
    monitor_id = create(emulator)
    before = show(emulator, monitor_id)
    time.sleep(1.05)  # timestamps have a resolution of one second
    emulator.check(monitor_id, 'offline')
    after = show(emulator, monitor_id)
    assert after['status'] == 'offline'
    assert after['checked_at'] == after['started_at'] > before['started_at']
    assert after['token'] != before['token']
    assert after['updated_at'] == before['updated_at']

    time.sleep(1.05)
    emulator.check(monitor_id, 'offline')  # the same status again: only checked_at moves, no second incident
    again = show(emulator, monitor_id)
    assert (again['started_at'], again['token'], again['status']) == (after['started_at'], after['token'], 'offline')
    assert again['checked_at'] > after['checked_at']
    assert len(incidents(emulator)) == 1


def test_going_offline_opens_an_incident_that_starts_when_the_monitor_flipped(emulator):
    monitor_id = create(emulator)
    emulator.check(monitor_id, 'online')
    time.sleep(1.05)  # a flip in another second than the create, so the equality below means something
    emulator.check(monitor_id, 'offline', cause='HTTP 503')
    monitor = show(emulator, monitor_id)
    [incident] = incidents(emulator)
    assert incident['started_at'] == monitor['started_at']
    assert (incident['status'], incident['cause'], incident['ended_at']) == ('unresolved', 'HTTP 503', None)
    assert incident['monitor']['id'] == monitor_id and incident['monitor']['status'] == 'offline'
    assert incident['created_at'] == incident['updated_at'] == incident['started_at']


def test_coming_online_ends_the_ongoing_incident_when_the_monitor_flipped(emulator):
    monitor_id = create(emulator)
    emulator.check(monitor_id, 'offline')  # from pending
    [opened] = incidents(emulator)
    assert opened['cause'] == 'HTTP 500'  # what the checker records when the check gave no cause
    time.sleep(1.05)
    emulator.check(monitor_id, 'online')
    monitor = show(emulator, monitor_id)
    [ended] = incidents(emulator)
    assert ended['id'] == opened['id']
    assert ended['ended_at'] == monitor['started_at'] > opened['started_at']
    assert ended['status'] == 'resolved' and ended['duration'] >= 1
    assert ended['monitor']['status'] == 'online'
    assert ended['updated_at'] == ended['ended_at'] > opened['updated_at']  # the checker wrote the row


def test_a_first_check_online_opens_nothing(emulator):
    monitor_id = create(emulator)
    for dummy in range(2):
        assert emulator.check(monitor_id, 'online')['status'] == 'online'
    assert incidents(emulator) == []


def test_a_flap_within_a_second_leaves_one_incident_resolved_and_one_ongoing(emulator):
    monitor_id = create(emulator)
    for status in ('offline', 'online', 'offline'):
        emulator.check(monitor_id, status)
    assert sorted(incident['status'] for incident in incidents(emulator)) == ['resolved', 'unresolved']


def test_resuming_a_monitor_the_checker_took_offline_keeps_it_offline(emulator):
    monitor_id = create(emulator)
    emulator.check(monitor_id, 'offline')
    for pause in (1, 0):
        assert emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': pause}).status == 200
    assert show(emulator, monitor_id)['status'] == 'offline'  # its incident is still ongoing


def test_pause_resume_and_incidents_move_started_at_too(emulator):
    monitor_id = create(emulator)
    starts = [show(emulator, monitor_id)['started_at']]
    for form in ({'pause': 1}, {'pause': 0}):
        time.sleep(1.05)
        assert emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data=form).status == 200
        starts.append(show(emulator, monitor_id)['started_at'])
    assert starts == sorted(set(starts))


def window_around_now():
    now = datetime.datetime.now(datetime.timezone.utc)
    return {'maintenance_start_at': (now - datetime.timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%S'),
            'maintenance_end_at': (now + datetime.timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%S')}


@pytest.mark.parametrize('status, refusal', [('paused', 'a paused monitor is not checked'),
                                             ('maintenance', 'a monitor in maintenance is not checked'),
                                             ('down', 'online or offline')])
def test_the_checker_refuses_what_it_never_writes(emulator, status, refusal):
    if status == 'maintenance':
        monitor_id = create(emulator, **window_around_now())
    else:
        monitor_id = create(emulator)
        emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 1})
    before = show(emulator, monitor_id)
    with pytest.raises(RuntimeError) as caught:
        emulator.check(monitor_id, 'offline' if status != 'down' else status)
    assert refusal in str(caught.value)
    assert show(emulator, monitor_id) == before
    assert incidents(emulator) == []


def test_a_cause_that_is_no_short_string_is_refused(emulator):
    monitor_id = create(emulator)
    for cause in (500, 'x' * 256):
        with pytest.raises(RuntimeError, match='cause must be a string'):
            emulator.check(monitor_id, 'offline', cause=cause)
    assert show(emulator, monitor_id)['status'] == 'pending'
