# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What the event source ``uptime.monitoring.events`` knows between polls, and the events a poll makes of it.

The tracker holds no connection and does no I/O but its state file: the source
(``extensions/eda/plugins/event_source/events.py``) reads the service and hands
the records to it. It lives here, not beside the source, because ansible-rulebook
would load any file in ``event_source/`` as a source of its own.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import uuid

from ._incident import INCIDENT_RESOURCE, nested_monitor
from ._monitor import MONITOR_RESOURCE
from ._schema import UTC_FORMAT, ValidationError, record_id

LOGGER = logging.getLogger('uptime.monitoring.events')

# The versions of the state file, each what the one before it lacked (MIGRATIONS takes a file from one to the next):
# 1: the incidents, the monitors and the newest end seen (cutoff), for an api_url: no account named.
# 2: the state names the account (the key's fingerprint) and keeps the incidents as the modules show them.
# 3: the state keeps where the sweep of the monitors stands, and when the last poll began.
# 4: the floor is lookback before the poll by the service's clock (no cutoff kept), polled_at is the service's clock.
# 5: the records kept hold a URL's token user-info and its sig, pwd and sas values masked; when the baseline began.
# 6: the account named by its id (the account endpoint), so that a new key of the same account carries on.
STATE_VERSION = 6
# The versions that knew the account by the key's fingerprint: migrated when the key is this source's.
KEYED_STATE_VERSIONS = (2, 3, 4, 5)
# uuid5 namespace of this source's events: the same transition always gets the same uuid.
EVENT_NAMESPACE = uuid.UUID('6f1e8e52-4c4b-5b8e-9f0a-7a2d35c1e4b1')
INCIDENT_TRANSITIONS = (('opened', 'started_at', 'unresolved'), ('acknowledged', 'acknowledged_at', 'acknowledged'),
                        ('resolved', 'ended_at', 'resolved'))
ONGOING = ('unresolved', 'acknowledged')
# What a catch-up sends of a monitor first seen: a status that tells of trouble or of a person's act (a first pending
# tells neither; emit_existing sends it, as it sends every status but online).
CAUGHT_UP_STATUSES = ('offline', 'paused', 'maintenance')


class StateFileError(Exception):
    """The state file cannot be written: every poll would meet it."""


def event_uuid(*parts):
    """The uuid of a transition: uuid5 over the service, the record and what identifies the transition."""
    return str(uuid.uuid5(EVENT_NAMESPACE, '\x1f'.join('' if part is None else str(part) for part in parts)))


