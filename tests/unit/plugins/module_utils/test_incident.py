# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The incident's identity and timestamp rules, on values alone and against the service."""

from __future__ import annotations

import datetime
import re
from urllib.parse import parse_qs

import pytest

from ansible_collections.uptime.monitoring.plugins.module_utils._client import UptimeApiError
from ansible_collections.uptime.monitoring.plugins.module_utils._connection import account_zone
from ansible_collections.uptime.monitoring.plugins.module_utils._incident import (
    INCIDENT,
    INCIDENTS,
    IncidentLookup,
    IncidentResource,
    derived_status,
    duration,
)
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK, ValidationError, to_utc_timestamp
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import ensure_task, info_task
from ansible_collections.uptime.monitoring.plugins.modules import incident_info
from ansible_collections.uptime.monitoring.plugins.modules.incident import ARGUMENT_SPEC, IDENTITY

INFO_PARAMS = {name: spec.get('default') for name, spec in incident_info.ARGUMENT_SPEC.items()}

NOW = datetime.datetime(2026, 6, 1, 12, 0, 0)
OPTIONS = [name for name in ARGUMENT_SPEC if name != 'state']


def validate_values(values, now):
    INCIDENT.validate(values)
    INCIDENT.check_order(values, now)


def refused_changes(changes, before, incident_id):
    INCIDENT.refuse_fixed(changes, before, 'incident %s' % incident_id)


def params(**values):
    full = dict.fromkeys(OPTIONS)
    full['state'] = 'present'
    full.update(values)
    return full


# -- values alone -----------------------------------------------------------

@pytest.mark.parametrize('values, expected', [
    ({}, 'unresolved'),
    ({'acknowledged_at': '2026-01-01T10:00:00'}, 'acknowledged'),
    ({'ended_at': '2026-01-01T10:00:00'}, 'resolved'),
    ({'acknowledged_at': '2026-01-01T10:00:00', 'ended_at': '2026-01-01T11:00:00'}, 'resolved'),
])
def test_status_is_derived_from_the_timestamps(values, expected):
    assert derived_status(values) == expected


def test_duration_in_seconds_and_null_while_ongoing():
    assert duration({'started_at': '2026-01-01T10:00:00Z', 'ended_at': '2026-01-01T10:50:30Z'}) == 3030
    assert duration({'started_at': '2026-01-01T10:00:00Z', 'ended_at': None}) is None


def test_desired_converts_offsets_to_utc_and_drops_fractions():
    desired = INCIDENT.desired(params(monitor_id=3, started_at='2026-01-01T11:00:00+01:00',
                                      acknowledged_at='2026-01-01T10:05:00.123Z', ended_at='2026-01-01 10:30:00'))
    assert desired == {'monitor_id': 3, 'started_at': '2026-01-01T10:00:00Z',
                       'acknowledged_at': '2026-01-01T10:05:00Z', 'ended_at': '2026-01-01T10:30:00Z'}


def test_a_timestamp_that_is_not_one_names_its_field_and_the_formats():
    with pytest.raises(ValidationError) as caught:
        INCIDENT.desired(params(ended_at='yesterday'))
    assert caught.value.field == 'ended_at'
    assert 'Y-m-dTH:i:s' in str(caught.value) and 'offset' in str(caught.value)


@pytest.mark.parametrize('values, field, fragment', [
    ({'started_at': '2026-06-01T12:00:01'}, 'started_at', 'in the future'),
    ({'acknowledged_at': '2027-01-01T00:00:00'}, 'acknowledged_at', 'in the future'),
    ({'ended_at': '2026-06-02T00:00:00'}, 'ended_at', 'in the future'),
    ({'cause': 'x' * 256}, 'cause', 'at most 255'),
    ({'comment': 'x' * 1025}, 'comment', 'at most 1024'),
])
def test_values_refused_before_any_request(values, field, fragment):
    with pytest.raises(ValidationError) as caught:
        validate_values(values, NOW)
    assert caught.value.field == field
    assert fragment in str(caught.value)


