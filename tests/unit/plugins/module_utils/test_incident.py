# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The incident's identity and timestamp rules, on values alone and against the service.

A second run changing nothing, check mode and refused input sending nothing are the laws' (tests/laws)."""

from __future__ import annotations

import datetime
import re
import time
from urllib.parse import parse_qs

import pytest

from fake_client import add_monitor, open_incident, stamp

from ansible_collections.uptime.monitoring.plugins.module_utils._client import UptimeApiError
from ansible_collections.uptime.monitoring.plugins.module_utils._connection import account_zone
from ansible_collections.uptime.monitoring.plugins.module_utils._incident import (
    INCIDENT_SCHEMA,
    INCIDENT_RESOURCE,
    IncidentLookup,
    duration,
)
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK, ValidationError, to_utc_timestamp
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import ensure_task, info_task
from ansible_collections.uptime.monitoring.plugins.modules import incident_info
from ansible_collections.uptime.monitoring.plugins.modules.incident import ARGUMENT_SPEC, IDENTITY

INFO_PARAMS = {name: spec.get('default') for name, spec in incident_info.ARGUMENT_SPEC.items()}
NOW = datetime.datetime(2026, 6, 1, 12, 0, 0)
OPTIONS = [name for name in ARGUMENT_SPEC if name != 'state']
T10, T11 = '2026-01-01T10:00:00', '2026-01-01T11:00:00'


def params(**values):
    full = dict.fromkeys(OPTIONS)
    full['state'] = 'present'
    full.update(values)
    return full


def validate(values):
    INCIDENT_SCHEMA.validate(values)
    INCIDENT_SCHEMA.check_order(values, NOW)


def fixed(changes, before=None):
    INCIDENT_SCHEMA.refuse_fixed(changes, before or {'monitor_id': 1, 'started_at': T10, 'acknowledged_at': None,
                                                     'ended_at': T11, 'cause': 'a'}, 'incident 5')


def test_desired_converts_offsets_to_utc_and_drops_fractions_and_the_duration_follows():
    desired = INCIDENT_SCHEMA.desired(params(monitor_id=3, started_at='2026-01-01T11:00:00+01:00',
                                      acknowledged_at='2026-01-01T10:05:00.123Z', ended_at='2026-01-01 10:30:00'))
    assert desired == {'monitor_id': 3, 'started_at': '2026-01-01T10:00:00Z',
                       'acknowledged_at': '2026-01-01T10:05:00Z', 'ended_at': '2026-01-01T10:30:00Z'}
    # The duration is in seconds, and null while ongoing.
    assert duration(desired) == 1800
    assert duration(dict(desired, ended_at=None)) is None


@pytest.mark.parametrize('check, values, field, fragment', [
    (validate, {'acknowledged_at': '2027-01-01T00:00:00'}, 'acknowledged_at', 'in the future'),
    (INCIDENT_SCHEMA.check_order, {'started_at': T10, 'ended_at': T10}, 'ended_at', 'after started_at'),
    (fixed, {'ended_at': '2026-01-01T12:00:00'}, 'ended_at', 'incident 5 already has ended_at %s' % T11),
    (fixed, {'ended_at': None}, 'ended_at', 'changed to empty'),
    (fixed, {'started_at': '2026-01-01T09:00:00'}, 'started_at', 'cannot be changed'),
    (fixed, {'monitor_id': 2}, 'monitor_id', 'cannot be changed after creation'),
    # At the limits: taken.
    (validate, {'started_at': '2026-06-01T12:00:00', 'cause': 'x' * 255, 'comment': 'x' * 1024}, None, None),
    (INCIDENT_SCHEMA.check_order, {'started_at': T10, 'acknowledged_at': T10}, None, None),
    (fixed, {'acknowledged_at': '2026-01-01T10:10:00', 'cause': 'b'}, None, None),  # write-once fields while empty, cause any time
])
def test_values_refused_before_any_request_and_those_at_the_limits_taken(check, values, field, fragment):
    if field is None:
        check(values)
        return
    with pytest.raises(ValidationError) as caught:
        check(values)
    assert (caught.value.field, fragment in str(caught.value)) == (field, True), str(caught.value)


