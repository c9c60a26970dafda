# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The bulk sync of monitors: planning in memory, then writing against the fake service."""

from __future__ import annotations

import collections

import pytest
from fake_client import FakeTime

from ansible_collections.uptime.monitoring.plugins.module_utils._bulk import (
    MONITORS_ARGSPEC,
    MonitorSync,
    RateGate,
    check_entry,
    config_argument_spec,
    plan,
)
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK, ValidationError

OPTIONS = [field.name for field in MONITOR_SCHEMA.fields]


def entry(name, **values):
    """A config entry as Ansible hands it over: every suboption present, unset ones None."""
    full = dict.fromkeys(OPTIONS)
    full.update(name=name, **values)
    return full


def web(name, **values):
    values.setdefault('url', 'https://%s.example.com/' % name)
    values.setdefault('interval', 300)
    return entry(name, **values)


def record(monitor_id, name, **values):
    """A monitor as the service returns it (a few keys in the service's loose shapes)."""
    base = {
        'id': monitor_id, 'name': name, 'url': 'https://%s.example.com/' % name, 'interval': 300,
        'alert_condition': 'url_unavailable', 'alert_text_lookup': None, 'request_method': 'GET',
        'request_headers': None, 'request_auth_username': None, 'request_auth_password': None,
        'cache_buster': 0, 'ssl_alert_days': None, 'domain_alert_days': None,
        'maintenance_start_at': None, 'maintenance_end_at': None, 'alerts': None, 'status': 'online',
    }
    base.update(values)
    return base


def kinds(actions):
    return {action.name: action.kind for action in actions}


def test_config_suboptions_are_the_monitor_options_with_name_required_and_take_a_whole_number_in_any_form():
    spec = config_argument_spec()
    assert set(spec) == set(MONITOR_SCHEMA.argument_spec())
    assert spec['name']['required'] is True
    for name, option in MONITOR_SCHEMA.argument_spec().items():
        if name != 'name':
            assert spec[name] == option
    assert MONITORS_ARGSPEC['config']['options'] == spec
    # {{ 3600 / 60 }} gives 60.0; Ansible's int type and the monitor module take it.
    check_entry(0, web('jinja', interval=60.0, ssl_alert_days='7.0'))


RESET_VALUES = MONITOR_SCHEMA.reset_values()


def test_replaced_defaults_are_those_of_a_monitor_created_without_the_option():
    # What the service stores when a create does not send the field (docs/service.md, Monitors).
    assert RESET_VALUES == {
        'alert_condition': 'url_unavailable', 'alert_text_lookup': None, 'request_method': 'GET',
        'request_headers': [], 'request_auth_username': None, 'request_auth_password': None,
        'cache_buster': False, 'ssl_alert_days': 0, 'domain_alert_days': 0,
        'maintenance_start_at': None, 'maintenance_end_at': None, 'alerts': [], 'paused': False,
    }


def test_merged_plans_create_update_and_nothing_with_the_monitor_normalisation():
    records = [
        # Loose shapes: ints as strings, alerts keyed by position and in another order, a zoned timestamp.
        record(1, 'same', interval='300', alerts={'1': {'key': 'sms', 'value': '+1'}, '0': {'key': 'email', 'value': 'a@b.io'}},
               maintenance_start_at='2026-01-01T10:00:00.000000Z', maintenance_end_at='2026-01-01T11:00:00.000000Z'),
        record(2, 'moved'),
        record(3, 'untouched'),
    ]
    config = [
        web('same', alerts=[{'key': 'email', 'value': 'a@b.io'}, {'key': 'sms', 'value': '+1'}],
            maintenance_start_at='2026-01-01T11:00:00+01:00', maintenance_end_at='2026-01-01T11:00:00'),
        entry('moved', interval=60),
        web('new', paused=True),
    ]
    actions = plan('merged', config, records)
    assert kinds(actions) == {'same': 'none', 'moved': 'update', 'new': 'create'}
    moved = actions[1]
    assert moved.changed_keys == ['interval']
    assert moved.after['interval'] == 60
    assert moved.after['url'] == 'https://moved.example.com/'
    assert actions[2].changed_keys == ['name', 'url', 'interval', 'paused']


