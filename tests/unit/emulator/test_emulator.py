"""The service's own rules that no other test exercises, on the in-memory service (tests/unit/fake_client.py answers
through the service's handler), and the life of its process."""

from __future__ import annotations

import json

import pytest

from emulator import control
from emulator.control import OTHER_KEY, PRIMARY_KEY, Emulator
from fake_client import DROPPED, add_monitor, open_incident, stamp


# The examples of the framework's url rule (service-facts "Monitors").
GOOD_URLS = ['http://localhost/', 'https://a.b./', 'http://[fe80::1]:8080/x', 'https://u:p@h.example.org:99/x?y=1#z']
BAD_URLS = ['https://.bad.example.org', 'https://a..b', 'http://[fe80::1', 'https://[2001:db8::1/hook', 'http://h:/',
            'http://[::1]x', 'http://', 'ftp://example.org/']


def monitor_form(name='web', **extra):
    form = {'name': name, 'url': 'https://example.com/health', 'interval': 60, 'request_method': 'GET',
            'alert_condition': 'url_unavailable'}
    form.update(extra)
    return form


def create_monitor(service, name='web', api_key=None, **extra):
    return add_monitor(service, name, 'https://example.com/health', api_key, **extra)


def show(service, kind, record_id, api_key=None):
    response = service.api('GET', '/api/v1/%s/%d' % (kind, record_id), api_key=api_key)
    assert response.status == 200, response.text
    return response.json['data']


def test_validation_errors_are_keyed_by_field(service):
    create_monitor(service, 'taken')
    form = {
        'name': 'taken', 'url': 'ftp://example.com', 'interval': 61, 'alert_condition': 'url_text',
        'request_auth_username': 'u', 'maintenance_start_at': '2030-01-01 10:00:00', 'ssl_alert_days': 90, 'cache_buster': 'true',
        'domain_alert_days': 180,
        'alerts': [{'key': 'pager', 'value': 'x'}, {'key': 'email', 'value': 'a@b..c'}, {'key': 'sms', 'value': '+1-555'},
                   {'key': 'slack', 'value': 'not a url'}, {'key': 'telegram', 'value': '@chat_id_alone'},
                   {'key': 'email', 'value': 'ops@localhost'}, {'key': 'telegram', 'value': '123:token @chat'}],
        'request_headers': [{'key': 'X' * 129, 'value': 'v'}],
    }
    response = service.api('POST', '/api/v1/monitors', data=form)
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
def test_the_url_rule_is_the_services(service, url, accepted):
    response = service.api('POST', '/api/v1/monitors', data=monitor_form(url=url, alerts=[{'key': 'webhook', 'value': url}]))
    refused = set(response.json['message']) if response.status == 422 else set()
    assert refused == (set() if accepted else {'url', 'alerts.0.value'})


@pytest.mark.parametrize('ignore_case', [False, True])
def test_names_are_unique_as_written_or_without_case_as_on_mysql(service, ignore_case):
    service.names(ignore_case=ignore_case)
    lower, other = create_monitor(service, 'api'), create_monitor(service, 'web')
    created = service.api('POST', '/api/v1/monitors', data=monitor_form('API'))
    renamed = service.api('PUT', '/api/v1/monitors/%d' % other, data={'name': 'Api'})
    assert (created.status, renamed.status) == ((422, 422) if ignore_case else (201, 200))
    if ignore_case:
        assert created.json['message'] == renamed.json['message'] == {'name': ['The name has already been taken.']}
        assert service.api('PUT', '/api/v1/monitors/%d' % lower, data={'name': 'API'}).status == 200  # its own
    found = service.api('GET', '/api/v1/monitors', params={'search': 'aPi'}).json['data']
    assert len(found) == (1 if ignore_case else 3)  # the search ignores case in both modes
    service.reset()  # names compared as written again
    assert create_monitor(service, 'api')
    assert create_monitor(service, 'API')


def test_other_accounts_records_are_not_found(service):
    foreign = create_monitor(service, api_key=OTHER_KEY)
    incident = open_incident(service, foreign, api_key=OTHER_KEY)
    missing = service.api('GET', '/api/v1/monitors/9999')
    for method, path in (('GET', '/api/v1/monitors/%d'), ('PATCH', '/api/v1/monitors/%d'), ('DELETE', '/api/v1/monitors/%d')):
        response = service.api(method, path % foreign, data={'name': 'mine'} if method == 'PATCH' else None)
        assert (response.status, response.json) == (404, missing.json)
    assert service.api('GET', '/api/v1/incidents/%d' % incident).status == 404
    assert service.api('DELETE', '/api/v1/incidents/%d' % incident).status == 404
    assert service.api('GET', '/api/v1/monitors').json['meta']['total'] == 0
    assert service.api('GET', '/api/v1/incidents').json['meta']['total'] == 0
    response = service.api('POST', '/api/v1/incidents', data={'monitor_id': foreign, 'started_at': stamp(60)})
    assert response.status == 422
    assert response.json['message']['monitor_id'] == ['The selected monitor id is invalid.']
    assert show(service, 'monitors', foreign, api_key=OTHER_KEY)['name'] == 'web'


