"""Behaviour of the phpUptime emulator itself, driven over HTTP with ``Emulator.api``."""

from __future__ import annotations

import datetime
import http.client
import json
import os
import signal
import socket
import time
import urllib.error

import pytest

from emulator import control
from emulator.control import NOPLAN_KEY, OTHER_KEY, PRIMARY_KEY, Emulator, encode_form
from emulator.server import parse_args
from emulator.store import decode_form

CONNECTION_ERRORS = (urllib.error.URLError, ConnectionError, http.client.HTTPException, socket.timeout)


# The examples of the framework's url rule (service-facts "Monitors"), shared with the collection's own check.
GOOD_URLS = ['http://localhost/', 'https://a.b./', 'http://[fe80::1]:8080/x', 'https://u:p@h.example.org:99/x?y=1#z']
BAD_URLS = ['https://.bad.example.org', 'https://a..b', 'http://[fe80::1', 'https://[2001:db8::1/hook', 'http://h:/',
            'http://[::1]x', 'http://', 'ftp://example.org/']


def stamp(seconds_ago=0, now=None):
    """A ``Y-m-dTH:i:s`` UTC timestamp ``seconds_ago`` before ``now`` (default: the clock; negative: in the future).

    Pass one ``now`` to stamps whose distance a test asserts: two reads of the clock can straddle a second.
    """
    now = now or datetime.datetime.now(datetime.timezone.utc)
    moment = now - datetime.timedelta(seconds=seconds_ago)
    return moment.strftime('%Y-%m-%dT%H:%M:%S')


def monitor_form(name='web', **extra):
    form = {'name': name, 'url': 'https://example.com/health', 'interval': 60, 'request_method': 'GET',
            'alert_condition': 'url_unavailable'}
    form.update(extra)
    return form


def create_monitor(emulator, name='web', api_key=None, **extra):
    response = emulator.api('POST', '/api/v1/monitors', api_key=api_key, data=monitor_form(name, **extra))
    assert response.status == 201, response.text
    return response.json['data']['id']


def create_incident(emulator, monitor_id, started_ago=3600, api_key=None, **extra):
    form = {'monitor_id': monitor_id, 'started_at': stamp(started_ago)}
    form.update(extra)
    response = emulator.api('POST', '/api/v1/incidents', api_key=api_key, data=form)
    assert response.status == 201, response.text
    return response.json['data']['id']


def show(emulator, kind, record_id, api_key=None):
    response = emulator.api('GET', '/api/v1/%s/%d' % (kind, record_id), api_key=api_key)
    assert response.status == 200, response.text
    return response.json['data']


# Form decoding -------------------------------------------------------------------------------------


def test_decode_form_like_php():
    body = 'name=a&alerts[0][key]=email&alerts[0][value]=a%40b.c&alerts[2][key]=sms&pause=&headers[]=x&headers[]=y'
    assert decode_form(body) == {
        'name': 'a',
        'alerts': {'0': {'key': 'email', 'value': 'a@b.c'}, '2': {'key': 'sms'}},
        'pause': None,
        'headers': {'0': 'x', '1': 'y'},
    }
    assert decode_form('alerts=') == {'alerts': None}


def test_encode_form_indexes_lists_and_clears_empty_ones():
    body = encode_form({'alerts': [{'key': 'email', 'value': 'a@b.c'}], 'request_headers': [], 'pause': False, 'x': None})
    assert body == b'alerts%5B0%5D%5Bkey%5D=email&alerts%5B0%5D%5Bvalue%5D=a%40b.c&request_headers=&pause=0&x='


# Envelopes and records -----------------------------------------------------------------------------


def test_status_endpoint(emulator):
    response = emulator.api('GET', '/api/v1/status')
    assert response.status == 200
    assert response.json == {'message': 'Online.', 'status': 200}


def test_create_echoes_form_strings_and_show_returns_whole_record(emulator):
    form = monitor_form(alerts=[{'key': 'email', 'value': 'ops@example.com'}], request_headers=[{'key': 'X-A', 'value': '1'}],
                        request_auth_username='u', request_auth_password='s3cret', cache_buster=1, ssl_alert_days=14,
                        maintenance_start_at='2030-01-01T10:00:00', maintenance_end_at='2030-01-01T11:00:00', pause=1)
    response = emulator.api('POST', '/api/v1/monitors', data=form)
    assert response.status == 201
    assert response.json['status'] == 201
    echo = response.json['data']
    assert echo['interval'] == '60' and echo['cache_buster'] == '1' and isinstance(echo['id'], int)
    assert 'status' not in echo and 'pause' not in echo

    record = show(emulator, 'monitors', echo['id'])
    assert record == {
        'id': echo['id'], 'name': 'web', 'url': 'https://example.com/health', 'interval': 60,
        'alert_condition': 'url_unavailable', 'alert_text_lookup': None, 'request_method': 'GET',
        'request_headers': [{'key': 'X-A', 'value': '1'}], 'request_auth_username': 'u', 'request_auth_password': 's3cret',
        'cache_buster': 1, 'ssl_alert_days': 14, 'domain_alert_days': 0,
        'maintenance_start_at': '2030-01-01T10:00:00.000000Z', 'maintenance_end_at': '2030-01-01T11:00:00.000000Z',
        'alerts': [{'key': 'email', 'value': 'ops@example.com'}], 'status': 'pending',
        'created_at': record['created_at'], 'updated_at': record['updated_at'],
        'started_at': record['created_at'], 'checked_at': None, 'token': record['token'],
    }
    assert record['created_at'].endswith('.000000Z')
    assert len(record['token']) == 32


