# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.uptime.monitoring.plugins.module_utils._client import encode_form, normalise_base_url, parse_retry_after
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import (
    MASK,
    Field,
    Schema,
    to_bool,
    to_int,
    to_pairs,
    to_utc_timestamp,
)
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA


@pytest.mark.parametrize('read, value, expected', [
    (to_utc_timestamp, '2026-01-01T12:00:00', '2026-01-01T12:00:00Z'),
    (to_utc_timestamp, '2026-01-01T12:00:00.000000Z', '2026-01-01T12:00:00Z'),
    (to_utc_timestamp, '2026-01-01T12:00:00.999Z', '2026-01-01T12:00:00Z'),
    (to_utc_timestamp, '2026-01-01T14:30:00+02:00', '2026-01-01T12:30:00Z'),
    (to_utc_timestamp, '2026-01-01T00:30:00-01:00', '2026-01-01T01:30:00Z'),
    (to_utc_timestamp, '2026-01-01 12:00:00', '2026-01-01T12:00:00Z'),
    (to_utc_timestamp, '', None), (to_utc_timestamp, None, None),
    (to_int, '60', 60), (to_int, 60, 60), (to_int, '', None), (to_int, None, None), (to_int, True, 1),
    (to_bool, '1', True), (to_bool, 1, True), (to_bool, '0', False), (to_bool, 0, False), (to_bool, False, False),
    (to_bool, None, None),
    (to_pairs, None, []),
    (to_pairs, {'2': {'key': 'sms', 'value': '+1'}, '0': {'key': 'email', 'value': 'a@b.io'}},
     [{'key': 'email', 'value': 'a@b.io'}, {'key': 'sms', 'value': '+1'}]),
    (normalise_base_url, 'https://x.example/api/v1/', 'https://x.example'),
    (normalise_base_url, 'https://x.example/uptime', 'https://x.example/uptime'),
    (parse_retry_after, '3', 3.0), (parse_retry_after, None, None), (parse_retry_after, 'nonsense', None),
    (parse_retry_after, 'nan', None), (parse_retry_after, 'inf', None),
    (lambda value: parse_retry_after(value, now=1767225600.0), 'Thu, 01 Jan 2026 00:00:10 GMT', pytest.approx(10.0)),  # an HTTP date
])
def test_what_the_service_sends_is_read_as_one_value(read, value, expected):
    assert read(value) == expected


def test_form_encoding_of_lists_booleans_and_clears():
    assert encode_form({'alerts': [{'key': 'email', 'value': 'a@b.io'}, {'key': 'sms', 'value': '12'}], 'request_headers': [],
                        'pause': False, 'cache_buster': True, 'maintenance_start_at': None}) == [
        ('alerts[0][key]', 'email'), ('alerts[0][value]', 'a@b.io'), ('alerts[1][key]', 'sms'), ('alerts[1][value]', '12'),
        ('request_headers', ''), ('pause', '0'), ('cache_buster', '1'), ('maintenance_start_at', '')]


def test_differences_only_for_managed_fields_pairs_without_order_and_trimmed_text():
    record = {'name': 'a', 'interval': '60', 'alerts': {'0': {'key': 'email', 'value': 'a@b.io'}},
              'status': 'online', 'cache_buster': 0}
    current = MONITOR_SCHEMA.current(record)
    desired = MONITOR_SCHEMA.desired({'interval': 60, 'alerts': [{'key': 'email', 'value': 'a@b.io'}], 'paused': True})
    assert MONITOR_SCHEMA.differences(desired, current) == {'paused': True}
    # Pairs compare without order but with multiplicity; text is trimmed and blank is no value.
    first = [{'key': 'email', 'value': 'a@b.io'}, {'key': 'sms', 'value': '1'}]
    field = MONITOR_SCHEMA.by_name['alerts']
    assert field.comparable(first) == field.comparable(list(reversed(first))) != field.comparable(first + first[:1])
    assert MONITOR_SCHEMA.desired({'alert_text_lookup': '  OK ', 'name': '   '}) == {'alert_text_lookup': 'OK', 'name': None}