@pytest.mark.parametrize('value, status', [
    ('1', 'paused'), ('false', 'paused'), ('yes', 'paused'), ('true', 'paused'), ('0', 'online'), ('', 'online'),
])
def test_pause_uses_php_truthiness(service, value, status):
    monitor_id = create_monitor(service)
    service.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': '1'})
    record = service.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': value}).json['data']
    assert record['status'] == status
    assert 'pause' not in record


def test_deleting_an_ongoing_incident_puts_its_monitor_back_to_pending_a_paused_one_too(service):
    monitors = [add_monitor(service, name) for name in ('shop', 'paused')]
    incidents = [open_incident(service, monitor_id) for monitor_id in monitors]
    service.api('PUT', '/api/v1/monitors/%d' % monitors[1], data={'pause': 1})
    for incident_id in incidents:
        assert service.api('DELETE', '/api/v1/incidents/%d' % incident_id).status == 200
    assert [service.api('GET', '/api/v1/monitors/%d' % each).json['data']['status'] for each in monitors] == ['pending'] * 2


def test_fault_path_covers_the_record_and_below_not_a_longer_id(service):
    first = create_monitor(service)
    for dummy in range(9):
        tenth = create_monitor(service, name='web%d' % dummy)
    assert (first, tenth) == (1, 10)
    service.fault('status', status=500, method='GET', path='/api/v1/monitors/1')
    assert service.api('GET', '/api/v1/monitors/10').status == 200
    assert service.api('GET', '/api/v1/monitors/1').status == 500
    service.fault('status', status=500, method='GET', path='/api/v1/monitors/')
    assert service.api('GET', '/api/v1/monitors/10').status == 500


@pytest.mark.parametrize('kind', ['drop', 'truncated', 'badjson', 'status'])
def test_lost_response_fault_after_processing(service, kind):
    service.fault(kind, when='after', method='POST')
    answer = service.answer('POST', service.url + '/api/v1/monitors', form=monitor_form(),
                            headers={'Authorization': 'Bearer %s' % PRIMARY_KEY, 'Accept': 'application/json'})
    assert (answer == DROPPED) is (kind in ('drop', 'truncated')), answer
    listing = service.api('GET', '/api/v1/monitors').json
    assert listing['meta']['total'] == 1
    assert listing['data'][0]['name'] == 'web'
    assert (service.log()[0]['fault'], service.log()[0]['fault_when']) == (kind, 'after')


def test_server_stops_when_its_parent_goes_away():
    server = Emulator.start(api_keys=(PRIMARY_KEY,))
    try:
        assert server.api('GET', '/api/v1/status').status == 200
        server.process.stdin.close()  # what the parent's exit does to the pipe
        assert server.process.wait(5) == 0
    finally:
        server.stop()


def account_zones(service):
    return [service.api('GET', '/api/v1/account', api_key=key).json['data']['timezone'] for key in service.api_keys]


def test_time_zone_of_the_command_line_is_shown_set_by_the_control_command_and_restored_by_reset(capsys):
    with Emulator.start(api_keys=(PRIMARY_KEY, OTHER_KEY), extra_args=('--timezone', OTHER_KEY + '=America/New_York')) as server:
        assert account_zones(server) == [None, 'America/New_York']
        assert control.main(['timezone', PRIMARY_KEY, 'Asia/Kolkata', '--url', server.url]) == 0
        assert json.loads(capsys.readouterr().out) == {'timezone': 'Asia/Kolkata'}
        assert control.main(['--url', server.url, 'timezone', OTHER_KEY, 'default']) == 0
        assert account_zones(server) == ['Asia/Kolkata', None]
        server.reset()
        assert account_zones(server) == [None, 'America/New_York']


@pytest.mark.parametrize('monitor, hint', [('demo-api', 'demo_cleanup=false'), ('web', None)])
def test_the_status_command_on_a_monitor_not_there_says_where_the_demos_come_from(emulator, capsys, monitor, hint):
    """The playground's examples in another order: control.py status before the demo kept its monitors."""
    emulator.reset()
    with pytest.raises(SystemExit) as ended:
        control.main(['status', monitor, 'offline', '--url', emulator.url])
    error = capsys.readouterr().err
    assert ended.value.code == 1
    assert "no monitor is named '%s' in this account" % monitor in error
    assert (hint in error) if hint else ('demo' not in error), error