def test_values_at_the_limits_pass():
    validate_values({'started_at': '2026-06-01T12:00:00', 'cause': 'x' * 255, 'comment': 'x' * 1024}, NOW)


@pytest.mark.parametrize('values, field, fragment', [
    ({'started_at': '2026-01-01T10:00:00', 'ended_at': '2026-01-01T10:00:00'}, 'ended_at', 'after started_at'),
    ({'started_at': '2026-01-01T10:00:00', 'ended_at': '2026-01-01T09:00:00'}, 'ended_at', 'after started_at'),
    ({'started_at': '2026-01-01T10:00:00', 'acknowledged_at': '2026-01-01T09:59:59'}, 'acknowledged_at', 'not be before'),
])
def test_order_of_the_timestamps(values, field, fragment):
    with pytest.raises(ValidationError) as caught:
        INCIDENT.check_order(values)
    assert caught.value.field == field
    assert fragment in str(caught.value)


def test_acknowledged_at_may_equal_started_at():
    INCIDENT.check_order({'started_at': '2026-01-01T10:00:00', 'acknowledged_at': '2026-01-01T10:00:00'})


def test_write_once_fields_may_be_set_while_empty_only():
    before = {'acknowledged_at': None, 'ended_at': '2026-01-01T11:00:00', 'cause': 'a'}
    refused_changes({'acknowledged_at': '2026-01-01T10:10:00', 'cause': 'b'}, before, 5)
    with pytest.raises(ValidationError) as caught:
        refused_changes({'ended_at': '2026-01-01T12:00:00'}, before, 5)
    assert caught.value.field == 'ended_at'
    assert 'incident 5 already has ended_at 2026-01-01T11:00:00' in str(caught.value) and 'only once' in str(caught.value)
    with pytest.raises(ValidationError) as caught:
        refused_changes({'ended_at': None}, before, 5)
    assert 'changed to empty' in str(caught.value)


def test_started_at_and_monitor_are_fixed_after_creation():
    before = {'monitor_id': 1, 'started_at': '2026-01-01T10:00:00'}
    with pytest.raises(ValidationError) as caught:
        refused_changes({'started_at': '2026-01-01T09:00:00'}, before, 5)
    assert caught.value.field == 'started_at' and 'cannot be changed' in str(caught.value)
    with pytest.raises(ValidationError) as caught:
        refused_changes({'monitor_id': 2}, before, 5)
    assert caught.value.field == 'monitor_id' and 'cannot be changed after creation' in str(caught.value)


def service_record(**overrides):
    record = {
        'id': 9, 'status': 'acknowledged', 'url': 'https://shop.example.com',
        'cause': 'db', 'comment': None, 'duration': None,
        'started_at': '2026-01-01T10:00:00.000000Z', 'acknowledged_at': '2026-01-01T10:05:00.000000Z',
        'ended_at': None, 'created_at': '2026-01-01T10:01:00.000000Z', 'updated_at': '2026-01-01T10:05:00.000000Z',
        'monitor': {'id': 4, 'name': 'shop', 'url': 'https://shop.example.com', 'interval': 60,
                    'request_auth_username': 'robot', 'request_auth_password': 'plain-secret',
                    'request_headers': [{'key': 'Authorization', 'value': 'Bearer tok'}], 'status': 'offline'},
    }
    record.update(overrides)
    return record


def test_public_incident_puts_the_monitor_on_top_and_masks_its_secrets():
    view = INCIDENTS.record_view(service_record())
    assert view['id'] == 9
    assert view['monitor_id'] == 4
    assert view['monitor_name'] == 'shop'
    assert view['started_at'] == '2026-01-01T10:00:00Z'
    assert view['acknowledged_at'] == '2026-01-01T10:05:00Z'
    assert view['created_at'] == '2026-01-01T10:01:00Z'
    assert view['status'] == 'acknowledged'
    assert view['duration'] is None
    assert view['monitor']['request_auth_password'] == MASK
    assert view['monitor']['request_headers'] == [{'key': 'Authorization', 'value': MASK}]
    assert 'plain-secret' not in repr(view) and 'Bearer tok' not in repr(view)


