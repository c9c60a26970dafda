# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""POST /_emulator/seed: many monitors and incidents at once, consistent with each other, and lists that stay fast."""

from __future__ import annotations

import datetime
import json
import time
import urllib.error
import urllib.request

import pytest

from emulator.control import OTHER_KEY, PRIMARY_KEY


def every(emulator, path, **params):
    """Every record of a list, following ``links.next``."""
    records, url = [], path
    answer = emulator.api('GET', url, params=dict(params, per_page=100))
    while True:
        assert answer.status == 200, answer.text
        records += answer.json['data']
        url = answer.json['links']['next']
        if url is None:
            return records
        answer = emulator.api('GET', url)


def total(emulator, path, **params):
    answer = emulator.api('GET', path, params=params)
    assert answer.status == 200, answer.text
    return answer.json['meta']['total']


def timed(action):
    started = time.perf_counter()
    result = action()
    return result, time.perf_counter() - started


def post_seed(emulator, payload):
    """The raw answer of the control route: ``(status, body)``."""
    request = urllib.request.Request(emulator.url + '/_emulator/seed', data=json.dumps(payload).encode('utf-8'), method='POST',
                                     headers={'Content-Type': 'application/json'})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read().decode('utf-8'))
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read().decode('utf-8'))


def test_ten_thousand_monitors_are_seeded_at_once_and_listed_like_any_other(emulator):
    result, seconds = timed(lambda: emulator.seed(10000, offline=25, resolved=40))
    if seconds >= 3:  # once more on an empty account: a busy machine may stall one run, not the cost of seeding
        emulator.reset()
        result, again = timed(lambda: emulator.seed(10000, offline=25, resolved=40))
        seconds = min(seconds, again)
    assert seconds < 3, 'seeding 10,000 monitors took %.2f s' % seconds
    assert result == {'monitors': 10000, 'offline': 25, 'resolved': 40, 'first_id': 1, 'last_id': 10000}

    first = emulator.api('GET', '/api/v1/monitors', params={'per_page': 100}).json
    assert (first['meta']['total'], first['meta']['last_page']) == (10000, 100)
    assert [monitor['name'] for monitor in first['data'][:2]] == ['seed-10000', 'seed-09999']  # newest first
    assert total(emulator, '/api/v1/incidents', status='unresolved') == 25
    assert total(emulator, '/api/v1/incidents', status='resolved') == 40
    assert total(emulator, '/api/v1/incidents') == 65


def test_a_page_of_either_list_stays_fast_with_ten_thousand_monitors(emulator):
    emulator.seed(10000, offline=100, resolved=1000)
    for path, page in (('/api/v1/monitors', 1), ('/api/v1/monitors', 57), ('/api/v1/monitors', 100), ('/api/v1/incidents', 1),
                       ('/api/v1/incidents', 11)):
        # The best of three reads: a busy machine may stall one read, not the cost of the page itself.
        times = []
        for dummy in range(3):
            answer, seconds = timed(lambda path=path, page=page: emulator.api('GET', path, params={'per_page': 100, 'page': page}))
            assert answer.status == 200 and len(answer.json['data']) == 100
            times.append(seconds)
            if seconds < 0.5:
                break
        assert min(times) < 0.5, '%s page %d took %s s' % (path, page, ', '.join('%.2f' % t for t in times))


def test_seeded_monitors_and_incidents_hold_together(emulator):
    before = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S')
    result = emulator.seed(12, offline=3, resolved=4, prefix='edge')
    now = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.000000Z')
    assert (result['first_id'], result['last_id']) == (1, 12)
    monitors = {monitor['id']: monitor for monitor in every(emulator, '/api/v1/monitors')}
    incidents = {incident['monitor']['id']: incident for incident in every(emulator, '/api/v1/incidents')}
    assert len(incidents) == 7  # at most one incident per monitor: none can overlap another of its monitor

    for number, monitor in enumerate(sorted(monitors.values(), key=lambda item: item['id']), start=1):
        assert monitor['name'] == 'edge-%05d' % number
        assert monitor['url'] == 'https://edge-%05d.example.com' % number
        assert (monitor['interval'], monitor['request_method'], monitor['alert_condition']) == (60, 'GET', 'url_unavailable')
        assert monitor['created_at'] == monitor['updated_at'] < before <= monitor['checked_at'] <= now
        incident = incidents.get(monitor['id'])
        if number <= 3:
            assert monitor['status'] == 'offline'
            assert incident['status'] == 'unresolved' and incident['started_at'] == monitor['started_at']
        elif number <= 7:
            assert monitor['status'] == 'online'
            assert monitor['created_at'] < incident['started_at'] < incident['ended_at'] <= now
            assert incident['status'] == 'resolved' and incident['ended_at'] == monitor['started_at']
        else:
            assert incident is None
            assert monitor['status'] == 'online' and monitor['started_at'] == monitor['created_at']
    assert len({monitor['token'] for monitor in monitors.values()}) == 12


def test_a_seeded_monitor_is_an_ordinary_one(emulator):
    emulator.seed(3, offline=1)
    emulator.check(1, 'online')
    assert total(emulator, '/api/v1/incidents', status='resolved') == 1
    taken = {'name': 'seed-00002', 'url': 'https://x.example.com', 'interval': 60, 'request_method': 'GET',
             'alert_condition': 'url_unavailable'}
    answer = emulator.api('POST', '/api/v1/monitors', data=taken)
    assert answer.status == 422 and 'name' in answer.json['message']
    assert emulator.api('DELETE', '/api/v1/monitors/1').status == 200
    assert total(emulator, '/api/v1/incidents') == 0


