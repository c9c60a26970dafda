# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Declarative sync of many monitors: read the account once, plan in memory, write the differences.

Every monitor goes through the engine of the ``monitor`` module: first a
check-mode engine plans each entry against the record read (no request), then,
for the monitors that differ, one real engine per worker thread writes.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ._client import UptimeApiError
from ._connection import account_zone, connect
from ._engine import FAILURES, Engine, WrittenBeforeFailure
from ._monitor import MONITOR_SCHEMA, MONITOR_RESOURCE
from ._resource import NameMatcher
from ._schema import UnresolvedMaskError, ValidationError, record_id, to_text

STATES = ['merged', 'replaced', 'overridden', 'deleted', 'gathered']
REPLACING_STATES = ('replaced', 'overridden')
MAX_WORKERS = 32
# Failures that every further write would repeat: stop sending when one is seen.
FATAL_STATUSES = (401, 403)
REQUIRED_WHEN_REPLACING = [field.name for field in MONITOR_SCHEMA.fields if field.required]
# Check mode writes nothing: its diff and counts are a plan, and say so.
PLANNED_HEADER = 'planned changes (check mode: nothing was written)'


def config_argument_spec():
    """The suboptions of ``config``: the options of the ``monitor`` module, name required."""
    spec = MONITOR_SCHEMA.argument_spec()
    spec['name'] = dict(spec['name'], required=True)
    return spec


MONITORS_ARGSPEC = dict(
    config=dict(type='list', elements='dict', options=config_argument_spec()),
    state=dict(type='str', default='merged', choices=STATES),
    workers=dict(type='int', default=4),
    reveal_secrets=dict(type='bool', default=False),
    unresolved_masks=dict(type='str', default='fail', choices=['fail', 'leave_out']),
)


class RateGate:
    """A pause shared by the workers.

    The client of each worker calls :meth:`sleep` when it waits before a retry
    (``Retry-After`` of a 429, or a backoff). The wait then holds every worker
    before its next request instead of letting the others run into the limit too.
    """

    def __init__(self, sleep=time.sleep, clock=time.monotonic):
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._until = 0.0

    def sleep(self, seconds):
        with self._lock:
            self._until = max(self._until, self._clock() + seconds)
        self.wait()

    def wait(self):
        while True:
            with self._lock:
                remaining = self._until - self._clock()
            if remaining <= 0:
                return
            self._sleep(remaining)


class Action:
    """What the sync does to one monitor, and how it went."""

    def __init__(self, kind, name, record=None, desired=None, outcome=None):
        self.kind = kind  # create, update, delete or none
        self.name = name
        self.record = record
        self.desired = desired
        self.before = outcome.before if outcome else (MONITOR_SCHEMA.current(record) if record is not None else None)
        self.after = outcome.after if outcome else None
        self.changed_keys = []
        if kind == 'create':
            self.changed_keys = [key for key in desired if desired[key] not in (None, [])]
        elif kind == 'update':
            self.changed_keys = list(MONITOR_SCHEMA.differences(self.after, self.before))
        self.after_record = None
        self.error = None
        # Whether running the task again may get past the error, the input unchanged (see rerun_may_finish).
        self.transient = None
        # The write was sent and no trustworthy answer came back: it may have been applied.
        self.ambiguous = False
        self.attempted = False
        # The service was changed by this action although it then failed (a create whose pause failed, say).
        self.wrote = False

    @property
    def writes(self):
        return self.kind != 'none'

    @property
    def done(self):
        return self.attempted and self.error is None

    @property
    def effective(self):
        """Whether the service holds what this action wrote: done, or failed after its write."""
        return self.done or self.wrote

    def report(self, check_mode):
        names = ['name'] + [key for key in self.changed_keys if key != 'name']
        before, after = MONITOR_SCHEMA.diff(self.before, self.after, names)
        entry = dict(name=self.name, action=self.kind, changed_keys=self.changed_keys, before=before, after=after)
        record = self.after_record or self.record
        entry['id'] = record_id(record) if record is not None else None
        if not check_mode:
            entry['status'] = 'failed' if self.error else ('done' if self.attempted else 'not attempted')
        if self.error:
            entry['msg'] = self.error
            entry['transient'] = self.transient
        return entry


# What a monitor record shows beyond its options (the status, the service's times).
RECORD_ONLY_KEYS = frozenset(MONITOR_RESOURCE.view_keys) - frozenset(MONITOR_SCHEMA.by_name)