def test_public_incident_reads_strings_and_a_plain_monitor_id():
    record = service_record(id='9', monitor=None, monitor_id='4', ended_at='2026-01-01T11:00:00.000000Z')
    view = INCIDENTS.record_view(record)
    assert view['id'] == 9 and view['monitor_id'] == 4
    assert view['monitor'] is None and view['monitor_name'] is None
    assert view['status'] == 'resolved' and view['duration'] == 3600


def test_a_predicted_incident_has_no_id_and_takes_the_known_monitor():
    view = INCIDENTS.view({'monitor_id': 4, 'started_at': '2026-01-01T10:00:00'}, None,
                          IncidentLookup(None, 4, service_record()['monitor']))
    assert view['id'] is None and view['monitor_name'] == 'shop' and view['monitor']['request_auth_password'] == MASK


# -- identity and writes against the service ---------------------------------

@pytest.fixture
def client(service):
    return service.client()


@pytest.fixture
def monitor_id(service):
    answer = service.api('POST', '/api/v1/monitors', data={
        'name': 'shop', 'url': 'https://shop.example.com', 'interval': 60,
        'request_method': 'GET', 'alert_condition': 'url_unavailable',
        'request_auth_username': 'robot', 'request_auth_password': 'plain-secret'})
    assert answer.status in (200, 201), answer
    return int(answer.json['data']['id'])


def open_incident(service, monitor_id, started_at, **fields):
    data = dict(monitor_id=monitor_id, started_at=started_at, **fields)
    answer = service.api('POST', '/api/v1/incidents', data=data)
    assert answer.status in (200, 201), answer
    return int(answer.json['data']['id'])


def run(service, client, check_mode=False, account_timezone='UTC', **values):
    """Run one task (by default with the account's zone given); returns (result, requests made, writes made)."""
    service.clear_log()
    result = ensure_task(INCIDENTS, client, params(**values), check_mode, IDENTITY,
                         zone=account_zone(client, account_timezone))
    log = service.log()
    return result, log, [entry for entry in log if entry['method'] in ('POST', 'PUT', 'PATCH', 'DELETE')]


def test_create_by_monitor_name_then_no_change(service, client, monitor_id):
    created, log, writes = run(service, client, monitor='shop', started_at='2026-01-01T11:00:00+01:00', cause='db')
    assert created['changed']
    incident = created['incident']
    assert incident['monitor_id'] == monitor_id and incident['monitor_name'] == 'shop'
    assert incident['started_at'] == '2026-01-01T10:00:00Z' and incident['status'] == 'unresolved'
    assert incident['monitor']['request_auth_password'] == MASK
    assert [entry['method'] for entry in log] == ['GET', 'GET', 'POST', 'GET']
    assert len(writes) == 1
    again, log, writes = run(service, client, monitor='shop', started_at='2026-01-01T10:00:00Z', cause='db')
    assert not again['changed'] and again['incident']['id'] == incident['id']
    assert len(log) == 2 and not writes


def test_natural_key_matches_to_the_second_and_by_monitor_id(service, client, monitor_id):
    incident_id = open_incident(service, monitor_id, '2026-01-01T10:00:00', ended_at='2026-01-01T10:30:00')
    found, log, writes = run(service, client, monitor_id=monitor_id, started_at='2026-01-01T10:00:00.900Z')
    assert not found['changed'] and found['incident']['id'] == incident_id
    assert len(log) == 1 and log[0]['path'] == '/api/v1/incidents' and not writes
    assert parse_qs(log[0]['query'])['monitor_id'] == [str(monitor_id)]


