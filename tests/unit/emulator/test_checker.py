# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's stand-in for the service's checker (POST /_emulator/check) and the monitor's started_at."""

from __future__ import annotations

import time

import pytest

MONITOR = {'name': 'web', 'url': 'https://web.example.com', 'interval': '60',
           'request_method': 'GET', 'alert_condition': 'url_unavailable'}


def create(emulator):
    answer = emulator.api('POST', '/api/v1/monitors', data=MONITOR)
    assert answer.status == 201, answer.text
    return answer.json['data']['id']


def show(emulator, monitor_id):
    return emulator.api('GET', '/api/v1/monitors/%d' % monitor_id).json['data']


def test_a_check_that_flips_the_status_moves_started_at_and_token_but_not_updated_at(emulator):
    monitor_id = create(emulator)
    before = show(emulator, monitor_id)
    time.sleep(1.05)  # timestamps have a resolution of one second
    emulator.check(monitor_id, 'offline')
    after = show(emulator, monitor_id)
    assert after['status'] == 'offline'
    assert after['checked_at'] is not None and after['started_at'] > before['started_at']
    assert after['token'] != before['token']
    assert after['updated_at'] == before['updated_at']

    time.sleep(1.05)
    emulator.check(monitor_id, 'offline')  # the same status again: only checked_at moves
    again = show(emulator, monitor_id)
    assert (again['started_at'], again['token'], again['status']) == (after['started_at'], after['token'], 'offline')
    assert again['checked_at'] > after['checked_at']


def test_pause_resume_and_incidents_move_started_at_too(emulator):
    monitor_id = create(emulator)
    starts = [show(emulator, monitor_id)['started_at']]
    for form in ({'pause': 1}, {'pause': 0}):
        time.sleep(1.05)
        assert emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data=form).status == 200
        starts.append(show(emulator, monitor_id)['started_at'])
    assert starts == sorted(set(starts))


@pytest.mark.parametrize('status', ['paused', 'down'])
def test_the_checker_refuses_what_it_never_writes(emulator, status):
    monitor_id = create(emulator)
    emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 1})
    with pytest.raises(RuntimeError) as caught:
        emulator.check(monitor_id, 'online' if status == 'paused' else status)
    assert ('not checked' if status == 'paused' else 'online or offline') in str(caught.value)
