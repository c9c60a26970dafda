"""The promises of monitor, monitor_info, monitors, incident and incident_info as laws over generated input.

Each law draws a starting account (its zone, whether the service compares names without case, its clock) and a task,
runs the modules in-process against the emulator and checks the promise. The regression tests of issue 35 are the
``@example``s, named by the item they keep fixed.
"""

from __future__ import annotations

import json
import urllib.parse

from hypothesis import assume, example, given, strategies as st

from laws import budget, fresh, holds, quiet, run, stored, writes
from module_runner import run_lookup
import strategies as gen

from ansible_collections.uptime.monitoring.plugins.module_utils._incident import INCIDENT_RESOURCE
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA, MONITOR_RESOURCE
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import info_argument_spec

# Monitors as accounts hold them: some with a secret in one of its places (a URL's credential among them).
START = st.lists(gen.monitors() | gen.SECRETS.flatmap(lambda secret: gen.monitors(secret=secret)), max_size=3,
                 unique_by=lambda args: args['name'].strip().casefold())
API = {'name': 'api', 'url': 'https://api.example.org/', 'interval': 60}
SLACK = {'name': 'chat', 'url': 'https://chat.example.org/', 'interval': 300, 'request_auth_username': 'u',
         'request_auth_password': 'Pa55word', 'alerts': [{'key': 'email', 'value': 'ops@example.org'},
                                                         {'key': 'slack', 'value': 'https://hooks.slack.com/services/T0K3N'}]}
INCIDENT_OPTIONS = {'cause': st.sampled_from(['HTTP 500', 'ünïcode cause']), 'comment': st.sampled_from(['seen', None])}


@st.composite
def tasks(draw, names, modules=('monitor', 'monitors', 'incident', 'monitor_info', 'incident_info')):
    """A task of one of ``modules`` that names a monitor of ``names`` (in a variant) or a new one."""
    module = draw(st.sampled_from(modules))
    name = draw(gen.variants(draw(st.sampled_from(names))) if names and draw(st.booleans()) else gen.names())
    if module == 'monitor' and names and draw(st.integers(0, 3)) == 0:  # a rename by id (the monitors have ids 1, 2...)
        return module, {'id': draw(st.integers(1, len(names))), 'name': name}
    if module == 'monitor':
        return module, draw(gen.monitors(name=name)) if draw(st.booleans()) else {'name': name, 'state': 'absent'}
    if module == 'monitors':
        return module, draw(syncs(names, name))
    if module == 'incident':
        # By name, or by id: the account's monitors have ids 1, 2...; the next one is an id it lacks.
        by_id = draw(st.sampled_from(['name', 'id', 'lacked']))
        monitor = {'monitor': name} if by_id == 'name' else {'monitor_id': len(names) + 1} if by_id == 'lacked' \
            else {'monitor_id': draw(st.integers(1, max(1, len(names))))}
        args = dict(monitor, state=draw(st.sampled_from(['present', 'acknowledged', 'resolved', 'absent'])))
        args.update({key: draw(values) for key, values in INCIDENT_OPTIONS.items()})
        return module, args
    if module == 'monitor_info':
        return module, {'name': name, 'export': draw(st.booleans())}
    return module, dict({'monitor': name}, **draw(st.sampled_from([{}, {'status': 'unresolved'}, {'status': 'resolved'}])))


# The forms of config each state takes (the others are bad input): absent, empty, or entries.
CONFIGS = {'merged': ['empty', 'full'], 'replaced': ['empty', 'full'], 'overridden': ['full'], 'deleted': ['absent', 'empty', 'full'],
           'gathered': ['absent']}


@st.composite
def syncs(draw, names, name):
    """A task of monitors in any state, its config absent, empty or of entries (``name`` first, then names of ``names``
    or new ones), entries of deleted naming monitors alone."""
    state = draw(st.sampled_from(sorted(CONFIGS)))
    form = draw(st.sampled_from(CONFIGS[state]))
    if form == 'absent':
        return dict({'state': state}, **draw(st.sampled_from([{}, {'reveal_secrets': True}] if state == 'gathered' else [{}])))
    more = st.sampled_from(names) | gen.names() if names else gen.names()
    listed = [name] + [each for each in draw(st.lists(more, max_size=2, unique_by=str.strip)) if each.strip() != name.strip()] \
        if form == 'full' else []
    config = [{'name': each} if state == 'deleted' else draw(gen.monitors(name=each)) for each in listed]
    return dict({'state': state, 'config': config}, **draw(st.sampled_from([{}, {'unresolved_masks': 'leave_out'}] if state != 'deleted' else [{}])))


