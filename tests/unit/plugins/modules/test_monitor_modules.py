# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wiring of the monitor and monitor_info modules: arguments in, one JSON result out; what they read of a whole list."""

from __future__ import annotations

import datetime
import json
import os
import re

import pytest
from ansible.module_utils.common.parameters import PASS_VARS
from module_runner import run_module
from emulator.control import PRIMARY_KEY
from fake_client import add_monitor, shifting_account

from ansible_collections.uptime.monitoring.plugins.module_utils import _engine, _module, _resource
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK
from ansible_collections.uptime.monitoring.plugins.modules import monitor, monitor_info, monitors


# The arguments echoed in the result (invocation), as -vvv shows them: ansible-core 2.21 echoes them only when asked.
ECHOED = {'_ansible_inject_invocation': True} if 'inject_invocation' in PASS_VARS else {}
TRANSPORT_DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'docs', 'transport.md')


def test_connection_options_from_the_environment_and_a_key_read_from_a_file_with_its_line_break(emulator, monkeypatch):
    # As the inventory plugin and the event source read it: the same description of the connection.
    monkeypatch.setenv('UPTIME_API_URL', emulator.url)
    monkeypatch.setenv('UPTIME_API_KEY', PRIMARY_KEY + '\n')
    monkeypatch.setenv('UPTIME_VALIDATE_CERTS', 'n')
    result = run_module(monitor_info.main, {}).result
    assert not result.get('failed')
    assert result['monitors'] == []
    # An empty value is unset, as for the inventory plugin and the event source (a survey left blank, say).
    blank = run_module(monitor_info.main, {'api_url': '', 'api_key': ''}).result
    assert blank.get('monitors') == [], blank
    # Trimmed, the key is another string: it is censored too, and masked in a failure's invocation.
    failed = run_module(monitor.main, dict(ECHOED, name='no-url', interval=60)).result
    assert failed['failed']
    assert PRIMARY_KEY not in json.dumps(failed)
    assert failed['invocation']['module_args']['api_key'] == MASK


@pytest.mark.parametrize('wrong, words', [
    ('api_url', ('api_url', 'UPTIME_API_URL')), ('api_key', ('api_key', 'UPTIME_API_KEY')), ('HAS_REQUESTS', ('requests',)),
    ('user-info', ('api_url: holds a user name', '//********@')), ('user-info without a scheme', ('api_url: holds', '(********@')),
    # Ansible's own validation fails, echoing the address it took from the environment.
    ('user-info from the environment', ("Unsupported parameters for", "colour")),
])
def test_what_is_missing_or_wrong_to_connect_is_named_before_any_request(emulator, connection, monkeypatch, wrong, words):
    args = dict(connection)
    if wrong == 'HAS_REQUESTS':
        monkeypatch.setattr(_module, 'HAS_REQUESTS', False)
    elif wrong.startswith('user-info'):
        args['api_url'] = args['api_url'].replace('//', '//bob:pw-123456@', 1)
    else:
        del args[wrong]
    if wrong == 'user-info without a scheme':
        args['api_url'] = args['api_url'].split('//', 1)[1]
    if wrong == 'user-info from the environment':
        monkeypatch.setenv('UPTIME_API_URL', args.pop('api_url'))
        args['colour'] = 'blue'
    result = run_module(monitor_info.main, dict(args, **ECHOED)).result
    assert result['failed']
    assert all(word in result['msg'] for word in words), result['msg']
    assert 'pw-123456' not in json.dumps(result)  # the message and the arguments echoed (invocation)
    assert emulator.log() == []


def test_an_export_names_what_it_masks_and_reveal_secrets_needs_export(emulator, connection):
    """That what a read shows hides every secret and applies back unchanged is the no-secret and round-trip laws'."""
    webhook = 'https://hooks.slack.com/services/T000/B000/wh-123456'
    alerts = [{'key': 'slack', 'value': webhook}, {'key': 'telegram', 'value': 'bot1:tg-654321 ops_room'}]
    run_module(monitor.main, dict(connection, name='alerting', url='https://a.example.com', interval=60, alerts=alerts))
    listed = run_module(monitor_info.main, dict(connection, name='alerting', export=True)).result
    assert listed['export_masked'] == {'alerting': ['alerts']}
    assert (listed['export'][0]['alerts'] == [
        {'key': 'slack', 'value': 'https://hooks.slack.com/********'}, {'key': 'telegram', 'value': '********'}])
    revealed = run_module(monitor_info.main, dict(connection, name='alerting', export=True, reveal_secrets=True)).result
    assert revealed['export'][0]['alerts'] == alerts
    assert revealed['export_masked'] == {}
    emulator.clear_log()
    refused = run_module(monitor_info.main, dict(connection, name='alerting', reveal_secrets=True)).result
    assert refused['failed']
    assert refused['field'] == 'reveal_secrets'
    assert emulator.log() == []