def test_replaced_sets_left_out_options_back_to_their_defaults():
    records = [record(1, 'shop', request_method='POST', cache_buster=1, ssl_alert_days=14, status='paused',
                      alerts=[{'key': 'email', 'value': 'a@b.io'}], alert_condition='url_text', alert_text_lookup='OK',
                      request_auth_username='u', request_auth_password='secret')]
    actions = plan('replaced', [web('shop')], records)
    assert actions[0].kind == 'update'
    assert set(actions[0].changed_keys) == {
        'alert_condition', 'alert_text_lookup', 'request_method', 'cache_buster', 'ssl_alert_days', 'alerts', 'paused',
        'request_auth_username', 'request_auth_password'}
    assert all(actions[0].after[key] == RESET_VALUES[key] for key in actions[0].changed_keys)


HOOK = 'https://hooks.slack.com/services/T%d'
MASKED_HOOK = {'key': 'slack', 'value': 'https://hooks.slack.com/' + MASK}


@pytest.mark.parametrize('stored, given, kept, left_out', [
    (2, 1, 2, 0),  # another webhook added since the export: neither stored one is lost
    (1, 2, 1, 1),  # one removed since: the stored one is kept, the masked one beyond it is left out
    (0, 1, 0, 1),  # another account: left out, its plain neighbour kept
])
def test_left_out_masked_items_keep_every_stored_one_they_may_stand_for(stored, given, kept, left_out):
    hooks = [{'key': 'slack', 'value': HOOK % index} for index in range(stored)]
    email = {'key': 'email', 'value': 'ops@example.org'}
    told = []
    actions = plan('replaced', [web('shop', alerts=[email] + [MASKED_HOOK] * given)],
                   [record(1, 'shop', alerts=[email] + hooks)], left_out=told)
    assert sorted(item['value'] for item in actions[0].after['alerts'] if item['key'] == 'slack') == [HOOK % i for i in range(kept)]
    assert email in actions[0].after['alerts']
    assert told == [{'name': 'shop', 'option': 'alerts', 'key': 'slack'}] * left_out


@pytest.mark.parametrize('state, config, records, expected', [
    # As the service stores a monitor created without them: 0 and null both mean "no alert".
    ('overridden', [web('shop')], [record(1, 'shop', ssl_alert_days=0, domain_alert_days='0', cache_buster=None)],
     {'shop': 'none'}),
    ('overridden', [web('keep')], [record(1, 'keep'), record(2, 'drop'), record(3, 'also-drop')],
     {'keep': 'none', 'drop': 'delete', 'also-drop': 'delete'}),  # every monitor not listed is deleted
    ('deleted', [entry('old'), entry('gone')], [record(1, 'old'), record(2, 'other')], {'old': 'delete', 'gone': 'none'}),
])
def test_what_each_state_plans(state, config, records, expected):
    assert kinds(plan(state, config, records)) == expected


@pytest.mark.parametrize('state, config, field, fragment', [
    ('merged', [entry('new', interval=60)], 'config[0].url', "'new'"),  # a monitor to create needs the create fields
    ('merged', [web('shop'), web(' shop')], 'config[1].name', 'config[0]'),  # twice once trimmed
])
def test_a_config_the_plan_cannot_follow_is_refused_naming_the_entry(state, config, field, fragment):
    with pytest.raises(ValidationError) as caught:
        plan(state, config, [record(1, 'shop')])
    assert (caught.value.field, fragment in str(caught.value)) == (field, True), str(caught.value)


@pytest.mark.parametrize('state', ['merged', 'replaced', 'overridden'])
def test_a_name_that_differs_only_in_case_from_an_unlisted_monitor_is_refused(state):
    # Matched exactly, 'shop' would be created beside 'Shop' (and 'Shop' deleted by overridden): refused in the plan.
    with pytest.raises(ValidationError) as caught:
        plan(state, [web('fine'), web('shop')], [record(1, 'Shop')])
    assert caught.value.field == 'config[1].name'
    assert "monitor 'shop' differs only in case from monitor 'Shop' (id 1)" in str(caught.value)
    # Listed too, or another name exactly: two monitors, as on a service that compares names exactly.
    assert kinds(plan(state, [web('shop'), web('Shop')], [record(1, 'Shop')])) == {'shop': 'create', 'Shop': 'none'}
    actions = plan(state, [web('shop')], [record(1, 'Shop'), record(2, 'shop')])
    assert [(action.kind, action.name, action.record['id']) for action in actions] == (
        [('none', 'shop', 2), ('delete', 'Shop', 1)] if state == 'overridden' else [('none', 'shop', 2)])