EXPLAINED = ('no monitor is named', 'has no incident', 'differs only in case', 'the service refused', 'has already been taken',
             'to keep', 'masked', 'cannot be renamed')
PLAIN = {'zone': None, 'ignore_case': False, 'clock': 0, 'checked': []}
MODES = st.fixed_dictionaries({'zone': st.sampled_from(gen.ZONES), 'ignore_case': st.booleans(),
                               'clock': st.sampled_from([0, 0, -5, -40, 30]), 'checked': gen.CHECKED})


def start(emulator, mode, monitors, opened=()):
    """The account of ``mode`` with ``monitors`` stored, as the checker found each (``mode['checked']``), paused where
    they ask it, and an incident open on each of ``opened``."""
    mode = dict(mode)
    checked = mode.pop('checked', ())
    ids = fresh(emulator, stored=[gen.record(args) for args in monitors],
                incidents=[{'monitor': gen.record(args)['name'], 'started_at': '2020-01-01T00:00:00', 'cause': 'HTTP 500'}
                           for args in opened], **mode)
    for monitor_id, args, status in zip(ids, monitors, checked):
        if status and args.get('maintenance_start_at') != gen.NOW_WINDOW[0]:  # the checker leaves maintenance alone
            emulator.check(monitor_id, status)
    for monitor_id, args in zip(ids, monitors):
        if gen.paused(args):
            emulator.api('PUT', '/api/v1/monitors/%d' % monitor_id, data={'pause': 1})
    emulator.clear_log()
    return ids


@budget(100)
@given(mode=MODES, monitors=START, data=st.data())
@example(mode=dict(PLAIN, clock=-5), monitors=[API], data=None).via('issue 35 item 12')
@example(mode=dict(PLAIN, zone='America/New_York'), monitors=[dict(API, domain_alert_days=180)], data=None).via('issue 35 item 6')
@example(mode=PLAIN, monitors=[API], data=('incident', {'monitor_id': 2, 'state': 'acknowledged'})).via(
    'issue 45: an incident task for an id the account lacks is not "nothing to acknowledge"')
def test_idempotence(emulator, connection, mode, monitors, data):
    """Any accepted input applied twice: the second run reports changed false and sends no write."""
    start(emulator, mode, monitors)
    tasks_ = [('incident', {'monitor': 'api', 'cause': 'x'}), ('incident', {'monitor': 'api', 'state': 'acknowledged'})] if data is None \
        else [data] if isinstance(data, tuple) else [data.draw(tasks([args['name'] for args in monitors]), label='task')]
    if data is None:
        tasks_.append(('monitor', monitors[0]))
    for module, args in tasks_:
        first = run(connection, module, args)
        holds(not first.crash, 'no crash', task=args, crash=first.crash)
        if args.get('monitor_id', 0) > len(monitors) and args.get('state') != 'absent':
            holds(first.failed, 'an incident task for an id the account lacks fails', task=args, result=first.result)
            holds('no monitor has the id %d' % args['monitor_id'] in first.msg, 'the failure names the id', msg=first.msg)
            holds(not writes(emulator), 'an incident task for an id the account lacks writes nothing', task=args)
            continue
        # Refusals the drawn state explains: no such monitor or incident, a name held in another case, a masked value with
        # nothing stored to keep. Any other is a refusal of accepted input.
        assume(not (first.failed and data is not None and any(reason in first.msg for reason in EXPLAINED)))
        holds(not first.failed, 'accepted input is applied', mode=mode, task=args, result=first.result)
        writes(emulator)
        second = run(connection, module, args)
        holds(not second.failed, 'idempotence: the second run succeeds', mode=mode, task=args,
              first=first.result, second=second.result)
        holds(second.changed is False, 'idempotence: the second run changes nothing', mode=mode, task=args,
              first=first.result, second=second.result)
        holds(not writes(emulator), 'idempotence: the second run sends no write', mode=mode, task=args,
              first=first.result, second=second.result)
        holds(('after' in first.result) == bool(first.changed) or module != 'monitors',
              'a sync returns after when it changed the account', task=args, first=first.result)
        holds('after' not in second.result or module != 'monitors', 'a sync that changes nothing returns before alone',
              task=args, second=second.result)


@budget(100)
@given(mode=MODES, monitors=START, opened=st.booleans(), data=st.data())
@example(mode=dict(PLAIN, clock=-5), monitors=[API], opened=False,
         data=('incident', {'monitor': 'api', 'cause': 'down'})).via('issue 35 item 12')