def _prefixed(exc, index, name):
    """The one way an error about a ``config`` entry is told: ``config[i].<field>: ... (monitor 'name')``."""
    message = str(exc)[len(exc.field) + 2:]
    where = ' (monitor %r)' % name if name else ''
    return ValidationError('config[%d].%s' % (index, exc.field), message + where)


def check_entry(index, item):
    """Refuse what the argument spec of ``config`` would refuse in one entry as given, naming the entry.

    Runs on the arguments before Ansible validates them (see ``main`` of the
    monitors module), so that a wrong option, type or choice in an entry is
    told with ``config[i]`` and the monitor's name, like every other refusal.
    """
    if not isinstance(item, dict):
        raise ValidationError('config[%d]' % index, 'must be a dict of monitor options, got a %s'
                              % type(item).__name__)
    raw_name = item.get('name')
    name = to_text(raw_name) if isinstance(raw_name, (str, int)) else None
    try:
        unknown = sorted(str(key) for key in set(item) - set(MONITOR_SCHEMA.by_name))
        read_only = [key for key in unknown if key in RECORD_ONLY_KEYS]
        if read_only:
            # A record of monitor_info's monitors (or gathered's monitors) given where the options belong.
            raise ValidationError(read_only[0], 'is a read-only key of a monitor record as monitor_info returns it in '
                                  'monitors, not an option: give its export instead (monitor_info with export: true '
                                  'returns the monitors as options in export; monitors with state: gathered in gathered)')
        if unknown:
            raise ValidationError(unknown[0], 'is not an option of a monitor (the options are %s)'
                                  % ', '.join(MONITOR_SCHEMA.by_name))
        if raw_name is not None and not isinstance(raw_name, (str, int)):
            raise ValidationError('name', 'must be a string, got a %s' % type(raw_name).__name__)
        if name is None:
            raise ValidationError('name', 'is required: every entry names the monitor it describes')
        MONITOR_SCHEMA.check_as_given(item)
    except ValidationError as exc:
        raise _prefixed(exc, index, name)


def check_entries(params):
    """:func:`check_entry` for every entry of ``params['config']`` as given (anything else is Ansible's)."""
    config = params.get('config')
    if isinstance(config, list):
        for index, item in enumerate(config):
            check_entry(index, item)


def desired_state(item, state):
    """The validated, normalised monitor one ``config`` entry asks for."""
    replacing = state in REPLACING_STATES
    desired = MONITOR_SCHEMA.checked(item, base=MONITOR_SCHEMA.reset_values() if replacing else None)
    for name in REQUIRED_WHEN_REPLACING if replacing else ():
        if desired.get(name) is None:
            raise ValidationError(name, 'is required with state=%s (the monitor is set to exactly the entry, '
                                        'and %s have no default)' % (state, ', '.join(REQUIRED_WHEN_REPLACING)))
    return desired


def validate_config(state, config, zone=None):
    """The desired state of every entry (None with state=deleted), checked before any request.

    With ``zone``, times given without an offset then become the instants they
    mean in the account's zone (read from the service if it must be, once).
    """
    wanted = []
    listed = {}
    for index, item in enumerate(config):
        check_entry(index, {option: value for option, value in item.items() if value is not None})
        name = to_text(item.get('name'))
        if name in listed:
            raise ValidationError('config[%d].name' % index, 'monitor %r is listed twice (also at config[%d])'
                                  % (name, listed[name]))
        listed[name] = index
        if state == 'deleted':
            wanted.append(None)
            continue
        try:
            desired = desired_state(item, state)
        except ValidationError as exc:
            raise _prefixed(exc, index, name)
        wanted.append(desired)
    if zone is None or state == 'deleted':
        return wanted
    localised = []
    for index, (item, desired) in enumerate(zip(config, wanted)):
        try:
            desired = MONITOR_SCHEMA.localised(item, desired, zone)
            MONITOR_SCHEMA.check_order(desired)
        except ValidationError as exc:
            raise _prefixed(exc, index, to_text(item.get('name')))
        localised.append(desired)
    return localised