class Tracker:
    """What the source knows from its last poll, and the events a new poll makes of it. No I/O here."""

    def __init__(self, base_url, emit_existing=False, lookback=3600, account=None, key=None, catch_up=False):
        self.base_url = base_url
        self.emit_existing = emit_existing
        # A start without a state to carry on from sends what happened within lookback, found on start.
        self.catch_up = catch_up
        self.lookback = lookback
        self.account = account  # whose state this is: the account's id (see Poller.identify)
        self.key = key  # account_fingerprint of the connection, which versions 2 to 5 knew the account by
        self.monitors = None   # id -> status, started_at, maintenance, sweep (the sweep it was last seen in)
        self.incidents = None  # id -> started_at, acknowledged_at, ended_at (UTC), status, record (the view)
        # Where the sweep of the monitor list stands: the next page, the sweep's number, the pages the list had.
        self.sweep = {'page': 1, 'number': 0, 'pages': None}
        # The first sweep is over: a monitor seen for the first time since is a new one, not a baseline.
        self.baselined = False
        self.baseline_at = None  # when the first poll began, by the service's clock: a monitor created later is new
        self.polled_at = None  # when the last poll began, by the service's clock: a transition before it is late
        self.seen_at = None    # when this poll began, by this machine's clock
        self.now = None        # when this poll began, by the service's clock
        self.unreadable = set()  # (kind, id) of the records already warned about

    def begin_poll(self, observed_at, service_now=None):
        self.seen_at, self.now = observed_at, service_now or observed_at
        self.baseline_at = self.baseline_at or self.now

    def end_poll(self):
        self.polled_at = self.now

    def floor(self, now=None):
        """The oldest time a transition may have to be sent: ``lookback`` before the poll, by the service's clock.
        What is older is history, whatever else the list holds (an import of past incidents, a long stop)."""
        now = now or self.now
        return earlier(now, self.lookback) if now else None

    def admits(self, event):
        """Whether an event is news: an event of emit_existing or a deletion always is, a transition within the floor."""
        payload = event['uptime']
        return payload['existing'] or payload['at'] is None or not self.now or payload['at'] >= self.floor()

    def _seen(self, at):
        """When the source saw a transition at ``at``, and whether it happened before the previous poll began."""
        return {'seen_at': self.seen_at, 'late': bool(at and self.polled_at and at < self.polled_at)}

    def view(self, resource, kind, record):
        """``record`` as the modules show it, or None (and one warning per record) when it cannot be read."""
        try:
            view = resource.record_view(record)
            # The ids are what a playbook reads from an event (ansible-core evaluates the strings of extra vars as
            # templates): an event carries integers there, or it is not sent.
            for name in ('id', 'monitor_id'):
                if view.get(name) is not None and not isinstance(view[name], int):
                    raise ValidationError(name, 'is not an integer')
            return view
        except Exception as exc:  # pylint: disable=broad-exception-caught
            the_id = record_id(record) if isinstance(record, dict) else None
            if (kind, str(the_id)) not in self.unreadable:
                self.unreadable.add((kind, str(the_id)))
                # The field, never its value: it may be a secret.
                LOGGER.warning('%s %s cannot be read (%s%s): it is left out of the events until it can be',
                               kind, the_id, exc.__class__.__name__,
                               ' in %s' % exc.field if isinstance(exc, ValidationError) else '')
            return None

    # monitors

    def monitor_events(self, records, explained=None):
        """Events of monitors read now: a page of the sweep, or those nested in the incidents read.

        ``explained`` maps a monitor id to ``(status, previous)`` when an incident transition of this poll says
        what it became: a monitor not known yet (the first sweep has not reached it) is then reported too.
        """
        if self.monitors is None:
            self.monitors = {}
        events = []
        for record in records:
            view = self.view(MONITOR_RESOURCE, 'monitor', record)
            if view is None:
                known = self.monitors.get(record_id(record) if isinstance(record, dict) else None)
                if known is not None:  # still there: not forgotten as deleted by the sweep
                    known['sweep'] = self.sweep['number']
                continue
            event = self._observe_monitor(view, explained or {})
            if event is not None:
                events.append(event)
        return events

    def _observe_monitor(self, view, explained):
        monitor_id, status = view['id'], str(view.get('status') or '')
        started_at, maintenance = view.get('started_at'), view.get('maintenance_start_at')
        before = self.monitors.get(monitor_id)
        self.monitors[monitor_id] = {'status': status, 'started_at': started_at, 'maintenance': maintenance,
                                     'sweep': self.sweep['number'], 'read_at': self.now}
        created = view.get('created_at')
        if before is None and (self.baselined or bool(created and self.baseline_at and created > self.baseline_at)):
            # Created since the baseline: a status only the sweep shows is news; a first online is none, and a first
            # offline comes with its incident (an import of many monitors sends no flood).
            if status in ('paused', 'maintenance'):
                return self._monitor_event(view, status, None, started_at, maintenance)
            return None
        if before is None:  # part of the baseline, which the first sweep has not reached yet
            if explained.get(monitor_id, (None,))[0] == status:
                dummy, previous, found_on_start = explained[monitor_id]
                event = self._monitor_event(view, status, previous, started_at, maintenance, found_on_start=found_on_start)
                if self.admits(event):  # else its status began before lookback: only what is, if that is asked
                    return event
            if (self.emit_existing and status != 'online') or (self.catch_up and status in CAUGHT_UP_STATUSES):
                return self._monitor_event(view, status, None, started_at, maintenance, existing=True, found_on_start=True)
            return None
        previous = before['status']
        if status == previous and (started_at is None or started_at == before['started_at']):
            return None
        if previous == 'maintenance' and status != 'maintenance' and started_at == before['started_at']:
            maintenance = 'after maintenance from %s' % (before['maintenance'],)
        return self._monitor_event(view, status, previous, started_at, maintenance, flapped=status == previous,
                                   not_before=before.get('read_at'))

    def sweep_over(self):
        """The sweep read the last page: the next starts again at the first.

        A monitor that no sweep saw twice in a row is forgotten (deleted): it may
        have moved between pages once, while they were read.
        """
        number = self.sweep['number']
        self.monitors = {key: value for key, value in (self.monitors or {}).items() if value['sweep'] >= number - 1}
        self.sweep.update(page=1, number=number + 1)
        self.baselined = True

    def _monitor_event(self, view, status, previous, started_at, maintenance, existing=False, flapped=False,
                       not_before=None, found_on_start=False):
        """``not_before``: when the source last read the monitor in its previous status (the service's clock), which
        the change cannot precede: a maintenance window set to a start in the past began when it was set."""
        if started_at is not None:
            moment = started_at
        else:
            moment = 'observed %s' % self.seen_at  # unique, not stable: this service does not say when
        if status == 'maintenance' or str(maintenance or '').startswith('after maintenance'):
            moment = '%s|%s' % (moment, maintenance)
        at = started_at if status != 'maintenance' else (maintenance or started_at)
        if str(maintenance or '').startswith('after maintenance'):
            # The window's end (a window moved on or cleared ended now): the status it hid began before it.
            end = view.get('maintenance_end_at')
            at = min(end, self.now) if end and self.now else (end or self.now or at)
        if at and not_before and at < not_before:
            at = not_before
        payload = {'type': 'monitor_status_changed', 'kind': 'monitor', 'status': status, 'previous_status': previous,
                   'at': at, 'monitor_id': view['id'], 'monitor_name': view.get('name'), 'incident_id': None,
                   'monitor': view, 'existing': existing, 'flapped': flapped, 'found_on_start': found_on_start,
                   'api_url': self.base_url}
        payload.update(self._seen(at))
        return _event(payload, event_uuid(self.base_url, 'monitor', view['id'], status, moment))

    # incidents

    def incidents_read(self, records, missing, monitors=True):
        """The events of a poll's incidents (``records``, None when none could be read; ``missing``, the ongoing ones
        found deleted) and, with ``monitors``, of the monitors nested in them: ``(incident events, monitor events)``.

        Every online/offline flip opens or ends an incident: the monitors nested in the incidents show it at once,
        whatever the size of the account; the sweep of the monitor list finds the rest (pause, resume, maintenance).
        """
        incident_events = [] if records is None else self.incident_events(records, missing)
        if not monitors:
            return incident_events, []
        nested = [monitor for monitor in (nested_monitor(record) for record in records or ()) if monitor is not None]
        return incident_events, self.monitor_events(nested, self.explained(incident_events))

    def explained(self, incident_events):
        """What the incident transitions of a poll that are news say a monitor became: monitor id -> (status, previous
        status, whether it was found on start)."""
        became = {}
        # The latest transition of a monitor tells what it is now.
        for event in sorted((event for event in incident_events if self.admits(event)), key=event_order):
            payload = event['uptime']
            if payload['type'] == 'incident_opened' and not payload['existing']:
                # From online or pending: which, it does not say.
                became[payload['monitor_id']] = ('offline', None, payload['found_on_start'])
            elif payload['type'] == 'incident_resolved':
                became[payload['monitor_id']] = ('online', 'offline', payload['found_on_start'])
        return became

    def admitted(self, events):
        """The events of a poll that are news (admits), oldest first."""
        return sorted((event for event in events if self.admits(event)), key=event_order)

    def incident_events(self, records, missing):
        """Events of the incidents read (``records``) and of the ongoing ones found deleted (``missing``)."""
        first = self.incidents is None
        known = {} if first else self.incidents
        state, events = dict(known), []
        floor = self.floor() or ''
        for record in records:
            # As the modules show it: times in UTC, the status derived by the service's rule, secrets masked.
            view = self.view(INCIDENT_RESOURCE, 'incident', record)
            if view is None:
                continue  # what was known of it stays, and an ongoing one is not taken for deleted
            times = {key: view[key] for key in ('started_at', 'acknowledged_at', 'ended_at')}
            if view['status'] == 'resolved' and times['ended_at'] < floor:
                state.pop(view['id'], None)
                continue  # history: ended before the floor
            before = known.get(view['id'])
            state[view['id']] = dict(times, status=view['status'], record=view)
            if first:
                existing = self.emit_existing and view['status'] in ONGOING
                if existing or self.catch_up:  # a catch-up's transitions older than lookback are left by admits()
                    events.extend(self._incident_events(view, None, existing=existing, found_on_start=True))
                continue
            events.extend(self._incident_events(view, before))
        for incident_id in missing:
            before = state.pop(incident_id, None)
            if before is not None:
                payload = self._incident_payload(before['record'], 'incident_deleted', 'deleted', before['status'],
                                                 self.now)
                events.append(_event(payload, event_uuid(self.base_url, 'incident', incident_id, 'deleted',
                                                         before['started_at'])))
        # Resolved incidents that ended below the floor are never read again: forget them.
        self.incidents = {key: value for key, value in state.items()
                          if value['status'] in ONGOING or value['ended_at'] >= floor}
        return events

    def _incident_events(self, view, before, existing=False, found_on_start=False):
        events = []
        previous = before['status'] if before else None
        # The transitions already reported: those up to the status seen at the last poll.
        done = {'unresolved': {'opened'}, 'acknowledged': {'opened', 'acknowledged'},
                'resolved': {'opened', 'acknowledged', 'resolved'}}.get(previous, set())
        for transition, stamp, status in INCIDENT_TRANSITIONS:
            if transition in done or (transition != 'opened' and not view[stamp]):
                continue
            payload = self._incident_payload(view, 'incident_' + transition, status, previous, view[stamp], existing,
                                             found_on_start)
            events.append(_event(payload, event_uuid(self.base_url, 'incident', view['id'], transition, view[stamp])))
            previous = status
        return events

    def _incident_payload(self, view, event_type, status, previous, at, existing=False, found_on_start=False):
        payload = {'type': event_type, 'kind': 'incident', 'status': status, 'previous_status': previous, 'at': at,
                   'incident_id': view['id'], 'monitor_id': view['monitor_id'], 'monitor_name': view['monitor_name'],
                   'incident': view, 'monitor': view['monitor'], 'existing': existing, 'flapped': False,
                   'found_on_start': found_on_start, 'api_url': self.base_url}
        payload.update(self._seen(at))
        return payload

    # state

    def to_state(self):
        """What the tracker knows, as JSON-ready data."""
        return {'version': STATE_VERSION, 'api_url': self.base_url, 'account': self.account,
                'sweep': dict(self.sweep), 'baselined': self.baselined, 'baseline_at': self.baseline_at,
                'polled_at': self.polled_at,
                'monitors': None if self.monitors is None else [dict(value, id=key) for key, value in self.monitors.items()],
                'incidents': None if self.incidents is None else [dict(value, id=key) for key, value in self.incidents.items()]}

    def migrated(self, state):
        """``state`` as this version writes it: a file of versions 2 to 5, which knew the account by its key, is this
        account's when its key is this source's, and is taken through each version after its own (MIGRATIONS).
        Raises KeyError, TypeError, AttributeError or ValueError for a file too damaged to be taken through."""
        if isinstance(state, dict) and state.get('version') in KEYED_STATE_VERSIONS and state.get('account') == self.key:
            for version in range(state['version'], STATE_VERSION - 1):
                state = MIGRATIONS[version](state)
            return dict(state, version=STATE_VERSION, account=self.account)
        return state

    def state_problem(self, state):
        """Why ``state`` is not what this tracker knew (another account, service or version, or a shape this version
        does not write); None when it is."""
        return self._taken(state)[1]

    def _taken(self, state):
        """``(state as this version writes it, None)``, or ``(None, why it cannot be taken over)``."""
        try:
            state = self.migrated(state)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            return None, 'it is damaged or was edited: %s while taking it from version %s' % (
                exc.__class__.__name__, state['version'])
        version = state.get('version') if isinstance(state, dict) else None
        if version in KEYED_STATE_VERSIONS:
            return None, ('it was written by version %d of this source with another api_key, which cannot be told from '
                          'another account (from version 6 on, a new key of the same account carries on)' % version)
        if version == 1:
            return None, 'it was written by version 1 of this source, which did not name its account'
        if version != STATE_VERSION:
            return None, 'it was written by another version of this source'
        if state.get('api_url') != self.base_url:
            return None, 'it was written for another api_url'
        if state.get('account') != self.account:
            return None, 'it was written for another account'
        problem = _shape_problem(state, STATE_SHAPE, '')
        return (state, None) if problem is None else (None, 'it is damaged or was edited: %s' % problem)

    def load_state(self, state):
        """Take over what an earlier run knew; False (and nothing taken) when it is not a state of this account and version."""
        state, problem = self._taken(state)
        if problem is not None:
            return False
        self.monitors, self.incidents = _by_id(state['monitors']), _by_id(state['incidents'])
        self.baselined, self.baseline_at, self.polled_at = bool(state['baselined']), state['baseline_at'], state['polled_at']
        self.sweep = {key: state['sweep'][key] for key in self.sweep}
        return True

    def of_another_account(self, state):
        """Whether ``state`` is known to describe another service or account: then a new baseline is the right start,
        where a state that is only lost (damaged, of an account it cannot tell) is caught up from the service."""
        if not isinstance(state, dict):
            return False
        return state.get('api_url', self.base_url) != self.base_url or (
            state.get('version') == STATE_VERSION and state.get('account', self.account) != self.account)

    def ongoing_ids(self):
        return [key for key, value in (self.incidents or {}).items() if value['status'] in ONGOING]


