# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Incidents: their fields, and how the incident a task addresses is found.

An incident belongs to one monitor and is found by its ``id``, else by its
natural key (monitor + ``started_at``), else as the monitor's ongoing incident
(the one without ``ended_at``). The service ignores ``started_at`` on update,
rejects ``monitor_id`` there, and sets ``acknowledged_at``/``ended_at`` only
while they are empty: the schema says so, and the engine refuses such changes
before anything is sent instead of reporting a change the service would drop.
"""

from __future__ import annotations

import datetime
import re

from ._client import PAGE_SIZE
from ._monitor import MONITOR_RESOURCE
from ._resource import Located, Outcome, Resource
from ._schema import (
    MISSING,
    UTC_FORMAT,
    Field,
    Schema,
    ValidationError,
    record_id,
    timestamp_or_text,
    to_int,
    to_utc_timestamp,
)

STATUSES = ['unresolved', 'acknowledged', 'resolved']
# What an info task may ask beyond the service's filters: the incidents not ended, unresolved or acknowledged.
ONGOING = 'ongoing'
# The states beyond present, and the timestamp each sets to now when the incident has none.
STATE_TIMESTAMPS = {'acknowledged': 'acknowledged_at', 'resolved': 'ended_at'}
# The ongoing incident, if any, is the latest started one: a small page is enough.
ONGOING_PAGE_SIZE = 10
COMMENT_MODES = ['replace', 'append']
STATE_VERBS = {'acknowledged': 'acknowledge', 'resolved': 'resolve'}


def nested_monitor(record):
    monitor = record.get('monitor')
    return monitor if isinstance(monitor, dict) else None


def end_of(record):
    """The incident's end as a UTC instant, None while it is ongoing (its one field, not the whole record)."""
    ended = INCIDENT_SCHEMA.by_name['ended_at'].from_record(record)
    return None if ended is MISSING else ended


def monitor_id_of(record):
    """The service nests the monitor; some answers may carry a plain ``monitor_id``."""
    monitor = nested_monitor(record)
    if monitor is not None and monitor.get('id') is not None:
        return to_int(monitor['id'], 'monitor_id')
    return record['monitor_id'] if 'monitor_id' in record else MISSING


INCIDENT_SCHEMA = Schema([
    Field('monitor_id', 'int', required=True, on_update=False, read=monitor_id_of),
    Field('started_at', 'timestamp', required=True, on_update=False, not_future=True),
    Field('acknowledged_at', 'timestamp', write_once=True, not_future=True, not_before='started_at'),
    Field('ended_at', 'timestamp', write_once=True, not_future=True, later_than='started_at'),
    Field('cause', max_length=255),
    Field('comment', max_length=1024),
])


def has_comment_entry(comment, text):
    """Whether ``comment`` already holds ``text``: as the whole comment, or as a line, time-stamped or not."""
    if not comment or not text:
        return False
    return re.search(r'(?:^|\n)(?:\[[^\]\n]*\] )?%s(?:\n|$)' % re.escape(text), comment) is not None


def with_comment_entry(comment, text, now):
    """``comment`` with ``text`` appended on a new line after a time stamp; unchanged when it already holds it.

    An empty comment becomes ``text`` alone: the incident's own times date it.
    """
    if text is None or has_comment_entry(comment, text):
        return comment
    if not comment:
        return text
    appended = '%s\n[%s] %s' % (comment, now.strftime(UTC_FORMAT), text)
    field = INCIDENT_SCHEMA.by_name['comment']
    try:
        field.validate(appended)
    except ValidationError as exc:
        raise ValidationError('comment', '%s (the existing comment with the new entry appended); use '
                                         'comment_mode=replace, or shorten the existing comment'
                              % str(exc)[len('comment: '):])
    return appended


def derived_status(values):
    """The service's rule: resolved when ended, else acknowledged when acknowledged, else unresolved."""
    if values.get('ended_at'):
        return 'resolved'
    if values.get('acknowledged_at'):
        return 'acknowledged'
    return 'unresolved'


def duration(values):
    """Seconds from ``started_at`` to ``ended_at``; None while the incident is ongoing."""
    if not values.get('started_at') or not values.get('ended_at'):
        return None
    parse = datetime.datetime.strptime
    return int((parse(values['ended_at'], UTC_FORMAT) - parse(values['started_at'], UTC_FORMAT))
               .total_seconds())