def service_record(**overrides):
    record = {
        'id': 9, 'status': 'unresolved',  # the status is derived from the times, whatever this says
        'url': 'https://shop.example.com', 'cause': 'db', 'comment': None,
        'duration': None, 'started_at': '2026-01-01T10:00:00.000000Z', 'acknowledged_at': '2026-01-01T10:05:00.000000Z',
        'ended_at': None, 'created_at': '2026-01-01T10:01:00.000000Z', 'updated_at': '2026-01-01T10:05:00.000000Z',
        'monitor': {'id': 4, 'name': 'shop', 'url': 'https://shop.example.com', 'interval': 60,
                    'request_auth_username': 'robot', 'request_auth_password': 'plain-secret',
                    'request_headers': [{'key': 'Authorization', 'value': 'Bearer tok'}], 'status': 'offline'},
    }
    record.update(overrides)
    return record


def test_public_incident_puts_the_monitor_on_top_and_masks_its_secrets():
    view = INCIDENT_RESOURCE.record_view(service_record())
    assert {key: view[key] for key in ('id', 'monitor_id', 'monitor_name', 'started_at', 'acknowledged_at',
                                       'created_at', 'status', 'duration')} == {
        'id': 9, 'monitor_id': 4, 'monitor_name': 'shop', 'started_at': '2026-01-01T10:00:00Z',
        'acknowledged_at': '2026-01-01T10:05:00Z', 'created_at': '2026-01-01T10:01:00Z', 'status': 'acknowledged',
        'duration': None}
    assert view['monitor']['request_auth_password'] == MASK
    assert view['monitor']['request_headers'] == [{'key': 'Authorization', 'value': MASK}]
    # Strings and a plain monitor id are read as the numbers they are.
    view = INCIDENT_RESOURCE.record_view(service_record(id='9', monitor=None, monitor_id='4', ended_at='2026-01-01T11:00:00Z'))
    assert (view['id'], view['monitor_id'], view['monitor'], view['monitor_name']) == (9, 4, None, None)
    assert view['status'] == 'resolved'
    assert view['duration'] == 3600
    # A predicted incident has no id and takes the known monitor.
    view = INCIDENT_RESOURCE.view({'monitor_id': 4, 'started_at': T10}, None, IncidentLookup(None, 4, service_record()['monitor']))
    assert view['id'] is None
    assert view['status'] == 'unresolved'
    assert view['monitor_name'] == 'shop'
    assert view['monitor']['request_auth_password'] == MASK


@pytest.fixture
def client(service):
    return service.client()


@pytest.fixture
def monitor_id(service):
    return add_monitor(service, request_auth_username='robot', request_auth_password='plain-secret')


def run(service, client, check_mode=False, account_timezone='UTC', now=None, **values):
    """Run one task (by default with the account's zone given); returns (result, requests made, writes made)."""
    service.clear_log()
    result = ensure_task(INCIDENT_RESOURCE, client, params(**values), check_mode, IDENTITY, now=now,
                         zone=account_zone(client, account_timezone))
    log = service.log()
    return result, log, [entry for entry in log if entry['method'] in ('POST', 'PUT', 'PATCH', 'DELETE')]


def refused(service, client, field, *fragments, **values):
    with pytest.raises(ValidationError) as caught:
        run(service, client, **values)
    message = str(caught.value)
    assert caught.value.field == field, message
    assert all(fragment in message for fragment in fragments), message
    assert not service.writes(), 'a refused task wrote'
    return message


def test_create_by_monitor_name_or_id(service, client, monitor_id):
    created, log, writes = run(service, client, monitor='shop', started_at='2026-01-01T11:00:00+01:00', cause='db')
    incident = created['incident']
    assert created['changed']
    assert incident['monitor_id'] == monitor_id
    assert incident['monitor_name'] == 'shop'
    assert incident['started_at'] == '2026-01-01T10:00:00Z'
    assert incident['status'] == 'unresolved'
    assert incident['monitor']['request_auth_password'] == MASK
    assert [entry['method'] for entry in log] == ['GET', 'GET', 'POST', 'GET']
    assert len(writes) == 1
    other = add_monitor(service, 'api')
    created, log, writes = run(service, client, monitor_id=other, started_at=T10)
    assert created['changed']
    assert created['incident']['monitor_name'] == 'api'
    # No incident of the monitor tells that it exists: it is read once.
    assert [(entry['method'], entry['path']) for entry in log] == [
        ('GET', '/api/v1/incidents'), ('GET', '/api/v1/monitors/%d' % other), ('POST', '/api/v1/incidents'),
        ('GET', '/api/v1/incidents/%d' % created['incident']['id'])]