# -- the versions before --------------------------------------------------------------------------


def _sweep_kept(state):
    """Version 2 to 3: version 2 read the whole monitor list at each poll, so the monitors it kept are a whole baseline,
    all seen in the sweep before the one that starts; when its last poll began it did not keep (no event is then late
    for it)."""
    monitors = state['monitors']
    if monitors is not None:
        monitors = [dict({key: value for key, value in entry.items() if key != 'missed'}, sweep=0) for entry in monitors]
    return dict(state, version=3, monitors=monitors, sweep={'page': 1, 'number': 0, 'pages': None},
                baselined=monitors is not None, polled_at=None)


def _cutoff_dropped(state):
    """Version 3 to 4: the floor no longer follows the newest end seen. Version 3's polled_at was this machine's
    clock where it is now the service's: it tells which transitions are late, and stands for it within their difference."""
    return dict({key: value for key, value in state.items() if key != 'cutoff'}, version=4)


def _records_masked(state):
    """Version 4 to 5: the incidents kept mask what the modules now mask (a URL's token user-info, its sig, pwd and sas
    values, other facts of a secret name), so that an incident_deleted event never sends them. When the baseline began
    only the later builds of version 4 kept; else the first poll after the restart stands for it, as for a new
    baseline."""
    incidents = state['incidents']
    if incidents is not None:
        incidents = [dict(entry, record=_masked_incident(entry['record'])) for entry in incidents]
    return dict(state, version=5, incidents=incidents, baseline_at=state.get('baseline_at'))