@example(mode=PLAIN, monitors=[API, SLACK], opened=False,
         data=('monitor', {'id': 2, 'name': 'api'})).via('issue 44 item 6: a rename to a name another monitor has')
def test_check_mode_predicts(emulator, connection, mode, monitors, opened, data):
    """From any starting state, check mode sends no write; its changed, failure and diff are those of the real run
    (a write the service refuses aside)."""
    start(emulator, mode, monitors, monitors[:1] if opened else ())
    module, args = data if isinstance(data, tuple) else data.draw(tasks([args['name'] for args in monitors]), label='task')
    check = run(connection, module, args, check_mode=True)
    sent = writes(emulator)
    real = run(connection, module, args)
    holds(not sent, 'check mode sends no write', mode=mode, task=args, sent=sent)
    holds(not check.crash, 'no crash in check mode', task=args, check=check.crash)
    holds(not real.crash, 'no crash in the real run', task=args, real=real.crash)
    # What check mode cannot know, since it writes nothing: that the service refuses the write (a name its database
    # holds in another case). The real run then fails naming the refusal.
    assume(not (real.failed and not check.failed and 'the service refused' in real.msg))
    holds((check.changed, check.failed, check.get('left_out')) == (real.changed, real.failed, real.get('left_out')),
          'check mode predicts changed and what is left out', mode=mode, task=args, check=check.result, real=real.result)
    chosen = ('started_at', 'acknowledged_at', 'ended_at', 'id', 'monitor_id', 'status') if module == 'incident' else ('id', 'status')
    holds(quiet(check.get('diff'), *chosen) == quiet(real.get('diff'), *chosen), 'check mode predicts the diff', mode=mode,
          task=args, check=check.get('diff'), real=real.get('diff'))


def reordered(entries, shuffle):
    """Export entries with their header and alert lists in another order (the same items)."""
    return [dict(entry, **{key: list(reversed(entry[key])) for key in ('request_headers', 'alerts') if shuffle and entry.get(key)})
            for entry in entries]


OPTIONS = ('name', 'url', 'interval', 'alert_condition', 'alert_text_lookup', 'request_method', 'request_headers', 'request_auth_username',
           'request_auth_password', 'cache_buster', 'ssl_alert_days', 'domain_alert_days', 'maintenance_start_at', 'maintenance_end_at',
           'alerts', 'paused')
MADE = ('id', 'created_at', 'updated_at', 'started_at', 'checked_at', 'status', 'token')


def made_aside(records):
    """Monitors without what the service makes (ids, times, status), lists in one order and null as empty (the service
    reads both alike): what a copy must hold."""
    return sorted((dict({key: sorted(value or [], key=str) if key in ('request_headers', 'alerts') else value
                         for key, value in record.items() if key not in MADE}, paused=record['status'] == 'paused')
                   for record in records), key=lambda item: item['name'])


def unmasked_parts(records, reveal):
    """What a copy of ``records`` (stored monitors) read (``reveal``: with their secrets) holds when what shows masked is
    left out, and what is left out ((name, option, key) as left_out tells it): a masked item alone, a password with its
    user name, a monitor whose url shows masked whole."""
    def shown(option, value):
        return value if reveal else MONITOR_SCHEMA.by_name[option].mask(value)
    kept, told = [], []
    for record in records:
        if MONITOR_SCHEMA.by_name['url'].holds_mask(shown('url', record['url'])):
            told.append((record['name'], None, None))
            continue
        copy = dict(record)
        for option in ('request_headers', 'alerts'):
            items = record.get(option) or []
            masked = [MONITOR_SCHEMA.by_name[option].is_masked_item(shown(option, [item])[0]) for item in items]
            copy[option] = [item for item, hidden in zip(items, masked) if not hidden]
            told += [(record['name'], option, item['key']) for item, hidden in zip(items, masked) if hidden]
        if MONITOR_SCHEMA.by_name['request_auth_password'].holds_mask(shown('request_auth_password', record.get('request_auth_password'))):
            copy.update(request_auth_username=None, request_auth_password=None)
            told += [(record['name'], option, None) for option in ('request_auth_username', 'request_auth_password')]
        kept.append(copy)
    return kept, sorted(told, key=str)


@budget(80)
@given(mode=MODES.map(lambda mode: dict(mode, clock=0)), monitors=START.filter(bool), source=st.sampled_from(['export', 'gathered', 'shown']),
       target=st.sampled_from(['monitor', 'merged', 'replaced', 'overridden', 'copy']), shuffle=st.booleans(), reveal=st.booleans(),
       leave_out=st.booleans(), edit=st.sampled_from(gen.EDITS))
