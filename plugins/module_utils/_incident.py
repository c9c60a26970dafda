# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Incidents: their description, validation, and find/compare/create/update/delete.

An incident belongs to one monitor and is found by its ``id``, else by its
natural key (monitor + ``started_at``), else as the monitor's ongoing incident
(the one without ``ended_at``). The service ignores ``started_at`` on update,
rejects ``monitor_id`` there, and sets ``acknowledged_at``/``ended_at`` only
while they are empty (write-once): asking for another value than the one set
fails here, before anything is sent, instead of reporting a change that the
service would silently drop.
"""

from __future__ import annotations

import datetime

from ._client import UptimeApiError
from ._monitor import MonitorManager, public_view
from ._resource import (
    TIMESTAMP_FORMAT,
    Field,
    Schema,
    ValidationError,
    confirm_after_ambiguity,
    diff_views,
    record_id,
    timestamp_or_text,
    to_int,
    to_utc_timestamp,
    utc_now,
)

INCIDENTS_PATH = '/api/v1/incidents'
MONITORS_PATH = '/api/v1/monitors'
STATUSES = ['unresolved', 'acknowledged', 'resolved']
# What the convenience option ``status`` asks for: the timestamp it sets to now.
STATUS_TIMESTAMPS = {'acknowledged': 'acknowledged_at', 'resolved': 'ended_at'}
MAX_LENGTHS = {'cause': 255, 'comment': 1024}
SEARCH_BY = ['monitor', 'cause']
SORT_BY = ['started_at', 'ended_at']
PER_PAGE = [10, 25, 50, 100]
# The ongoing incident, if any, is the latest started one: a small page is enough.
ONGOING_PAGE_SIZE = 10
LOOKUP_PAGE_SIZE = 100


def _monitor_of(record):
    monitor = record.get('monitor')
    return monitor if isinstance(monitor, dict) else None


def _monitor_id_of(record):
    """The service nests the monitor; some answers may carry a plain ``monitor_id``."""
    monitor = _monitor_of(record)
    if monitor is not None and monitor.get('id') is not None:
        return to_int(monitor.get('id'), 'monitor_id')
    return to_int(record.get('monitor_id'), 'monitor_id')


INCIDENT = Schema([
    Field('monitor_id', 'int', required_on_create=True, on_update=False, read=_monitor_id_of),
    Field('started_at', 'timestamp', required_on_create=True, on_update=False),
    Field('acknowledged_at', 'timestamp', write_once=True),
    Field('ended_at', 'timestamp', write_once=True),
    Field('cause'),
    Field('comment'),
])

INCIDENT_ARGSPEC = dict(
    INCIDENT.argument_spec(),
    id=dict(type='int'),
    monitor=dict(type='str'),
    status=dict(type='str', choices=sorted(STATUS_TIMESTAMPS)),
    state=dict(type='str', default='present', choices=['present', 'absent']),
)

INCIDENT_INFO_ARGSPEC = dict(
    id=dict(type='int'),
    monitor_id=dict(type='int'),
    monitor=dict(type='str'),
    search=dict(type='str'),
    search_by=dict(type='str', choices=SEARCH_BY),
    status=dict(type='str', choices=STATUSES),
    sort_by=dict(type='str', choices=SORT_BY),
    sort=dict(type='str', choices=['asc', 'desc']),
    per_page=dict(type='int', choices=PER_PAGE, default=100),
    limit=dict(type='int'),
)


# -- derived values and validation ------------------------------------------

def derived_status(values):
    """The service's rule: resolved when ended, else acknowledged when acknowledged, else unresolved."""
    if values.get('ended_at'):
        return 'resolved'
    if values.get('acknowledged_at'):
        return 'acknowledged'
    return 'unresolved'


def _parse(timestamp):
    return datetime.datetime.strptime(timestamp, TIMESTAMP_FORMAT)


def duration(values):
    """Seconds from ``started_at`` to ``ended_at``; None while the incident is ongoing."""
    if not values.get('started_at') or not values.get('ended_at'):
        return None
    return int((_parse(values['ended_at']) - _parse(values['started_at'])).total_seconds())