def _masked_incident(view):
    masked = INCIDENT_RESOURCE.schema.masked(view)
    if isinstance(view.get('monitor'), dict):
        masked['monitor'] = MONITOR_RESOURCE.masked_view(view['monitor'])
    return masked


# Each version of the state file to the next; version 5 to 6 (the account by its id) is Tracker.migrated's own.
MIGRATIONS = {2: _sweep_kept, 3: _cutoff_dropped, 4: _records_masked}


def earlier(stamp, seconds):
    """The UTC timestamp ``seconds`` before ``stamp`` (a value that is no timestamp stays as it is)."""
    try:
        moment = datetime.datetime.strptime(stamp, UTC_FORMAT)
    except (TypeError, ValueError):
        return stamp
    return (moment - datetime.timedelta(seconds=seconds)).strftime(UTC_FORMAT)


def _whole(least, null=False):
    return (lambda value: (null and value is None) or isinstance(value, int) and not isinstance(value, bool) and value >= least,
            '%sa whole number of %d or more' % ('null or ' if null else '', least))


_TEXT_OR_NULL = (lambda value: value is None or isinstance(value, str), 'text or null')
# What a state file of this version holds: a file of the version but of another shape (damaged, or edited by hand)
# would stop the source or fail every poll, so it is refused like a file of another version. A list may be null (not
# polled yet); ``?`` marks a key an entry may lack; the check under '' is one of the whole entry.
STATE_SHAPE = {
    'sweep': {'page': _whole(1), 'number': _whole(0),
              'pages': _whole(1, null=True)},
    'baselined': (lambda value: isinstance(value, bool), 'true or false'),
    'baseline_at': _TEXT_OR_NULL, 'polled_at': _TEXT_OR_NULL,
    'monitors': [{'id': _whole(0), 'status': (lambda value: isinstance(value, str), 'text'),
                  'started_at': _TEXT_OR_NULL, 'maintenance': _TEXT_OR_NULL, 'sweep': _whole(0), 'read_at?': _TEXT_OR_NULL}],
    'incidents': [{'id': _whole(0), 'started_at': _TEXT_OR_NULL, 'acknowledged_at': _TEXT_OR_NULL,
                   'ended_at': _TEXT_OR_NULL,
                   'status': (lambda value: value in ONGOING + ('resolved',), 'a status of an incident'),
                   'record': {'id': _whole(0), 'monitor_id': _whole(0, null=True), 'monitor_name': _TEXT_OR_NULL,
                              'monitor': (lambda value: value is None or isinstance(value, dict), 'an object or null')},
                   '': (lambda entry: entry['status'] != 'resolved' or entry['ended_at'] is not None, 'resolved with an end')}],
}