def test_seeding_goes_to_the_account_of_the_key_and_a_second_prefix_adds_to_it(emulator):
    emulator.seed(5, api_key=OTHER_KEY)
    assert emulator.seed(2, prefix='more', api_key=OTHER_KEY) == {'monitors': 2, 'offline': 0, 'resolved': 0, 'first_id': 6, 'last_id': 7}
    assert total(emulator, '/api/v1/monitors') == 0  # the first key's account
    assert emulator.api('GET', '/api/v1/monitors', api_key=OTHER_KEY).json['meta']['total'] == 7
    assert emulator.seed(0) == {'monitors': 0, 'offline': 0, 'resolved': 0, 'first_id': None, 'last_id': None}


@pytest.mark.parametrize('payload, field', [
    ({}, 'monitors'),
    ({'monitors': -1}, 'monitors'),
    ({'monitors': '10'}, 'monitors'),
    ({'monitors': True}, 'monitors'),
    ({'monitors': 10, 'offline': 1.5}, 'offline'),
    ({'monitors': 10, 'resolved': -2}, 'resolved'),
    ({'monitors': 10, 'offline': 11}, 'offline'),
    ({'monitors': 10, 'offline': 6, 'resolved': 5}, 'resolved'),
    ({'monitors': 10, 'prefix': ''}, 'prefix'),
    ({'monitors': 10, 'prefix': 'no spaces'}, 'prefix'),
    ({'monitors': 10, 'prefix': 'seed'}, 'prefix'),  # the names of the monitors seeded first
])
def test_bad_input_is_a_400_that_names_the_field_and_seeds_nothing(emulator, payload, field):
    emulator.seed(1)
    status, body = post_seed(emulator, dict(payload, api_key=PRIMARY_KEY))
    assert status == 400 and body['error'].startswith(field + ' '), body
    assert total(emulator, '/api/v1/monitors') == 1


def test_an_unknown_key_is_a_400(emulator):
    assert post_seed(emulator, {'api_key': 'nobody', 'monitors': 1}) == (400, {'error': 'unknown api_key'})


# -- POST /_emulator/records: given records, made by the API's rules ---------------------------------------------

def test_records_are_made_as_the_api_makes_them_and_not_logged(emulator):
    emulator.timezone('America/New_York')
    made = emulator.records(
        monitors=[{'name': 'alpha', 'url': 'https://alpha.example.com', 'interval': 300, 'request_method': 'GET',
                   'alert_condition': 'url_unavailable', 'cache_buster': True, 'request_auth_username': 'robot',
                   'request_auth_password': 'pw', 'alerts': [{'key': 'email', 'value': 'ops@example.com'}]},
                  {'name': 'beta', 'url': 'https://beta.example.com', 'interval': 60, 'request_method': 'GET',
                   'alert_condition': 'url_unavailable', 'alert_text_lookup': ''}],
        incidents=[{'monitor': 'alpha', 'started_at': '2026-01-15T09:00:00', 'ended_at': '2026-01-15T10:00:00',
                    'acknowledged_at': '2026-01-15T09:05:00', 'cause': 'done'},
                   {'monitor_id': 2, 'started_at': '2026-01-16T09:00:00', 'cause': 'ongoing'}])
    assert made == {'monitors': [1, 2], 'incidents': [1, 2]}
    assert emulator.log() == []
    alpha = emulator.api('GET', '/api/v1/monitors/1').json['data']
    assert alpha['cache_buster'] == 1 and alpha['request_auth_password'] == 'pw' and alpha['status'] == 'pending'
    assert alpha['alerts'] == [{'key': 'email', 'value': 'ops@example.com'}]
    assert emulator.api('GET', '/api/v1/monitors/2').json['data']['status'] == 'offline'
    resolved = emulator.api('GET', '/api/v1/incidents/1').json['data']
    assert resolved['started_at'].startswith('2026-01-15T14:00:00') and resolved['acknowledged_at'].startswith('2026-01-15T14:05:00')
    assert resolved['monitor']['name'] == 'alpha' and resolved['cause'] == 'done'


@pytest.mark.parametrize('payload, error, kept', [
    ({'monitors': [{'name': 'x', 'url': 'https://x.example.com', 'interval': 61, 'request_method': 'GET',
                    'alert_condition': 'url_unavailable'}]}, 'monitors[0]: {"interval": ', 0),
    ({'incidents': [{'monitor': 'nope', 'started_at': '2026-01-15T09:00:00'}]}, "incidents[0]: no monitor is named 'nope'", 0),
    ({'incidents': [{'monitor_id': 1, 'started_at': '2026-01-15T09:00:00'},
                    {'monitor_id': 1, 'started_at': '2026-01-16T09:00:00'}]}, 'incidents[1]: {"monitor_id": ', 1),
    ({'monitors': {}}, 'monitors and incidents must be lists', 0),
])
def test_a_refused_record_is_a_400_naming_it_and_the_ones_before_stay(emulator, payload, error, kept):
    emulator.seed(1)
    request = urllib.request.Request(emulator.url + '/_emulator/records', method='POST',
                                     data=json.dumps(dict(payload, api_key=PRIMARY_KEY)).encode('utf-8'))
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10)
    with caught.value:
        assert caught.value.code == 400
        assert json.loads(caught.value.read().decode('utf-8'))['error'].startswith(error)
    assert total(emulator, '/api/v1/monitors') == 1 and total(emulator, '/api/v1/incidents') == kept