class IncidentLookup(Located):
    """Where the incident a task addresses was found, and what the lookup learnt of its monitor on the way.

    ``monitor_id`` and ``monitor`` (the record, when it was read) name the
    monitor; ``ongoing`` says the task asked for the monitor's ongoing incident
    (no ``started_at``); ``latest`` is the monitor's latest incident;
    ``unknown_monitor`` the name given when no monitor has it.
    """

    def __init__(self, record, monitor_id=None, monitor=None, ongoing=False, latest=None, unknown_monitor=None):
        super().__init__(record)
        self.monitor_id = monitor_id
        self.monitor = monitor
        self.ongoing = ongoing
        self.latest = latest
        self.unknown_monitor = unknown_monitor


class IncidentResource(Resource):
    """An incident: found by id, by monitor + ``started_at``, or as the monitor's ongoing one."""

    noun = 'incident'
    plural = 'incidents'
    path = '/api/v1/incidents'
    schema = INCIDENT_SCHEMA
    create_hint = 'leave id out and give the monitor and started_at to open one'
    view_keys = ('id',) + tuple(field.name for field in INCIDENT_SCHEMA.fields) + (
        'monitor_name', 'status', 'duration', 'created_at', 'updated_at', 'monitor')
    list_filters = dict(
        monitor_id=dict(type='int'),
        search_by=dict(type='str', choices=['monitor', 'cause']),
        status=dict(type='str', choices=STATUSES + [ONGOING]),
        sort_by=dict(type='str', choices=['started_at', 'ended_at']),
    )
    lookup_options = dict(monitor=dict(type='str'))
    task_options = dict(comment_mode=dict(type='str', choices=COMMENT_MODES, default='replace'))
    list_bounds = dict(
        started_since=('started_at', 'since'),
        started_until=('started_at', 'until'),
        ended_since=('ended_at', 'since'),
        ended_until=('ended_at', 'until'),
    )
    default_order = ('ended_at', 'desc')
    # The documented default search_by (url) is not an allowed value: always send one.
    default_search_by = 'monitor'

    # -- finding --------------------------------------------------------------

    def find_by_key(self, client, values):
        return self.find_by_start(client, values['monitor_id'], values['started_at'])[0]

    def find_by_start(self, client, monitor_id, started_at):
        """``(incident, latest)``: the monitor's incident that started at ``started_at`` and its latest one.

        Reads the monitor's incidents newest first and stops at the first one
        that started earlier: usually one request.
        """
        query = {'monitor_id': monitor_id, 'sort_by': 'started_at', 'sort': 'desc', 'per_page': PAGE_SIZE}
        latest = None
        for records in client.iter_pages(self.path, query):
            for record in self._of_monitor(records, monitor_id):
                latest = latest or record
                record_start = to_utc_timestamp(record.get('started_at'), 'started_at')
                if record_start == started_at:
                    return record, latest
                if record_start is not None and record_start < started_at:
                    return None, latest
        return None, latest

    def find_ongoing(self, client, monitor_id):
        """``(ongoing, latest)``: a monitor has at most one ongoing incident, among its latest started."""
        query = {'monitor_id': monitor_id, 'sort_by': 'started_at', 'sort': 'desc', 'per_page': ONGOING_PAGE_SIZE}
        records = self._of_monitor(next(client.iter_pages(self.path, query), []), monitor_id)
        ongoing = [record for record in records if record.get('ended_at') in (None, '')]
        return (ongoing[0] if ongoing else None), (records[0] if records else None)

    def ongoing(self, client):
        """Every ongoing incident of the account: usually one request (one more per 100 ongoing incidents)."""
        return self.ended_since(client, None)

    def ended_since(self, client, floor):
        """Every ongoing incident, then those that ended at ``floor`` or later, newest end first.

        ``floor`` is a UTC instant, None for the ongoing incidents alone, or a
        function that gives it once the first answer is in (the service's clock
        is then known).
        """
        return [record for records in self.pages_ended_since(client, floor) for record in records]

    def pages_ended_since(self, client, floor):
        """The pages of :meth:`ended_since`, one request each, as they are read.

        Listed by ``ended_at`` descending, the service puts the incidents that
        have not ended first, then the others by end: reading stops at the
        first page that reaches an end below the floor, so that a long history
        costs no request. A record whose end cannot be read is passed on: the
        caller says what it cannot read.
        """
        query = {'sort_by': 'ended_at', 'sort': 'desc', 'per_page': PAGE_SIZE}
        for records in client.iter_pages(self.path, query):
            lowest = floor() if callable(floor) else floor
            found, reached = [], False
            for record in records:
                try:
                    ended = end_of(record)
                except (ValidationError, TypeError, ValueError, AttributeError):
                    ended = None
                if ended is not None and (lowest is None or ended < lowest):
                    reached = True
                    continue
                found.append(record)
            yield found
            if reached:
                return

    @staticmethod
    def _of_monitor(records, monitor_id):
        owner = INCIDENT_SCHEMA.by_name['monitor_id'].from_record
        return [record for record in records if owner(record) in (MISSING, None, monitor_id)]

    def locate(self, client, identity):
        if identity.get('id') is not None:
            record = self.get(client, identity['id'])
            if record is not None:
                self._check_owner(client, record, identity)
            return IncidentLookup(record)
        monitor_id, monitor = identity.get('monitor_id'), None
        if monitor_id is None:
            monitor = MONITOR_RESOURCE.find_by_name(client, identity['monitor'])
            if monitor is None:
                return IncidentLookup(None, unknown_monitor=identity.get('monitor') or '')
            monitor_id = record_id(monitor)
        if identity.get('started_at') is None:
            record, latest = self.find_ongoing(client, monitor_id)
        else:
            record, latest = self.find_by_start(client, monitor_id, identity['started_at'])
        return IncidentLookup(record, monitor_id, monitor, identity.get('started_at') is None, latest)

    def _check_owner(self, client, record, identity):
        """An incident addressed by id and by a monitor must belong to that monitor."""
        name, wanted_id = identity.get('monitor'), identity.get('monitor_id')
        if not name and wanted_id is None:
            return
        owner_id, owner = INCIDENT_SCHEMA.current(record).get('monitor_id'), nested_monitor(record)
        if name and (owner is None or owner.get('name') is None):
            owner = MONITOR_RESOURCE.get(client, owner_id) if owner_id is not None else None
        owner_name = owner.get('name') if owner else None
        if wanted_id is not None and wanted_id == owner_id:
            return
        if name and owner_name == name:
            return
        asked = repr(name) if name else 'id %s' % wanted_id
        field = 'monitor' if name else 'monitor_id'
        raise ValidationError(field, 'incident %s belongs to monitor %r (id %s), not %s: an incident cannot be '
                                     'moved to another monitor, nor addressed through one it does not belong to'
                              % (record_id(record), owner_name, owner_id, asked))

    # -- hooks of the engine ----------------------------------------------------

    def prepare(self, desired, located, state, now, options):
        """The values to apply: the state's timestamp, ``started_at`` of a new incident, an appended comment.

        ``started_at`` defaults to now when a task without it finds no ongoing
        incident and may open one (``state=present``); acknowledged and
        resolved never open an incident, see :meth:`settle_missing`.
        """
        if located.unknown_monitor is not None:
            raise ValidationError('monitor', 'no monitor is named %r' % located.unknown_monitor)
        wanted = dict(desired)
        now_text = now.strftime(UTC_FORMAT)
        if located.record is None:
            wanted['monitor_id'] = located.monitor_id
            if located.ongoing:
                if state == 'present':
                    wanted['started_at'] = now_text
                # Nothing found to stamp: settle_missing says what the task may still do.
                return wanted
        current = INCIDENT_SCHEMA.current(located.record) if located.record is not None else {}
        stamp = STATE_TIMESTAMPS.get(state)
        if stamp is not None and stamp not in wanted and current.get(stamp) is None:
            wanted[stamp] = now_text
        if options.get('comment_mode') == 'append':
            if wanted.get('comment') is None:
                # Nothing to append (comment: "{{ note | default('') }}"): the comment stays as it is.
                wanted.pop('comment', None)
            else:
                wanted['comment'] = with_comment_entry(current.get('comment'), wanted['comment'], now)
        return wanted

    def settle_missing(self, client, desired, located, state, options, check_mode):
        """No incident found: what a task addressed to the monitor alone may still do, or the checks to open one.

        Without an ongoing incident, the monitor's latest incident decides:

        - a task that asks nothing the latest incident does not already hold
          (a re-run after the incident ended, or ``state=acknowledged`` /
          ``resolved`` with nothing else) changes nothing, and says why in
          ``msg``: re-runs of "acknowledge / resolve the current incident of
          monitor X" stay green and idempotent;
        - ``state=acknowledged`` / ``resolved`` asking for a cause, comment or
          time the latest incident does not hold fails, naming that incident:
          there is nothing to acknowledge or resolve, and the values would
          otherwise be dropped while the task looks done;
        - ``state=present`` opens a new incident, started now.
        """
        latest = located.latest
        if latest is None:
            # No incident tells that the monitor exists: an id of none (or of another account's monitor) lists nothing.
            self._read_monitor(client, located)
        monitor_text = self._monitor_text(located)
        if located.ongoing:
            before = INCIDENT_SCHEMA.current(latest) if latest is not None else None
            # What the task asks beyond the monitor and the start this lookup defaulted.
            asked = {name: value for name, value in desired.items() if name not in ('monitor_id', 'started_at')}
            # A comment the latest incident already holds, whole or as an entry, is recorded: a re-run of "comment,
            # then append" finds the first comment with the appended one after it.
            if before is not None and has_comment_entry(before.get('comment'), asked.get('comment')):
                asked['comment'] = before['comment']
            unrecorded = sorted(INCIDENT_SCHEMA.differences(asked, before) if before is not None
                                else (name for name, value in asked.items() if value is not None))
            if state in STATE_TIMESTAMPS:
                return self._nothing_ongoing(STATE_VERBS[state], unrecorded, before, latest, monitor_text)
            if before is not None and not unrecorded:
                return Outcome(False, before, before, latest,
                               'monitor %s has no ongoing incident and its latest incident (id %s, ended at %s) '
                               'already holds what the task asks: no incident opened'
                               % (monitor_text, record_id(latest), self._shown_end(before)))
        self._check_can_open(desired, latest, monitor_text)
        if check_mode:
            # What check mode shows of the incident it would open: its monitor's name.
            self._read_monitor(client, located)
        return None

    @staticmethod
    def _read_monitor(client, located):
        """The monitor the task addressed by id, read once; a failure naming the id when there is none."""
        if located.monitor is None:
            located.monitor = MONITOR_RESOURCE.get(client, located.monitor_id)
            if located.monitor is None:
                raise ValidationError('monitor_id', 'no monitor has the id %s' % located.monitor_id)

    @staticmethod
    def _monitor_text(located):
        return repr(located.monitor['name']) if located.monitor else 'id %s' % located.monitor_id

    @staticmethod
    def _shown_end(values):
        return INCIDENT_SCHEMA.by_name['ended_at'].shown(values.get('ended_at'))

    def _nothing_ongoing(self, verb, unrecorded, before, latest, monitor_text):
        """Acknowledging or resolving the current incident of a monitor that has none."""
        hint = ('give id to change a past incident, or started_at to open a new one')
        if before is None:
            if unrecorded:
                raise ValidationError(unrecorded[0], 'monitor %s has no incident: nothing to %s, so %s would not be '
                                                     'recorded: %s' % (monitor_text, verb, ', '.join(unrecorded), hint))
            return Outcome(False, None, None, None, 'monitor %s has no incident: nothing to %s' % (monitor_text, verb))
        where = 'its latest incident (id %s) ended at %s' % (record_id(latest), self._shown_end(before))
        if unrecorded:
            raise ValidationError(unrecorded[0], 'monitor %s has no ongoing incident to %s: %s, and %s would not be '
                                                 'recorded on it: %s' % (monitor_text, verb, where,
                                                                         ', '.join(unrecorded), hint))
        return Outcome(False, before, before, latest,
                       'monitor %s has no ongoing incident: nothing to %s (%s)' % (monitor_text, verb, where))

    @staticmethod
    def _check_can_open(desired, latest, monitor_text, meanwhile=False):
        """The service's refusals, told before the POST (and in check mode) from the lookup already made; with
        ``meanwhile``, after the POST was refused, from a lookup made since."""
        if latest is None:
            return
        latest_end = to_utc_timestamp(latest.get('ended_at'), 'ended_at')
        if latest_end is None:
            raise ValidationError('started_at', 'monitor %s already has an ongoing incident (id %s, started at %s%s): '
                                                'resolve it first (state: resolved) or address it by id'
                                  % (monitor_text, record_id(latest),
                                     to_utc_timestamp(latest.get('started_at'), 'started_at'),
                                     ', opened after this task looked' if meanwhile else ''))
        if desired['started_at'] <= latest_end:
            raise ValidationError('started_at', 'must be after the end of the last incident of monitor %s (id %s '
                                                'ended at %s), got %s'
                                  % (monitor_text, record_id(latest), latest_end, desired['started_at']))

    def is_conflict(self, exc):
        return exc.status == 422 and bool({'monitor_id', 'started_at'} & set(exc.field_errors))

    def find_conflicting(self, client, values, located=None):
        """After the service refused to open an incident: the one opened meanwhile that the task addresses.

        A task without ``started_at`` addresses the monitor's ongoing incident, whoever
        opened it (the service's checker, another run). A task with its own
        ``started_at`` addresses the incident that started then: the service never
        changes the start of another, so the refusal of the one that holds the monitor
        names it.
        """
        monitor_id = values['monitor_id']
        if located is not None and located.ongoing:
            record, latest = self.find_ongoing(client, monitor_id)
        else:
            record, latest = self.find_by_start(client, monitor_id, values['started_at'])
        if record is None:
            self._check_can_open(values, latest, self._monitor_text(located) if located is not None
                                 else 'id %s' % monitor_id, meanwhile=True)
        return record

    def kept_after_delete(self, record):
        """Deleting an ongoing incident puts its monitor back to pending, a paused one too: the operator's pause is
        put back."""
        monitor = nested_monitor(record)
        if end_of(record) is not None or monitor is None or monitor.get('status') != 'paused':
            return None
        told = ('monitor %r (id %s) is paused, and deleting its ongoing incident resumes it on the service: the task '
                'pauses it again' % (monitor.get('name'), record_id(monitor)))
        return MONITOR_RESOURCE, dict(monitor, status='pending'), {'paused': True}, told

    def complete(self, client, record, now):
        """The create answer echoes the form: read the whole record back when it lacks the monitor."""
        if nested_monitor(record) is None or record.get('started_at') in (None, ''):
            return self.get(client, record_id(record)) or record
        return record

    def diff_names(self, desired):
        return [field.name for field in INCIDENT_SCHEMA.fields] + ['status']

    def with_derived(self, values):
        return dict(values, status=derived_status(values)) if values is not None else None

    def view(self, values, record=None, located=None):
        """An incident as the modules return it: option names, normalised, monitor id on top, secrets masked."""
        record = record or {}
        monitor = nested_monitor(record) or getattr(located, 'monitor', None)
        view = {'id': record_id(record) if record else None}
        view.update((field.name, values.get(field.name)) for field in INCIDENT_SCHEMA.fields)
        view['monitor_name'] = monitor.get('name') if monitor else None
        view['status'] = derived_status(values)
        view['duration'] = duration(values)
        for key in ('created_at', 'updated_at'):
            view[key] = timestamp_or_text(record.get(key))
        view['monitor'] = MONITOR_RESOURCE.record_view(monitor) if monitor else None
        return view

    def list_test(self, query, order):
        """``status: ongoing``, which the service's list cannot filter in one query: listed by ``ended_at``
        descending, the service puts the ongoing incidents first, and the first ended one is past them."""
        if query.get('status') != ONGOING:
            return None
        del query['status']

        def ended(record):
            return end_of(record) is not None
        return (lambda record: not ended(record)), (ended if order == ('ended_at', True) else None)

    def narrow(self, client, lookups, query):
        if lookups.get('monitor'):
            monitor = MONITOR_RESOURCE.find_by_name(client, lookups['monitor'])
            if monitor is None:
                return []
            query['monitor_id'] = record_id(monitor)
        return None


INCIDENT_RESOURCE = IncidentResource()