def validate_values(desired, now):
    """What can be checked on the values alone: lengths and times not in the future."""
    for name, limit in MAX_LENGTHS.items():
        if len(desired.get(name) or '') > limit:
            raise ValidationError(name, 'must be at most %d characters long, got %d' % (limit, len(desired[name])))
    now_text = now.strftime(TIMESTAMP_FORMAT)
    for name in ('started_at', 'acknowledged_at', 'ended_at'):
        value = desired.get(name)
        if value is not None and value > now_text:
            raise ValidationError(name, '%s UTC is in the future (now is %s UTC): the service accepts only times '
                                        'up to now' % (value, now_text))


def validate_order(values):
    """``ended_at`` after ``started_at``; ``acknowledged_at`` not before it."""
    started = values.get('started_at')
    if not started:
        return
    ended, acknowledged = values.get('ended_at'), values.get('acknowledged_at')
    if ended is not None and ended <= started:
        raise ValidationError('ended_at', 'must be after started_at (%s UTC), got %s UTC' % (started, ended))
    if acknowledged is not None and acknowledged < started:
        raise ValidationError('acknowledged_at', 'must not be before started_at (%s UTC), got %s UTC'
                              % (started, acknowledged))


def refused_changes(changes, before, incident_id):
    """Fail on a change the service would not make (it would answer 200 and keep the old value)."""
    for name in changes:
        field = INCIDENT.by_name[name]
        wanted, current = changes[name], before.get(name)
        if not field.on_update:
            if name == 'monitor_id':
                raise ValidationError(name, 'incident %s belongs to monitor %s: an incident cannot be moved to '
                                            'another monitor (asked for %s)' % (incident_id, current, wanted))
            raise ValidationError(name, 'incident %s started at %s UTC: %s cannot be changed after creation '
                                        '(asked for %s)' % (incident_id, current, name, _shown(wanted)))
        if field.write_once and current is not None:
            raise ValidationError(name, 'incident %s already has %s %s UTC and the service sets it only once: '
                                        'it cannot be changed to %s' % (incident_id, name, current, _shown(wanted)))


def _shown(value):
    return 'empty' if value is None else '%s UTC' % value


# -- the returned form ------------------------------------------------------

def incident_view(values, record=None, monitor=None):
    """An incident as the modules return it: option names, normalised, monitor id on top, secrets masked.

    ``values`` are option-term values (read from ``record`` or predicted);
    ``monitor`` is the monitor record when ``record`` does not nest one.
    """
    record = record or {}
    monitor = _monitor_of(record) or monitor
    view = {'id': record_id(record) if record else None}
    view.update((field.name, values.get(field.name)) for field in INCIDENT.fields)
    view['monitor_name'] = monitor.get('name') if monitor else None
    view['status'] = derived_status(values)
    view['duration'] = duration(values)
    for key in ('created_at', 'updated_at'):
        view[key] = timestamp_or_text(record.get(key))
    view['monitor'] = public_view(monitor) if monitor else None
    return view


def public_incident(record):
    """A service record in the returned form."""
    return incident_view(INCIDENT.current(record), record)


def incident_result(changed, before, after, record=None, monitor=None):
    """The module result: ``changed``, the incident (empty when absent) and the diff."""
    names = [field.name for field in INCIDENT.fields] + ['status']
    with_status = [dict(values, status=derived_status(values)) if values is not None else None
                   for values in (before, after)]
    diff_before, diff_after = diff_views(INCIDENT, with_status[0], with_status[1], names)
    incident = incident_view(after, record, monitor) if after is not None else {}
    return dict(changed=changed, incident=incident, diff=dict(before=diff_before, after=diff_after))


# -- finding, comparing, writing --------------------------------------------

