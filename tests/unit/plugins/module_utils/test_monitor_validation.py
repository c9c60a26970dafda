# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a monitor's options become before any request, and what a read shows of a record (that any invalid value of
any option fails naming it, before any request, is the bad-input law of tests/laws)."""

from __future__ import annotations

import pytest

from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA, MONITOR_RESOURCE
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK, ValidationError, mask_url

OPTIONS = [field.name for field in MONITOR_SCHEMA.fields]


def desired_from_params(values):
    desired = MONITOR_SCHEMA.desired(values)
    MONITOR_SCHEMA.validate(desired)
    MONITOR_SCHEMA.check_order(desired)
    return desired


def params(**values):
    full = dict.fromkeys(OPTIONS)
    full.update(values)
    return full


@pytest.mark.parametrize('values, field, fragment', [
    ({'name': ''}, 'name', '1 to 128'),
    ({'name': 'x' * 129}, 'name', '1 to 128'),
    ({'alert_condition': 'url_no_text', 'alert_text_lookup': ''}, 'alert_text_lookup', 'url_no_text'),
    ({'alert_text_lookup': 'x' * 256}, 'alert_text_lookup', '255'),
    ({'request_auth_username': 'u'}, 'request_auth_password', 'together'),
    ({'request_auth_password': 'p'}, 'request_auth_username', 'together'),
    ({'maintenance_start_at': '2026-01-01T10:00:00'}, 'maintenance_end_at', 'together'),
    ({'maintenance_start_at': '2026-01-01T10:00:00', 'maintenance_end_at': '2026-01-01T09:00:00'},
     'maintenance_end_at', 'after'),
    ({'maintenance_start_at': '2026-01-01T10:00:00+00:00', 'maintenance_end_at': '2026-01-01T11:00:00+02:00'},
     'maintenance_end_at', 'after'),
    ({'maintenance_start_at': '2026-01-01T10:00:00', 'maintenance_end_at': ''}, 'maintenance_start_at', 'both'),
    ({'maintenance_start_at': 'tomorrow', 'maintenance_end_at': '2026-01-01T09:00:00'}, 'maintenance_start_at',
     'Y-m-dTH:i:s'),
    ({'alerts': [{'key': 'email', 'value': 'not-an-address'}]}, 'alerts[0].value', 'e-mail'),
    ({'alerts': [{'key': 'email', 'value': 'ops@example..org'}]}, 'alerts[0].value', 'e-mail'),
    ({'alerts': [{'key': 'sms', 'value': '+12 345'}]}, 'alerts[0].value', 'digits'),
    ({'alerts': [{'key': 'sms', 'value': '+' + '1' * 16}]}, 'alerts[0].value', '16'),
    ({'alerts': [{'key': 'telegram', 'value': 'x' * 129}]}, 'alerts[0].value', '128'),
    ({'alerts': [{'key': 'telegram', 'value': '@ops_room'}]}, 'alerts[0].value', 'a chat id separated by a space'),
    ({'ssl_alert_days': 90}, 'ssl_alert_days', '30, 60, got 90'),
    ({'domain_alert_days': 120}, 'domain_alert_days', '60, 90, 180, got 120'),
    ({'alerts': [{'key': 'pager', 'value': 'x'}]}, 'alerts[0].key', 'email, webhook'),
    ({'alerts': [{'key': 'email', 'value': 'a@b.io'}] * 101}, 'alerts', '100'),
    ({'request_headers': [{'key': '', 'value': 'x'}]}, 'request_headers[0].key', '128'),
    ({'request_headers': [{'key': 'X', 'value': 'v' * 257}]}, 'request_headers[0].value', '256'),
    ({'request_headers': [{'key': 'X', 'value': ' '}]}, 'request_headers[0].value', '1 to 256'),
])
def test_invalid_input_names_the_field(values, field, fragment):
    with pytest.raises(ValidationError) as caught:
        desired_from_params(params(**values))
    assert caught.value.field == field
    assert fragment in str(caught.value)
    assert str(caught.value).startswith(field + ':')


def test_valid_input_is_normalised():
    desired = desired_from_params(params(
        name='shop', url='https://shop.example.com', interval=60, cache_buster=True,
        maintenance_start_at='2026-01-01T12:00:00+01:00', maintenance_end_at='2026-01-01T12:30:00Z',
        alerts=[{'key': 'sms', 'value': '+4412345'}, {'key': 'webhook', 'value': 'https://hook.example.com/x'}],
    ))
    assert desired['maintenance_start_at'] == '2026-01-01T11:00:00Z'
    assert desired['maintenance_end_at'] == '2026-01-01T12:30:00Z'
    assert desired['cache_buster'] is True
    assert 'url_text' not in desired


def test_empty_strings_clear_the_window_and_auth():
    desired = desired_from_params(params(
        maintenance_start_at='', maintenance_end_at='', request_auth_username='', request_auth_password=''))
    assert desired == {'maintenance_start_at': None, 'maintenance_end_at': None,
                       'request_auth_username': None, 'request_auth_password': None}


SERVICE_RECORD = {
    'id': '12', 'name': 'api', 'url': 'https://api.example.com', 'interval': '300',
    'alert_condition': 'url_text', 'alert_text_lookup': 'ok', 'request_method': 'POST',
    'request_headers': [{'key': 'Authorization', 'value': 'Bearer abc'}, {'key': 'Accept', 'value': 'text/html'}],
    'request_auth_username': 'bob', 'request_auth_password': 'hunter2', 'cache_buster': '1',
    'ssl_alert_days': '14', 'domain_alert_days': None,
    'maintenance_start_at': None, 'maintenance_end_at': None,
    'alerts': {'0': {'key': 'email', 'value': 'ops@example.com'}}, 'status': 'paused',
    'created_at': '2026-01-01T00:00:00.000000Z', 'updated_at': '2026-01-02T00:00:00.000000Z',
}


def test_public_view_normalises_masks_and_passes_other_read_only_facts_secret_looking_ones_masked():
    view = MONITOR_RESOURCE.record_view(dict(SERVICE_RECORD, user_id=3, uptime_percentage='99.9', heartbeat_token='tok-123'))
    assert view['user_id'] == 3
    assert view['uptime_percentage'] == '99.9'
    assert view['heartbeat_token'] == MASK
    assert 'pause' not in view
    assert 'tok-123' not in repr(view)
    assert view['id'] == 12
    assert view['interval'] == 300
    assert view['ssl_alert_days'] == 14
    assert view['cache_buster'] is True
    assert view['paused'] is True
    assert view['status'] == 'paused'
    assert view['created_at'] == '2026-01-01T00:00:00Z'
    assert view['updated_at'] == '2026-01-02T00:00:00Z'
    assert view['alerts'] == [{'key': 'email', 'value': 'ops@example.com'}]
    assert view['request_auth_password'] == MASK
    assert view['request_headers'] == [{'key': 'Authorization', 'value': MASK}, {'key': 'Accept', 'value': 'text/html'}]
    assert view['domain_alert_days'] == 0  # an empty service value reads as the create default
    assert MONITOR_RESOURCE.record_view(dict(SERVICE_RECORD, cache_buster=None, alerts=None))['cache_buster'] is False
    assert MONITOR_RESOURCE.record_view(dict(SERVICE_RECORD, alerts=None))['alerts'] == []


SLACK = 'https://hooks.slack.com/services/T0AAA/B0BBB/xoxSecretPart'
TEAMS = 'https://contoso.webhook.office.com/webhookb2/0f0e-secret@tenant/IncomingWebhook/abc/def'
ALERTS = [{'key': 'email', 'value': 'ops@example.com'}, {'key': 'slack', 'value': SLACK},
          {'key': 'teams', 'value': TEAMS}, {'key': 'telegram', 'value': 'bot123:tok ops_channel'},
          {'key': 'sms', 'value': '+4412345'}, {'key': 'webhook', 'value': 'http://user:pw@hooks.example.com:8080/x?k=v'},
          {'key': 'discord', 'value': 'https://discord.com/api/webhooks/1/tok'},
          {'key': 'flock', 'value': 'https://api.flock.com/hooks/sendMessage/f1'}]


def test_webhook_urls_show_only_where_they_lead():
    view = MONITOR_RESOURCE.record_view(dict(SERVICE_RECORD, alerts=ALERTS))
    assert view['alerts'] == [
        {'key': 'email', 'value': 'ops@example.com'},
        {'key': 'slack', 'value': 'https://hooks.slack.com/' + MASK},
        {'key': 'teams', 'value': 'https://contoso.webhook.office.com/' + MASK},
        # A telegram value holds a bot token.
        {'key': 'telegram', 'value': MASK},
        {'key': 'sms', 'value': '+4412345'},
        # The user and password of a URL are no part of where it leads: masked too.
        {'key': 'webhook', 'value': 'http://hooks.example.com:8080/' + MASK},
        {'key': 'discord', 'value': 'https://discord.com/' + MASK},
        {'key': 'flock', 'value': 'https://api.flock.com/' + MASK},
    ]


@pytest.mark.parametrize('value', ['hooks.slack.com/services/x', '', 'https://', 'not a url at all'])
def test_a_value_without_scheme_and_host_is_masked_whole(value):
    assert mask_url(value) == MASK


@pytest.mark.parametrize('values', [
    dict(url='http://localhost/'), dict(url='https://a.b./'), dict(url='http://[2001:db8::1]:8080/x'),
    dict(alerts=[{'key': 'email', 'value': 'ops@localhost'}, {'key': 'telegram', 'value': '123:token @ops'}]),
])  # domain_alert_days 90 and 180: the bad-input law's
def test_what_the_service_stores_is_taken(values):
    desired_from_params(params(**values))


# The service's url rule refuses these (service-facts "Monitors"); the reason shows the host alone, since the rest of
# a URL may hold credentials.
@pytest.mark.parametrize('url, reason', [
    ('https://.bad.example.org', 'the host .bad.example.org has an empty label'),
    ('https://a..b/hook', 'the host a..b has an empty label'),
    ('http://[fe80::1', 'the host [fe80::1 lacks the ]'),
    ('https://user:pw@[2001:db8::1/hook?key=K3Y', 'the host [2001:db8::1 lacks the ]'),
    ('ftp://hooks.slack.com/services/T0/B0/hook', 'starts with neither'),
])
def test_a_url_the_service_refuses_is_refused_naming_the_option_and_host(url, reason):
    for values, field in ((dict(url=url), 'url'), (dict(alerts=[{'key': 'slack', 'value': url}]), 'alerts[0].value')):
        with pytest.raises(ValidationError) as caught:
            desired_from_params(params(**values))
        assert caught.value.field == field
        assert reason in str(caught.value)
        assert not [part for part in ('/hook', 'pw@', 'K3Y') if part in str(caught.value)]


class FakePages:
    def __init__(self, pages):
        self.pages = pages
        self.queries = []

    def list(self, path, params, until):
        self.queries.append((path, dict(params)))
        read = []
        for page in self.pages:
            read += page
            if until(page):
                break
        return read


@pytest.mark.parametrize('pages, name, found, search', [
    ([[{'id': 1, 'name': 'Shop'}, {'id': 2, 'name': 'shop-eu'}], [{'id': 3, 'name': 'shop'}]], 'shop', 3, 'shop'),
    ([[{'id': 1, 'name': 'Shop'}, {'id': 2, 'name': 'shop-eu'}]], 'shop', None, 'shop'),  # no name in another case
    ([[{'id': 5, 'name': 'C:\\shares\\backup'}]], 'C:\\shares\\backup', 5, 'shares'),  # searched around backslashes
    ([[{'id': 4, 'name': 'shop'}]], ' shop ', 4, 'shop'),  # trimmed, as the service stores names
    ([[{'id': 6, 'name': 'Blog'}]], 'blog', None, 'blog'),
    ([[{'id': 1, 'name': 'shop'}]], 'sho', None, 'sho'),
])
def test_find_by_name_takes_the_exact_name_only(pages, name, found, search):
    client = FakePages(pages)
    assert (MONITOR_RESOURCE.find_by_name(client, name) or {}).get('id') == found
    assert client.queries == [('/api/v1/monitors', {'search': search, 'search_by': 'name', 'sort_by': 'id', 'sort': 'desc', 'per_page': 100})]
