# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Wiring of the monitors module: arguments in, exit_json/fail_json out, against the emulator."""

from __future__ import annotations

import json

import pytest
import yaml

from ansible.module_utils.testing import patch_module_args

from ansible_collections.uptime.monitoring.plugins.modules import monitors
from ansible_collections.uptime.monitoring.plugins.module_utils._bulk import MONITORS_ARGSPEC

SECRET = 'pa55-w0rd-xyz'


def run_module(capsys, **args):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as leaving:
            monitors.main()
    result = json.loads(capsys.readouterr().out)
    result['rc'] = leaving.value.code
    return result


def connection(emulator):
    return dict(api_url=emulator.url, api_key=emulator.api_keys[0])


def shop(**values):
    item = dict(name='shop', url='https://shop.example.com/', interval=60)
    item.update(values)
    return item


def doc_option_matches(doc, spec, path):
    """The documented option says what the argument spec says (as validate-modules checks)."""
    for key, default in (('type', 'str'), ('elements', None), ('required', False), ('choices', None), ('aliases', None)):
        assert doc.get(key, default) == spec.get(key, default), '%s.%s' % (path, key)
    assert set(doc.get('suboptions', {})) == set(spec.get('options', {})), path
    for name, sub_spec in spec.get('options', {}).items():
        doc_option_matches(doc['suboptions'][name], sub_spec, '%s.%s' % (path, name))


def test_documentation_matches_the_argument_spec():
    documented = yaml.safe_load(monitors.DOCUMENTATION)['options']
    assert set(documented) == set(MONITORS_ARGSPEC)
    for name, spec in MONITORS_ARGSPEC.items():
        doc_option_matches(documented[name], spec, name)
        assert documented[name].get('default') == spec.get('default'), name


def test_sync_check_mode_and_secrets_through_the_module(emulator, capsys):
    config = [shop(request_auth_username='u', request_auth_password=SECRET), dict(name='blog', url='https://b.io/', interval=300)]
    planned = run_module(capsys, config=config, _ansible_check_mode=True, _ansible_diff=True, **connection(emulator))
    assert planned['rc'] == 0 and planned['changed'] is True
    assert planned['summary']['created'] == 2
    assert emulator.writes() == []
    # A plan says it is one, in the counts and in the diff's header.
    assert planned['summary']['planned'] is True
    assert planned['diff']['after_header'] == 'planned changes (check mode: nothing was written)'
    assert planned['diff']['before_header'] == 'monitors on the service'

    done = run_module(capsys, config=config, _ansible_diff=True, **connection(emulator))
    assert done['changed'] is True and done['summary']['created'] == 2
    assert done['summary']['planned'] is False and done['diff']['after_header'] == 'monitors after the sync'
    assert SECRET not in json.dumps(done)
    assert {view['name']: view['request_auth_password'] for view in done['after']}['shop'] == '********'

    again = run_module(capsys, config=config, **connection(emulator))
    assert again['changed'] is False


# A 500 is the service's own answer, which a read settles; a gateway's 503 may leave the create running behind it.
@pytest.mark.parametrize('status, written', [(500, 'nothing was written'), (503, 'no write is known to be applied')])
def test_partial_failure_fails_the_task_with_the_changes(emulator, capsys, status, written):
    emulator.fault('status', status=status, method='POST')
    result = run_module(capsys, config=[shop()], workers=1, **connection(emulator))
    assert result['rc'] == 1 and result['failed'] is True
    assert result['msg'].startswith('1 of 1 writes failed; %s\ncreate \'shop\'' % written), result['msg']
    assert result['changes'][0]['status'] == 'failed'


def test_a_create_whose_pause_fails_is_counted_and_shown_as_created(emulator, capsys):
    emulator.fault('status', status=500, method='PUT')
    result = run_module(capsys, config=[shop(paused=True)], workers=1, retries=0, **connection(emulator))
    assert result['failed'] is True and result['changed'] is True
    assert result['summary']['created'] == 1 and result['summary']['failed'] == 1
    assert [view['name'] for view in result['after']] == ['shop']
    assert result['changes'][0]['status'] == 'failed' and result['changes'][0]['id'] is not None
    assert "written: created 'shop'" in result['msg'] and 'the monitor was created before this failure' in result['msg']


def test_bad_entry_fails_before_any_write(emulator, capsys):
    result = run_module(capsys, config=[shop(), shop(name='other', interval=60, url='nope')], **connection(emulator))
    assert result['rc'] == 1
    assert result['field'] == 'config[1].url'
    assert emulator.writes() == []


def test_gathered(emulator, capsys):
    run_module(capsys, config=[shop()], **connection(emulator))
    result = run_module(capsys, state='gathered', **connection(emulator))
    assert result['gathered'][0]['name'] == 'shop' and result['gathered'][0]['interval'] == 60
    assert result['requests'] == 1