def test_create_answers_200_with_quirk(emulator):
    emulator.quirks(create_200=True)
    response = emulator.api('POST', '/api/v1/monitors', data=monitor_form())
    assert response.status == 200 and response.json['status'] == 200


def test_delete_envelope_and_404_afterwards(emulator):
    monitor_id = create_monitor(emulator)
    response = emulator.api('DELETE', '/api/v1/monitors/%d' % monitor_id)
    assert response.status == 200
    assert response.json == {'id': monitor_id, 'object': 'monitor', 'deleted': True, 'status': 200}
    response = emulator.api('GET', '/api/v1/monitors/%d' % monitor_id)
    assert response.status == 404
    assert response.json == {'message': 'Resource not found.', 'status': 404}


# Lists -----------------------------------------------------------------------------------------------


def test_paging_follows_links_over_three_pages(emulator):
    for index in range(23):
        create_monitor(emulator, 'site-%02d' % index)
    create_monitor(emulator, 'other')
    response = emulator.api('GET', '/api/v1/monitors', params={'search': 'site', 'sort_by': 'name', 'sort': 'asc', 'per_page': 10})
    body = response.json
    assert set(body) == {'data', 'links', 'meta', 'status'}
    assert body['meta'] == {'current_page': 1, 'from': 1, 'last_page': 3, 'path': emulator.url + '/api/v1/monitors',
                            'per_page': 10, 'to': 10, 'total': 23}
    assert body['links']['prev'] is None
    assert body['links']['next'] == emulator.url + '/api/v1/monitors?search=site&sort_by=name&sort=asc&per_page=10&page=2'
    assert body['links']['last'].endswith('page=3')
    names = [record['name'] for record in body['data']]
    pages = 1
    while body['links']['next']:
        body = emulator.api('GET', body['links']['next']).json
        names += [record['name'] for record in body['data']]
        pages += 1
    assert pages == 3
    assert body['meta']['current_page'] == 3 and body['meta']['from'] == 21 and body['meta']['to'] == 23
    assert names == ['site-%02d' % index for index in range(23)]


@pytest.mark.parametrize('per_page', ['7', '0', '1000', 'abc', '10.0'])
def test_per_page_outside_choices_falls_back_to_default(emulator, per_page):
    create_monitor(emulator)
    response = emulator.api('GET', '/api/v1/monitors', params={'per_page': per_page})
    assert response.json['meta']['per_page'] == 100


def test_page_past_the_end_is_empty(emulator):
    create_monitor(emulator)
    body = emulator.api('GET', '/api/v1/monitors', params={'page': 5}).json
    assert body['data'] == [] and body['meta']['from'] is None and body['links']['next'] is None


def test_monitor_list_search_sort_and_status_page(emulator):
    first = create_monitor(emulator, 'Alpha', url='https://alpha.example.com')
    second = create_monitor(emulator, 'beta', url='https://beta.example.com/ALPHA')
    create_monitor(emulator, 'alpha-other', api_key=OTHER_KEY)

    def ids(**params):
        return [record['id'] for record in emulator.api('GET', '/api/v1/monitors', params=params).json['data']]

    assert ids() == [second, first]
    assert ids(sort='asc') == [first, second]
    assert ids(search='ALPHA') == [first]
    assert ids(search='alpha', search_by='url') == [second, first]
    emulator.status_page(PRIMARY_KEY, 7, [second])
    assert ids(status_page_id=7) == [second]
    assert ids(status_page_id=8) == []


def test_incident_list_filters_and_ongoing_first(emulator):
    web = create_monitor(emulator, 'web')
    api = create_monitor(emulator, 'api')
    old = create_incident(emulator, web, started_ago=7200, ended_at=stamp(7000), cause='disk full')
    newer = create_incident(emulator, web, started_ago=3600, ended_at=stamp(3000), comment='fixed')
    ongoing = create_incident(emulator, api, started_ago=600, acknowledged_at=stamp(500))

    def ids(**params):
        response = emulator.api('GET', '/api/v1/incidents', params=params)
        assert response.status == 200, response.text
        return [record['id'] for record in response.json['data']]

    assert ids() == [ongoing, newer, old]
    assert ids(sort='asc') == [old, newer, ongoing]
    assert ids(sort_by='started_at', sort='asc') == [old, newer, ongoing]
    assert ids(monitor_id=web) == [newer, old]
    assert ids(status='acknowledged') == [ongoing]
    assert ids(status='resolved') == [newer, old]
    assert ids(status='unresolved') == []
    assert ids(search='we') == [newer, old]
    assert ids(search='disk', search_by='cause') == [old]
    assert ids(search='fix', search_by='comment') == [newer]