def test_natural_key_finds_an_old_incident_among_many(service, client, monitor_id):
    ids = [open_incident(service, monitor_id, '2026-01-%02dT10:00:00' % day, ended_at='2026-01-%02dT11:00:00' % day)
           for day in range(1, 13)]
    found, log, dummy = run(service, client, monitor_id=monitor_id, started_at='2026-01-02T10:00:00')
    assert found['incident']['id'] == ids[1]
    assert len(log) == 1


def test_the_ongoing_incident_is_acknowledged_then_resolved(service, client, monitor_id):
    open_incident(service, monitor_id, '2026-01-01T10:00:00', ended_at='2026-01-01T10:30:00')
    ongoing = open_incident(service, monitor_id, '2026-01-02T10:00:00')
    acked, log, writes = run(service, client, monitor='shop', state='acknowledged')
    assert acked['changed'] and acked['incident']['id'] == ongoing
    assert acked['incident']['status'] == 'acknowledged' and acked['incident']['acknowledged_at']
    assert [entry['method'] for entry in log] == ['GET', 'GET', 'PUT']
    assert set(writes[0]['form']) == {'acknowledged_at'}
    again, log, writes = run(service, client, monitor_id=monitor_id, state='acknowledged')
    assert not again['changed'] and len(log) == 1 and not writes
    resolved, log, writes = run(service, client, monitor_id=monitor_id, state='resolved', comment='fixed')
    assert resolved['changed'] and resolved['incident']['status'] == 'resolved'
    assert resolved['incident']['acknowledged_at'] == acked['incident']['acknowledged_at']
    assert set(writes[0]['form']) == {'ended_at', 'comment'}
    # No ongoing incident any more: the re-run checks the latest one and changes nothing.
    rerun, log, writes = run(service, client, monitor_id=monitor_id, state='resolved', comment='fixed')
    assert not rerun['changed'] and rerun['incident']['id'] == ongoing and not writes


def test_without_an_ongoing_incident_present_opens_one_started_now(service, client, monitor_id):
    past = open_incident(service, monitor_id, '2026-01-01T10:00:00', ended_at='2026-01-01T10:30:00', comment='old')
    # A task that asks what the latest incident holds is a re-run after that incident ended: it opens nothing.
    rerun, dummy, writes = run(service, client, monitor_id=monitor_id, comment='old')
    assert not rerun['changed'] and rerun['incident']['id'] == past and not writes
    assert 'no incident opened' in rerun['msg']
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    opened, dummy, writes = run(service, client, monitor_id=monitor_id, comment='late note')
    after = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    assert opened['changed'] and opened['incident']['id'] != past
    assert [entry['method'] for entry in writes] == ['POST']
    started = datetime.datetime.strptime(to_utc_timestamp(opened['incident']['started_at']), '%Y-%m-%dT%H:%M:%SZ')
    assert before <= started <= after
    assert service.api('GET', '/api/v1/incidents/%d' % past).json['data']['comment'] == 'old'
    # The re-run finds the incident it opened (ongoing): no second incident.
    again, dummy, writes = run(service, client, monitor_id=monitor_id, comment='late note')
    assert not again['changed'] and again['incident']['id'] == opened['incident']['id'] and not writes


def test_a_monitor_without_incidents_gets_one_started_now(service, client, monitor_id):
    # Resolving the current incident of a monitor without one has nothing to do, and says so.
    nothing, log, writes = run(service, client, monitor_id=monitor_id, state='resolved')
    assert not nothing['changed'] and nothing['incident'] == {} and len(log) == 1 and not writes
    assert nothing['msg'] == 'monitor id %d has no incident: nothing to resolve' % monitor_id
    # With a comment to record, it fails instead of dropping it.
    with pytest.raises(ValidationError) as caught:
        run(service, client, monitor='shop', state='acknowledged', comment='on it')
    assert caught.value.field == 'comment'
    assert "monitor 'shop' has no incident: nothing to acknowledge, so comment would not be recorded" in str(caught.value)
    opened, dummy, writes = run(service, client, monitor_id=monitor_id, cause='db')
    assert opened['changed'] and opened['incident']['cause'] == 'db' and opened['incident']['status'] == 'unresolved'
    assert set(writes[0]['form']) == {'monitor_id', 'started_at', 'cause'}