@pytest.mark.parametrize('entry, field, fragment', [
    (dict(interval=120), 'config[1].interval', 'must be one of 60, 180, 300, 600, 900, 1800, 3600, got 120'),
    (dict(interval='often'), 'config[1].interval', "expected an integer, got 'often'"),
    (dict(request_method='FETCH'), 'config[1].request_method', "must be one of GET, POST"),
    (dict(ssl_alert_days=5), 'config[1].ssl_alert_days', 'must be one of 0, 1, 2, 3, 7, 14, 30, 60, got 5'),
    (dict(cache_buster='maybe'), 'config[1].cache_buster', "expected a boolean, got 'maybe'"),
    (dict(intervall=60), 'config[1].intervall', 'is not an option of a monitor'),
    (dict(alerts=[dict(key='email')]), 'config[1].alerts[0]', 'must be a dict with exactly key and value, got key'),
    (dict(alerts=[dict(key='pager', value='x')]), 'config[1].alerts[0].key', 'must be one of email'),
])
def test_every_refusal_of_an_entry_names_it_and_its_monitor(emulator, capsys, entry, field, fragment):
    config = [shop(), dict(dict(name='blog', url='https://blog.example.com/', interval=300), **entry)]
    for state in ('merged', 'deleted'):
        emulator.clear_log()
        result = run_module(capsys, config=config, state=state, **connection(emulator))
        assert result['rc'] == 1 and result['field'] == field, result
        assert result['msg'] == "%s: %s" % (field, result['msg'][len(field) + 2:])
        assert fragment in result['msg'] and result['msg'].endswith("(monitor 'blog')"), result['msg']
        assert emulator.log() == []


def test_an_entry_without_a_name_or_not_a_dict_is_named_by_its_index(emulator, capsys):
    result = run_module(capsys, config=[shop(), dict(url='https://blog.example.com/', interval=300)],
                        **connection(emulator))
    assert result['rc'] == 1 and result['msg'].startswith('config[1].name: is required'), result
    result = run_module(capsys, config=[shop(), 'blog'], **connection(emulator))
    assert result['rc'] == 1 and result['msg'] == 'config[1]: must be a dict of monitor options, got a str', result


def test_an_entry_refusal_never_shows_a_secret(emulator, capsys):
    config = [shop(request_auth_username='u', request_auth_password=SECRET, interval=7),
              shop(name='api', request_headers=[dict(key='Authorization', value=SECRET, extra=1)])]
    for entries in (config, config[1:]):
        result = run_module(capsys, config=entries, **connection(emulator))
        assert result['rc'] == 1 and SECRET not in json.dumps(result), result


WEBHOOK = 'https://hooks.slack.com/services/T000/B000/sl4ck-s3cr3t'


def test_webhook_urls_never_show_and_the_sync_stays_idempotent(emulator, capsys):
    alerts = [dict(key='slack', value=WEBHOOK), dict(key='email', value='ops@example.com')]
    done = run_module(capsys, config=[shop(alerts=alerts)], _ansible_diff=True, **connection(emulator))
    assert done['rc'] == 0 and done['changed'] is True
    assert 'sl4ck-s3cr3t' not in json.dumps(done)
    assert done['after'][0]['alerts'] == [dict(key='slack', value='https://hooks.slack.com/********'),
                                          dict(key='email', value='ops@example.com')]
    assert done['diff']['after']['shop']['alerts'][0] == dict(key='slack', value='https://hooks.slack.com/********')
    # The service holds the URL itself: only what is shown is masked.
    assert emulator.api('GET', '/api/v1/monitors').json['data'][0]['alerts'][0]['value'] == WEBHOOK

    assert run_module(capsys, config=[shop(alerts=alerts)], **connection(emulator))['changed'] is False
    moved = run_module(capsys, config=[shop(alerts=[dict(key='slack', value=WEBHOOK + '-2')], request_auth_username='u',
                                            request_auth_password='pw-s3cr3t-1')], _ansible_diff=True, **connection(emulator))
    assert moved['changed'] is True and 'sl4ck-s3cr3t' not in json.dumps(moved)
    assert moved['diff']['after']['shop']['alerts'] == [dict(key='slack', value='https://hooks.slack.com/******** (changed)')]
    assert 'pw-s3cr3t-1' not in json.dumps(moved)
    assert moved['changes'][0]['after']['alerts'] == moved['diff']['after']['shop']['alerts']
    gathered = run_module(capsys, state='gathered', **connection(emulator))
    assert gathered['gathered'][0]['alerts'] == [dict(key='slack', value='https://hooks.slack.com/********')]
    assert gathered['gathered_masked'] == {'shop': ['request_auth_username', 'request_auth_password', 'alerts']} and 'sl4ck-s3cr3t' not in json.dumps(gathered)
    # What gathered shows applies back with any state, and keeps the webhook.
    for state in ('merged', 'replaced', 'overridden'):
        applied = run_module(capsys, state=state, config=gathered['gathered'], **connection(emulator))
        assert applied['changed'] is False and applied['after'][0]['request_auth_password'] == '********'
        assert 'VALUE_SPECIFIED' not in json.dumps(applied['after'])
    assert emulator.api('GET', '/api/v1/monitors').json['data'][0]['alerts'][0]['value'] == WEBHOOK + '-2'


def test_an_entry_refusal_never_shows_a_webhook_url(emulator, capsys):
    # Refused by Ansible's own validation (an unknown suboption), before the collection's checks.
    config = [shop(alerts=[dict(key='slack', value=WEBHOOK, extra=1)])]
    result = run_module(capsys, config=config, **connection(emulator))
    assert result['rc'] == 1 and 'sl4ck-s3cr3t' not in json.dumps(result), result
    result = run_module(capsys, config=[shop(interval=7, alerts=[dict(key='slack', value=WEBHOOK)])], **connection(emulator))
    assert result['rc'] == 1 and 'sl4ck-s3cr3t' not in json.dumps(result), result
    assert emulator.writes() == []