def test_natural_key_matches_to_the_second_among_many_in_one_request(service, client, monitor_id):
    ids = [open_incident(service, monitor_id, '2026-01-%02dT10:00:00' % day, ended_at='2026-01-%02dT11:00:00' % day)
           for day in range(1, 13)]
    for started_at, wanted in (('2026-01-01T10:00:00.900Z', ids[0]), ('2026-01-02T10:00:00', ids[1])):
        found, log, writes = run(service, client, monitor_id=monitor_id, started_at=started_at)
        assert not found['changed']
        assert found['incident']['id'] == wanted
        assert not writes
        assert len(log) == 1
        assert log[0]['path'] == '/api/v1/incidents'
        assert parse_qs(log[0]['query'])['monitor_id'] == [str(monitor_id)]


def test_the_ongoing_incident_is_acknowledged_then_resolved(service, client, monitor_id):
    open_incident(service, monitor_id, T10, ended_at='2026-01-01T10:30:00')
    ongoing = open_incident(service, monitor_id, '2026-01-02T10:00:00')
    acked, log, writes = run(service, client, monitor='shop', state='acknowledged')
    assert acked['changed']
    assert acked['incident']['id'] == ongoing
    assert acked['incident']['status'] == 'acknowledged'
    assert acked['incident']['acknowledged_at']
    assert [entry['method'] for entry in log] == ['GET', 'GET', 'PUT']
    assert set(writes[0]['form']) == {'acknowledged_at'}
    resolved, log, writes = run(service, client, monitor_id=monitor_id, state='resolved', comment='fixed')
    assert resolved['changed']
    assert resolved['incident']['status'] == 'resolved'
    assert resolved['incident']['acknowledged_at'] == acked['incident']['acknowledged_at']
    assert set(writes[0]['form']) == {'ended_at', 'comment'}
    # No ongoing incident any more: the re-run checks the latest one and changes nothing.
    rerun, log, writes = run(service, client, monitor_id=monitor_id, state='resolved', comment='fixed')
    assert not rerun['changed']
    assert rerun['incident']['id'] == ongoing
    assert len(log) == 1
    assert not writes
    assert rerun['msg'].startswith('monitor id %d has no ongoing incident: nothing to resolve' % monitor_id)
    acked, dummy, writes = run(service, client, monitor_id=monitor_id, state='acknowledged')
    assert not acked['changed']
    assert not writes
    assert 'nothing to acknowledge' in acked['msg']
    # Acknowledging "on it" now would record nothing (the resolution replaced the comment): refused.
    refused(service, client, 'comment', "monitor 'shop' has no ongoing incident to acknowledge: its latest incident "
            "(id %d) ended at" % ongoing, 'comment would not be recorded on it', 'give id to change a past incident',
            monitor='shop', state='acknowledged', comment='on it')
    refused(service, client, 'cause', 'no ongoing incident to resolve', monitor='shop', state='resolved',
            comment='fixed', cause='disk full')


def test_without_an_ongoing_incident_present_opens_one_started_now(service, client, monitor_id):
    past = open_incident(service, monitor_id, T10, ended_at='2026-01-01T10:30:00', comment='old')
    # A task that asks what the latest incident holds is a re-run after that incident ended: it opens nothing.
    rerun, dummy, writes = run(service, client, monitor_id=monitor_id, comment='old')
    assert not rerun['changed']
    assert rerun['incident']['id'] == past
    assert not writes
    assert 'no incident opened' in rerun['msg']
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    opened, dummy, writes = run(service, client, monitor_id=monitor_id, comment='late note')
    after = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    assert opened['changed']
    assert opened['incident']['id'] != past
    assert [entry['method'] for entry in writes] == ['POST']
    started = datetime.datetime.strptime(to_utc_timestamp(opened['incident']['started_at']), '%Y-%m-%dT%H:%M:%SZ')
    assert before <= started <= after
    assert service.api('GET', '/api/v1/incidents/%d' % past).json['data']['comment'] == 'old'