@example(mode=PLAIN, monitors=[SLACK], source='shown', target='monitor', shuffle=False, reveal=False,
         leave_out=False, edit=None).via('issue 35 item 2: a masked webhook and password applied back')
@example(mode=PLAIN, monitors=[SLACK, API], source='gathered', target='overridden', shuffle=False, reveal=False,
         leave_out=False, edit=None).via('issue 35 item 3: gathered then overridden keeps every alert')
@example(mode=PLAIN, monitors=[SLACK], source='export', target='copy', shuffle=True, reveal=False,
         leave_out=False, edit=None).via('issue 35 item 4: an export keeps alerts (masked: refused whole in another account)')
@example(mode=PLAIN, monitors=[SLACK], source='export', target='copy', shuffle=False, reveal=True,
         leave_out=False, edit=None).via('issue 35 item 4: an export with reveal_secrets copies an account')
@example(mode=dict(PLAIN, zone='Europe/Berlin'), monitors=[dict(API, domain_alert_days=90), dict(SLACK, domain_alert_days=180)],
         source='gathered', target='replaced', shuffle=False, reveal=False,
         leave_out=False, edit=None).via('issue 35 item 6: domain_alert_days 90 and 180')
@example(mode=PLAIN, monitors=[dict(API, url='https://admin:Sup3rS3cret@intranet.example.org/health?api_key=K3Y')], source='export',
         target='monitor', shuffle=False, reveal=False, leave_out=False, edit=None).via('issue 35 item 10: a masked URL applies back')
@example(mode=PLAIN, monitors=[SLACK, dict(API, url='https://admin:Sup3rS3cret@intranet.example.org/')], source='export',
         target='copy', shuffle=False, reveal=False, leave_out=True, edit=None).via('issue 44 item 1: a copy leaves out the masked parts alone')
@example(mode=PLAIN, monitors=[SLACK], source='gathered', target='overridden', shuffle=False, reveal=False,
         leave_out=True, edit=None).via('issue 44 item 1: a restore keeps every masked secret')
@example(mode=PLAIN, monitors=[SLACK], source='gathered', target='replaced', shuffle=True, reveal=False,
         leave_out=False, edit=None).via('issue 45: alerts given back in another order are the same alerts')
def test_round_trip(emulator, connection, mode, monitors, source, target, shuffle, reveal, leave_out, edit):
    """What a read shows (monitor_info export or its list, monitors gathered) applied back (merged, replaced, overridden or
    each through monitor) changes nothing and loses nothing stored, secrets included: the default reads are masked; with
    a user name, password, header names or alert channels changed beside the masked values (``edit``), it changes those
    alone, reports it, and applied again changes nothing. Applied to an empty account (copy) it recreates every monitor
    whole, paused ones paused, or, masked, fails before any write; with unresolved_masks=leave_out it copies all that is
    not masked and leaves out, and names, exactly what is."""
    start(emulator, mode, monitors)
    before = stored(emulator)
    reveal = reveal and source != 'shown'
    assume(not (source == 'shown' and target == 'copy'))  # the list says not which values are masked
    read = run(connection, 'monitors', dict(state='gathered', **({'reveal_secrets': True} if reveal else {}))) if source == 'gathered' \
        else run(connection, 'monitor_info', dict(export=source == 'export', **({'reveal_secrets': True} if reveal else {})))
    holds(not read.failed, 'a read to apply back', source=source, reveal=reveal, result=read.result)
    entries = reordered([gen.edited({key: value for key, value in entry.items() if key in OPTIONS}, None if target == 'copy' else edit)
                         for entry in read['monitors' if source == 'shown' else source]], shuffle)
    if target == 'copy':
        start(emulator, mode, [])
    masks = {'unresolved_masks': 'leave_out'} if leave_out else {}

    def apply_back():
        return [run(connection, 'monitor', entry) for entry in entries] if target == 'monitor' \
            else [run(connection, 'monitors', dict(masks, state='merged' if target == 'copy' else target, config=entries))]
    runs = apply_back()
    sent, after = writes(emulator), stored(emulator)
    shown = dict(mode=mode, entries=entries, sent=sent, results=[each.result for each in runs])
    told = sorted(((entry['name'], entry['option'], entry['key']) for entry in runs[0].get('left_out') or []), key=str)
    expected = made_aside([gen.edited(record, edit) for record in before['monitors']])
    edited = expected != made_aside(before['monitors'])
    if target != 'copy' and not edited:
        promise = 'round trip (%s applied with %s)' % (source, target)
        holds(not any(each.failed or each.changed for each in runs), promise + ': no failure, no change', **shown)
        holds(not sent, promise + ': no write', **shown)
        holds(after == before, promise + ': the account as it was', **shown)
        holds(not told, promise + ': nothing left out', told=told, **shown)
    elif target != 'copy':
        promise = 'round trip with %s changed (%s applied with %s)' % (edit, source, target)
        holds(not any(each.failed for each in runs), promise + ': applied', **shown)
        holds(any(each.changed for each in runs), promise + ': changed', **shown)
        holds(made_aside(after['monitors']) == expected, promise + ': the change alone, secrets kept', expected=expected, **shown)
        holds(not told, promise + ': nothing left out', told=told, **shown)
        again = apply_back()
        holds(not any(each.changed for each in again), promise + ': applied again, no change', again=[each.result for each in again])
        holds(not writes(emulator), promise + ': applied again, no write', **shown)
    elif leave_out:
        kept, masked = unmasked_parts(before['monitors'], reveal)
        holds(not runs[0].failed, 'a copy leaving out what is masked succeeds', **shown)
        holds(made_aside(after['monitors']) == made_aside(kept), 'a copy holds all that is not masked', **shown)
        holds(told == masked, 'a copy names exactly what it left out', told=told, masked=masked, **shown)
    elif read.get('export_masked') or read.get('gathered_masked'):
        holds(runs[0].failed, 'a masked export in another account fails', **shown)
        holds(not sent, 'a masked export in another account writes nothing', **shown)
    else:
        holds(made_aside(after['monitors']) == made_aside(before['monitors']), 'a copy holds every option', **shown)


