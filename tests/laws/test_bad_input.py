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

import re

from hypothesis import Phase, example, given, strategies as st
import pytest

from laws import MODULES, ago, budget, fresh, run
from test_laws import MODES, start
from strategies import BAD_URL, CHANNELS, JUNK_BOOL, JUNK_NUMBER, alert, bad_date, choice, int_choice, too_long
import strategies as gen

from ansible_collections.uptime.monitoring.plugins.module_utils._module import CONNECTION_ARGSPEC
from ansible_collections.uptime.monitoring.plugins.modules import incident, incident_info, monitor, monitor_info, monitors


WEB = gen.entry('web')
PAST = '2026-01-02T10:00:00'


# A list of pairs written as the text a user may mean by it.
PAIRS_AS_TEXT = st.sampled_from(['email,ops@example.org', 'X-A: b', 'key=Accept', '[]x'])
# option -> (invalid values, what the rest of the task needs beside it)
MONITOR = {
    'name': (st.one_of(st.just(''), too_long('name')), {}), 'url': (BAD_URL, {}), 'interval': (int_choice((60, 180, 300, 600, 900, 1800, 3600)), {}),
    'alert_condition': (choice(('url_unavailable', 'url_text', 'url_no_text')), {}),
    'alert_text_lookup': (too_long('alert_text_lookup'), {'alert_condition': 'url_text'}),
    'request_method': (choice(('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS')), {}),
    'ssl_alert_days': (int_choice((0, 1, 2, 3, 7, 14, 30, 60)), {}), 'domain_alert_days': (int_choice((0, 1, 2, 3, 7, 14, 30, 60, 90, 180)), {}),
    'cache_buster': (JUNK_BOOL, {}), 'paused': (JUNK_BOOL, {}), 'id': (JUNK_NUMBER, {}), 'state': (choice(('present', 'absent')), {}),
    'update_password': (choice(('always', 'on_create')), {}), 'maintenance_start_at': (bad_date(), {'maintenance_end_at': '2026-02-01T10:00:00'}),
    'maintenance_end_at': (bad_date(), {'maintenance_start_at': '2026-01-01T10:00:00'}),
    'alerts': (st.sampled_from(CHANNELS).flatmap(alert) | PAIRS_AS_TEXT, {}),
    'request_headers': (st.one_of(
        PAIRS_AS_TEXT,
        st.builds(lambda n: [{'key': 'H' * n, 'value': 'v'}], st.integers(129, 140)),
        st.builds(lambda n: [{'key': 'Accept', 'value': 'v' * n}], st.integers(257, 270))), {}),
    'timeout': (st.one_of(st.sampled_from([0, -1, 'nan', float('nan'), float('-inf'), 'soon'])), {}),
    'retries': (st.one_of(st.integers(-100, -1), JUNK_NUMBER), {}), 'validate_certs': (JUNK_BOOL, {}),
    'api_url': (st.sampled_from(['uptime.example.com', 'ftp://uptime.example.com', 'http://[fe80::1', '']), {})}
INFO = {'id': (JUNK_NUMBER, {}), 'limit': (st.one_of(st.integers(-100, 0), JUNK_NUMBER), {}),
        'per_page': (int_choice((10, 25, 50, 100)), {}), 'sort': (choice(('asc', 'desc')), {}),
        # Keys no returned record has (a key of the other kind's records among them), or none at all.
        'fields': (st.one_of(st.just([]), st.lists(choice(('id', 'name', 'status', 'url', 'cause', 'started_at', 'monitor')),
                                                   min_size=1, max_size=2)), {})}
MONITOR_INFO = dict(INFO, status_page_id=(JUNK_NUMBER, {}), export=(JUNK_BOOL, {}),
                    sort_by=(choice(('id', 'name', 'url')), {}), search_by=(choice(('name', 'url')), {'search': 'web'}))