def test_acknowledging_after_the_resolution_fails_rather_than_drop_the_comment(service, client, monitor_id):
    ongoing = open_incident(service, monitor_id, '2026-01-01T10:00:00')
    run(service, client, monitor_id=monitor_id, state='acknowledged', comment='on it')
    resolved, dummy, dummy = run(service, client, monitor_id=monitor_id, state='resolved', comment='fixed')
    # The resolution replaced the comment: acknowledging "on it" now would record nothing.
    with pytest.raises(ValidationError) as caught:
        run(service, client, monitor='shop', state='acknowledged', comment='on it')
    message = str(caught.value)
    assert caught.value.field == 'comment'
    assert "monitor 'shop' has no ongoing incident to acknowledge: its latest incident (id %d) ended at" % ongoing in message
    assert 'comment would not be recorded on it' in message and 'give id to change a past incident' in message
    assert not service.writes()
    # The same for a cause given to resolve.
    with pytest.raises(ValidationError) as caught:
        run(service, client, monitor='shop', state='resolved', comment='fixed', cause='disk full')
    assert caught.value.field == 'cause' and 'no ongoing incident to resolve' in str(caught.value)
    # What the latest incident already holds is no change: the re-run of the resolution stays green.
    again, log, writes = run(service, client, monitor_id=monitor_id, state='resolved', comment='fixed')
    assert not again['changed'] and again['incident']['id'] == resolved['incident']['id']
    assert len(log) == 1 and not writes
    assert again['msg'].startswith('monitor id %d has no ongoing incident: nothing to resolve' % monitor_id)
    acked, dummy, writes = run(service, client, monitor_id=monitor_id, state='acknowledged')
    assert not acked['changed'] and not writes and 'nothing to acknowledge' in acked['msg']


def test_appended_comments_keep_the_acknowledgement_and_are_not_appended_twice(service, client, monitor_id):
    open_incident(service, monitor_id, '2026-01-01T10:00:00')
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
        assert not again['changed'] and not writes and again['incident']['comment'] == comment, state


def test_appending_an_empty_comment_keeps_the_comment(service, client, monitor_id):
    incident_id = open_incident(service, monitor_id, '2026-01-01T10:00:00', comment='operator notes')
    for state in ('present', 'acknowledged'):
        result, dummy, writes = run(service, client, monitor_id=monitor_id, state=state, comment='',
                                    comment_mode='append')
        assert result['incident']['comment'] == 'operator notes'
        assert all('comment' not in write['form'] for write in writes), state
    stored = service.api('GET', '/api/v1/incidents/%d' % incident_id).json['data']
    assert stored['comment'] == 'operator notes' and stored['acknowledged_at']


def test_now_works_in_the_hour_repeated_when_daylight_saving_time_ends(service, client, monitor_id):
    """Opening, acknowledging and resolving "now" at 01:30 EST on 2025-11-02 (06:30 UTC, the second 01:30)."""
    service.timezone('America/New_York')
    repeated = datetime.datetime(2025, 11, 2, 6, 30)
    zone = account_zone(client, 'America/New_York')

    def now_task(**values):
        return ensure_task(INCIDENTS, client, params(**values), False, IDENTITY, now=repeated, zone=zone)
    ongoing = open_incident(service, monitor_id, '2025-11-01T23:00:00')  # local time: 2025-11-02T03:00:00Z
    acknowledged = now_task(monitor_id=monitor_id, state='acknowledged')
    resolved = now_task(monitor_id=monitor_id, state='resolved')
    # The last second before the repeated hour's second occurrence: the latest time the service can be sent.
    assert acknowledged['incident']['acknowledged_at'] == '2025-11-02T05:59:59Z'
    assert resolved['incident']['ended_at'] == '2025-11-02T05:59:59Z'
    assert resolved['incident']['id'] == ongoing and resolved['incident']['status'] == 'resolved'
    stored = service.api('GET', '/api/v1/incidents/%d' % ongoing).json['data']
    assert (to_utc_timestamp(stored['acknowledged_at']), to_utc_timestamp(stored['ended_at'])) == (
        '2025-11-02T05:59:59Z', '2025-11-02T05:59:59Z')
    other = int(service.api('POST', '/api/v1/monitors', data={
        'name': 'other', 'url': 'https://o.example.com', 'interval': 60, 'request_method': 'GET',
        'alert_condition': 'url_unavailable'}).json['data']['id'])
    opened = now_task(monitor_id=other, cause='opened now')
    assert opened['changed'] and opened['incident']['started_at'] == '2025-11-02T05:59:59Z'
    # A time the user gives is never moved: in the second occurrence it is refused, as before.
    with pytest.raises(ValidationError) as caught:
        now_task(monitor_id=monitor_id, started_at='2025-11-02T06:15:00Z', cause='given')
    assert caught.value.field == 'started_at' and 'occurs twice' in str(caught.value)


