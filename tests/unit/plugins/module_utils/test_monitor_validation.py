# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR, MONITORS
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK, ValidationError, mask_url

OPTIONS = [field.name for field in MONITOR.fields]


def desired_from_params(values):
    """What the modules do with the options before any request: normalise, then validate."""
    desired = MONITOR.desired(values)
    MONITOR.validate(desired)
    MONITOR.check_order(desired)
    return desired


def public_view(record):
    return MONITORS.record_view(record)


def params(**values):
    full = dict.fromkeys(OPTIONS)
    full.update(values)
    return full


@pytest.mark.parametrize('values, field, fragment', [
    ({'name': ''}, 'name', '1 to 128'),
    ({'name': 'x' * 129}, 'name', '1 to 128'),
    ({'url': 'ftp://example.com'}, 'url', 'http://'),
    ({'url': 'not a url'}, 'url', 'http://'),
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
    ({'alerts': [{'key': 'sms', 'value': '+12 345'}]}, 'alerts[0].value', 'digits'),
    ({'alerts': [{'key': 'sms', 'value': '+' + '1' * 16}]}, 'alerts[0].value', '16'),
    ({'alerts': [{'key': 'telegram', 'value': 'x' * 129}]}, 'alerts[0].value', '128'),
    ({'alerts': [{'key': 'email', 'value': 'a@b.io'}, {'key': 'slack', 'value': 'hooks.slack.com/x'}]},
     'alerts[1].value', 'URL'),
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


def test_public_view_normalises_and_masks():
    view = public_view(SERVICE_RECORD)
    assert view['id'] == 12 and view['interval'] == 300 and view['ssl_alert_days'] == 14
    assert view['cache_buster'] is True and view['paused'] is True and view['status'] == 'paused'
    assert view['created_at'] == '2026-01-01T00:00:00Z' and view['updated_at'] == '2026-01-02T00:00:00Z'
    assert view['alerts'] == [{'key': 'email', 'value': 'ops@example.com'}]
    assert view['request_auth_password'] == MASK
    assert view['request_headers'] == [{'key': 'Authorization', 'value': MASK}, {'key': 'Accept', 'value': 'text/html'}]
    assert 'hunter2' not in repr(view) and 'Bearer abc' not in repr(view)


def test_export_leaves_out_secrets_and_names_them():
    args, omitted = MONITORS.export(public_view(SERVICE_RECORD))
    assert args['paused'] is True and args['interval'] == 300 and args['name'] == 'api'
    assert 'request_auth_username' not in args and 'request_auth_password' not in args
    assert 'request_headers' not in args
    assert omitted == ['request_headers', 'request_auth_username', 'request_auth_password']
    # Alerts without a webhook are no secret: exported as they are.
    assert args['alerts'] == [{'key': 'email', 'value': 'ops@example.com'}]
    assert 'id' not in args and 'status' not in args and args['domain_alert_days'] == 0
    desired_from_params(params(**args))


SLACK = 'https://hooks.slack.com/services/T0AAA/B0BBB/xoxSecretPart'
TEAMS = 'https://contoso.webhook.office.com/webhookb2/0f0e-secret@tenant/IncomingWebhook/abc/def'
ALERTS = [{'key': 'email', 'value': 'ops@example.com'}, {'key': 'slack', 'value': SLACK},
          {'key': 'teams', 'value': TEAMS}, {'key': 'telegram', 'value': '@ops_channel'},
          {'key': 'sms', 'value': '+4412345'}, {'key': 'webhook', 'value': 'http://user:pw@hooks.example.com:8080/x?k=v'},
          {'key': 'discord', 'value': 'https://discord.com/api/webhooks/1/tok'},
          {'key': 'flock', 'value': 'https://api.flock.com/hooks/sendMessage/f1'}]


def test_webhook_urls_show_only_where_they_lead():
    view = public_view(dict(SERVICE_RECORD, alerts=ALERTS))
    assert view['alerts'] == [
        {'key': 'email', 'value': 'ops@example.com'},
        {'key': 'slack', 'value': 'https://hooks.slack.com/' + MASK},
        {'key': 'teams', 'value': 'https://contoso.webhook.office.com/' + MASK},
        {'key': 'telegram', 'value': '@ops_channel'},
        {'key': 'sms', 'value': '+4412345'},
        # The user and password of a URL are no part of where it leads: masked too.
        {'key': 'webhook', 'value': 'http://hooks.example.com:8080/' + MASK},
        {'key': 'discord', 'value': 'https://discord.com/' + MASK},
        {'key': 'flock', 'value': 'https://api.flock.com/' + MASK},
    ]
    text = repr(view)
    for secret in ('xoxSecretPart', '0f0e-secret', 'user:pw', 'k=v', '/tok', 'sendMessage'):
        assert secret not in text


@pytest.mark.parametrize('value', ['hooks.slack.com/services/x', '', 'https://', 'not a url at all'])
def test_a_value_without_scheme_and_host_is_masked_whole(value):
    assert mask_url(value) == MASK


def test_webhook_urls_are_secret_values_and_the_others_are_not():
    values = MONITOR.secret_values(MONITOR.current(dict(SERVICE_RECORD, alerts=ALERTS)))
    urls = [alert['value'] for alert in ALERTS if alert['key'] in ('slack', 'teams', 'webhook', 'discord', 'flock')]
    assert sorted(urls) == sorted(value for value in values if value in urls)
    assert not {'ops@example.com', '@ops_channel', '+4412345'} & set(values)


def test_export_leaves_out_an_alert_list_with_a_webhook_whole():
    record = dict(SERVICE_RECORD, request_headers=None, request_auth_username=None, request_auth_password=None,
                  alerts=ALERTS[:2])
    args, omitted = MONITORS.export(public_view(record))
    assert omitted == ['alerts']
    assert 'alerts' not in args and 'xoxSecretPart' not in repr(args)
    desired_from_params(params(**args))


def test_an_invalid_webhook_url_is_refused_without_showing_it():
    url = 'ftp://hooks.slack.com/services/T0/B0/xyzzy'
    with pytest.raises(ValidationError) as caught:
        desired_from_params(params(alerts=[{'key': 'slack', 'value': url}]))
    assert caught.value.field == 'alerts[0].value'
    assert 'xyzzy' not in str(caught.value)
    assert "'ftp://hooks.slack.com/%s' (%d characters) is not a valid http(s) URL" % (MASK, len(url)) in str(caught.value)


class FakePages:
    """A client whose search answers with fixed pages."""

    def __init__(self, pages):
        self.pages = pages
        self.queries = []

    def iter_pages(self, path, params):
        self.queries.append((path, dict(params)))
        return iter(self.pages)


def test_find_by_name_prefers_the_exact_name_over_substrings_and_case():
    client = FakePages([[{'id': 1, 'name': 'Shop'}, {'id': 2, 'name': 'shop-eu'}], [{'id': 3, 'name': 'shop'}]])
    assert MONITORS.find_by_name(client, 'shop')['id'] == 3
    assert client.queries == [('/api/v1/monitors', {'search': 'shop', 'search_by': 'name', 'per_page': 100})]


def test_find_by_name_takes_no_name_in_another_case():
    client = FakePages([[{'id': 1, 'name': 'Shop'}, {'id': 2, 'name': 'shop-eu'}]])
    assert MONITORS.find_by_name(client, 'shop') is None


def test_find_by_name_searches_around_backslashes():
    client = FakePages([[{'id': 5, 'name': 'C:\\shares\\backup'}]])
    assert MONITORS.find_by_name(client, 'C:\\shares\\backup')['id'] == 5
    assert client.queries[0][1]['search'] == 'shares'


def test_other_read_only_facts_pass_through_and_secret_looking_ones_are_masked():
    view = public_view(dict(SERVICE_RECORD, user_id=3, uptime_percentage='99.9', heartbeat_token='tok-123'))
    assert view['user_id'] == 3 and view['uptime_percentage'] == '99.9'
    assert view['heartbeat_token'] == MASK
    assert 'pause' not in view and 'tok-123' not in repr(view)


def test_an_empty_service_value_reads_as_the_create_default():
    view = public_view(SERVICE_RECORD)
    assert view['domain_alert_days'] == 0
    assert public_view(dict(SERVICE_RECORD, cache_buster=None, alerts=None))['cache_buster'] is False
    assert public_view(dict(SERVICE_RECORD, alerts=None))['alerts'] == []