def test_a_monitor_without_incidents_gets_one_started_now(service, client, monitor_id):
    nothing, log, writes = run(service, client, monitor_id=monitor_id, state='resolved')
    # No incident tells that the monitor exists: it is read once, and named.
    assert (nothing['changed'], nothing['incident'], len(log), writes) == (False, {}, 2, []), nothing
    assert nothing['msg'] == "monitor 'shop' has no incident: nothing to resolve"
    # An id of no monitor (or of another account's) is no monitor without an incident.
    for state in ('acknowledged', 'resolved', 'present'):
        refused(service, client, 'monitor_id', 'no monitor has the id 999', monitor_id=999, state=state)
    # With a comment to record, it fails instead of dropping it.
    refused(service, client, 'comment', "monitor 'shop' has no incident: nothing to acknowledge, so comment would not "
            "be recorded", monitor='shop', state='acknowledged', comment='on it')
    opened, dummy, writes = run(service, client, monitor_id=monitor_id, cause='db')
    assert opened['changed']
    assert opened['incident']['cause'] == 'db'
    assert opened['incident']['status'] == 'unresolved'
    assert set(writes[0]['form']) == {'monitor_id', 'started_at', 'cause'}


def test_appended_comments_keep_the_acknowledgement_and_are_not_appended_twice(service, client, monitor_id):
    open_incident(service, monitor_id, T10)
    acked, dummy, dummy = run(service, client, monitor_id=monitor_id, state='acknowledged', comment='on it',
                              comment_mode='append')
    assert acked['incident']['comment'] == 'on it'
    resolved, dummy, writes = run(service, client, monitor_id=monitor_id, state='resolved', comment='pool raised',
                                  comment_mode='append')
    comment = resolved['incident']['comment']
    assert re.fullmatch(r'on it\n\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] pool raised', comment), comment
    assert writes[0]['form']['comment'] == comment
    # Re-runs of both tasks find their text and append nothing.
    for state, text in (('acknowledged', 'on it'), ('resolved', 'pool raised')):
        again, dummy, writes = run(service, client, monitor_id=monitor_id, state=state, comment=text,
                                   comment_mode='append')
        assert not again['changed'], state
        assert not writes, state
        assert again['incident']['comment'] == comment, state


def test_appending_an_empty_comment_keeps_the_comment(service, client, monitor_id):
    incident_id = open_incident(service, monitor_id, T10, comment='operator notes')
    for state in ('present', 'acknowledged'):
        result, dummy, writes = run(service, client, monitor_id=monitor_id, state=state, comment='',
                                    comment_mode='append')
        assert result['incident']['comment'] == 'operator notes'
        assert all('comment' not in write['form'] for write in writes), state
    stored = service.api('GET', '/api/v1/incidents/%d' % incident_id).json['data']
    assert stored['comment'] == 'operator notes'
    assert stored['acknowledged_at']


@pytest.mark.parametrize('stored, values, field, fragment', [
    (dict(comment='x' * 1000), dict(comment='y' * 30, comment_mode='append'), 'comment', 'appended'),
    (dict(ended_at='2026-01-01T11:00:00', comment='x' * 1020), dict(state='acknowledged', comment='on it',
                                                                    comment_mode='append'),
     'comment', 'no ongoing incident to acknowledge'),
    (dict(ended_at='2026-01-01T10:30:00'), dict(started_at='2026-01-01T10:20:00'), 'started_at',
     'after the end of the last incident'),
    (dict(), dict(started_at='2026-01-03T10:00:00'), 'started_at', 'resolve it first (state: resolved) or address it by id'),
    (dict(ended_at='2026-01-01T10:30:00'), dict(id=True, ended_at='2026-01-01T10:45:00'), 'ended_at', 'only once'),
    (dict(), dict(id=True, acknowledged_at='2026-01-01T09:00:00'), 'acknowledged_at', 'not be before'),
    (dict(), dict(id=True, started_at='2026-01-01T09:00:00', state='absent'), 'started_at',
     'has started_at 2026-01-01T10:00:00Z'),
    (dict(), dict(monitor='nope', started_at=T10), 'monitor', "no monitor is named 'nope'"),
    (dict(), dict(monitor='SHOP', started_at=T10), 'monitor', "no monitor is named 'SHOP'"),
    (dict(), dict(id=True, monitor='SHOP'), 'monitor', "belongs to monitor 'shop'"),
    (dict(), dict(id=True, monitor='api'), 'monitor', "belongs to monitor 'shop'"),
])
def test_what_the_stored_incident_rules_out_is_refused_before_any_write(
        service, client, monitor_id, stored, values, field, fragment):
    """The service's own refusals (a start before the last end, a second ongoing incident) told before the POST."""
    add_monitor(service, 'api')
    incident_id = open_incident(service, monitor_id, T10, **stored)
    if values.get('id'):
        values['id'] = incident_id
    elif 'monitor' not in values:
        values['monitor_id'] = monitor_id
    refused(service, client, field, fragment, **values)