# Errors ----------------------------------------------------------------------------------------------


def test_validation_errors_are_keyed_by_field(emulator):
    create_monitor(emulator, 'taken')
    form = {
        'name': 'taken', 'url': 'ftp://example.com', 'interval': 61, 'alert_condition': 'url_text',
        'request_auth_username': 'u', 'maintenance_start_at': '2030-01-01 10:00:00', 'ssl_alert_days': 90, 'cache_buster': 'true',
        'domain_alert_days': 180,
        'alerts': [{'key': 'pager', 'value': 'x'}, {'key': 'email', 'value': 'a@b..c'}, {'key': 'sms', 'value': '+1-555'},
                   {'key': 'slack', 'value': 'not a url'}, {'key': 'telegram', 'value': '@chat_id_alone'},
                   {'key': 'email', 'value': 'ops@localhost'}, {'key': 'telegram', 'value': '123:token @chat'}],
        'request_headers': [{'key': 'X' * 129, 'value': 'v'}],
    }
    response = emulator.api('POST', '/api/v1/monitors', data=form)
    assert response.status == 422
    assert response.json['status'] == 422
    messages = response.json['message']
    assert set(messages) == {
        'name', 'url', 'interval', 'request_method', 'alert_text_lookup', 'request_auth_password', 'maintenance_start_at',
        'maintenance_end_at', 'ssl_alert_days', 'cache_buster', 'alerts.0.key', 'alerts.1.value', 'alerts.2.value',
        'alerts.3.value', 'alerts.4.value', 'request_headers.0.key',
    }
    assert messages['name'] == ['The name has already been taken.']
    assert messages['request_method'] == ['The request method field is required.']
    assert all(isinstance(texts, list) and texts and isinstance(texts[0], str) for texts in messages.values())


@pytest.mark.parametrize('url, accepted', [(url, True) for url in GOOD_URLS] + [(url, False) for url in BAD_URLS])
def test_the_url_rule_is_the_services(emulator, url, accepted):
    response = emulator.api('POST', '/api/v1/monitors', data=monitor_form(url=url, alerts=[{'key': 'webhook', 'value': url}]))
    refused = set(response.json['message']) if response.status == 422 else set()
    assert refused == (set() if accepted else {'url', 'alerts.0.value'})


@pytest.mark.parametrize('ignore_case', [False, True])
def test_names_are_unique_as_written_or_without_case_as_on_mysql(emulator, ignore_case):
    emulator.names(ignore_case=ignore_case)
    lower, other = create_monitor(emulator, 'api'), create_monitor(emulator, 'web')
    created = emulator.api('POST', '/api/v1/monitors', data=monitor_form('API'))
    renamed = emulator.api('PUT', '/api/v1/monitors/%d' % other, data={'name': 'Api'})
    assert (created.status, renamed.status) == ((422, 422) if ignore_case else (201, 200))
    if ignore_case:
        assert created.json['message'] == renamed.json['message'] == {'name': ['The name has already been taken.']}
        assert emulator.api('PUT', '/api/v1/monitors/%d' % lower, data={'name': 'API'}).status == 200  # its own
    found = emulator.api('GET', '/api/v1/monitors', params={'search': 'aPi'}).json['data']
    assert len(found) == (1 if ignore_case else 3)  # the search ignores case in both modes
    emulator.reset()  # names compared as written again
    assert create_monitor(emulator, 'api') and create_monitor(emulator, 'API')


def test_create_requires_method_and_condition(emulator):
    form = monitor_form()
    del form['request_method'], form['alert_condition']
    response = emulator.api('POST', '/api/v1/monitors', data=form)
    assert response.status == 422
    assert set(response.json['message']) == {'request_method', 'alert_condition'}


def test_maintenance_start_must_precede_end(emulator):
    response = emulator.api('POST', '/api/v1/monitors', data=monitor_form(maintenance_start_at='2030-01-01T11:00:00',
                                                                          maintenance_end_at='2030-01-01T10:00:00'))
    assert response.status == 422 and 'maintenance_start_at' in response.json['message']


def test_list_limits_of_headers_and_alerts(emulator):
    alerts = [{'key': 'email', 'value': 'a%d@example.com' % index} for index in range(101)]
    response = emulator.api('POST', '/api/v1/monitors', data=monitor_form(alerts=alerts))
    assert response.status == 422 and list(response.json['message']) == ['alerts']
    assert create_monitor(emulator, alerts=alerts[:100])


