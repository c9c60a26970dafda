# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad input: every invalid task fails with a message that names the field.

Where the module can know before sending anything, the emulator's log must show
no request at all. A few inputs can only be judged against the service's records
(an incident that would start before the last one ended, a monitor name that does
not exist, a write-once time already set): those may read, but must never write.
"""

from __future__ import annotations

import pytest

import known_issues
from reliability_support import record, run_module, seed_incident, seed_monitor, utc_ago

from ansible_collections.uptime.monitoring.plugins.modules import incident, incident_info, monitor, monitor_info, monitors

GROUP = 'bad_input'
WEB = {'name': 'web', 'url': 'https://web.example.com/', 'interval': 60}
LONG = 'x' * 300


def alerts(key, value):
    return dict(WEB, alerts=[{'key': key, 'value': value}])


def headers(*pairs):
    return dict(WEB, request_headers=[dict(pair) for pair in pairs])


# (module, what is wrong, args, the field the message must name)
BEFORE_ANY_REQUEST = [
    # monitor: choices, types and formats
    ('monitor', 'interval not among the allowed values', dict(WEB, interval=61), 'interval'),
    ('monitor', 'interval not an integer', dict(WEB, interval='often'), 'interval'),
    ('monitor', 'unknown alert_condition', dict(WEB, alert_condition='down'), 'alert_condition'),
    ('monitor', 'request_method in lower case', dict(WEB, request_method='get'), 'request_method'),
    ('monitor', 'ssl_alert_days not allowed', dict(WEB, ssl_alert_days=5), 'ssl_alert_days'),
    ('monitor', 'domain_alert_days not allowed', dict(WEB, domain_alert_days=120), 'domain_alert_days'),
    ('monitor', 'cache_buster not a boolean', dict(WEB, cache_buster='maybe'), 'cache_buster'),
    ('monitor', 'paused not a boolean', dict(WEB, paused='sometimes'), 'paused'),
    ('monitor', 'unknown state', dict(WEB, state='gone'), 'state'),
    ('monitor', 'unknown update_password', dict(WEB, update_password='never'), 'update_password'),
    ('monitor', 'id not an integer', dict(WEB, id='web-1'), 'id'),
    ('monitor', 'misspelt option', dict(WEB, intervall=60), 'intervall'),
    ('monitor', 'neither id nor name', {'url': 'https://web.example.com/', 'interval': 60}, 'name'),
    ('monitor', 'url not http(s)', dict(WEB, url='ftp://web.example.com/'), 'url'),
    ('monitor', 'url not a URL', dict(WEB, url='web example com'), 'url'),
    ('monitor', 'url longer than 2048', dict(WEB, url='https://web.example.com/' + 'a' * 2048), 'url'),
    ('monitor', 'empty name', dict(WEB, name=''), 'name'),
    ('monitor', 'name longer than 128', dict(WEB, name='n' * 129), 'name'),
    ('monitor', 'url_text with an empty alert_text_lookup', dict(WEB, alert_condition='url_text', alert_text_lookup=''),
     'alert_text_lookup'),
    ('monitor', 'alert_text_lookup longer than 255', dict(WEB, alert_condition='url_text', alert_text_lookup=LONG),
     'alert_text_lookup'),
    ('monitor', 'username without password', dict(WEB, request_auth_username='robot'), 'request_auth_password'),
    ('monitor', 'password without username', dict(WEB, request_auth_password='pw-bad-input-1'),
     'request_auth_username'),
    ('monitor', 'maintenance start without end', dict(WEB, maintenance_start_at='2026-01-01T10:00:00'),
     'maintenance_end_at'),
    ('monitor', 'maintenance end without start', dict(WEB, maintenance_end_at='2026-01-01T10:00:00'),
     'maintenance_start_at'),
    ('monitor', 'maintenance window ends before it starts',
     dict(WEB, maintenance_start_at='2026-01-02T10:00:00', maintenance_end_at='2026-01-01T10:00:00'),
     'maintenance_end_at'),
    ('monitor', 'maintenance window of no length',
     dict(WEB, maintenance_start_at='2026-01-02T10:00:00', maintenance_end_at='2026-01-02T10:00:00'),
     'maintenance_end_at'),
    ('monitor', 'maintenance start not a timestamp',
     dict(WEB, maintenance_start_at='31/01/2026 10:00', maintenance_end_at='2026-02-01T10:00:00'),
     'maintenance_start_at'),
    # monitor: alerts, per channel
    ('monitor', 'unknown alert channel', alerts('pager', 'ops'), 'alerts'),
    ('monitor', 'email alert not an address', alerts('email', 'oncall-at-example'), 'alerts[0].value'),
    ('monitor', 'sms alert with letters', alerts('sms', 'call me'), 'alerts[0].value'),
    ('monitor', 'sms alert longer than 16', alerts('sms', '+' + '1' * 16), 'alerts[0].value'),
    ('monitor', 'telegram alert longer than 128', alerts('telegram', 't' * 129), 'alerts[0].value'),
    ('monitor', 'webhook alert not a URL', alerts('webhook', 'hooks.example.com/x'), 'alerts[0].value'),
    ('monitor', 'slack alert not http(s)', alerts('slack', 'ftp://hooks.slack.com/x'), 'alerts[0].value'),
    ('monitor', 'teams alert URL longer than 256', alerts('teams', 'https://t.example.com/' + 'a' * 256),
     'alerts[0].value'),
    ('monitor', 'discord alert empty', alerts('discord', ''), 'alerts[0].value'),
    ('monitor', 'flock alert not a URL', alerts('flock', 'flock channel'), 'alerts[0].value'),
    ('monitor', 'alert without a value', dict(WEB, alerts=[{'key': 'email'}]), 'value'),
    ('monitor', 'unknown key inside an alert', dict(WEB, alerts=[{'key': 'email', 'value': 'a@example.com',
                                                                  'channel': 'x'}]), 'channel'),
    ('monitor', 'more than 100 alerts', dict(WEB, alerts=[{'key': 'email', 'value': 'a%d@example.com' % i}
                                                          for i in range(101)]), 'alerts'),
    ('monitor', 'alerts not a list of dicts', dict(WEB, alerts=['email:a@example.com']), 'alerts'),
    # monitor: request headers
    ('monitor', 'unknown key inside a header', headers({'key': 'Accept', 'value': 'text/html', 'name': 'x'}), 'name'),
    ('monitor', 'header without a key', headers({'value': 'text/html'}), 'key'),
    ('monitor', 'header name longer than 128', headers({'key': 'H' * 129, 'value': 'v'}), 'request_headers[0].key'),
    ('monitor', 'header value longer than 256', headers({'key': 'Accept', 'value': 'v' * 257}),
     'request_headers[0].value'),
    ('monitor', 'more than 100 headers', headers(*[{'key': 'X-H%d' % i, 'value': 'v'} for i in range(101)]),
     'request_headers'),
    # connection options
    ('monitor', 'timeout of zero', dict(WEB, timeout=0), 'timeout'),
    ('monitor', 'negative retries', dict(WEB, retries=-1), 'retries'),
    ('monitor', 'validate_certs not a boolean', dict(WEB, validate_certs='perhaps'), 'validate_certs'),
    # monitor_info
    ('monitor_info', 'per_page not allowed', dict(per_page=20), 'per_page'),
    ('monitor_info', 'unknown sort_by', dict(sort_by='created'), 'sort_by'),
    ('monitor_info', 'unknown sort', dict(sort='up'), 'sort'),
    ('monitor_info', 'unknown search_by', dict(search='web', search_by='status'), 'search_by'),
    ('monitor_info', 'id not an integer', dict(id='1a'), 'id'),
    ('monitor_info', 'status_page_id not an integer', dict(status_page_id='main'), 'status_page_id'),
    ('monitor_info', 'limit of zero', dict(limit=0), 'limit'),
    ('monitor_info', 'id and name together', dict(id=1, name='web'), 'name'),
    ('monitor_info', 'export not a boolean', dict(export='csv'), 'export'),
    # incident
    ('incident', 'started_at not a timestamp', dict(monitor_id=1, started_at='yesterday'), 'started_at'),
    ('incident', 'ended_at before started_at',
     dict(monitor_id=1, started_at='2026-01-02T10:00:00', ended_at='2026-01-02T09:00:00'), 'ended_at'),
    ('incident', 'acknowledged_at before started_at',
     dict(monitor_id=1, started_at='2026-01-02T10:00:00', acknowledged_at='2026-01-02T09:00:00'), 'acknowledged_at'),
    ('incident', 'started_at in the future', dict(monitor_id=1, started_at='2099-01-01T00:00:00'), 'started_at'),
    ('incident', 'ended_at in the future',
     dict(monitor_id=1, started_at='2026-01-02T10:00:00', ended_at='2099-01-01T00:00:00'), 'ended_at'),
    ('incident', 'cause longer than 255', dict(monitor_id=1, started_at='2026-01-02T10:00:00', cause=LONG), 'cause'),
    ('incident', 'comment longer than 1024',
     dict(monitor_id=1, started_at='2026-01-02T10:00:00', comment='c' * 1025), 'comment'),
    ('incident', 'unknown status', dict(monitor_id=1, status='closed'), 'status'),
    ('incident', 'monitor_id not an integer', dict(monitor_id='web', started_at='2026-01-02T10:00:00'), 'monitor_id'),
    ('incident', 'id not an integer', dict(id='1.5'), 'id'),
    ('incident', 'monitor_id and monitor together', dict(monitor_id=1, monitor='web'), 'monitor'),
    ('incident', 'no id, monitor_id or monitor', dict(started_at='2026-01-02T10:00:00'), 'monitor'),
    ('incident', 'unknown state', dict(monitor_id=1, state='open'), 'state'),
    # incident_info
    ('incident_info', 'unknown status', dict(status='open'), 'status'),
    ('incident_info', 'search_by url (not allowed)', dict(search='db', search_by='url'), 'search_by'),
    ('incident_info', 'unknown sort_by', dict(sort_by='created_at'), 'sort_by'),
    ('incident_info', 'per_page not allowed', dict(per_page=15), 'per_page'),
    ('incident_info', 'negative limit', dict(limit=-1), 'limit'),
    ('incident_info', 'id and status together', dict(id=1, status='resolved'), 'status'),
    ('incident_info', 'monitor_id not an integer', dict(monitor_id='web'), 'monitor_id'),
    # monitors (bulk)
    ('monitors', 'unknown state', dict(state='present', config=[WEB]), 'state'),
    ('monitors', 'config entry without a name', dict(config=[{'url': 'https://a.example.com/', 'interval': 60}]),
     'name'),
    ('monitors', 'unknown key in a config entry', dict(config=[dict(WEB, colour='red')]), 'colour'),
    ('monitors', 'the same name twice', dict(config=[WEB, dict(WEB, interval=300)]), 'config[1].name'),
    ('monitors', 'replaced without url', dict(state='replaced', config=[{'name': 'web', 'interval': 60}]), 'url'),
    ('monitors', 'workers out of range', dict(workers=33, config=[WEB]), 'workers'),
    ('monitors', 'gathered with config', dict(state='gathered', config=[WEB]), 'config'),
    ('monitors', 'invalid alert in the second entry',
     dict(config=[WEB, dict(alerts('sms', 'call me'), name='api')]), 'config[1].alerts[0].value'),
    ('monitors', 'maintenance window backwards in an entry',
     dict(config=[dict(WEB, maintenance_start_at='2026-01-02T10:00:00', maintenance_end_at='2026-01-01T10:00:00')]),
     'config[0].maintenance_end_at'),
]

MODULES = {'monitor': monitor, 'monitor_info': monitor_info, 'incident': incident, 'incident_info': incident_info,
           'monitors': monitors}


def params(cases):
    return [pytest.param(*case, id='%s: %s' % (case[0], case[1]),
                         marks=known_issues.mark(pytest, known_issues.BAD_INPUT, '%s: %s' % (case[0], case[1])))
            for case in cases]


def verdict(run, field, requests, allowed_reads):
    """What went wrong with the rejection of a bad input ([] when nothing did)."""
    problems = []
    if run.crash or not run.failed:
        problems.append('not rejected' if not run.crash else 'traceback')
    elif field not in run.msg:
        problems.append('the message does not name %s' % field)
    elif 'Traceback' in run.msg or '\n' in run.msg.strip() or run.msg.startswith('unexpected error'):
        problems.append('not one clear line')
    writes = [entry for entry in requests if entry['method'] != 'GET']
    if writes:
        problems.append('sent %d write(s)' % len(writes))
    elif requests and not allowed_reads:
        problems.append('sent %d request(s) for input it could judge alone' % len(requests))
    return problems


def check_and_record(module, case, field, run, requests, needs_service):
    problems = verdict(run, field, requests, needs_service)
    key = '%s: %s' % (module, case)
    record(GROUP, key, module=module, case=case, field=field, msg=run.msg, requests=len(requests),
           writes=len([entry for entry in requests if entry['method'] != 'GET']), needs_service=needs_service,
           problems=problems, known_issue=known_issues.BAD_INPUT.get(key) if problems else None)
    assert not problems, '%s: %r' % ('; '.join(problems), run)


@pytest.mark.parametrize('module, case, args, field', params(BEFORE_ANY_REQUEST))
def test_rejected_before_any_request(emulator, connection, module, case, args, field):
    run = run_module(MODULES[module].main, dict(connection, **args))
    check_and_record(module, case, field, run, emulator.log(), needs_service=False)


def existing_incident(emulator, ended=False):
    mid = seed_monitor(emulator, 'web')['id']
    extra = {'ended_at': utc_ago(hours=1)} if ended else {}
    seed_incident(emulator, mid, utc_ago(hours=2), acknowledged_at=utc_ago(minutes=100), **extra)
    return mid


# (module, what is wrong, setup(emulator) -> args, field)
NEEDS_THE_SERVICE = [
    ('monitor', 'create without url (the name is new)', lambda emu: {'name': 'new', 'interval': 60}, 'url'),
    ('monitor', 'id that does not exist', lambda emu: dict(WEB, id=999), 'id'),
    # A monitor that holds an alert_text_lookup takes url_text alone: only the record tells.
    ('monitor', 'url_text without alert_text_lookup (the name is new)', lambda emu: dict(WEB, alert_condition='url_text'),
     'alert_text_lookup'),
    ('monitor', 'url_no_text on a monitor without alert_text_lookup',
     lambda emu: dict(WEB, name=seed_monitor(emu, 'plain')['name'], alert_condition='url_no_text'), 'alert_text_lookup'),
    ('monitors', 'url_text without alert_text_lookup in an entry (the name is new)',
     lambda emu: dict(config=[dict(WEB, alert_condition='url_text')]), 'config[0].alert_text_lookup'),
    ('incident', 'monitor name that does not exist', lambda emu: {'monitor': 'nope', 'started_at': utc_ago(hours=1)},
     'monitor'),
    ('incident', 'a second ongoing incident',
     lambda emu: {'monitor_id': existing_incident(emu), 'started_at': utc_ago(minutes=30)}, 'started_at'),
    ('incident', 'starts before the last one ended',
     lambda emu: {'monitor_id': existing_incident(emu, ended=True), 'started_at': utc_ago(minutes=90)}, 'started_at'),
    ('incident', 'changing a write-once acknowledged_at',
     lambda emu: {'monitor_id': existing_incident(emu), 'acknowledged_at': utc_ago(minutes=10)}, 'acknowledged_at'),
]


@pytest.mark.parametrize('module, case, setup, field', params(NEEDS_THE_SERVICE))
def test_rejected_after_reading_never_written(emulator, connection, module, case, setup, field):
    args = setup(emulator)
    emulator.clear_log()
    run = run_module(MODULES[module].main, dict(connection, **args))
    check_and_record(module, case, field, run, emulator.log(), needs_service=True)