def test_change_reports_mask_secrets_and_say_they_changed():
    actions = plan('merged', [entry('a', request_auth_username='u', request_auth_password='new')],
                   [record(1, 'a', request_auth_username='u', request_auth_password='old')])
    report = actions[0].report(check_mode=True)
    assert (report['changed_keys'], report['before']['request_auth_password'], report['after']['request_auth_password']) == (
        ['request_auth_password'], MASK, MASK + ' (changed)')


def test_a_wait_asked_by_one_worker_holds_the_others():
    fake = FakeTime()
    gate = RateGate(sleep=fake.sleep, clock=fake.clock)
    gate.wait()
    assert fake.waits == []
    gate.sleep(5)
    assert fake.now == 1005.0
    fake.now = 1001.0  # another worker, earlier in time, arrives at the gate
    gate.wait()
    assert fake.now == 1005.0
    gate.sleep(1)  # a shorter wait does not cut the longer one short
    assert fake.now == 1006.0


def sync(service, check_mode=False, workers=4):
    return MonitorSync(service.client(retries=5), lambda sleep: service.client(retries=5, sleep=sleep),
                       check_mode=check_mode, workers=workers)


def run(service, state, config, **kwargs):
    return sync(service, **kwargs).run(dict(state=state, config=config, workers=kwargs.get('workers', 4)))


def requests_by_method(service):
    return collections.Counter(logged['method'] for logged in service.log())


def fleet(count, **values):
    return [web('m%03d' % number, **values) for number in range(count)]


def test_one_read_then_one_write_a_monitor_of_the_changed_keys(service):
    result = run(service, 'merged', fleet(120))
    assert result['changed'] is True
    assert result['summary']['created'] == 120
    # One page (the account was empty), one POST a monitor.
    assert requests_by_method(service) == {'GET': 1, 'POST': 120}
    assert result['summary']['requests'] == 121
    service.clear_log()
    config = fleet(120)
    for item in config[:3]:
        item['interval'] = 60
    result = run(service, 'merged', config)
    # Two pages of 100, one PUT of the changed key a changed monitor.
    assert result['summary']['updated'] == 3
    assert requests_by_method(service) == {'GET': 2, 'PUT': 3}
    assert all('per_page=100' in logged['query'] for logged in service.log() if logged['method'] == 'GET')
    assert all(logged['form'] == {'interval': '60'} for logged in service.writes())
    changed = [change for change in result['changes'] if change['action'] == 'update']
    assert {change['name'] for change in changed} == {'m000', 'm001', 'm002'}
    assert [change['changed_keys'] for change in changed] == [['interval']] * len(changed)
    assert [change['status'] for change in changed] == ['done'] * len(changed)
    assert {view['name']: view['interval'] for view in result['after']}['m000'] == 60


def test_loose_service_shapes_do_not_look_like_changes(service):
    config = fleet(5, alerts=[{'key': 'email', 'value': 'a@b.io'}, {'key': 'sms', 'value': '+1'}], ssl_alert_days=0)
    run(service, 'merged', config)
    service.quirks(stringly=True)
    service.clear_log()
    assert run(service, 'replaced', config)['changed'] is False
    assert service.writes() == []


def test_a_failed_write_is_reported_with_what_the_service_holds(service):
    created = run(service, 'merged', fleet(6))
    ids = {view['name']: view['id'] for view in created['after']}
    config = fleet(6, interval=60)
    service.fault('status', status=500, method='PUT', path='/api/v1/monitors/%d' % ids['m003'])
    service.clear_log()
    result = run(service, 'merged', config)
    assert result['failed'] is True
    assert result['changed'] is True
    assert result['summary']['updated'] == 5
    assert result['summary']['failed'] == 1
    failed = [change for change in result['changes'] if change['status'] == 'failed']
    assert [change['name'] for change in failed] == ['m003']
    assert 'HTTP 500' in failed[0]['msg']
    assert "'m003'" in result['msg']
    assert {view['name']: view['interval'] for view in result['after']}['m003'] == 300