def test_validation_runs_before_ownership(emulator):
    foreign = create_monitor(emulator, api_key=OTHER_KEY)
    bad = emulator.api('PUT', '/api/v1/monitors/%d' % foreign, data={'interval': 5})
    assert bad.status == 422 and 'interval' in bad.json['message']
    good = emulator.api('PUT', '/api/v1/monitors/%d' % foreign, data={'interval': 300})
    assert good.status == 404


def test_other_accounts_records_are_not_found(emulator):
    foreign = create_monitor(emulator, api_key=OTHER_KEY)
    incident = create_incident(emulator, foreign, api_key=OTHER_KEY)
    missing = emulator.api('GET', '/api/v1/monitors/9999')
    for method, path in (('GET', '/api/v1/monitors/%d'), ('PATCH', '/api/v1/monitors/%d'), ('DELETE', '/api/v1/monitors/%d')):
        response = emulator.api(method, path % foreign, data={'name': 'mine'} if method == 'PATCH' else None)
        assert (response.status, response.json) == (404, missing.json)
    assert emulator.api('GET', '/api/v1/incidents/%d' % incident).status == 404
    assert emulator.api('DELETE', '/api/v1/incidents/%d' % incident).status == 404
    assert emulator.api('GET', '/api/v1/monitors').json['meta']['total'] == 0
    assert emulator.api('GET', '/api/v1/incidents').json['meta']['total'] == 0
    response = emulator.api('POST', '/api/v1/incidents', data={'monitor_id': foreign, 'started_at': stamp(60)})
    assert response.status == 422 and response.json['message']['monitor_id'] == ['The selected monitor id is invalid.']
    assert show(emulator, 'monitors', foreign, api_key=OTHER_KEY)['name'] == 'web'


def test_unauthenticated_is_401_only_with_accept_json(emulator):
    for key in ('', 'wrong-key'):
        response = emulator.api('GET', '/api/v1/monitors', api_key=key)
        assert response.status == 401 and response.json == {'message': 'Unauthenticated.'}
        response = emulator.api('GET', '/api/v1/monitors', api_key=key, accept_json=False)
        assert response.status == 302 and response.headers['Location'] == '/login'
    assert emulator.api('GET', '/login', accept_json=False).headers['Content-Type'].startswith('text/html')


def test_plan_without_api_access_is_403(emulator):
    response = emulator.api('GET', '/api/v1/monitors', api_key=NOPLAN_KEY)
    assert response.status == 403
    assert response.json == {'message': "You don't have access to this feature.", 'status': 403}


def test_unknown_method_and_route(emulator):
    incident_id = create_incident(emulator, create_monitor(emulator))
    response = emulator.api('PATCH', '/api/v1/incidents/%d' % incident_id, data={'comment': 'x'})
    assert response.status == 405
    assert emulator.api('GET', '/api/v1/nothing').status == 404


# Monitor updates -------------------------------------------------------------------------------------


def test_update_changes_only_sent_keys_and_empty_clears(emulator):
    monitor_id = create_monitor(emulator, alerts=[{'key': 'email', 'value': 'a@example.com'}],
                                request_headers=[{'key': 'X', 'value': 'y'}], ssl_alert_days=7)
    before = show(emulator, 'monitors', monitor_id)
    time.sleep(1.05)

    response = emulator.api('PATCH', '/api/v1/monitors/%d' % monitor_id, data={'interval': 300})
    record = response.json['data']
    assert record['interval'] == 300 and record['alerts'] == before['alerts'] and record['ssl_alert_days'] == 7
    assert record['updated_at'] > before['updated_at']

    record = emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'ssl_alert_days': '', 'alerts': []}).json['data']
    assert record['ssl_alert_days'] is None and record['alerts'] is None
    assert record['request_headers'] == [{'key': 'X', 'value': 'y'}]

    unchanged = emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'interval': 300}).json['data']
    assert unchanged['updated_at'] == record['updated_at']


def test_update_rejects_emptying_a_required_field(emulator):
    monitor_id = create_monitor(emulator)
    response = emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'name': ''})
    assert response.status == 422 and response.json['message'] == {'name': ['The name field is required.']}


def test_text_condition_needs_lookup_on_update(emulator):
    monitor_id = create_monitor(emulator)
    response = emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'alert_condition': 'url_text'})
    assert response.status == 422 and 'alert_text_lookup' in response.json['message']
    response = emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'alert_condition': 'url_text', 'alert_text_lookup': 'OK'})
    assert response.status == 200


@pytest.mark.parametrize('value, status', [
    ('1', 'paused'), ('false', 'paused'), ('yes', 'paused'), ('true', 'paused'), ('0', 'online'), ('', 'online'),
])
def test_pause_uses_php_truthiness(emulator, value, status):
    monitor_id = create_monitor(emulator)
    emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': '1'})
    record = emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': value}).json['data']
    assert record['status'] == status
    assert 'pause' not in record