def _shape_problem(value, shape, where):
    """Where ``value`` departs from ``shape`` (see STATE_SHAPE), naming the place and never the value; None when not."""
    if isinstance(shape, tuple):
        return None if shape[0](value) else '%s is not %s' % (where, shape[1])
    if isinstance(shape, list):
        if value is not None and not isinstance(value, list):
            return '%s is not a list' % where
        problems = (_shape_problem(item, shape[0], '%s[%d]' % (where, index)) for index, item in enumerate(value or ()))
        return next((problem for problem in problems if problem), None)
    if not isinstance(value, dict):
        return '%s is not an object' % where
    for key, part in shape.items():
        name = key.rstrip('?')
        if name and name not in value:
            if key.endswith('?'):
                continue
            return '%s has no %s' % (where or 'it', name)
        problem = _shape_problem(value[name] if name else value, part, '%s.%s' % (where, name) if where and name else where or name)
        if problem:
            return problem
    return None


def _by_id(items):
    """A state file's list of entries back into a mapping by id."""
    return None if items is None else {item.pop('id'): item for item in (dict(entry) for entry in items)}


def _event(payload, event_id):
    return {'uptime': payload, 'meta': {'uuid': event_id}}


def event_order(event):
    """Oldest first; a transition without a time (a deletion) after the others of its poll."""
    payload = event['uptime']
    return (payload['at'] is None, payload['at'] or '', payload['kind'] == 'monitor',
            str(payload.get('incident_id') or payload.get('monitor_id')))