class IncidentManager:
    """Find, compare, create, update and delete incidents for one module run."""

    def __init__(self, client, check_mode=False, now=None):
        self.client = client
        self.check_mode = check_mode
        self.monitors = MonitorManager(client)
        self.now = now or utc_now()

    def get(self, incident_id):
        return self.client.get_or_none('%s/%s' % (INCIDENTS_PATH, incident_id))

    def monitor_id_from_name(self, name):
        """``(id, record)`` of the monitor named exactly ``name``, or ``(None, None)``."""
        record = self.monitors.find_by_name(name)
        if record is None:
            return None, None
        return record_id(record), record

    def find_by_start(self, monitor_id, started_at):
        """``(incident, latest)``: the monitor's incident that started at ``started_at`` and its latest one.

        Reads the monitor's incidents newest first and stops at the first one
        that started earlier: usually one request.
        """
        params = {'monitor_id': monitor_id, 'sort_by': 'started_at', 'sort': 'desc', 'per_page': LOOKUP_PAGE_SIZE}
        latest = None
        for records in self.client.iter_pages(INCIDENTS_PATH, params):
            for record in records:
                if _monitor_id_of(record) not in (None, monitor_id):
                    continue
                latest = latest or record
                record_start = to_utc_timestamp(record.get('started_at'), 'started_at')
                if record_start == started_at:
                    return record, latest
                if record_start is not None and record_start < started_at:
                    return None, latest
        return None, latest

    def find_ongoing(self, monitor_id):
        """``(ongoing, latest)``: the monitor's incident without ``ended_at`` and its latest one.

        A monitor has at most one ongoing incident and nothing can start after
        it, so it is among the latest started: one request.
        """
        params = {'monitor_id': monitor_id, 'sort_by': 'started_at', 'sort': 'desc', 'per_page': ONGOING_PAGE_SIZE}
        records = [record for record in next(self.client.iter_pages(INCIDENTS_PATH, params), [])
                   if _monitor_id_of(record) in (None, monitor_id)]
        for record in records:
            if record.get('ended_at') in (None, ''):
                return record, records[0]
        return None, (records[0] if records else None)

    # -- identity -------------------------------------------------------------

    def locate(self, params, desired):
        """Find the addressed incident; returns ``(record, latest, monitor_id, monitor_record, how)``.

        ``how`` is ``id``, ``start`` (natural key) or ``ongoing``; ``latest`` is
        the monitor's latest incident when the lookup read it.
        """
        if params.get('id') is not None:
            record = self.get(params['id'])
            if record is not None and params.get('monitor'):
                self._check_monitor_name(record, params['monitor'])
            return record, None, None, None, 'id'
        monitor_id, monitor = desired.get('monitor_id'), None
        if monitor_id is None:
            monitor_id, monitor = self.monitor_id_from_name(params['monitor'])
            if monitor_id is None:
                return None, None, None, None, 'no-monitor'
        if desired.get('started_at') is not None:
            record, latest = self.find_by_start(monitor_id, desired['started_at'])
            return record, latest, monitor_id, monitor, 'start'
        record, latest = self.find_ongoing(monitor_id)
        return record, latest, monitor_id, monitor, 'ongoing'

    def _check_monitor_name(self, record, name):
        monitor = _monitor_of(record)
        if monitor is not None and monitor.get('name') is not None:
            actual_name, actual_id = monitor.get('name'), record_id(monitor)
        else:
            actual_id = _monitor_id_of(record)
            found = self.monitors.get(actual_id) if actual_id is not None else None
            actual_name = found.get('name') if found else None
        if actual_name == name:
            return
        if actual_name is not None and str(actual_name).casefold() == name.casefold():
            # The monitor module resolves a name that differs only in case, when no exact match exists.
            if self.monitor_id_from_name(name)[0] == actual_id:
                return
        raise ValidationError('monitor', 'incident %s belongs to monitor %r (id %s), not %r: an incident cannot '
                                         'be moved to another monitor' % (record_id(record), actual_name,
                                                                          actual_id, name))

    # -- the module tasks -----------------------------------------------------

    def run_module(self, params):
        """The whole task of the incident module."""
        if params['state'] == 'absent':
            return self.ensure_absent(params)
        desired = INCIDENT.desired(params)
        validate_values(desired, self.now)
        validate_order(desired)
        record, latest, monitor_id, monitor, how = self.locate(params, desired)
        if how == 'no-monitor':
            raise ValidationError('monitor', 'no monitor is named %r' % params['monitor'])
        if record is None and how == 'id':
            raise UptimeApiError('incident id %s was not found (an incident cannot be created with a chosen id: '
                                 'leave id out and give the monitor and started_at to open one)' % params['id'],
                                 status=404)
        if record is None and how == 'ongoing':
            return self._confirm_latest(latest, desired, params, monitor_id)
        if record is None:
            desired['monitor_id'] = monitor_id
            return self._create(desired, params.get('status'), latest, monitor)
        return self._update(record, desired, params.get('status'))

    def _with_status(self, desired, status, before):
        """Apply the convenience ``status``: set its timestamp to now when neither asked nor already set."""
        wanted = dict(desired)
        name = STATUS_TIMESTAMPS.get(status)
        if name is not None and name not in wanted and (before or {}).get(name) is None:
            wanted[name] = self.now.strftime(TIMESTAMP_FORMAT)
        return wanted

    def _confirm_latest(self, latest, desired, params, monitor_id):
        """No ongoing incident: what a task addressed to the monitor alone may still do.

        A task that acknowledges or resolves (``status``) has nothing left to
        do: the incident it was about has ended. This keeps re-runs of
        "acknowledge / resolve the current incident of monitor X" idempotent,
        whatever later tasks recorded on that incident. Any other task must
        already match the latest incident: it fails rather than change a past
        incident, or open one without ``started_at``.
        """
        if params.get('status') is not None:
            before = INCIDENT.current(latest) if latest is not None else None
            return incident_result(False, before, before, latest)
        monitor_text = repr(params['monitor']) if params.get('monitor') else 'id %s' % monitor_id
        hint = 'give started_at to open a new incident, or id to change a past one'
        if latest is None:
            raise ValidationError('started_at', 'monitor %s has no ongoing incident and no incident at all: %s'
                                  % (monitor_text, hint))
        before = INCIDENT.current(latest)
        wanted = dict(desired)
        wanted.pop('monitor_id', None)
        changes = INCIDENT.differences(wanted, before)
        if changes:
            raise ValidationError(sorted(changes)[0], 'monitor %s has no ongoing incident; its latest incident %s '
                                  'ended at %s UTC and differs in %s: %s'
                                  % (monitor_text, record_id(latest), before.get('ended_at'),
                                     ', '.join(sorted(changes)), hint))
        return incident_result(False, before, before, latest)

    def _create(self, desired, status, latest, monitor):
        desired = self._with_status(desired, status, None)
        validate_values(desired, self.now)
        validate_order(desired)
        self._check_can_open(desired, latest, monitor)
        body = {name: value for name, value in desired.items()
                if INCIDENT.by_name[name].on_create and value is not None}
        predicted = dict({field.name: None for field in INCIDENT.fields}, **body)
        if self.check_mode:
            if monitor is None:
                monitor = self.monitors.get(desired['monitor_id'])
                if monitor is None:
                    raise ValidationError('monitor_id', 'no monitor has the id %s' % desired['monitor_id'])
            return incident_result(True, None, predicted, None, monitor)
        record = self._post(body, desired)
        if _monitor_of(record) is None or record.get('started_at') in (None, ''):
            # The create answer echoes the form: read the whole record back.
            record = self.get(record_id(record)) or record
        return incident_result(True, None, INCIDENT.current(record), record, monitor)

    @staticmethod
    def _check_can_open(desired, latest, monitor):
        """The service's refusals, told before the POST (and in check mode) from the lookup already made."""
        if latest is None:
            return
        name = repr(monitor.get('name')) if monitor else 'id %s' % desired['monitor_id']
        latest_end = to_utc_timestamp(latest.get('ended_at'), 'ended_at')
        if latest_end is None:
            raise ValidationError('started_at', 'monitor %s already has an ongoing incident (id %s, started at %s '
                                                'UTC): resolve it first (status: resolved) or address it by id'
                                  % (name, record_id(latest),
                                     to_utc_timestamp(latest.get('started_at'), 'started_at')))
        if desired['started_at'] <= latest_end:
            raise ValidationError('started_at', 'must be after the end of the last incident of monitor %s (id %s '
                                                'ended at %s UTC), got %s UTC'
                                  % (name, record_id(latest), latest_end, desired['started_at']))

    def _post(self, body, desired):
        try:
            return self.client.create(INCIDENTS_PATH, INCIDENT.form(body))
        except UptimeApiError as exc:
            # The answer to a POST may be lost after the service stored the incident, and a
            # concurrent run may have opened the same one: look before failing, never POST twice.
            conflict = exc.status == 422 and bool({'monitor_id', 'started_at'} & set(exc.field_errors))
            if not (exc.ambiguous or conflict):
                raise
            existing, dummy = self.find_by_start(desired['monitor_id'], desired['started_at'])
            if existing is None:
                raise
            before = INCIDENT.current(existing)
            changes = INCIDENT.differences(body, before)
            if not changes:
                return existing
            refused_changes(changes, before, record_id(existing))
            return self._put(existing, changes)

    def _update(self, record, desired, status):
        before = INCIDENT.current(record)
        wanted = self._with_status(desired, status, before)
        changes = INCIDENT.differences(wanted, before)
        refused_changes(changes, before, record_id(record))
        if not changes:
            return incident_result(False, before, before, record)
        predicted = dict(before, **changes)
        validate_values(changes, self.now)
        validate_order(predicted)
        if self.check_mode:
            return incident_result(True, before, predicted, record)
        updated = self._put(record, changes)
        return incident_result(True, before, INCIDENT.current(updated), updated)

    def _put(self, record, changes):
        """PUT only what differs; fail if the service kept another write-once value."""
        incident_id = record_id(record)

        def confirm():
            fresh = self.get(incident_id)
            return fresh if fresh is not None and not INCIDENT.differences(changes, INCIDENT.current(fresh)) else None
        updated = confirm_after_ambiguity(
            lambda: self.client.update('%s/%s' % (INCIDENTS_PATH, incident_id), INCIDENT.form(changes), method='PUT'),
            confirm)
        after = INCIDENT.current(updated)
        for name, value in changes.items():
            if INCIDENT.by_name[name].write_once and after.get(name) != value:
                raise UptimeApiError('%s: the service kept %s for incident %s instead of %s (it is write-once and was '
                                     'set meanwhile)' % (name, _shown(after.get(name)), record_id(record),
                                                         _shown(value)), method='PUT',
                                     path='%s/%s' % (INCIDENTS_PATH, record_id(record)))
        return updated

    def ensure_absent(self, params):
        """Delete the addressed incident; an incident already absent is no change."""
        identity = {'started_at': to_utc_timestamp(params.get('started_at'), 'started_at'),
                    'monitor_id': params.get('monitor_id')}
        record, dummy, dummy, dummy, dummy = self.locate(params, identity)
        if record is None:
            return incident_result(False, None, None)
        before = INCIDENT.current(record)
        if self.check_mode:
            return incident_result(True, before, None)
        incident_id = record_id(record)
        deleted = confirm_after_ambiguity(lambda: self.client.delete('%s/%s' % (INCIDENTS_PATH, incident_id)),
                                          lambda: True if self.get(incident_id) is None else None)
        return incident_result(deleted, before if deleted else None, None)

    def run_info(self, params):
        """The whole task of the incident_info module."""
        if params.get('limit') is not None and params['limit'] < 1:
            raise ValidationError('limit', 'must be 1 or more, got %s' % params['limit'])
        if params.get('id') is not None:
            record = self.get(params['id'])
            return dict(changed=False, incidents=[public_incident(record)] if record is not None else [])
        query = {key: params[key] for key in ('monitor_id', 'status', 'sort_by', 'sort', 'per_page')
                 if params.get(key) is not None}
        if params.get('monitor'):
            monitor_id, dummy = self.monitor_id_from_name(params['monitor'])
            if monitor_id is None:
                return dict(changed=False, incidents=[])
            query['monitor_id'] = monitor_id
        if params.get('search') is not None:
            # interface.md's default search_by (url) is not an allowed value: always send one.
            query['search'] = params['search']
            query['search_by'] = params.get('search_by') or 'monitor'
        records = self.client.list(INCIDENTS_PATH, query, limit=params.get('limit'))
        return dict(changed=False, incidents=[public_incident(record) for record in records])