def test_resume_with_ongoing_incident_is_offline(emulator):
    monitor_id = create_monitor(emulator)
    emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 1})
    create_incident(emulator, monitor_id)
    assert show(emulator, 'monitors', monitor_id)['status'] == 'paused'
    record = emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 0}).json['data']
    assert record['status'] == 'offline'


def test_started_at_marks_each_change_of_status(emulator):
    """docs/service.md: a monitor's started_at is when its current status began; timestamps have whole seconds."""
    monitor_id = create_monitor(emulator)
    seen = [show(emulator, 'monitors', monitor_id)]

    def after_a_second(method, path, data=None):
        time.sleep(1.05)
        response = emulator.api(method, path, data=data)
        assert response.status in (200, 201), response.text
        seen.append(show(emulator, 'monitors', monitor_id))

    after_a_second('POST', '/api/v1/incidents', {'monitor_id': monitor_id, 'started_at': stamp(60)})
    incident_id = emulator.api('GET', '/api/v1/incidents').json['data'][0]['id']
    after_a_second('PUT', '/api/v1/monitors/%d' % monitor_id, {'name': 'renamed'})  # no change of status
    after_a_second('PUT', '/api/v1/incidents/%d' % incident_id, {'ended_at': stamp()})
    assert [record['status'] for record in seen] == ['pending', 'offline', 'offline', 'online']
    starts = [record['started_at'] for record in seen]
    assert starts[0] == seen[0]['created_at']
    assert starts[0] < starts[1] == starts[2] < starts[3]


def test_maintenance_status_inside_the_window(emulator):
    monitor_id = create_monitor(emulator, maintenance_start_at=stamp(600), maintenance_end_at=stamp(-600))
    assert show(emulator, 'monitors', monitor_id)['status'] == 'maintenance'
    emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 1})
    assert show(emulator, 'monitors', monitor_id)['status'] == 'paused'


# Incidents -------------------------------------------------------------------------------------------


def test_incident_record_and_status_derivation(emulator):
    monitor_id = create_monitor(emulator)
    now = datetime.datetime.now(datetime.timezone.utc)
    started = stamp(3600, now)
    response = emulator.api('POST', '/api/v1/incidents', data={'monitor_id': monitor_id, 'started_at': started, 'cause': 'timeout'})
    assert response.status == 201
    incident_id = response.json['data']['id']
    record = show(emulator, 'incidents', incident_id)
    assert set(record) == {'id', 'status', 'monitor', 'url', 'cause', 'comment', 'duration', 'acknowledged_at', 'started_at',
                           'ended_at', 'created_at', 'updated_at'}
    assert record['status'] == 'unresolved' and record['duration'] is None
    assert record['monitor']['id'] == monitor_id and record['url'] == record['monitor']['url']
    assert record['monitor']['status'] == 'offline'
    assert record['started_at'] == started + '.000000Z'

    first_ack = stamp(3000, now)
    record = emulator.api('PUT', '/api/v1/incidents/%d' % incident_id, data={'acknowledged_at': first_ack}).json['data']
    assert record['status'] == 'acknowledged'

    ended = stamp(1800, now)
    record = emulator.api('PUT', '/api/v1/incidents/%d' % incident_id,
                          data={'acknowledged_at': stamp(100, now), 'ended_at': ended, 'started_at': stamp(10, now)}).json['data']
    assert record['status'] == 'resolved'
    assert record['acknowledged_at'] == first_ack + '.000000Z'
    assert record['ended_at'] == ended + '.000000Z'
    assert record['duration'] == 1800
    assert record['monitor']['status'] == 'online'

    record = emulator.api('PUT', '/api/v1/incidents/%d' % incident_id,
                          data={'ended_at': stamp(60), 'acknowledged_at': '', 'comment': 'late note'}).json['data']
    assert record['ended_at'] == ended + '.000000Z' and record['acknowledged_at'] == first_ack + '.000000Z'
    assert record['comment'] == 'late note'


def test_incident_create_rules(emulator):
    monitor_id = create_monitor(emulator)

    def errors(**form):
        response = emulator.api('POST', '/api/v1/incidents', data=form)
        assert response.status == 422, response.text
        return set(response.json['message'])

    assert errors() == {'monitor_id', 'started_at'}
    assert errors(monitor_id=monitor_id, started_at=stamp(-3600)) == {'started_at'}
    assert errors(monitor_id=monitor_id, started_at='yesterday') == {'started_at'}
    assert errors(monitor_id=monitor_id, started_at=stamp(600), ended_at=stamp(700)) == {'ended_at'}
    assert errors(monitor_id=monitor_id, started_at=stamp(600), ended_at=stamp(-60)) == {'ended_at'}
    assert errors(monitor_id=monitor_id, started_at=stamp(600), cause='x' * 256, comment='y' * 1025) == {'cause', 'comment'}

    create_incident(emulator, monitor_id, started_ago=3600, ended_at=stamp(1800))
    assert errors(monitor_id=monitor_id, started_at=stamp(2000)) == {'started_at'}
    create_incident(emulator, monitor_id, started_ago=1000)
    assert errors(monitor_id=monitor_id, started_at=stamp(500)) == {'monitor_id'}