INCIDENT_INFO = dict(INFO, monitor_id=(JUNK_NUMBER, {}), status=(choice(('unresolved', 'acknowledged', 'resolved')), {}),
                     search_by=(choice(('monitor', 'cause')), {'search': 'db'}), sort_by=(choice(('started_at', 'ended_at')), {}),
                     **{option: (bad_date(), {}) for option in ('started_since', 'started_until', 'ended_since', 'ended_until')})
INCIDENT = {
    'monitor_id': (JUNK_NUMBER, {}), 'id': (JUNK_NUMBER, {}), 'started_at': (bad_date(), {}), 'ended_at': (bad_date(), {'started_at': PAST}),
    'acknowledged_at': (bad_date(), {'started_at': PAST}), 'cause': (too_long('cause'), {}), 'comment': (too_long('comment'), {}),
    'comment_mode': (choice(('replace', 'append')), {}), 'state': (choice(('present', 'acknowledged', 'resolved', 'absent')), {})}
MONITORS = {'state': (choice(('merged', 'replaced', 'overridden', 'deleted', 'gathered')), {}),
            'workers': (st.one_of(st.integers(33, 1000), st.integers(-5, 0), JUNK_NUMBER), {}), 'reveal_secrets': (JUNK_BOOL, {'state': 'gathered'})}
BASE = {'monitor': WEB, 'monitor_info': {}, 'incident': {'monitor_id': 1}, 'incident_info': {},
        'monitors': {'config': [WEB]}}


SPECS = {'monitor': monitor.ARGUMENT_SPEC, 'monitor_info': monitor_info.ARGUMENT_SPEC, 'incident': incident.ARGUMENT_SPEC,
         'incident_info': incident_info.ARGUMENT_SPEC, 'monitors': monitors.MONITORS_ARGSPEC}


def wrong_kind(spec):
    """Values of another kind than an option (its argument spec) takes: an empty string or a word where a number, a
    boolean or a choice belongs, a list or a dict where a number belongs, a string where a list belongs."""
    kind = spec.get('type', 'str')
    if kind == 'list':
        return st.sampled_from(['web', 'a,b', 'key=value'])
    if kind in ('int', 'float'):
        return st.sampled_from(['', 'ten', '7 days', [60], {'value': 60}])
    if kind == 'bool':
        return st.sampled_from(['', [True], {'value': True}])
    return st.sampled_from(['', ' ']) if spec.get('choices') else st.nothing()


def with_wrong_kinds(module, table):
    """``table`` (option -> (invalid values, what the task needs beside them)) with values of the wrong kind added."""
    spec = dict(CONNECTION_ARGSPEC, **SPECS[module])
    if module == 'monitors' and table is MONITOR:  # an entry of the config
        spec = SPECS['monitors']['config']['options']
    return {option: (values | wrong_kind(spec.get(option, {})), extra) for option, (values, extra) in table.items()}


@st.composite
def bad_tasks(draw, modules=None):
    """(module, args, the option the message must name), of one of ``modules`` (by default, any)."""
    module = draw(st.sampled_from(sorted(modules or MODULES)))
    if module == 'monitors' and draw(st.booleans()):  # an entry of the config, between valid ones
        not_in_entries = {'id', 'state', 'update_password', 'timeout', 'retries', 'validate_certs', 'api_url'}
        option = draw(st.sampled_from(sorted(set(MONITOR) - not_in_entries)))
        values, extra = with_wrong_kinds(module, MONITOR)[option]
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
    values, extra = with_wrong_kinds(module, table)[option]
    return module, dict(BASE[module], **dict(extra, **{option: draw(values)})), option


def rejected_in_one_line(emulator, connection, module, args, option):
    emulator.clear_log()
    out = run(connection, module, args, diff=False)
    assert out.crash is None, out.crash
    assert out.failed, out
    assert option in out.msg, out
    assert len(out.msg.replace(option, ' ').split()) >= 3, 'the message says what is wrong, in words: %s' % out
    assert '\n' not in out.msg.strip(), out
    assert not out.msg.startswith('unexpected error'), out
    assert 'Traceback' not in out.msg, out
    assert 'finishes' not in out.msg, out
    return out