@budget(40)
@given(secret=gen.SECRETS, data=st.data(), zone=st.sampled_from(gen.ZONES))
@example(secret='Sup3rS3cret', data=None, zone=None).via('issue 35 item 10: credentials in a URL')
def test_no_secret(emulator, connection, secret, data, zone):
    """A secret stored or given (password, sensitive header, webhook or telegram alert, URL password or secret query
    value) never appears in any module's output, except what a task asked for with reveal_secrets."""
    args = data.draw(gen.monitors(secret=secret), label='monitor') if data is not None else \
        dict(API, url='https://admin:%s@intranet.example.org/health?api_key=K3Y' % secret)
    name = gen.record(args)['name']
    assume(str(secret) not in name)  # a name is no secret
    other = dict(args, name=name + '-copy', interval=600)
    given_ = {'monitor': other, 'monitors': {'state': 'merged', 'config': [dict(other, interval=3600)]}}
    tasks_ = [('monitor_info', {}), ('monitor_info', {'export': True}), ('monitors', {'state': 'gathered'}),
              ('incident', {'monitor': name, 'cause': 'down'}), ('incident_info', {}), ('monitor', given_['monitor']),
              ('monitors', given_['monitors'])]
    fresh(emulator, zone=zone, stored=[gen.record(args)])
    exported = run(connection, 'monitor_info', {'export': True})['export'][0]
    tasks_ += [('monitor', dict(exported, interval=3600)), ('monitors', {'state': 'replaced', 'config': [dict(exported, paused=True)]}),
               ('monitor', dict(exported, state='absent'))]
    for module, task in tasks_ + [('monitor_info', {'export': True, 'reveal_secrets': True})]:
        for check_mode in (True, False):
            out = run(connection, module, task, check_mode=check_mode)
            shown = dict(out.result, export=None) if task.get('reveal_secrets') else out.result
            text = (out.stdout if not task.get('reveal_secrets') else '') + json.dumps(shown, ensure_ascii=False) + str(out.crash)
            holds(str(secret) not in text, 'no secret (%s)' % module, secret=secret, stored=args, task=task, output=text)


EXAMPLE_SECRETS = {'staging web': 'web', 'shop': '2'}
TRUE_KEYS = ('name', 'interval', 'request_method', 'alert_condition', 'alert_text_lookup', 'request_auth_username')


def monitor_views(result):
    """The monitors a result shows as they were before the task (its before, a diff's before side) and as they are
    after it (views, exports, the nested monitor of an incident, a diff's after side); and the names a diff keys
    monitors by."""
    diff = result.get('diff') or {}
    sides = {side: diff.get(side) if isinstance(diff.get(side), dict) else {} for side in ('before', 'after')}
    whole = {side: [view] if 'name' in view else [] for side, view in sides.items()}
    before = list(result.get('before') or []) + whole['before']
    after = [each for key in ('monitors', 'export', 'gathered', 'after') for each in result.get(key) or []] + whole['after']
    after += [each for each in (result.get('monitor'), (result.get('incident') or {}).get('monitor')) if each]
    keyed = [name for view in sides.values() for name in view] if 'summary' in result else []  # the diff of monitors
    return before, after, keyed


