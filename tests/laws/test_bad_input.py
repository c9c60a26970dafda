# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The law of bad input: any invalid value of any option fails in one line naming the option, before any request.

Each module's task is valid but for one generated invalid value of one option: a wrong type, a number out of
range or among no allowed values, an unknown choice, a malformed URL or IPv6 host, a malformed date or a year
outside 1000-9999 (as given or once converted to UTC), ``.inf``/``.nan``, a number given as a junk string, an
empty or overlong text. The task fails with one line that holds the option's name (``config[N].option`` inside
``monitors``), no traceback and no ``unexpected error``, and the emulator's log shows no request. What only the
service's records can judge (a name that does not exist, an incident that would overlap another) may read, never
write: the last test's table. Values the service accepts are never refused (the second law).
"""

from __future__ import annotations

import datetime

from hypothesis import Phase, example, given, strategies as st
import pytest

from laws import MODULES, budget
from module_runner import run_module

from ansible_collections.uptime.monitoring.plugins.modules import monitor


WEB = {'name': 'web', 'url': 'https://web.example.com/', 'interval': 60}
PAST = '2026-01-02T10:00:00'
CHANNELS = ('email', 'webhook', 'slack', 'teams', 'discord', 'flock', 'telegram', 'sms')


def text(alphabet='abcdefghijklmnopqrstuvwxyz -_.:/', **kwargs):
    return st.text(alphabet, **kwargs)


# Numbers that are no numbers: junk strings, fractions, infinities.
JUNK_NUMBER = st.one_of(st.sampled_from(['often', '1a', '1.5', 'inf', '-inf', 'nan', '.inf', '.nan', '0x1g', '1e400x', '']),
                        st.sampled_from([1.5, -0.5, float('inf'), float('-inf'), float('nan')]),
                        text(alphabet='abcxyz!?', min_size=1, max_size=8))
JUNK_BOOL = st.one_of(st.sampled_from(['maybe', 'perhaps', '2', 'yess', '-1', 'nope']), text(alphabet='xzq', min_size=1))


def choice(values):
    """Anything but one of ``values``: other words, and the values in another case."""
    other = text(alphabet='abcdefghijklmnopqrstuvwxyzABCXYZ_', min_size=1, max_size=12).filter(lambda v: v not in values)
    return st.one_of(other, st.sampled_from([v.swapcase() for v in values]))


def int_choice(values):
    return st.one_of(st.integers(-10 ** 6, 10 ** 6).map(lambda value: value if value not in values else -value - 1), JUNK_NUMBER)


BAD_URL = st.one_of(
    st.sampled_from(['http://[fe80::1', 'https://[2001:db8::1/hook', 'https://.bad.example.org', 'https://a..b.org/',
                     'ftp://web.example.com/', 'web example com', 'https://', 'http:///x',
                     'https://[::1]x/', 'https://[zz::1]/', '//web.example.com/', 'https://a b.org/']),
    st.builds(lambda scheme, host: '%s://%s/' % (scheme, host), st.sampled_from(['ftp', 'file', 'gopher', 'ws']),
              st.sampled_from(['web.example.com', 'localhost', '[2001:db8::1]', '10.0.0.1'])),
    st.builds(lambda path: 'https://web.example.com/' + path, text(alphabet='abc', min_size=2048, max_size=2100)))


def bad_date():
    """Not a date the service reads (Y-m-d\\TH:i:s), or a year outside 1000-9999 as given or once in UTC."""
    return st.one_of(
        st.sampled_from(['yesterday', '31/01/2026 10:00', '2026-13-01T00:00:00', '2026-02-30T00:00:00', '2026-01-01T25:00:00',
                         '0001-01-01T00:00:00', '0999-12-31T23:59:59', '10000-01-01T00:00:00',
                         '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00', '1000-01-01T00:30:00+01:00', ' ']),
        st.builds(lambda year: '%04d-06-01T12:00:00' % year, st.integers(0, 999)),
        st.builds(lambda day: 'T'.join(['2026-01-%s' % day, '10:00:00']), text(alphabet='0123456789x', min_size=3, max_size=4)),
        text(alphabet='0123456789-:T ', min_size=1, max_size=18).filter(lambda v: not _is_date(v)))


def _is_date(value):
    """A timestamp the modules take: ISO 8601 (seconds may be left out, an offset or Z added), its year of four digits
    as given and in UTC."""
    text = value.strip()
    try:
        moment = datetime.datetime.fromisoformat(text[:-1] + '+00:00' if text.endswith(('Z', 'z')) else text)
        in_utc = moment.astimezone(datetime.timezone.utc) if moment.tzinfo else moment
    except (ValueError, OverflowError):
        return False
    return 1000 <= moment.year <= 9999 and 1000 <= in_utc.year <= 9999


def alert_value(channel):
    """A value the channel refuses."""
    urls = st.one_of(BAD_URL, st.just(''), st.just('https://hooks.example.com/' + 'a' * 256))
    return {'email': st.sampled_from(['oncall-at-example', '', '@', 'a@', 'a b@example.com']),
            'sms': st.one_of(st.sampled_from(['call me', '+' + '1' * 16, '']), text(alphabet='abc', min_size=1)),
            'telegram': st.sampled_from(['t' * 129, '', 'no-white-space-here'])}.get(channel, urls)


def alert(channel):
    return st.builds(lambda value: [{'key': channel, 'value': value}], alert_value(channel))


LENGTHS = {'name': 128, 'alert_text_lookup': 255, 'cause': 255, 'comment': 1024}


def too_long(option):
    return st.integers(LENGTHS[option] + 1, LENGTHS[option] + 40).map(lambda n: 'x' * n)


# option -> (invalid values, what the rest of the task needs beside it)
MONITOR = {
    'name': (st.one_of(st.just(''), too_long('name')), {}),
    'url': (BAD_URL, {}),
    'interval': (int_choice((60, 180, 300, 600, 900, 1800, 3600)), {}),
    'alert_condition': (choice(('url_unavailable', 'url_text', 'url_no_text')), {}),
    'alert_text_lookup': (too_long('alert_text_lookup'), {'alert_condition': 'url_text'}),
    'request_method': (choice(('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS')), {}),
    'ssl_alert_days': (int_choice((0, 1, 2, 3, 7, 14, 30, 60)), {}),
    'domain_alert_days': (int_choice((0, 1, 2, 3, 7, 14, 30, 60, 90, 180)), {}),
    'cache_buster': (JUNK_BOOL, {}),
    'paused': (JUNK_BOOL, {}),
    'id': (JUNK_NUMBER, {}),
    'state': (choice(('present', 'absent')), {}),
    'update_password': (choice(('always', 'on_create')), {}),
    'maintenance_start_at': (bad_date(), {'maintenance_end_at': '2026-02-01T10:00:00'}),
    'maintenance_end_at': (bad_date(), {'maintenance_start_at': '2026-01-01T10:00:00'}),
    'alerts': (st.sampled_from(CHANNELS).flatmap(alert), {}),
    'request_headers': (st.one_of(
        st.builds(lambda n: [{'key': 'H' * n, 'value': 'v'}], st.integers(129, 140)),
        st.builds(lambda n: [{'key': 'Accept', 'value': 'v' * n}], st.integers(257, 270))), {}),
    'timeout': (st.one_of(st.sampled_from([0, -1, 'nan', float('nan'), float('-inf'), 'soon'])), {}),
    'retries': (st.one_of(st.integers(-100, -1), JUNK_NUMBER), {}),
    'validate_certs': (JUNK_BOOL, {}),
    'api_url': (st.sampled_from(['uptime.example.com', 'ftp://uptime.example.com', 'http://[fe80::1', '']), {}),
}
INFO = {
    'id': (JUNK_NUMBER, {}), 'limit': (st.one_of(st.integers(-100, 0), JUNK_NUMBER), {}),
    'per_page': (int_choice((10, 25, 50, 100)), {}), 'sort': (choice(('asc', 'desc')), {}),
}
MONITOR_INFO = dict(INFO, status_page_id=(JUNK_NUMBER, {}), export=(JUNK_BOOL, {}),
                    sort_by=(choice(('id', 'name', 'url')), {}), search_by=(choice(('name', 'url')), {'search': 'web'}))
INCIDENT_INFO = dict(INFO, monitor_id=(JUNK_NUMBER, {}), status=(choice(('unresolved', 'acknowledged', 'resolved')), {}),
                     search_by=(choice(('monitor', 'cause')), {'search': 'db'}),
                     sort_by=(choice(('started_at', 'ended_at')), {}),
                     **{option: (bad_date(), {}) for option in ('started_since', 'started_until', 'ended_since', 'ended_until')})
INCIDENT = {
    'monitor_id': (JUNK_NUMBER, {}), 'id': (JUNK_NUMBER, {}),
    'started_at': (bad_date(), {}),
    'acknowledged_at': (bad_date(), {'started_at': PAST}),
    'ended_at': (bad_date(), {'started_at': PAST}),
    'cause': (too_long('cause'), {}), 'comment': (too_long('comment'), {}),
    'comment_mode': (choice(('replace', 'append')), {}),
    'state': (choice(('present', 'acknowledged', 'resolved', 'absent')), {}),
}
MONITORS = {
    'state': (choice(('merged', 'replaced', 'overridden', 'deleted', 'gathered')), {}),
    'workers': (st.one_of(st.integers(33, 1000), st.integers(-5, 0), JUNK_NUMBER), {}),
    'reveal_secrets': (JUNK_BOOL, {'state': 'gathered'}),
}
BASE = {'monitor': WEB, 'monitor_info': {}, 'incident': {'monitor_id': 1}, 'incident_info': {},
        'monitors': {'config': [WEB]}}


@st.composite
def bad_tasks(draw):
    """(module, args, the option the message must name)."""
    module = draw(st.sampled_from(sorted(MODULES)))
    if module == 'monitors' and draw(st.booleans()):  # an entry of the config, between valid ones
        not_in_entries = {'id', 'state', 'update_password', 'timeout', 'retries', 'validate_certs', 'api_url'}
        option = draw(st.sampled_from(sorted(set(MONITOR) - not_in_entries)))
        values, extra = MONITOR[option]
        good = [{'name': 'm%d' % i, 'url': 'https://m%d.example.com/' % i, 'interval': 60} for i in range(draw(st.integers(0, 2)))]
        at = draw(st.integers(0, len(good)))
        entry = dict(WEB, **dict(extra, **{option: draw(values)}))
        state = draw(st.sampled_from(['merged', 'replaced', 'overridden']))
        return module, {'state': state, 'config': good[:at] + [entry] + good[at:]}, 'config[%d].%s' % (at, option)
    table = {'monitor': MONITOR, 'monitor_info': MONITOR_INFO, 'incident': INCIDENT, 'incident_info': INCIDENT_INFO,
             'monitors': MONITORS}[module]
    if module != 'monitor':
        table = dict(table, **{k: MONITOR[k] for k in ('timeout', 'retries', 'validate_certs', 'api_url')})
    option = draw(st.sampled_from(sorted(table)))
    values, extra = table[option]
    return module, dict(BASE[module], **dict(extra, **{option: draw(values)})), option


def rejected_in_one_line(emulator, connection, module, args, option):
    emulator.clear_log()
    run = run_module(MODULES[module].main, dict(connection, **args))
    assert run.crash is None, run.crash
    assert run.failed, run
    assert option in run.msg and '\n' not in run.msg.strip(), run
    assert not run.msg.startswith('unexpected error') and 'Traceback' not in run.msg, run
    assert 'finishes' not in run.msg, run
    return run


# Invalid together: options that need each other, exclude each other or must be in order; items no option takes.
RELATIONS = [
    ('monitor', dict(WEB, intervall=60), 'intervall'),
    ('monitor', {'url': 'https://web.example.com/', 'interval': 60}, 'name'),
    ('monitor', dict(WEB, request_auth_username='robot'), 'request_auth_password'),
    ('monitor', dict(WEB, request_auth_password='pw-bad-input-1'), 'request_auth_username'),
    ('monitor', dict(WEB, maintenance_start_at=PAST), 'maintenance_end_at'),
    ('monitor', dict(WEB, maintenance_end_at=PAST), 'maintenance_start_at'),
    ('monitor', dict(WEB, maintenance_start_at='2026-01-02T10:00:00', maintenance_end_at='2026-01-01T10:00:00'), 'maintenance_end_at'),
    ('monitor', dict(WEB, maintenance_start_at=PAST, maintenance_end_at=PAST), 'maintenance_end_at'),
    ('monitor', dict(WEB, alerts=[{'key': 'pager', 'value': 'ops'}]), 'alerts'),
    ('monitor', dict(WEB, alerts=[{'key': 'email'}]), 'value'),
    ('monitor', dict(WEB, alerts=[{'key': 'email', 'value': 'a@example.com', 'channel': 'x'}]), 'channel'),
    ('monitor', dict(WEB, alerts=[{'key': 'email', 'value': 'a%d@example.com' % i} for i in range(101)]), 'alerts'),
    ('monitor', dict(WEB, request_headers=[{'key': 'Accept', 'value': 'text/html', 'name': 'x'}]), 'name'),
    ('monitor', dict(WEB, request_headers=[{'value': 'text/html'}]), 'key'),
    ('monitor', dict(WEB, request_headers=[{'key': 'X-H%d' % i, 'value': 'v'} for i in range(101)]), 'request_headers'),
    ('monitor_info', {'id': 1, 'name': 'web'}, 'name'),
    ('incident', {'monitor_id': 1, 'started_at': '2026-01-02T10:00:00', 'ended_at': '2026-01-02T09:00:00'}, 'ended_at'),
    ('incident', {'monitor_id': 1, 'started_at': '2026-01-02T10:00:00', 'acknowledged_at': '2026-01-02T09:00:00'}, 'acknowledged_at'),
    ('incident', {'monitor_id': 1, 'started_at': '2099-01-01T00:00:00'}, 'started_at'),
    ('incident', {'monitor_id': 1, 'started_at': PAST, 'ended_at': '2099-01-01T00:00:00'}, 'ended_at'),
    ('incident', {'monitor_id': 1, 'monitor': 'web'}, 'monitor'), ('incident', {'started_at': PAST}, 'monitor'),
    ('incident_info', {'id': 1, 'status': 'resolved'}, 'status'),
    ('monitors', {'config': [{'url': 'https://a.example.com/', 'interval': 60}]}, 'name'),
    ('monitors', {'config': [dict(WEB, colour='red')]}, 'colour'),
    ('monitors', {'config': [WEB, dict(WEB, interval=300)]}, 'config[1].name'),
    ('monitors', {'state': 'replaced', 'config': [{'name': 'web', 'interval': 60}]}, 'url'),
    ('monitors', {'state': 'gathered', 'config': [WEB]}, 'config'),
]


def with_relations(test):
    for task in reversed(RELATIONS):
        test = example(task=task)(test)
    return test


@budget(300, phases=[Phase.explicit, Phase.generate, Phase.shrink])
@given(task=bad_tasks())
# Issue 35, item 7: unexpected errors instead of one line.
@example(task=('monitor', dict(WEB, url='http://[fe80::1'), 'url'))
@example(task=('monitor', dict(WEB, alerts=[{'key': 'webhook', 'value': 'https://[2001:db8::1/hook'}]), 'alerts'))
@example(task=('monitor', dict(WEB, maintenance_start_at='0001-01-01T00:00:00+01:00', maintenance_end_at='2026-01-01T00:00:00'),
               'maintenance_start_at'))
@example(task=('incident_info', {'ended_until': '9999-12-31T23:59:59-01:00'}, 'ended_until'))
@example(task=('incident', {'monitor': 'shop', 'started_at': '0001-01-01T00:00:00'}, 'started_at'))
# Issue 35, item 8: one URL the service refuses beside a good entry: refused before any write, no rerun promised.
@example(task=('monitors', {'config': [{'name': 'good', 'url': 'https://good.example.org/', 'interval': 60},
                                       {'name': 'bad', 'url': 'https://.bad.example.org', 'interval': 60}]}, 'config[1].url'))
# Issue 35, item 11: overridden with an empty config would delete the whole account.
@example(task=('monitors', {'state': 'overridden', 'config': []}, 'config'))
@with_relations
def test_bad_input_fails_in_one_line_naming_the_option_before_any_request(emulator, connection, task):
    module, args, option = task
    rejected_in_one_line(emulator, connection, module, args, option)
    assert emulator.log() == []


@budget(40)
@given(option=st.sampled_from(['interval', 'ssl_alert_days', 'domain_alert_days']), data=st.data())
# Issue 35, item 6: domain_alert_days 90 and 180 are stored by the service.
@example(option='domain_alert_days', data=90)
@example(option='domain_alert_days', data=180)
def test_what_the_service_accepts_is_not_refused(emulator, connection, option, data):
    choices = monitor.ARGUMENT_SPEC[option]['choices']
    value = data if isinstance(data, int) else data.draw(st.sampled_from(choices))
    emulator.reset()
    run = run_module(monitor.main, dict(connection, **dict(WEB, **{option: value})))
    assert not run.failed and run.changed, run
    assert str(emulator.api('GET', '/api/v1/monitors/%d' % run['monitor']['id']).json['data'][option]) == str(value)


def stamp(minutes_ago):
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=minutes_ago)
    return now.strftime('%Y-%m-%dT%H:%M:%S')


def an_incident(emulator, ended=False, **task):
    """A monitor 'web' with an incident started 2 h ago (ended 1 h ago), acknowledged; ``task`` for its monitor."""
    mid = emulator.records(monitors=[dict(WEB, request_method='GET', alert_condition='url_unavailable')])['monitors'][0]
    emulator.records(incidents=[dict({'monitor_id': mid, 'started_at': stamp(120), 'acknowledged_at': stamp(100)},
                                     **({'ended_at': stamp(60)} if ended else {}))])
    return dict(task, monitor_id=mid)


# What only the service's records tell: the module may read, never write. (module, setup(emulator) -> args, option)
NEEDS_THE_SERVICE = [
    ('monitor', lambda emu: {'name': 'new', 'interval': 60}, 'url'),
    ('monitor', lambda emu: dict(WEB, id=999), 'id'),
    ('monitor', lambda emu: dict(WEB, alert_condition='url_text'), 'alert_text_lookup'),
    ('monitor', lambda emu: dict(WEB, alert_condition='url_no_text', name=an_incident(emu) and 'web'), 'alert_text_lookup'),
    ('monitors', lambda emu: {'config': [dict(WEB, alert_condition='url_text')]}, 'config[0].alert_text_lookup'),
    ('incident', lambda emu: {'monitor': 'nope', 'started_at': PAST}, 'monitor'),
    ('incident', lambda emu: an_incident(emu, started_at=stamp(30)), 'started_at'),  # a second ongoing incident
    ('incident', lambda emu: an_incident(emu, True, started_at=stamp(90)), 'started_at'),  # before the last one ended
    ('incident', lambda emu: an_incident(emu, acknowledged_at=stamp(10)), 'acknowledged_at'),  # written once
]


@pytest.mark.parametrize('module, setup, option', NEEDS_THE_SERVICE)
def test_what_the_records_refuse_is_read_never_written(emulator, connection, module, setup, option):
    args = setup(emulator)
    run = rejected_in_one_line(emulator, connection, module, args, option)
    assert [entry for entry in emulator.log() if entry['method'] != 'GET'] == [], run