class OneIncident:
    """A client that holds one incident: enough for a task that addresses it by id."""

    def __init__(self, record):
        self.record = record

    def get_or_none(self, path):
        return self.record if path.endswith('/%s' % self.record['id']) else None


@pytest.mark.parametrize('check_mode', [True, False])
def test_now_that_cannot_fit_an_incident_begun_in_the_repeated_hour_is_refused_saying_when_it_can(check_mode):
    # The checker stores UTC itself: an incident that began at the second 01:10 in New York (06:10 UTC).
    client = OneIncident({'id': 7, 'monitor': {'id': 3, 'name': 'shop'}, 'started_at': '2025-11-02T06:10:00Z',
                          'acknowledged_at': None, 'ended_at': None, 'cause': None, 'comment': None})
    with pytest.raises(ValidationError) as caught:
        ensure_task(INCIDENTS, client, params(id=7, state='resolved'), check_mode, IDENTITY,
                    now=datetime.datetime(2025, 11, 2, 6, 30), zone=account_zone(client, 'America/New_York'))
    message = str(caught.value)
    assert caught.value.field == 'ended_at' and 'now falls in the hour repeated' in message
    assert 'latest time it can be sent, 2025-11-02T05:59:59Z, does not fit: must be after started_at' in message
    assert message.endswith('run the task again from 2025-11-02T07:00:00Z, when the repeated hour is over')


def test_now_that_does_not_fit_outside_the_repeated_hour_is_told_as_it_is():
    client = OneIncident({'id': 7, 'monitor': {'id': 3, 'name': 'shop'}, 'started_at': '2026-01-05T10:00:00Z',
                          'acknowledged_at': None, 'ended_at': None, 'cause': None, 'comment': None})
    with pytest.raises(ValidationError) as caught:
        ensure_task(INCIDENTS, client, params(id=7, state='resolved'), True, IDENTITY,
                    now=datetime.datetime(2026, 1, 5, 10, 0), zone=account_zone(client, 'America/New_York'))
    assert str(caught.value) == ('ended_at: must be after started_at (2026-01-05T10:00:00Z), got '
                                 '2026-01-05T10:00:00Z')


def test_incidents_of_a_monitor_named_with_surrounding_spaces_are_found(service, client, monitor_id):
    incident_id = open_incident(service, monitor_id, '2026-01-01T10:00:00')
    found = info_task(INCIDENTS, client, dict(INFO_PARAMS, monitor='  shop '))
    assert [incident['id'] for incident in found['incidents']] == [incident_id]
    assert info_task(INCIDENTS, client, dict(INFO_PARAMS, monitor='Shop'))['incidents'] == []  # exactly the name