def _refuse_names_in_other_case(names, matcher):
    """Refuse an entry to be created beside a monitor whose name differs only in case and that no entry names.

    Names are matched exactly, so the entry would be created: a service that
    compares names without case refuses it, and with replaced or overridden
    the other monitor would be deleted, its incidents with it.
    """
    listed = set(names)
    for index, name in enumerate(names):
        if matcher.has_exact(name):
            continue
        for record in matcher.in_other_case(name):
            if to_text(record.get('name')) not in listed:
                raise ValidationError('config[%d].name' % index, 'monitor %r differs only in case from monitor %r '
                                      '(id %s), which config does not list: names are matched exactly, so this would '
                                      'create another monitor beside it; write the name as the service holds it, '
                                      'or rename that monitor first' % (name, record.get('name'), record_id(record)))


def plan(state, config, records, wanted=None, zone=None, left_out=None):
    """Every action of the sync, computed from one read of the account and no request.

    ``wanted`` is what :func:`validate_config` returned for ``config``. A
    masked secret that no stored one answers for fails the sync before any
    write; given a list as ``left_out``, it is left out instead and told there
    (:func:`leaving_out`).
    """
    if wanted is None:
        wanted = validate_config(state, config, zone)
    names = [to_text(item.get('name')) for item in config]
    matcher = NameMatcher().add(records)
    if state != 'deleted':
        _refuse_names_in_other_case(names, matcher)
    planner = Engine(MONITOR_RESOURCE, None, check_mode=True, zone=zone)
    actions, unresolved = [], []
    for index, (name, desired) in enumerate(zip(names, wanted)):
        record = matcher.find(name)
        if state == 'deleted':
            actions.append(Action('delete' if record is not None else 'none', name, record=record))
            continue
        try:
            try:
                outcome = planner.update(record, desired) if record is not None else planner.create(desired)
            except UnresolvedMaskError as exc:
                if left_out is None:
                    raise
                desired, told = leaving_out(name, desired, record, exc.problems)
                left_out.extend(told)
                if desired is None:
                    continue
                outcome = planner.update(record, desired) if record is not None else planner.create(desired)
        except UnresolvedMaskError as exc:
            # Every masked secret that cannot be kept is named at once, before any write.
            unresolved.extend(('config[%d].%s' % (index, where), message) for where, message in exc.problems)
            continue
        except ValidationError as exc:
            raise _prefixed(exc, index, name)
        kind = 'create' if record is None else ('update' if outcome.changed else 'none')
        actions.append(Action(kind, name, record=record, desired=desired, outcome=outcome))
    if unresolved:
        raise UnresolvedMaskError(unresolved)
    if state == 'overridden':
        for record in matcher.unmatched(records):
            actions.append(Action('delete', record.get('name'), record=record))
    return actions


def leaving_out(name, desired, record, problems):
    """``desired`` without the masked secrets of ``problems`` that nothing stored answers for, and what was left out,
    each ``{name, option, key}`` (``key``: of an item of a list; ``option`` None: the whole monitor, which is not
    created when its ``url`` is masked). None as ``desired`` when nothing is left to apply."""
    if record is None and any(problem.field == 'url' for problem in problems):
        return None, [dict(name=name, option=None, key=None)]
    kept, whole, dropped = MONITOR_SCHEMA.leaving_out(desired, problems, MONITOR_SCHEMA.current(record) if record is not None else None)
    told = [(option, None) for option in whole] + dropped
    order = [field.name for field in MONITOR_SCHEMA.fields]
    return kept, [dict(name=name, option=option, key=None if index is None else desired[option][index]['key'])
                  for option, index in sorted(told, key=lambda part: (order.index(part[0]), part[1] or 0))]