def test_an_unknown_id_is_refused_before_any_write(service, client, monitor_id):
    with pytest.raises(UptimeApiError) as caught:
        run(service, client, id=999, monitor_id=monitor_id, cause='x')
    assert caught.value.status == 404
    assert 'chosen id' in str(caught.value)
    assert not service.writes()


@pytest.mark.parametrize('task, changed', [
    (dict(cause='HTTP 500'), False),  # what the checker recorded: a re-run would change nothing
    (dict(cause='db', comment='on it', comment_mode='append'), True),
])
def test_the_incident_the_checker_opens_while_the_task_looks_is_the_one_it_addresses(
        service, client, monitor_id, task, changed):
    """The checker opens an incident between the lookup that found none and the POST: the task applies its values to
    it, as a re-run would."""
    service.fault('check', method='POST', path='/api/v1/incidents', check={'monitor_id': monitor_id, 'status': 'offline'})
    result, log, writes = run(service, client, monitor='shop', **task)
    stored = service.api('GET', '/api/v1/incidents/1').json['data']
    assert (result['changed'], result['incident']['id'], stored['cause'], stored['comment']) == (
        changed, 1, task['cause'], task.get('comment')), result
    assert result['msg'].startswith('incident 1 was created meanwhile, after this task looked for it'), result['msg']
    assert [write['method'] for write in writes] == ['POST'] + ['PUT'] * changed


def test_a_task_with_its_own_start_names_the_incident_the_checker_opened_meanwhile(service, client, monitor_id):
    service.fault('check', method='POST', path='/api/v1/incidents', check={'monitor_id': monitor_id, 'status': 'offline'})
    with pytest.raises(ValidationError) as caught:
        run(service, client, monitor='shop', started_at=T10, cause='db')
    message = str(caught.value)
    assert caught.value.field == 'started_at', message
    assert "monitor 'shop' already has an ongoing incident (id 1, " in message
    assert 'opened after this task looked): resolve it first' in message, message
    assert [write['app_status'] for write in service.writes()] == [422]


@pytest.mark.parametrize('stamp, comment', [('ended_at', None), ('ended_at', 'fixed'), ('acknowledged_at', 'on it')])
def test_a_time_another_actor_set_meanwhile_is_kept_and_the_state_asked_holds(service, client, monitor_id, monkeypatch,
                                                                              stamp, comment):
    """Between the lookup and the PUT, the checker ends the incident (or another job acknowledges it): the service
    keeps that time, set once; the task succeeds, changed by what its write changed, without a time zone to blame."""
    incident_id = open_incident(service, monitor_id, T10)
    if stamp == 'ended_at':
        service.fault('check', method='PUT', check={'monitor_id': monitor_id, 'status': 'online'})
    else:
        store = service.state.store
        update = store.update_incident

        def acknowledged_first(account_id, record_id, data):
            monkeypatch.setattr(store, 'update_incident', update)
            update(account_id, record_id, {'acknowledged_at': T11})
            return update(account_id, record_id, data)
        monkeypatch.setattr(store, 'update_incident', acknowledged_first)
    # The task's clock a minute behind the service's: the time it sends differs from the one set meanwhile.
    behind = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0) - datetime.timedelta(minutes=1)
    state = 'resolved' if stamp == 'ended_at' else 'acknowledged'
    result, dummy, dummy = run(service, client, now=behind, monitor='shop', state=state, comment=comment)
    stored = service.api('GET', '/api/v1/incidents/%d' % incident_id).json['data']
    assert (result['changed'], result['incident']['status'], stored['status'], stored['comment']) == (
        comment is not None, state, state, comment), result
    assert result['incident'][stamp] == to_utc_timestamp(stored[stamp]) != behind.strftime('%Y-%m-%dT%H:%M:%SZ')
    assert result['msg'].startswith('%s of incident %d was set meanwhile, to %s' % (stamp, incident_id, result['incident'][stamp]))
    assert 'zone' not in result['msg'], result['msg']
    assert (result['diff']['before'][stamp], result['diff']['before']['comment']) == (result['incident'][stamp], None), result