# Invalid together: options that need each other, exclude each other or must be in order; items no option takes.
RELATIONS = [
    ('monitor', dict(WEB, intervall=60), 'intervall'), ('monitor', {'url': 'https://web.example.com/', 'interval': 60}, 'name'),
    ('monitor', dict(WEB, request_auth_username='robot'), 'request_auth_password'),
    ('monitor', dict(WEB, request_auth_password='pw-bad-input-1'), 'request_auth_username'),
    ('monitor', dict(WEB, maintenance_start_at=PAST), 'maintenance_end_at'), ('monitor', dict(WEB, maintenance_end_at=PAST), 'maintenance_start_at'),
    ('monitor', dict(WEB, maintenance_start_at='2026-01-02T10:00:00', maintenance_end_at='2026-01-01T10:00:00'), 'maintenance_end_at'),
    ('monitor', dict(WEB, maintenance_start_at=PAST, maintenance_end_at=PAST), 'maintenance_end_at'),
    ('monitor', dict(WEB, alerts=[{'key': 'pager', 'value': 'ops'}]), 'alerts'), ('monitor', dict(WEB, alerts=[{'key': 'email'}]), 'value'),
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
    ('incident_info', {'id': 1, 'status': 'resolved'}, 'status'), ('monitors', {'config': [{'url': 'https://a.example.com/', 'interval': 60}]}, 'name'),
    ('monitors', {'config': [dict(WEB, colour='red')]}, 'colour'), ('monitors', {'config': [WEB, dict(WEB, interval=300)]}, 'config[1].name'),
    ('monitors', {'state': 'replaced', 'config': [{'name': 'web', 'interval': 60}]}, 'url'), ('monitors', {'state': 'gathered', 'config': [WEB]}, 'config'),
    ('monitors', {'state': 'deleted', 'unresolved_masks': 'leave_out'}, 'unresolved_masks'),
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
# Issue 44, item 10: a list of pairs given as a string, an empty number in an entry: Ansible's words named no option.
@example(task=('monitor', dict(WEB, alerts='email,ops@example.org'), 'alerts'))
@example(task=('monitor', dict(WEB, request_headers='X-A: b'), 'request_headers'))
@example(task=('monitors', {'config': [dict(WEB, domain_alert_days='')]}, 'config[0].domain_alert_days'))
# Issue 45, item 1: an integer outside an option's choices, a string where a list of dicts belongs.
@example(task=('monitor', dict(WEB, interval=120), 'interval'))
@example(task=('monitors', {'config': [dict(WEB, ssl_alert_days=5)]}, 'config[0].ssl_alert_days'))
@example(task=('monitor_info', {'per_page': 20}, 'per_page'))
@example(task=('monitors', {'config': 'web'}, 'config'))
@example(task=('monitors', {'config': [dict(WEB, interval='60.5')]}, 'config[0].interval'))  # a fraction a cut makes a choice
# Issue 35, item 11: overridden with an empty config would delete the whole account.
@example(task=('monitors', {'state': 'overridden', 'config': []}, 'config'))
@with_relations
def test_bad_input_fails_in_one_line_naming_the_option_before_any_request(emulator, connection, task):
    module, args, option = task
    rejected_in_one_line(emulator, connection, module, args, option)
    assert emulator.log() == []


@budget(20)
@given(mode=MODES, stored=st.lists(gen.monitors(), min_size=1, max_size=3, unique_by=lambda args: args['name'].casefold()),
       fields=st.one_of(st.none(), st.lists(st.sampled_from(['id', 'name', 'url', 'status', 'checked_at', 'interval']),
                                            min_size=1, unique=True)))
def test_a_record_given_where_the_options_belong_names_its_key_and_the_export(emulator, connection, mode, stored, fields):
    """monitor_info's records (its monitors, not its export) given to monitors as config: refused before any request,
    naming a key of the record that is no option and where the options are."""
    start(emulator, mode, stored)
    read = run(connection, 'monitor_info', {} if fields is None else {'fields': fields})
    assert not read.failed, read
    records = read.result['monitors']
    options = set(monitors.MONITORS_ARGSPEC['config']['options'])
    if all(set(record) <= options for record in records):  # only options asked for: a valid config
        return
    emulator.clear_log()
    out = run(connection, 'monitors', {'state': 'merged', 'config': records})
    assert out.failed, out
    assert re.match(r'config\[\d+\]\.\w+: ', out.msg), out
    key = out.msg.split('.', 1)[1].split(':', 1)[0]
    assert key not in options, out
    assert 'export' in out.msg, out
    assert emulator.log() == []


@budget(40)
@given(option=st.sampled_from(['interval', 'ssl_alert_days', 'domain_alert_days']), data=st.data())
# Issue 35, item 6: domain_alert_days 90 and 180 are stored by the service.
@example(option='domain_alert_days', data=90)
@example(option='domain_alert_days', data=180)
def test_what_the_service_accepts_is_not_refused(emulator, connection, option, data):
    choices = monitor.ARGUMENT_SPEC[option]['choices']
    value = data if isinstance(data, int) else data.draw(st.sampled_from(choices))
    fresh(emulator)
    out = run(connection, 'monitor', dict(WEB, **{option: value}), diff=False)
    assert not out.failed, out
    assert out.changed, out
    assert str(emulator.api('GET', '/api/v1/monitors/%d' % out['monitor']['id']).json['data'][option]) == str(value)


def an_incident(emulator, ended=False, **task):
    """A monitor 'web' with an incident started 2 h ago (ended 1 h ago), acknowledged; ``task`` for its monitor."""
    mid = emulator.records(monitors=[gen.record(WEB)])['monitors'][0]
    emulator.records(incidents=[dict({'monitor_id': mid, 'started_at': ago(120), 'acknowledged_at': ago(100)},
                                     **({'ended_at': ago(60)} if ended else {}))])
    return dict(task, monitor_id=mid)


# What only the service's records tell: the module may read, never write. (module, setup(emulator) -> args, option)
NEEDS_THE_SERVICE = [
    ('monitor', lambda emu: {'name': 'new', 'interval': 60}, 'url'),
    ('monitor', lambda emu: dict(WEB, id=999), 'id'),
    ('monitor', lambda emu: dict(WEB, alert_condition='url_text'), 'alert_text_lookup'),
    ('monitor', lambda emu: dict(WEB, alert_condition='url_no_text', name=an_incident(emu) and 'web'), 'alert_text_lookup'),
    ('monitors', lambda emu: {'config': [dict(WEB, alert_condition='url_text')]}, 'config[0].alert_text_lookup'),
    ('incident', lambda emu: {'monitor': 'nope', 'started_at': PAST}, 'monitor'),
    ('incident', lambda emu: an_incident(emu, started_at=ago(30)), 'started_at'),  # a second ongoing incident
    ('incident', lambda emu: an_incident(emu, True, started_at=ago(90)), 'started_at'),  # before the last one ended
    ('incident', lambda emu: an_incident(emu, acknowledged_at=ago(10)), 'acknowledged_at'),  # written once
]


@pytest.mark.parametrize('module, setup, option', NEEDS_THE_SERVICE)
def test_what_the_records_refuse_is_read_never_written(emulator, connection, module, setup, option):
    args = setup(emulator)
    run = rejected_in_one_line(emulator, connection, module, args, option)
    assert [entry for entry in emulator.log() if entry['method'] != 'GET'] == [], run