class MonitorSync:
    """The whole task of the ``monitors`` module."""

    def __init__(self, client, new_client, check_mode=False, workers=4, gate=None, zone=None):
        self.client = client
        self.zone = zone or account_zone(client)
        self.new_client = new_client
        self.check_mode = check_mode
        self.workers = workers
        self.gate = gate or RateGate()
        self.worker_clients = []
        self._lock = threading.Lock()
        self._local = threading.local()
        self._stop = threading.Event()

    # -- reading ------------------------------------------------------------

    def read_all(self):
        return MONITOR_RESOURCE.read_all(self.client)

    # -- writing ------------------------------------------------------------

    def _engine(self):
        engine = getattr(self._local, 'engine', None)
        if engine is None:
            client = self.new_client(self.gate.sleep)
            with self._lock:
                self.worker_clients.append(client)
            engine = self._local.engine = Engine(MONITOR_RESOURCE, client, zone=self.zone)
        return engine

    def _apply(self, action):
        self.gate.wait()
        if self._stop.is_set():
            return
        engine = self._engine()
        action.attempted = True
        try:
            if action.kind == 'delete':
                engine.delete(action.record)
            elif action.kind == 'create':
                outcome = engine.create(action.desired)
                action.after, action.after_record = outcome.after, outcome.record
            else:
                outcome = engine.update(action.record, action.desired)
                action.after, action.after_record = outcome.after, outcome.record
        except FAILURES as exc:
            error = exc.error if isinstance(exc, WrittenBeforeFailure) else exc
            action.error = engine.client.redact(str(exc))
            action.transient = rerun_may_finish(error)
            action.ambiguous = isinstance(error, UptimeApiError) and bool(error.ambiguous)
            if isinstance(exc, WrittenBeforeFailure):
                action.wrote = True
                action.after, action.after_record = exc.written.after, exc.written.record
            if isinstance(error, UptimeApiError) and (error.status in FATAL_STATUSES or (error.status is None and not error.ambiguous)):
                self._stop.set()

    def apply(self, actions):
        """Send the writes of ``actions`` with a bounded pool of workers."""
        pending = [action for action in actions if action.writes]
        if not pending:
            return
        workers = max(1, min(self.workers, len(pending)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for dummy in pool.map(self._apply, pending):
                pass

    @property
    def request_count(self):
        return self.client.request_count + sum(client.request_count for client in self.worker_clients)

    # -- the task -------------------------------------------------------------

    def run(self, params):
        state = params['state']
        if not 1 <= params['workers'] <= MAX_WORKERS:
            raise ValidationError('workers', 'must be 1 to %d, got %s' % (MAX_WORKERS, params['workers']))
        leave_out = params.get('unresolved_masks') == 'leave_out'
        if leave_out and state in ('deleted', 'gathered'):
            raise ValidationError('unresolved_masks', 'leave_out is used only with state merged, replaced and '
                                                      'overridden (it tells what to do with masked secrets of config), '
                                                      'got state=%s' % state)
        if state == 'gathered':
            if params['config'] is not None:
                raise ValidationError('config', 'is not used with state=gathered (it reads every monitor)')
            return self.gather(params.get('reveal_secrets'))
        if params.get('reveal_secrets'):
            raise ValidationError('reveal_secrets', 'is used only with state=gathered (it reveals what the export '
                                                    'holds)')
        if state == 'overridden' and params['config'] == []:
            # What a lookup or filter that quietly yields nothing gives: never read as "delete the whole account".
            raise ValidationError('config', 'is empty with state=overridden, which would delete every monitor of the '
                                            'account; to delete them all on purpose, use state=deleted without config')
        if state == 'deleted' and params['config'] is None:
            return self.delete_all()
        if params['config'] is None:
            raise ValidationError('config', 'is required with state=%s' % state)
        # Every entry is checked before the account is read: bad input costs no request.
        wanted = validate_config(state, params['config'], self.zone)
        records = self.read_all()
        left_out = [] if leave_out else None
        actions = plan(state, params['config'], records, wanted, self.zone, left_out)
        if not self.check_mode:
            self.apply(actions)
        result = self.result(records, actions)
        if state != 'deleted':
            result['left_out'] = left_out or []
        return result

    def delete_all(self):
        """``state=deleted`` without ``config``: every monitor of the account, asked for in so many words."""
        records = self.read_all()
        # Every monitor of the account is one that an empty config of overridden does not list.
        actions = plan('overridden', [], records, wanted=[], zone=self.zone)
        if not self.check_mode:
            self.apply(actions)
        result = self.result(records, actions)
        if not result.get('failed'):
            count = result['summary']['deleted']
            result['msg'] = ('check mode: state=deleted without config would delete every monitor of the account: %d '
                             '(nothing was written)' % count if self.check_mode
                             else 'deleted every monitor of the account: %d' % count)
        return result

    def gather(self, reveal=False):
        records = sorted(self.read_all(), key=lambda record: (to_text(record.get('name')) or '', record_id(record)))
        gathered, masked = MONITOR_RESOURCE.export(records, reveal)
        return dict(changed=False, gathered=gathered, gathered_masked=masked, requests=self.request_count)

    def result(self, records, actions):
        views = {id(record): MONITOR_RESOURCE.record_view(record) for record in records}
        before = sorted(views.values(), key=_name_key)
        effective = [action for action in actions
                     if action.writes and (self.check_mode or action.effective)]
        for action in effective:
            key = id(action.record) if action.record is not None else id(action)
            if action.kind == 'delete':
                views.pop(key, None)
            else:
                views[key] = MONITOR_RESOURCE.view(action.after, action.after_record or action.record)
        failed = [action for action in actions if action.error]
        summary = dict(
            created=_count(effective, 'create'),
            updated=_count(effective, 'update'),
            deleted=_count(effective, 'delete'),
            unchanged=_count(actions, 'none'),
            failed=len(failed),
            not_attempted=0 if self.check_mode else len([a for a in actions if a.writes and not a.attempted]),
            total=len(views),
            requests=self.request_count,
            planned=self.check_mode,
        )
        reports = [action.report(self.check_mode) for action in actions if action.writes]
        diff_before, diff_after = {}, {}
        for action, entry in zip([a for a in actions if a.writes], reports):
            if action in effective:
                if action.kind != 'create':
                    diff_before[action.name] = entry['before']
                if action.kind != 'delete':
                    diff_after[action.name] = entry['after']
        result = dict(
            changed=bool(effective),
            before=before,
            summary=summary,
            changes=reports,
            diff=dict(before=diff_before, after=diff_after, before_header='monitors on the service',
                      after_header=PLANNED_HEADER if self.check_mode else 'monitors after the sync'),
        )
        if effective:
            # Only what changed costs a second copy of the account: a scheduled no-op run stays small.
            result['after'] = sorted(views.values(), key=_name_key)
        if failed or summary['not_attempted']:
            result['failed'] = True
            result['msg'] = _failure_message(actions, summary)
        return result


def _count(actions, kind):
    return len([action for action in actions if action.kind == kind])


def _name_key(view):
    return (view.get('name') is None, view.get('name') or '', view.get('id') or 0)


def rerun_may_finish(exc):
    """Whether running the task again, its input unchanged, may get past this failure of a write.

    A transient failure (429, a server error, a timeout, a lost answer) may not meet the next attempt, and a
    record gone meanwhile is planned anew from the next read; a refusal of what was sent comes back every time, and
    so does an answer that is not the service's (a wrong api_url, a proxy's page).
    """
    if not isinstance(exc, UptimeApiError) or exc.not_the_service:
        return False
    return bool(exc.transient or exc.ambiguous or exc.not_found)


# How many names a message lists of one kind; RV(changes) lists them all.
NAMES_IN_MESSAGE = 10


def _names(names):
    shown = ', '.join(repr(name) for name in names[:NAMES_IN_MESSAGE])
    more = len(names) - NAMES_IN_MESSAGE
    return shown + (' and %d more (see changes)' % more if more > 0 else '')


def _failure_message(actions, summary):
    """One reading of a sync that failed part-way: what it wrote, each failure, and whether a rerun can finish."""
    failed = [action for action in actions if action.error]
    written = [action for action in actions if action.writes and action.effective]
    done = ['%s %s' % (verb, _names([action.name for action in written if action.kind == kind]))
            for kind, verb in (('create', 'created'), ('update', 'updated'), ('delete', 'deleted'))
            if any(action.kind == kind for action in written)]
    lines = ['%d of %d writes failed%s; %s' % (
        len(failed), len([action for action in actions if action.writes]),
        ', %d not attempted after a failure every write would repeat' % summary['not_attempted']
        if summary['not_attempted'] else '',
        'written: ' + '; '.join(done) if done else
        'no write is known to be applied' if any(action.ambiguous for action in failed) else 'nothing was written')]
    for action in failed:
        kept = ''
        if action.wrote:
            kept = ' (the monitor was %s before this failure, id %s)' % (
                'created' if action.kind == 'create' else 'updated', record_id(action.after_record or {}))
        lines.append('%s %r: %s%s' % (action.kind, action.name, action.error, kept))
    stuck = [action.name for action in failed if not action.transient]
    if not stuck:
        lines.append('Every failure is transient (rate limit, server error, timeout or lost answer): running the task '
                     'again finishes the job.')
    elif len(stuck) == len(failed):
        lines.append('Running the task again as it is fails the same way: the input must change first, as %s says.'
                     % ('the failure' if len(failed) == 1 else 'each failure'))
    else:
        lines.append('Running the task again finishes the job only once the input of %s changes, as %s; the other '
                     'failures are transient.' % (_names(stuck), 'its failure says' if len(stuck) == 1
                                                  else 'their failures say'))
    return '\n'.join(lines)


def client_factory(params):
    """A function that opens one more client with the connection options, given how it should wait."""
    return lambda sleep: connect(params, sleep=sleep)
