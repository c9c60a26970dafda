"""The law that what a task gives is what the service stores: a monitor task applied (created, or updated over a
monitor of the same name holding other values) leaves the service holding each value the task gave, as the service
reads it. The other laws compare a run with another run (twice, check mode and real, a read and its application
back), so a value consistently stored otherwise than given passes them all; this one compares with the task.

Times are where that matters most (../shared/spec/service-facts.md, "Time zones"): a time without an offset is the
account's local time; an instant is that instant, whatever the account's zone, and one the service cannot be sent (its
local time falls in the second occurrence of the hour repeated when daylight saving time ends, which the service reads
as the first) is refused before any write. The expected instant is computed here with zoneinfo, apart from the
collection's own time code.
"""

from __future__ import annotations

import datetime
import zoneinfo

from hypothesis import assume, example, given, strategies as st

from laws import budget, fresh, holds, run, stored, writes
import strategies as gen

# Instants whose local time is in a repeated hour in one of gen.ZONES: 01:30 EST on 2030-11-03 in New York, 02:30
# CET on 2030-10-27 in Berlin (the second occurrences), and 01:30 EDT (the first, which can be sent).
FOLD_INSTANTS = ['2030-11-03T06:30:00Z', '2030-10-27T01:30:00+00:00', '2030-11-03T05:30:00Z']
# Values the service keeps as given; a mask keeps the stored value, so it is compared only where none is given.
PLAIN = ('url', 'alert_condition', 'alert_text_lookup', 'request_method', 'request_auth_username', 'request_auth_password')
NUMBERS = ('interval', 'ssl_alert_days', 'domain_alert_days')
UTC = datetime.timezone.utc


def instant(text, zone):
    """The instant the service stores for ``text`` sent by an account in ``zone``: a local time read as its first
    occurrence (and a time in a gap an hour on), as Carbon does; an instant as itself."""
    moment = datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zoneinfo.ZoneInfo(zone or 'UTC'))
    return moment.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S')


def sendable(text, zone):
    """Whether ``text`` can be sent to an account in ``zone``: a local time can; an instant when its local time,
    read back as the service reads it, is itself."""
    moment = datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))
    if moment.tzinfo is None:
        return True
    local = moment.astimezone(zoneinfo.ZoneInfo(zone or 'UTC')).replace(tzinfo=None)
    return instant(local.isoformat(), zone) == instant(text, zone)


def truth(value):
    return str(value).lower() in ('true', 'yes', '1')


def expected(args, zone):
    """What the service must hold of ``args``, field by field (the fields ``args`` gives, masks aside)."""
    want = {'name': args['name'].strip()}
    want.update((key, args[key]) for key in PLAIN if args.get(key) not in (None, gen.MASK))
    want.update((key, int(args[key])) for key in NUMBERS if args.get(key) is not None)
    if 'cache_buster' in args:
        want['cache_buster'] = truth(args['cache_buster'])
    for key in ('maintenance_start_at', 'maintenance_end_at'):
        if key in args:
            want[key] = instant(args[key], zone)
    for key in ('request_headers', 'alerts'):
        if args.get(key) is not None and not any(gen.MASK in item['value'] for item in args[key]):  # None: not given
            want[key] = sorted(((item['key'].lower() if key == 'request_headers' else item['key'], item['value'])
                                for item in args[key] or []))
    if 'paused' in args:
        want['paused'] = truth(args['paused'])
    return want


def held(record, want):
    """The fields of ``want`` as ``record`` (the service's) holds them."""
    have = {}
    for key in want:
        if key in ('maintenance_start_at', 'maintenance_end_at'):
            have[key] = (record[key] or '')[:19] or None
        elif key in ('request_headers', 'alerts'):
            have[key] = sorted(((item['key'].lower() if key == 'request_headers' else item['key'], item['value'])
                                for item in record[key] or []))
        elif key == 'paused':
            have[key] = record['status'] == 'paused'
        elif key == 'cache_buster':
            have[key] = truth(record[key])
        else:
            have[key] = record[key]
    return have


@st.composite
def tasks(draw):
    """A monitor's options as gen.monitors draws them, its window starting at a local time, an instant or an instant
    in a repeated hour, and maybe paused."""
    args = draw(gen.monitors())
    if draw(st.booleans()):
        start = draw(st.sampled_from(gen.EDGE_TIMES + FOLD_INSTANTS))
        args.update(maintenance_start_at=start, maintenance_end_at='%04d-12-31T00:00:00' % min(int(start[:4]) + 1, 9999))
    if draw(st.booleans()):
        args['paused'] = draw(gen.as_given(draw(st.booleans())))
    return args


@budget(60)
@given(zone=st.sampled_from(gen.ZONES), args=tasks(), before=st.none() | gen.monitors(full=True))
@example(zone='America/New_York', args=dict(gen.entry('api'), maintenance_start_at='2030-11-03T06:30:00Z',
                                            maintenance_end_at='2030-12-31T00:00:00'), before=None)
@example(zone='Europe/Berlin', args=dict(gen.entry('api'), maintenance_start_at='2030-06-01T12:00:00',
                                         maintenance_end_at='2030-06-01T14:00:00'), before=None)
def test_what_a_task_gives_is_what_the_service_stores(emulator, connection, zone, args, before):
    name = args['name'].strip()
    fresh(emulator, zone=zone, stored=[gen.record(dict(before, name=name))] if before else [])
    result = run(connection, 'monitor', args)
    shown = dict(zone=zone, task=args, before=before, result=result.result)
    times = [args[key] for key in ('maintenance_start_at', 'maintenance_end_at') if key in args]
    if not all(sendable(text, zone) for text in times):
        holds(result.failed, 'an instant the service would read an hour early is refused', **shown)
        holds('occurs twice' in result.msg, 'the refusal says the local time occurs twice', **shown)
        holds(not writes(emulator), 'refused before any write', **shown)
        return
    # A mask with nothing stored to keep is refused whole (the law of round trips says how).
    assume(not (result.failed and ('masked' in result.msg or 'to keep' in result.msg)))
    holds(not result.failed, 'accepted input is applied', **shown)
    records = [record for record in stored(emulator)['monitors'] if record['name'] == name]
    holds(len(records) == 1, 'one monitor of the name', records=records, **shown)
    want = expected(args, zone)
    holds(held(records[0], want) == want, 'the service holds what the task gave', stored=records[0], **shown)