def assert_true_views(views, account, **shown):
    """Each view shows a monitor of ``account`` (by id, else by name) with the fields it stores."""
    by_name = {record['name']: record for record in account.values()}
    for view in views:
        record = account.get(view.get('id')) or by_name.get(view.get('name'))
        holds(record is not None, 'a result names a stored monitor', view=view, stored=sorted(by_name), **shown)
        fields = {key: view[key] for key in TRUE_KEYS + ('created_at',) if key in view}
        expected = dict({key: record.get(key) for key in fields}, interval=int(record['interval']),
                        created_at=(record['created_at'] or '')[:19] + 'Z')
        holds(fields == {key: expected[key] for key in fields}, 'results are true', fields=fields, stored=expected, **shown)
        if 'url' in view:  # a diff shows the fields a task manages
            holds(urllib.parse.urlsplit(view['url']).hostname == urllib.parse.urlsplit(record['url']).hostname,
                  'a URL shows its host', url=view['url'], stored=record['url'], **shown)
        if 'request_headers' in view:
            plain = [item for item in view['request_headers'] or [] if item['key'] == 'Accept']
            holds(plain == [item for item in record.get('request_headers') or [] if item['key'] == 'Accept'],
                  'a plain header is shown as stored', headers=plain, **shown)


@budget(40)
@given(name=gen.names(), host=st.sampled_from(['web.staging.example.org', 'api.example.com', '127.0.0.1']), data=st.data(),
       where=st.sets(st.sampled_from(['password', 'header', 'url', 'given']), min_size=1))
@example(name='staging web', host='web.staging.example.org', data=None,
         where={'password'}).via('issue 43 item 2: a password that is a word of the name and the host')
@example(name='shop', host='api.example.com', data=None, where={'url'}).via('issue 43 item 2: ?api_key=2 and the times')
def test_results_are_true(emulator, connection, name, host, data, where):
    """Whatever secrets a monitor holds or a task gives (short, or parts of its name and URL), every other field of
    every result (monitor, monitors, monitor_info, the nested monitor of incident, diffs) is what the service stores."""
    url = 'https://%s/%s' % (host, urllib.parse.quote(name.strip(), safe=''))
    secret = data.draw(gen.overlapping_secrets([name, url]), label='secret') if data is not None else EXAMPLE_SECRETS[name]
    stored_args = {'name': name, 'url': url, 'interval': 60,
                   'request_headers': [{'key': 'Accept', 'value': 'text/%s' % name}]}
    if 'password' in where:
        stored_args.update(request_auth_username='user %s' % name, request_auth_password=secret)
    if 'header' in where:
        stored_args['request_headers'].append({'key': 'X-Api-Key', 'value': secret})
    if 'url' in where and secret.isascii():
        stored_args['url'] = url + '?api_key=' + urllib.parse.quote(secret, safe='')
    neighbour = {'name': '%s %s' % (secret, name), 'url': 'https://%s.example.net/' % urllib.parse.quote(secret, safe=''),
                 'interval': 300}
    fresh(emulator, stored=[gen.record(stored_args), gen.record(neighbour)])
    given_ = {'request_auth_username': 'user', 'request_auth_password': secret} if 'given' in where else {}
    config = [dict({'name': name, 'interval': 300}, **given_), {'name': neighbour['name'], 'interval': 600}]
    tasks_ = [('monitor', dict({'name': name, 'interval': 300}, **given_)), ('monitors', {'state': 'merged', 'config': config}),
              ('monitors', {'state': 'merged', 'config': config}), ('monitor_info', {}), ('monitor_info', {'export': True}),
              ('monitors', {'state': 'gathered'}), ('incident', {'monitor': name, 'cause': 'down %s' % secret})]
    for module, task in tasks_:
        account = {record['id']: record for record in stored(emulator)['monitors']}
        out = run(connection, module, task)
        holds(not out.failed, 'the task succeeds', task=task, result=out.result)
        before, after, keyed = monitor_views(out.result)
        assert_true_views(before, account, module=module, task=task, secret=secret)
        account = {record['id']: record for record in stored(emulator)['monitors']}
        assert_true_views(after, account, module=module, task=task, secret=secret)
        holds(set(keyed) <= {record['name'] for record in account.values()}, 'a diff names monitors as stored', task=task,
              keyed=keyed, secret=secret)