def test_incident_update_rules(emulator):
    monitor_id = create_monitor(emulator)
    incident_id = create_incident(emulator, monitor_id, started_ago=3600)
    started = show(emulator, 'incidents', incident_id)['started_at']
    response = emulator.api('PUT', '/api/v1/incidents/%d' % incident_id, data={'monitor_id': monitor_id})
    assert response.status == 422 and list(response.json['message']) == ['monitor_id']
    response = emulator.api('PUT', '/api/v1/incidents/%d' % incident_id, data={'started_at': stamp(60)})
    assert response.status == 200 and response.json['data']['started_at'] == started
    response = emulator.api('PUT', '/api/v1/incidents/%d' % incident_id, data={'ended_at': stamp(7200)})
    assert response.status == 422 and list(response.json['message']) == ['ended_at']


def test_deleting_an_ongoing_incident_sets_monitor_pending(emulator):
    monitor_id = create_monitor(emulator)
    incident_id = create_incident(emulator, monitor_id)
    assert show(emulator, 'monitors', monitor_id)['status'] == 'offline'
    response = emulator.api('DELETE', '/api/v1/incidents/%d' % incident_id)
    assert response.json == {'id': incident_id, 'object': 'incident', 'deleted': True, 'status': 200}
    assert show(emulator, 'monitors', monitor_id)['status'] == 'pending'


def test_deleting_a_monitor_deletes_its_incidents(emulator):
    monitor_id = create_monitor(emulator)
    incident_id = create_incident(emulator, monitor_id)
    emulator.api('DELETE', '/api/v1/monitors/%d' % monitor_id)
    assert emulator.api('GET', '/api/v1/incidents/%d' % incident_id).status == 404
    assert emulator.api('GET', '/api/v1/incidents').json['meta']['total'] == 0


# Rate limit ------------------------------------------------------------------------------------------


def test_rate_limit_per_account_with_retry_after(emulator):
    response = emulator.api('GET', '/api/v1/status')
    assert 'X-RateLimit-Limit' not in response.headers
    # A window wide enough that four requests on a loaded machine still fall in one.
    emulator.rate_limit(3, window_seconds=3)
    remaining = []
    for dummy in range(3):
        response = emulator.api('GET', '/api/v1/status')
        assert response.status == 200 and response.headers['X-RateLimit-Limit'] == '3'
        remaining.append(response.headers['X-RateLimit-Remaining'])
    assert remaining == ['2', '1', '0']
    response = emulator.api('GET', '/api/v1/status')
    assert response.status == 429 and response.headers['Retry-After'] in ('1', '2', '3')
    assert response.headers['X-RateLimit-Remaining'] == '0'
    assert emulator.api('GET', '/api/v1/status', api_key=OTHER_KEY).status == 200
    time.sleep(int(response.headers['Retry-After']) + 0.05)
    assert emulator.api('GET', '/api/v1/status').status == 200


def test_rate_limit_is_off_again_after_reset(emulator):
    emulator.rate_limit(1)
    emulator.reset()
    for dummy in range(3):
        assert emulator.api('GET', '/api/v1/status').status == 200


# Faults ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize('status', [500, 502, 503])
def test_status_fault_answers_instead_of_processing(emulator, status):
    emulator.fault('status', status=status)
    response = emulator.api('POST', '/api/v1/monitors', data=monitor_form())
    assert response.status == status and 'Retry-After' not in response.headers
    assert emulator.api('GET', '/api/v1/monitors').json['meta']['total'] == 0
    assert [(entry['status'], entry['fault']) for entry in emulator.log()] == [(status, 'status'), (200, None)]


def test_429_fault_has_retry_after_and_count(emulator):
    emulator.fault('status', count=2, status=429)
    emulator.fault('status', status=503, retry_after=7)
    answers = [emulator.api('GET', '/api/v1/status') for dummy in range(4)]
    assert [answer.status for answer in answers] == [429, 429, 503, 200]
    assert answers[0].headers['Retry-After'] == '1' and answers[2].headers['Retry-After'] == '7'
    assert emulator.faults() == []


def test_fault_filters_by_method_and_path(emulator):
    emulator.fault('status', status=500, method='POST', path='/api/v1/incidents')
    monitor_id = create_monitor(emulator)
    assert emulator.api('GET', '/api/v1/incidents').status == 200
    response = emulator.api('POST', '/api/v1/incidents', data={'monitor_id': monitor_id, 'started_at': stamp(60)})
    assert response.status == 500
    assert len(emulator.faults()) == 0