def test_an_appended_comment_over_the_limit_is_refused_before_any_write(service, client, monitor_id):
    open_incident(service, monitor_id, '2026-01-01T10:00:00', comment='x' * 1000)
    with pytest.raises(ValidationError) as caught:
        run(service, client, monitor_id=monitor_id, comment='y' * 30, comment_mode='append')
    assert caught.value.field == 'comment' and 'at most 1024' in str(caught.value)
    assert 'appended' in str(caught.value) and not service.writes()


@pytest.mark.parametrize('name', ['nope', 'SHOP'])
def test_an_unknown_monitor_name_fails_clearly(service, client, monitor_id, name):
    with pytest.raises(ValidationError) as caught:
        run(service, client, monitor=name, started_at='2026-01-01T10:00:00')
    assert caught.value.field == 'monitor' and "no monitor is named %r" % name in str(caught.value)


def test_by_id_the_monitor_name_must_be_the_incidents(service, client, monitor_id):
    incident_id = open_incident(service, monitor_id, '2026-01-01T10:00:00')
    same, log, dummy = run(service, client, id=incident_id, monitor='shop')
    assert not same['changed'] and len(log) == 1
    service.api('POST', '/api/v1/monitors', data={'name': 'api', 'url': 'https://api.example.com', 'interval': 60,
                                                  'request_method': 'GET', 'alert_condition': 'url_unavailable'})
    for other in ('api', 'SHOP'):  # a name in another case is another monitor's
        with pytest.raises(ValidationError) as caught:
            run(service, client, id=incident_id, monitor=other)
        assert caught.value.field == 'monitor' and "belongs to monitor 'shop'" in str(caught.value)


def test_an_unknown_id_fails_and_is_not_created(service, client, monitor_id):
    with pytest.raises(UptimeApiError) as caught:
        run(service, client, id=999, monitor_id=monitor_id, cause='x')
    assert caught.value.status == 404 and 'chosen id' in str(caught.value)


def test_write_once_refusal_sends_nothing(service, client, monitor_id):
    incident_id = open_incident(service, monitor_id, '2026-01-01T10:00:00', ended_at='2026-01-01T10:30:00')
    with pytest.raises(ValidationError) as caught:
        run(service, client, id=incident_id, ended_at='2026-01-01T10:45:00')
    assert caught.value.field == 'ended_at' and 'only once' in str(caught.value)
    same, log, writes = run(service, client, id=incident_id, ended_at='2026-01-01T11:30:00+01:00')
    assert not same['changed'] and len(log) == 1 and not writes


def test_acknowledged_at_before_the_stored_start_is_refused(service, client, monitor_id):
    incident_id = open_incident(service, monitor_id, '2026-01-01T10:00:00')
    with pytest.raises(ValidationError) as caught:
        run(service, client, id=incident_id, acknowledged_at='2026-01-01T09:00:00')
    assert caught.value.field == 'acknowledged_at'
    assert not service.writes()


def test_the_services_refusals_are_told_before_the_post(service, client, monitor_id):
    open_incident(service, monitor_id, '2026-01-01T10:00:00', ended_at='2026-01-01T10:30:00')
    with pytest.raises(ValidationError) as caught:
        run(service, client, monitor_id=monitor_id, started_at='2026-01-01T10:20:00')
    assert 'after the end of the last incident' in str(caught.value)
    open_incident(service, monitor_id, '2026-01-02T10:00:00')
    with pytest.raises(ValidationError) as caught:
        run(service, client, monitor_id=monitor_id, started_at='2026-01-03T10:00:00', check_mode=True)
    assert 'already has an ongoing incident' in str(caught.value)
    assert not service.writes()


def test_a_refusal_the_pre_check_missed_comes_back_readable(service, client, monitor_id, monkeypatch):
    # As if another client opened an incident between the lookup and the POST.
    open_incident(service, monitor_id, '2026-01-01T10:00:00')
    monkeypatch.setattr(IncidentResource, '_check_can_open', staticmethod(lambda *args: None))
    with pytest.raises(UptimeApiError) as caught:
        run(service, client, monitor_id=monitor_id, started_at='2026-01-02T10:00:00')
    assert caught.value.status == 422
    assert 'monitor_id: The monitor already has an ongoing incident.' in str(caught.value)
    assert [entry['method'] for entry in service.log()] == ['GET', 'POST', 'GET']