ISOLATION_TASKS = st.sampled_from(['monitor', 'absent', 'absent by id', 'merged', 'deleted', 'incident', 'overridden []'])


@budget(80)
@given(mode=MODES.map(lambda mode: dict(mode, clock=0)), seed=st.sampled_from(gen.NAME_SEEDS) | gen.names(), data=st.data(),
       kind=ISOLATION_TASKS)
@example(mode=PLAIN, seed='api', data=None, kind='monitor').via('issue 35 item 1')
@example(mode=PLAIN, seed='api', data=None, kind='absent').via('issue 35 item 1')
@example(mode=PLAIN, seed='api', data=None, kind='absent by id').via('issue 35 item 5')
@example(mode=PLAIN, seed='api', data=None, kind='overridden []').via('issue 35 item 11')
def test_isolation_by_name(emulator, connection, mode, seed, data, kind):
    """A task that names a monitor never changes or deletes a monitor of another exact name, nor its incidents
    (overridden acting on monitors absent from its config aside: an empty config names none, and acts on none)."""
    draw = data.draw if data is not None else (lambda strategy, label: {'held': ['prod-web', 'api', 'Api'], 'name': 'API'}[label])
    held = draw(st.lists(gen.variants(seed), min_size=1, max_size=4, unique_by=lambda name: name.strip().casefold() if mode['ignore_case']
                         else name.strip()), label='held')
    name = draw(gen.variants(seed) | gen.names(), label='name').strip()
    ids = start(emulator, mode, [dict(API, name=each) for each in held], opened=[{'name': each} for each in held])
    others = [each.strip() for each in held if each.strip() != name]
    task = {'monitor': ('monitor', dict(API, name=name, interval=900)), 'absent': ('monitor', {'name': name, 'state': 'absent'}),
            'absent by id': ('monitor', {'name': name, 'id': ids[0], 'state': 'absent'}),
            'merged': ('monitors', {'state': 'merged', 'config': [dict(API, name=name, interval=900)]}),
            'deleted': ('monitors', {'state': 'deleted', 'config': [{'name': name}]}),
            'incident': ('incident', {'monitor': name, 'state': 'resolved'}),
            'overridden []': ('monitors', {'state': 'overridden', 'config': []})}[kind]
    before = stored(emulator)
    out = run(connection, *task)
    after = stored(emulator)
    for kind_ in ('monitors', 'incidents'):
        untouched = [item for item in before[kind_] if (item.get('monitor') or item)['name'] in others or kind == 'overridden []']
        holds(all(item in after[kind_] for item in untouched), 'isolation by name (%s)' % kind_, mode=mode, held=held, task=task,
              result=out.result, lost=[item for item in untouched if item not in after[kind_]])


@budget(30)
@given(mode=MODES, monitors=START, seeded=st.tuples(st.integers(0, 12), st.integers(0, 12)), touched=st.booleans(),
       statuses=st.lists(st.sampled_from(['pending', 'online', 'offline', 'paused', 'maintenance']), max_size=2), per_page=st.sampled_from([10, 25]),
       by_start=st.booleans())