@pytest.mark.parametrize('stored, desired, changed', [
    ({'maintenance_start_at': '2026-01-01T10:00:00.000000Z', 'maintenance_end_at': '2026-01-01T11:00:00.000000Z'},
     {'maintenance_start_at': '2026-01-01T10:00:00Z', 'maintenance_end_at': '2026-01-01T12:00:00Z'}, 'maintenance_end_at'),
    ({'alert_condition': 'url_unavailable', 'alert_text_lookup': 'OK'}, {'alert_condition': 'url_text', 'alert_text_lookup': 'OK'},
     'alert_condition'),  # a changed condition carries its lookup text
])
def test_companions_are_sent_with_a_changed_field(stored, desired, changed):
    current = MONITOR_SCHEMA.current(stored)
    changes = MONITOR_SCHEMA.differences(desired, current)
    assert changes == {changed: desired[changed]}
    assert MONITOR_SCHEMA.with_companions(changes, desired, current) == desired


def test_masking_and_diff_of_secrets():
    before = MONITOR_SCHEMA.current({'request_auth_password': 'old-secret',
                                     'request_headers': [{'key': 'X-Api-Key', 'value': 'k1'}, {'key': 'Accept', 'value': 'a'}]})
    after = dict(before, request_auth_password='new-secret',
                 request_headers=[{'key': 'X-Api-Key', 'value': 'k2'}, {'key': 'Accept', 'value': 'a'}])
    shown_before, shown_after = MONITOR_SCHEMA.diff(before, after, ['request_auth_password', 'request_headers'])  # the password: test_secrets.py
    assert shown_after['request_headers'][0]['value'] == MASK + ' (changed)'
    assert shown_after['request_headers'][1] == {'key': 'Accept', 'value': 'a'}


def test_diff_of_webhook_alerts_keeps_the_host_and_says_what_changed():
    old_url, new_url = 'https://hooks.slack.com/services/T0/B0/old-part', 'https://hooks.slack.com/services/T0/B0/new-part'
    before = MONITOR_SCHEMA.current({'alerts': [{'key': 'slack', 'value': old_url}, {'key': 'email', 'value': 'a@b.io'},
                                                {'key': 'teams', 'value': 'https://team.example.com/kept-part'}]})
    after = dict(before, alerts=[{'key': 'slack', 'value': new_url}, {'key': 'email', 'value': 'c@d.io'},
                                 {'key': 'teams', 'value': 'https://team.example.com/kept-part'}])
    shown_before, shown_after = MONITOR_SCHEMA.diff(before, after, ['alerts'])
    assert shown_before['alerts'][0] == {'key': 'slack', 'value': 'https://hooks.slack.com/' + MASK}
    assert shown_after['alerts'] == [{'key': 'slack', 'value': 'https://hooks.slack.com/%s (changed)' % MASK},
                                     {'key': 'email', 'value': 'c@d.io'},
                                     {'key': 'teams', 'value': 'https://team.example.com/' + MASK}]
    # Idempotence compares the real values: the same URLs make no difference, another one does.
    assert MONITOR_SCHEMA.differences({'alerts': before['alerts']}, before) == {}
    assert MONITOR_SCHEMA.differences({'alerts': after['alerts']}, before) == {'alerts': after['alerts']}


SCHEMA = Schema([
    Field('name', required=True, min_length=1, max_length=8),
    Field('size', 'int', default=0),
    Field('start', 'timestamp', together='end', on_update=False),
    Field('end', 'timestamp', together='start', later_than='start', not_future=True),
    Field('closed', 'timestamp', write_once=True, not_before='start'),
    Field('items', 'pairs', max_items=2, check=lambda item: ('value', 'too long') if len(item['value']) > 3 else None),
])


def test_the_stored_default_reads_for_empty_and_resets_and_a_field_the_record_lacks_comes_from_the_fallback():
    assert SCHEMA.current({'name': 'a', 'size': None, 'items': None}) == dict(name='a', size=0, start=None, end=None, closed=None, items=[])
    assert SCHEMA.reset_values() == {'size': 0, 'start': None, 'end': None, 'closed': None, 'items': []}
    assert SCHEMA.created({'name': 'a'}) == {'name': 'a', 'size': 0, 'start': None, 'end': None, 'closed': None, 'items': []}
    current = SCHEMA.current({'name': 'a'}, fallback={'size': 5})
    assert current['size'] == 5
    assert current['items'] is None  # not as empty