def test_fault_path_covers_the_record_and_below_not_a_longer_id(emulator):
    first = create_monitor(emulator)
    for dummy in range(9):
        tenth = create_monitor(emulator, name='web%d' % dummy)
    assert (first, tenth) == (1, 10)
    emulator.fault('status', status=500, method='GET', path='/api/v1/monitors/1')
    assert emulator.api('GET', '/api/v1/monitors/10').status == 200
    assert emulator.api('GET', '/api/v1/monitors/1').status == 500
    emulator.fault('status', status=500, method='GET', path='/api/v1/monitors/')
    assert emulator.api('GET', '/api/v1/monitors/10').status == 500


def test_html_fault(emulator):
    emulator.fault('html')
    response = emulator.api('GET', '/api/v1/monitors')
    assert response.status == 200 and response.headers['Content-Type'].startswith('text/html')
    with pytest.raises(ValueError):
        json.loads(response.text)
    emulator.fault('html', status=502)
    assert emulator.api('GET', '/api/v1/monitors').status == 502


def test_badjson_fault(emulator):
    emulator.fault('badjson')
    response = emulator.api('GET', '/api/v1/monitors')
    assert response.status == 200 and response.headers['Content-Type'] == 'application/json'
    with pytest.raises(ValueError):
        json.loads(response.text)


def test_truncated_fault(emulator):
    create_monitor(emulator)
    emulator.fault('truncated')
    with pytest.raises(http.client.IncompleteRead):
        emulator.api('GET', '/api/v1/monitors')


def test_delay_fault_then_processes(emulator):
    emulator.fault('delay', seconds=1.0)
    with pytest.raises(CONNECTION_ERRORS):
        emulator.api('POST', '/api/v1/monitors', data=monitor_form(), timeout=0.3)
    assert emulator.wait_idle(requests=1)
    assert emulator.api('GET', '/api/v1/monitors').json['meta']['total'] == 1


def test_drop_fault_before_does_not_process(emulator):
    emulator.fault('drop')
    with pytest.raises(CONNECTION_ERRORS):
        emulator.api('POST', '/api/v1/monitors', data=monitor_form())
    assert emulator.api('GET', '/api/v1/monitors').json['meta']['total'] == 0
    assert emulator.log()[0]['status'] is None and emulator.log()[0]['fault'] == 'drop'


@pytest.mark.parametrize('kind', ['drop', 'truncated', 'badjson', 'status'])
def test_lost_response_fault_after_processing(emulator, kind):
    emulator.fault(kind, when='after', method='POST')
    try:
        response = emulator.api('POST', '/api/v1/monitors', data=monitor_form())
    except CONNECTION_ERRORS:
        assert kind in ('drop', 'truncated')
    else:
        assert kind in ('badjson', 'status')
        assert response.status in (201, 500)
    listing = emulator.api('GET', '/api/v1/monitors').json
    assert listing['meta']['total'] == 1 and listing['data'][0]['name'] == 'web'
    assert (emulator.log()[0]['fault'], emulator.log()[0]['fault_when']) == (kind, 'after')


def test_faults_can_be_listed_and_cleared(emulator):
    emulator.fault('drop', count=3)
    assert [(fault['kind'], fault['count']) for fault in emulator.faults()] == [('drop', 3)]
    emulator.clear_faults()
    assert emulator.api('GET', '/api/v1/status').status == 200


# Log, quirks and reset -------------------------------------------------------------------------------


def test_request_log(emulator):
    monitor_id = create_monitor(emulator, request_auth_username='u', request_auth_password='pw')
    emulator.api('GET', '/api/v1/monitors', params={'search': 'web'}, api_key=OTHER_KEY)
    emulator.faults()
    log = emulator.log()
    assert [entry['seq'] for entry in log] == [1, 2]
    assert log[0]['method'] == 'POST' and log[0]['status'] == 201 and log[0]['account'] == 0
    assert log[0]['form']['request_auth_password'] == 'pw'
    assert log[1]['query'] == 'search=web' and log[1]['url'] == '/api/v1/monitors?search=web' and log[1]['account'] == 1
    assert [entry['method'] for entry in emulator.writes()] == ['POST']
    emulator.api('DELETE', '/api/v1/monitors/%d' % monitor_id)
    assert [entry['method'] for entry in emulator.writes()] == ['POST', 'DELETE']
    emulator.clear_log()
    assert emulator.log() == []


def test_stringly_quirk(emulator):
    monitor_id = create_monitor(emulator, alerts=[{'key': 'email', 'value': 'a@example.com'}], ssl_alert_days=7)
    emulator.quirks(stringly=True)
    record = show(emulator, 'monitors', monitor_id)
    assert record['id'] == str(monitor_id) and record['interval'] == '60' and record['ssl_alert_days'] == '7'
    assert record['alerts'] == {'0': {'key': 'email', 'value': 'a@example.com'}}
    assert record['request_headers'] is None
    listing = emulator.api('GET', '/api/v1/monitors').json
    assert listing['data'][0]['interval'] == '60' and listing['meta']['total'] == 1