def load_state(tracker, path):
    """Read a state file into ``tracker``: True when it carries on from it.

    A missing file, or one of another service or account, is a fresh start (a
    catch-up when ``tracker.catch_up``). A file that is only lost (it cannot be
    read, is damaged, or of a version that did not name its account) is a
    catch-up: the transitions it would have carried are read from the service.
    """
    if not path or not os.path.exists(path) or os.path.getsize(path) == 0:  # made empty beforehand (touch, a volume)
        return False
    try:
        with open(path, encoding='utf-8') as handle:
            state = json.load(handle)
        if tracker.load_state(state):
            return True
        problem = tracker.state_problem(state)
    except (OSError, ValueError) as exc:
        state, problem = None, 'it cannot be read (%s)' % exc.__class__.__name__
    tracker.catch_up = tracker.catch_up or not tracker.of_another_account(state)
    LOGGER.warning('state_file %s cannot be used for %s: %s; %s', path, tracker.base_url, problem,
                   'catching up from the service: what happened within lookback is sent, found on start'
                   if tracker.catch_up else 'starting with a new baseline')
    return False


def save_state(tracker, path):
    """Write the state atomically (a reader never sees half a file)."""
    temporary = '%s.%d.tmp' % (path, os.getpid())
    try:
        with open(temporary, 'w', encoding='utf-8') as handle:
            json.dump(tracker.to_state(), handle)
        os.replace(temporary, path)
    except OSError as exc:
        raise StateFileError('state_file %s cannot be written: %s' % (path, exc)) from None