def test_create_by_monitor_id_takes_three_requests(service, client, monitor_id):
    created, log, writes = run(service, client, monitor_id=monitor_id, started_at='2026-01-01T10:00:00')
    assert created['changed'] and created['incident']['monitor_name'] == 'shop'
    assert [(entry['method'], entry['path']) for entry in log] == [
        ('GET', '/api/v1/incidents'), ('POST', '/api/v1/incidents'),
        ('GET', '/api/v1/incidents/%d' % created['incident']['id'])]


def test_a_lost_post_answer_is_looked_up_not_sent_again(service, client, monitor_id):
    service.fault('drop', method='POST', path='/api/v1/incidents', when='after')
    created, log, writes = run(service, client, monitor_id=monitor_id, started_at='2026-01-01T10:00:00', cause='db')
    assert created['changed'] and created['incident']['cause'] == 'db' and created['incident']['id']
    assert [entry['method'] for entry in writes] == ['POST']
    assert [(entry['method'], entry['fault']) for entry in log][1:3] == [('POST', 'drop'), ('GET', None)]
    assert len(service.api('GET', '/api/v1/incidents').json['data']) == 1


def test_absent_by_each_identity(service, client, monitor_id):
    first = open_incident(service, monitor_id, '2026-01-01T10:00:00', ended_at='2026-01-01T10:30:00')
    ongoing = open_incident(service, monitor_id, '2026-01-02T10:00:00')
    gone, dummy, writes = run(service, client, check_mode=True, monitor='shop', state='absent')
    assert gone['changed'] and gone['diff']['before']['started_at'] == '2026-01-02T10:00:00Z' and not writes
    gone, dummy, writes = run(service, client, monitor='shop', state='absent')
    assert gone['changed'] and writes[0]['path'] == '/api/v1/incidents/%d' % ongoing
    # Only the ongoing incident is addressed by a monitor alone: the past one stays.
    again, dummy, writes = run(service, client, monitor='shop', state='absent')
    assert not again['changed'] and not writes
    with pytest.raises(ValidationError) as caught:  # by id, and a start that is another incident's: which one?
        run(service, client, id=first, started_at='2026-01-01T09:00:00', state='absent')
    assert caught.value.field == 'started_at' and 'incident %d has started_at 2026-01-01T10:00:00Z' % first in str(
        caught.value) and not service.writes()
    gone, dummy, writes = run(service, client, monitor_id=monitor_id, started_at='2026-01-01T10:00:00', state='absent')
    assert gone['changed'] and writes[0]['path'] == '/api/v1/incidents/%d' % first
    again, log, writes = run(service, client, id=first, state='absent')
    assert not again['changed'] and again['incident'] == {} and len(log) == 1
    unknown, log, writes = run(service, client, monitor='nope', state='absent')
    assert not unknown['changed'] and not writes


def test_stringly_answers_compare_equal(service, client, monitor_id):
    incident_id = open_incident(service, monitor_id, '2026-01-01T10:00:00', cause='db')
    service.quirks(stringly=True)
    same, dummy, writes = run(service, client, monitor_id=monitor_id, cause='db')
    assert not same['changed'] and same['incident']['id'] == incident_id and not writes
    assert same['incident']['monitor_id'] == monitor_id


def test_appending_with_nothing_ongoing_says_there_is_nothing_to_acknowledge(service, client, monitor_id):
    open_incident(service, monitor_id, '2026-01-01T10:00:00', ended_at='2026-01-01T11:00:00', comment='x' * 1020)
    with pytest.raises(ValidationError) as caught:
        run(service, client, monitor_id=monitor_id, state='acknowledged', comment='on it', comment_mode='append')
    assert caught.value.field == 'comment' and 'no ongoing incident to acknowledge' in str(caught.value)
    assert not service.writes()