# A proxy's page promises nothing of a rerun: it answers the next one too.
@pytest.mark.parametrize('kind, status, transient', [('status', 422, False), ('status', 503, True), ('html', 200, False)])
def test_a_refusal_mid_sync_names_what_was_written_and_promises_a_rerun_only_when_transient(service, kind, status,
                                                                                            transient):
    run(service, 'merged', [web('kept'), web('gone')])
    service.fault(kind, status=status, method='POST', path='/api/v1/monitors')
    config = [web('kept', interval=60), web('bad'), web('good')]
    result = run(service, 'overridden', config, workers=1)
    assert result['summary']['failed'] == 1
    assert result['summary']['created'] == 1
    lines = result['msg'].splitlines()
    assert lines[0] == "1 of 4 writes failed; written: created 'good'; updated 'kept'; deleted 'gone'"
    assert lines[1].startswith("create 'bad': POST /api/v1/monitors failed: HTTP %d" % status)
    assert ('running the task again finishes the job' in lines[-1]) is transient
    assert ('the input must change' in lines[-1]) is not transient
    assert [change.get('transient') for change in result['changes']] == [None, transient, None, None]
    if not transient:  # a refusal of the input comes back on every attempt
        service.fault(kind, status=status, method='POST', path='/api/v1/monitors')
    assert ('failed' not in run(service, 'overridden', config)) is transient


def test_a_failure_every_write_would_repeat_stops_the_writes(service):
    service.fault('status', status=401, method='POST')
    result = run(service, 'merged', fleet(5), workers=1)
    assert result['failed'] is True
    assert 'not attempted' in result['msg']
    assert result['summary']['failed'] == 1
    assert result['summary']['not_attempted'] == 4
    assert len(service.writes()) == 1


def test_overridden_and_deleted_delete_with_one_request_each_and_a_lost_answer_is_confirmed_by_a_read(service):
    run(service, 'merged', fleet(5))
    service.clear_log()
    result = run(service, 'overridden', fleet(2))
    assert result['summary']['deleted'] == 3
    assert requests_by_method(service) == {'GET': 1, 'DELETE': 3}
    service.clear_log()
    result = run(service, 'deleted', [entry('m000'), entry('absent')])
    assert result['summary']['deleted'] == 1
    assert result['summary']['unchanged'] == 1
    assert [view['name'] for view in result['after']] == ['m001']
    assert requests_by_method(service) == {'GET': 1, 'DELETE': 1}
    # A delete whose answer is lost is confirmed by a read.
    run(service, 'merged', fleet(2))
    service.fault('status', status=500, method='DELETE', when='after')
    service.clear_log()
    result = run(service, 'overridden', fleet(1))
    assert 'failed' not in result
    assert result['summary']['deleted'] == 1
    assert requests_by_method(service) == {'GET': 2, 'DELETE': 1}


def test_overridden_with_an_empty_config_is_refused_and_deleted_without_config_deletes_every_monitor(service):
    """(gathered with a config, and workers out of range, are the bad-input law's.)"""
    with pytest.raises(ValidationError) as caught:
        run(service, 'merged', None)
    assert caught.value.field == 'config'
    run(service, 'merged', fleet(3))
    service.clear_log()
    with pytest.raises(ValidationError) as caught:
        run(service, 'overridden', [])
    assert caught.value.field == 'config'
    assert 'state=deleted without config' in str(caught.value)
    assert run(service, 'deleted', [])['changed'] is False
    assert requests_by_method(service) == {'GET': 1}
    planned = run(service, 'deleted', None, check_mode=True)
    assert planned['summary']['deleted'] == 3
    assert 'would delete every monitor of the account: 3' in planned['msg']
    assert planned['diff']['after_header'] == 'planned changes (check mode: nothing was written)'
    assert service.writes() == []
    done = run(service, 'deleted', None)
    assert done['summary']['deleted'] == 3
    assert done['after'] == []
    assert done['msg'] == 'deleted every monitor of the account: 3'