def test_absent_by_each_identity(service, client, monitor_id):
    first = open_incident(service, monitor_id, T10, ended_at='2026-01-01T10:30:00')
    ongoing = open_incident(service, monitor_id, '2026-01-02T10:00:00')
    gone, dummy, writes = run(service, client, monitor='shop', state='absent')
    assert gone['changed']
    assert writes[0]['path'] == '/api/v1/incidents/%d' % ongoing
    # Only the ongoing incident is addressed by a monitor alone: the past one stays.
    again, dummy, writes = run(service, client, monitor='shop', state='absent')
    assert not again['changed']
    assert not writes
    gone, dummy, writes = run(service, client, monitor_id=monitor_id, started_at=T10, state='absent')
    assert gone['changed']
    assert writes[0]['path'] == '/api/v1/incidents/%d' % first
    again, log, writes = run(service, client, id=first, state='absent')
    assert not again['changed']
    assert again['incident'] == {}
    assert len(log) == 1
    unknown, log, writes = run(service, client, monitor='nope', state='absent')
    assert not unknown['changed']
    assert not writes


@pytest.mark.parametrize('check_mode', [True, False])
def test_deleting_the_ongoing_incident_of_a_paused_monitor_keeps_the_pause(service, client, monitor_id, check_mode):
    """The service resumes a monitor whose ongoing incident is deleted: the task pauses it again, and says so."""
    open_incident(service, monitor_id, T10)
    service.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 1})
    result, dummy, writes = run(service, client, check_mode, monitor='shop', state='absent')
    told = ("monitor 'shop' (id %d) is paused, and deleting its ongoing incident resumes it on the service: the task "
            "pauses it again" % monitor_id)
    assert (result['changed'], result['msg'], result['diff']['after_header']) == (True, told, told), result
    assert [(write['method'], write['path'], write['form']) for write in writes] == ([] if check_mode else [
        ('DELETE', '/api/v1/incidents/1', {}), ('PUT', '/api/v1/monitors/%d' % monitor_id, {'pause': '1'})])
    assert service.api('GET', '/api/v1/monitors/%d' % monitor_id).json['data']['status'] == 'paused'


def test_stringly_answers_the_monitor_name_by_id_and_an_equal_end_in_another_zone_compare_equal(service, client, monitor_id):
    ended = open_incident(service, monitor_id, T10, ended_at='2026-01-01T10:30:00')
    same, log, writes = run(service, client, id=ended, monitor='shop', ended_at='2026-01-01T11:30:00+01:00')
    assert not same['changed']
    assert len(log) == 1
    assert not writes
    incident_id = open_incident(service, monitor_id, T11, cause='db')
    service.quirks(stringly=True)
    same, dummy, writes = run(service, client, monitor_id=monitor_id, cause='db')
    assert not same['changed']
    assert same['incident']['id'] == incident_id
    assert not writes
    assert same['incident']['monitor_id'] == monitor_id


def test_incidents_of_a_monitor_named_with_surrounding_spaces_are_found(service, client, monitor_id):
    incident_id = open_incident(service, monitor_id, T10)
    found = info_task(INCIDENT_RESOURCE, client, dict(INFO_PARAMS, monitor='  shop '))
    assert [incident['id'] for incident in found['incidents']] == [incident_id]
    assert info_task(INCIDENT_RESOURCE, client, dict(INFO_PARAMS, monitor='Shop'))['incidents'] == [], 'not exactly the name'