def test_status_filters(emulator, connection, mode, monitors, seeded, touched, statuses, per_page, by_start):
    """monitor_info's status keeps exactly the monitors the list shows in those statuses; incident_info's ongoing exactly the
    incidents that have not ended, reading in the default order one page, and one more per per_page ongoing incidents."""
    ids = start(emulator, mode, monitors, monitors[:1])
    emulator.seed(sum(seeded), *seeded)
    if touched and ids:  # a paused monitor, an acknowledged incident
        emulator.api('PUT', '/api/v1/monitors/%d' % ids[-1], data={'pause': 1})
        emulator.api('PUT', '/api/v1/incidents/1', data={'acknowledged_at': '2020-01-01T00:00:01'})
    account = stored(emulator)
    kept = run(connection, 'monitor_info', {'status': statuses})['monitors']
    holds(sorted(each['id'] for each in kept) == [each['id'] for each in account['monitors'] if not statuses or each['status'] in statuses],
          'monitor_info status', statuses=statuses, kept=kept, account=account['monitors'])
    emulator.clear_log()
    order = {'sort_by': 'started_at'} if by_start else {}
    ongoing = run(connection, 'incident_info', dict(order, status='ongoing', per_page=per_page))['incidents']
    expected = [each['id'] for each in account['incidents'] if each['ended_at'] is None]
    pages = len([entry for entry in emulator.log() if entry['path'] == '/api/v1/incidents'])
    every = max(1, -(-len(account['incidents']) // per_page))
    needed = every if by_start else min(len(expected) // per_page + 1, every)  # up to the first ended one
    holds(sorted(each['id'] for each in ongoing) == expected, 'incident_info ongoing: the ongoing incidents', expected=expected,
          ongoing=ongoing)
    holds(pages == needed, 'incident_info ongoing: the pages read', pages=pages, needed=needed)


@budget(25)
@given(mode=MODES, monitors=START.filter(bool), opened=st.booleans(), kind=st.sampled_from(['monitor_info', 'incident_info']),
       data=st.data())
def test_fields_return_the_keys_asked_of_the_full_records(emulator, connection, mode, monitors, opened, kind, data):
    """An info task with fields returns, of each record, exactly the keys asked, in their order, with the values the full
    record shows (secrets masked alike), and the same records."""
    start(emulator, mode, monitors, monitors[:1] if opened else ())
    keys = (MONITOR_RESOURCE if kind == 'monitor_info' else INCIDENT_RESOURCE).view_keys
    fields = data.draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4, unique=True), label='fields')
    whole, compact = run(connection, kind, {}), run(connection, kind, {'fields': fields})
    plural = kind.split('_')[0] + 's'
    holds(not compact.failed, 'fields are taken', fields=fields, result=compact.result)
    wanted = [{key: record.get(key) for key in fields} for record in whole[plural]]
    holds(compact[plural] == wanted, 'the keys asked of the full records', fields=fields, compact=compact[plural], wanted=wanted)
    holds([list(record) for record in compact[plural]] == [fields] * len(wanted), 'in the order asked', fields=fields)


@st.composite
def info_options(draw, resource, names):
    """Options of an info module (and of its lookup) drawn from its argument spec, valid each alone: a few of them,
    options that exclude each other among them."""
    spec = {option: rule for option, rule in info_argument_spec(resource).items() if option not in ('export', 'reveal_secrets')}
    chosen = draw(st.lists(st.sampled_from(sorted(spec)), min_size=1, max_size=4, unique=True))
    if draw(st.booleans()):  # two of the options that name what to read, which some pairs of exclude each other
        naming = sorted(set(spec) & {'id', 'name', 'search', 'monitor', 'monitor_id', 'status'})
        chosen += [option for option in draw(st.lists(st.sampled_from(naming), min_size=2, max_size=2, unique=True))
                   if option not in chosen]
    if draw(st.booleans()) and 'fields' not in chosen:  # the compact records, as often as the whole ones
        chosen.append('fields')
    options = {}
    for option in chosen:
        rule = spec[option]
        if option == 'fields':
            options[option] = draw(st.lists(st.sampled_from(resource.view_keys), min_size=1, max_size=4, unique=True))
        elif rule.get('type') == 'list':
            options[option] = draw(st.lists(st.sampled_from(rule['choices']), min_size=1, max_size=2, unique=True))
        elif rule.get('choices'):
            options[option] = draw(st.sampled_from(rule['choices']))
        elif rule.get('type') == 'int':
            options[option] = draw(st.integers(1, 3))
        elif option.endswith(('_since', '_until')):
            options[option] = draw(st.sampled_from(['2019-12-31T23:00:00', '2030-01-01T00:00:00Z']))
        else:  # a name, a monitor, a search
            options[option] = draw(st.sampled_from(names + ['nope']))
    return options


@budget(40)
@given(mode=MODES, monitors=START, opened=st.booleans(), resource=st.sampled_from([MONITOR_RESOURCE, INCIDENT_RESOURCE]), data=st.data())
def test_each_lookup_returns_what_its_info_module_returns(emulator, connection, mode, monitors, opened, resource, data):
    """The lookups monitors and incidents, for any options their info module takes: the records the module returns, or
    the module's message, named by the lookup."""
    start(emulator, mode, monitors, monitors[:1] if opened else ())
    options = data.draw(info_options(resource, [gen.record(args)['name'] for args in monitors]), label='options')
    module = run(connection, '%s_info' % resource.plural[:-1], options)
    looked_up = run_lookup(resource.plural, dict(connection, **options))
    shown = dict(options=options, module=module.result, lookup=looked_up.result)
    holds(looked_up.crash is None, 'the lookup ends', crash=looked_up.crash, **shown)
    holds(looked_up.failed == module.failed, 'the lookup fails when its module fails', **shown)
    if module.failed:
        holds(looked_up.msg == 'uptime.monitoring.%s: %s' % (resource.plural, module.msg), 'the module\'s message, named', **shown)
    else:
        holds(looked_up['records'] == module[resource.plural], 'the records the module returns', **shown)