def test_an_unexpected_defect_ends_in_one_line(emulator, connection, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError('surprise')
    monkeypatch.setattr(_engine.Engine, 'ensure', broken)
    result = run_module(monitor.main, dict(connection, name='x')).result
    assert result['failed']
    assert result['msg'] == "unexpected error: KeyError: 'surprise'"
    assert PRIMARY_KEY not in json.dumps(result)


@pytest.mark.parametrize('lost_create', [False, True])
def test_a_create_whose_pause_then_fails_reports_the_created_monitor(emulator, connection, lost_create):
    if lost_create:  # the create's answer is lost, then found by a read
        emulator.fault('drop', method='POST', when='after')
    emulator.fault('status', status=500, method='PUT')
    args = dict(connection, name='half', url='https://half.example.com', interval=60, paused=True, retries=0)
    result = run_module(monitor.main, args).result
    assert result['failed']
    assert result['changed'] is True
    created = emulator.api('GET', '/api/v1/monitors').json['data']
    assert [record['name'] for record in created] == ['half']
    assert result['monitor']['id'] == int(created[0]['id'])
    assert result['monitor']['paused'] is False
    assert result['diff']['before'] == {}
    assert result['diff']['after']['name'] == 'half'
    assert result['msg'].endswith("(before this failure, the task created monitor 'half' (id %s))" % created[0]['id'])
    assert result['msg'].startswith('PUT /api/v1/monitors/%s failed: HTTP 500' % created[0]['id'])
    # Run again: the pause is all that is left to do.
    again = run_module(monitor.main, args).result
    assert again['changed']
    assert not again.get('failed')
    assert again['monitor']['paused'] is True


UNAPPLIED = 'the service failed, and a read shows that nothing was %s by this request'


# A 500 is the service's own answer, which a read settles (a proxy's page promises nothing: the faults law's; a PUT's
# message: test_docs_transport_quotes_the_failure_messages_as_the_modules_give_them).
@pytest.mark.parametrize('method, args, said', [('POST', {}, UNAPPLIED % 'created'), ('DELETE', {'state': 'absent'}, UNAPPLIED % 'changed')])
def test_a_failed_write_says_whether_a_read_proves_it_unapplied(emulator, connection, method, args, said):
    base = dict(connection, name='firm', url='https://f.example.com', interval=60, retries=0)
    if method != 'POST':
        run_module(monitor.main, base).result
    before = emulator.api('GET', '/api/v1/monitors').json['data']
    emulator.fault('status', status=500, method=method)
    result = run_module(monitor.main, dict(base, **args)).result
    assert result['failed'], result['msg']
    assert result['msg'].startswith('%s /api/v1/monitors' % method), result['msg']
    assert 'may have applied' not in result['msg'], result['msg']
    assert not result.get('changed'), result['msg']
    assert 'HTTP 500' in result['msg'], result['msg']
    assert result['msg'].endswith(said), result['msg']
    assert emulator.api('GET', '/api/v1/monitors').json['data'] == before


def test_url_text_alone_is_taken_when_the_monitor_holds_a_lookup_and_refused_when_none_would(
        emulator, connection):
    base = dict(connection, url='https://t.example.com', interval=60)
    run_module(monitor.main, dict(base, name='kept', alert_condition='url_no_text', alert_text_lookup='Error')).result
    taken = run_module(monitor.main, dict(base, name='kept', alert_condition='url_text')).result
    assert taken['changed']
    assert not taken.get('failed')
    assert (taken['monitor']['alert_condition'], taken['monitor']['alert_text_lookup']) == ('url_text', 'Error')
    emulator.clear_log()
    for args in (dict(base, name='new', alert_condition='url_text'),
                 dict(base, name='kept', alert_condition='url_text', alert_text_lookup='')):
        refused = run_module(monitor.main, args).result
        assert refused['failed']
        assert refused['field'] == 'alert_text_lookup'
        assert 'is required when alert_condition is url_text' in refused['msg']
    assert emulator.writes() == []


def test_a_create_that_meets_another_runs_monitor_converges_only_what_it_gave(
        emulator, connection, monkeypatch):
    # Another run creates the same monitor between this task's lookup and its create.
    add_monitor(emulator, 'race', 'https://r.example.com', interval=300, request_method='HEAD', alert_condition='url_text',
                alert_text_lookup='OK')
    found = {'calls': 0}
    locate = _resource.Resource.locate

    def late_locate(resource, client, identity):
        found['calls'] += 1
        return _resource.Located(None) if found['calls'] == 1 else locate(resource, client, identity)
    monkeypatch.setattr(_resource.Resource, 'locate', late_locate)
    result = run_module(monitor.main, dict(connection, name='race', url='https://r.example.com', interval=60)).result
    assert result['changed']
    assert not result.get('failed')
    stored = emulator.api('GET', '/api/v1/monitors').json['data']
    assert len(stored) == 1
    assert int(stored[0]['interval']) == 60
    assert (stored[0]['request_method'], stored[0]['alert_condition'], stored[0]['alert_text_lookup']) == (
        'HEAD', 'url_text', 'OK')


def test_a_created_monitor_is_returned_as_the_service_holds_it_and_inside_its_maintenance_window_shows_maintenance(emulator, connection):
    now = datetime.datetime.now(datetime.timezone.utc)
    window = dict(maintenance_start_at=(now - datetime.timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%SZ'),
                  maintenance_end_at=(now + datetime.timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%SZ'))
    created = run_module(monitor.main, dict(connection, name='quiet', url='https://q.example.com', interval=60,
                                            **window)).result
    assert created['changed']
    assert created['monitor']['status'] == 'maintenance'
    # Told from the window and the time of the create: no read after it.
    assert [entry['method'] for entry in emulator.log() if entry['path'] == '/api/v1/monitors/%d'
            % created['monitor']['id']] == []
    # Outside one, a created monitor is returned as the service now holds it.
    created = run_module(monitor.main, dict(connection, name='fresh', url='https://fresh.example.com', interval=60)).result
    held = emulator.api('GET', '/api/v1/monitors/%d' % created['monitor']['id']).json['data']
    assert created['monitor']['status'] == held['status'] == 'pending'
    assert created['monitor']['cache_buster'] is False
    assert held['cache_buster'] == 0
    assert [entry['method'] for entry in emulator.log()][-2:] == ['POST', 'GET']  # the read above, none by the task
    paused = run_module(monitor.main, dict(connection, name='resting', url='https://rest.example.com', interval=60,
                                           paused=True)).result
    assert paused['monitor']['status'] == 'paused'
    # Check mode creates nothing: no status yet (that it writes nothing and predicts the run is the law's).
    planned = run_module(monitor.main, dict(connection, name='planned', url='https://planned.example.com', interval=60),
                         check_mode=True).result
    assert planned['changed']
    assert planned['monitor']['status'] is None


def test_transport_warnings_reach_the_result(connection):
    """An http:// address of another host is warned about in the result, also when the task then fails; a loopback one not."""
    assert not run_module(monitor_info.main, dict(connection)).result.get('warnings')
    result = run_module(monitor_info.main, dict(connection, api_url='http://uptime.invalid', retries=0)).result
    assert result['failed']
    assert 'cannot resolve the host name of http://uptime.invalid:80' in result['msg']
    assert ['travel unencrypted' in str(warning) for warning in result.get('warnings', [])] == [True]


def test_docs_transport_quotes_the_failure_messages_as_the_modules_give_them(emulator, connection):
    """docs/transport.md ("What a failure message names") quotes these endings word for word."""
    with open(TRANSPORT_DOC, encoding='utf-8') as handle:
        doc = ' '.join(handle.read().split())
    base = dict(connection, url='https://d.example.com', interval=60, retries=0)

    wrong = run_module(monitor_info.main, dict(connection, api_url=emulator.url + '/uptime', id=7)).result['msg']
    assert wrong.startswith('GET /uptime/api/v1/monitors/7 failed: ')
    assert wrong[wrong.index('HTTP 404'):] in doc, wrong
    emulator.fault('status', status=405)
    refused = run_module(monitor_info.main, dict(connection, api_url=emulator.url + '/uptime')).result['msg']
    assert refused[refused.index('HTTP 405'):] in doc, refused
    emulator.fault('html', status=200, count=2)
    page = run_module(monitor_info.main, dict(connection, api_url=emulator.url + '/uptime', retries=1)).result['msg']
    # The doc quotes the attempts of the default retries.
    assert page[page.index('HTTP 200'):].replace('(2 attempts)', '(6 attempts)') in doc, page

    emulator.fault('status', status=500, method='PUT')
    half = run_module(monitor.main, dict(base, name='half', paused=True)).result
    assert half['changed'] is True
    created = re.sub(r'\(id [0-9]+\)', '(id 2)', half['msg'][half['msg'].index('(before this failure'):])
    assert created in doc, half['msg']

    emulator.fault('status', status=500, method='PUT')
    unapplied = run_module(monitor.main, dict(base, name='half', interval=300)).result
    assert unapplied['failed']
    assert not unapplied.get('changed')
    assert re.sub(r'/[0-9]+ failed', '/7 failed', unapplied['msg']) in doc, unapplied['msg']


# Issue 44, item 7: the monitor on the edge of the pages (the 101st, oldest first or newest first) was on no page:
# overridden left it in place, the name search of monitor missed it ("no change"), monitor_info did not list it.
@pytest.mark.parametrize('module, args, deleted, target', [
    (monitors, dict(state='overridden', config=[dict(name='seed-%05d' % number, url='https://seed-%05d.example.com' % number,
                                                     interval=60) for number in range(1, 100)]), 1, 101),
    (monitor, dict(name='seed-0', state='absent'), 101, 1),
    (monitor_info, dict(search='seed-0'), 101, 1),
])
def test_a_monitor_deleted_by_another_job_while_page_1_is_read_hides_no_other(emulator, connection, module, args, deleted, target):
    shifting_account(emulator, deleted)
    result = run_module(module.main, dict(connection, **args)).result
    if module is monitor_info:
        assert [view['id'] for view in result['monitors']] == list(range(100, 0, -1)), result
    else:
        assert result['changed'] is True, result
        assert emulator.api('GET', '/api/v1/monitors/%d' % target).status == 404, result