def test_now_works_in_the_hour_repeated_when_daylight_saving_time_ends(service, client, monitor_id):
    """Opening, acknowledging and resolving "now" at 01:30 EST on 2025-11-02 (06:30 UTC, the second 01:30)."""
    service.timezone('America/New_York')
    repeated = datetime.datetime(2025, 11, 2, 6, 30)
    zone = account_zone(client, 'America/New_York')

    def now_task(**values):
        return ensure_task(INCIDENT_RESOURCE, client, params(**values), False, IDENTITY, now=repeated, zone=zone)
    ongoing = open_incident(service, monitor_id, '2025-11-01T23:00:00')  # local time: 2025-11-02T03:00:00Z
    acknowledged = now_task(monitor_id=monitor_id, state='acknowledged')
    resolved = now_task(monitor_id=monitor_id, state='resolved')
    # The last second before the repeated hour's second occurrence: the latest time the service can be sent.
    assert acknowledged['incident']['acknowledged_at'] == '2025-11-02T05:59:59Z'
    assert resolved['incident']['ended_at'] == '2025-11-02T05:59:59Z'
    assert resolved['incident']['id'] == ongoing
    assert resolved['incident']['status'] == 'resolved'
    stored = service.api('GET', '/api/v1/incidents/%d' % ongoing).json['data']
    assert (to_utc_timestamp(stored['acknowledged_at']), to_utc_timestamp(stored['ended_at'])) == (
        '2025-11-02T05:59:59Z', '2025-11-02T05:59:59Z')
    other = add_monitor(service, 'other')
    opened = now_task(monitor_id=other, cause='opened now')
    assert opened['changed']
    assert opened['incident']['started_at'] == '2025-11-02T05:59:59Z'
    # A time the user gives is never moved: in the second occurrence it is refused, as before.
    with pytest.raises(ValidationError) as caught:
        now_task(monitor_id=monitor_id, started_at='2025-11-02T06:15:00Z', cause='given')
    assert caught.value.field == 'started_at'
    assert 'occurs twice' in str(caught.value)


class OneIncident:
    """A client that holds one incident: enough for a task that addresses it by id."""

    def __init__(self, record):
        self.record = record

    def get_or_none(self, path):
        return self.record if path.endswith('/%s' % self.record['id']) else None


@pytest.mark.parametrize('check_mode', [True, False])
def test_now_that_cannot_fit_the_incident_is_refused_saying_when_it_can(check_mode):
    """An incident that began at the second 01:10 in New York (06:10 UTC; the checker stores UTC itself)."""
    client = OneIncident({'id': 7, 'monitor': {'id': 3, 'name': 'shop'}, 'started_at': '2025-11-02T06:10:00Z',
                          'acknowledged_at': None, 'ended_at': None, 'cause': None, 'comment': None})
    with pytest.raises(ValidationError) as caught:
        ensure_task(INCIDENT_RESOURCE, client, params(id=7, state='resolved'), check_mode, IDENTITY,
                    now=datetime.datetime(2025, 11, 2, 6, 30), zone=account_zone(client, 'America/New_York'))
    message = str(caught.value)
    assert caught.value.field == 'ended_at', message
    assert message.startswith('ended_at: now falls in the hour repeated'), message
    assert 'latest time it can be sent, 2025-11-02T05:59:59Z, does not fit: must be after started_at' in message
    assert message.endswith('run the task again from 2025-11-02T07:00:00Z, when the repeated hour is over'), message


def test_now_in_the_second_the_incident_began_waits_for_the_service_clock_to_pass_it(service, monitor_id):
    """Resolved now in the second it was opened (a second ahead of the service's clock here): the task waits until the
    service's clock passes the start, a second or two, and ends it then; check mode tells the now it would take."""
    client = service.client(sleep=time.sleep)
    service.clock(1)
    incident_id = open_incident(service, monitor_id, stamp(-1))
    service.clock(0)
    started = to_utc_timestamp(service.api('GET', '/api/v1/incidents/%d' % incident_id).json['data']['started_at'])
    waits = 'the task %s for it to pass started_at, %s, which ended_at must follow'
    predicted, dummy, writes = run(service, client, True, monitor='shop', state='resolved')
    assert (predicted['changed'], writes) == (True, []), predicted
    assert predicted['incident']['ended_at'] > started, predicted
    assert predicted['msg'].endswith(waits % ('would wait', started)), predicted['msg']
    resolved, dummy, writes = run(service, client, monitor='shop', state='resolved')
    assert (resolved['changed'], resolved['incident']['status'], len(writes)) == (True, 'resolved', 1), resolved
    assert resolved['incident']['ended_at'] > started, resolved
    assert resolved['msg'].endswith(waits % ('waited', started)), resolved