def test_reset_restarts_everything(emulator):
    create_monitor(emulator)
    emulator.fault('drop')
    emulator.quirks(stringly=True)
    emulator.reset()
    assert emulator.faults() == [] and emulator.log() == []
    response = emulator.api('GET', '/api/v1/monitors')
    assert response.json['data'] == [] and emulator.log()[0]['status'] == 200
    assert create_monitor(emulator) == 1


def test_server_stops_when_its_parent_goes_away():
    server = Emulator.start(api_keys=(PRIMARY_KEY,))
    try:
        assert server.api('GET', '/api/v1/status').status == 200
        server.process.stdin.close()  # what the parent's exit does to the pipe
        assert server.process.wait(5) == 0
    finally:
        server.stop()


def test_server_stops_at_the_end_of_its_lifetime_and_not_before():
    started = time.monotonic()
    with Emulator.start(api_keys=(PRIMARY_KEY,), extra_args=('--lifetime', '5')) as server:
        assert server.process.wait(20) == 0
        assert time.monotonic() - started >= 4.5


def test_a_detached_server_logs_to_its_file_outlives_its_session_and_stops_on_sigterm(tmp_path):
    log = tmp_path / 'emulator.log'
    server = Emulator.start(api_keys=(PRIMARY_KEY,), log=str(log), extra_args=('--verbose', '--lifetime', '60'))
    try:
        assert server.process.stdin is None
        assert os.getsid(server.process.pid) == server.process.pid != os.getsid(0)  # a session of its own
        assert server.api('GET', '/api/v1/status').status == 200
        os.kill(server.process.pid, signal.SIGTERM)
        assert server.process.wait(10) == 0
        assert '"GET /api/v1/status HTTP/1.1" 200' in log.read_text(encoding='utf-8')
    finally:
        server.stop()


def test_a_detached_server_that_cannot_start_says_why(tmp_path):
    log = tmp_path / 'emulator.log'
    with pytest.raises(RuntimeError) as failed:
        Emulator.start(api_keys=(PRIMARY_KEY,), log=str(log), extra_args=('--timezone', PRIMARY_KEY + '=Nowhere/Else'))
    assert 'exit status 2' in str(failed.value)
    assert 'is no IANA time zone name' in str(failed.value)


# Accounts' time zones ---------------------------------------------------------------------------------


def account_zones(emulator):
    return [emulator.api('GET', '/api/v1/account', api_key=key).json['data']['timezone'] for key in emulator.api_keys]


def test_time_zone_of_the_command_line_is_shown_and_restored_by_reset():
    with Emulator.start(api_keys=(PRIMARY_KEY, OTHER_KEY), extra_args=('--timezone', OTHER_KEY + '=America/New_York')) as server:
        assert account_zones(server) == [None, 'America/New_York']
        server.timezone('Asia/Kolkata', api_key=PRIMARY_KEY)
        server.timezone('Europe/Paris', api_key=OTHER_KEY)
        assert account_zones(server) == ['Asia/Kolkata', 'Europe/Paris']
        server.reset()
        assert account_zones(server) == [None, 'America/New_York']


@pytest.mark.parametrize('setting, error', [
    ('unknown-key=America/New_York', 'KEY one of the --api-key'),
    (PRIMARY_KEY, 'KEY one of the --api-key'),
    (PRIMARY_KEY + '=Mars/Olympus_Mons', 'no IANA time zone name'),
])
def test_time_zone_option_refuses_an_unknown_key_or_zone(setting, error, capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(['--api-key', PRIMARY_KEY, '--timezone', setting])
    assert exited.value.code == 2
    assert error in capsys.readouterr().err


def test_control_command_sets_a_time_zone(emulator, capsys):
    assert control.main(['timezone', OTHER_KEY, 'America/New_York', '--url', emulator.url]) == 0
    assert json.loads(capsys.readouterr().out) == {'timezone': 'America/New_York'}
    assert account_zones(emulator) == [None, 'America/New_York']
    assert control.main(['--url', emulator.url, 'timezone', OTHER_KEY, 'default']) == 0
    assert account_zones(emulator) == [None, None]


@pytest.mark.parametrize('key, zone, error', [
    ('unknown-key', 'UTC', 'unknown api_key'),
    (PRIMARY_KEY, 'Mars/Olympus_Mons', 'No time zone found'),
])
def test_control_command_refuses_an_unknown_key_or_zone(emulator, key, zone, error, capsys):
    with pytest.raises(SystemExit) as exited:
        control.main(['timezone', key, zone, '--url', emulator.url])
    assert exited.value.code == 1
    assert error in capsys.readouterr().err
    assert account_zones(emulator) == [None, None]
