# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Declarative sync of many monitors: read the account once, plan in memory, write the differences.

The comparison is the one of the ``monitor`` module: every monitor of the plan
goes through :meth:`MonitorManager.ensure_present` of ``_monitor.py``, first
with a check-mode manager (the plan, no request), then, for the monitors that
differ, with one real manager per worker thread.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from ._client import UptimeApiError, UptimeClient
from ._monitor import (
    MONITOR,
    MONITORS_PATH,
    MonitorManager,
    public_view,
    public_view_of_options,
    to_module_args,
    validate_monitor,
)
from ._resource import ValidationError, diff_views, record_id

STATES = ['merged', 'replaced', 'overridden', 'deleted', 'gathered']
REPLACING_STATES = ('replaced', 'overridden')
CONNECTION_OPTIONS = ('api_url', 'api_key', 'validate_certs', 'ca_path', 'timeout', 'retries')
# One read of the whole account: the largest page the service serves, oldest first so
# that monitors created meanwhile land on the last page instead of shifting the others.
READ_QUERY = {'per_page': 100, 'sort_by': 'id', 'sort': 'asc'}
MAX_WORKERS = 32
# Failures that every further write would repeat: stop sending when one is seen.
FATAL_STATUSES = (401, 403)


def reset_value(field):
    """The value ``replaced`` gives a field the config leaves out: what a monitor created without it has.

    The service's create default when there is one, an empty list for lists,
    false for flags, otherwise no value (the field is cleared).
    """
    if field.create_default is not None:
        return field.create_default
    if field.kind == 'pairs':
        return []
    if field.kind == 'bool':
        return False
    return None


RESET_VALUES = {field.name: reset_value(field) for field in MONITOR.fields if not field.required_on_create}
REQUIRED_WHEN_REPLACING = [field.name for field in MONITOR.fields if field.required_on_create]


def config_argument_spec():
    """The suboptions of ``config``: the options of the ``monitor`` module, name required."""
    spec = MONITOR.argument_spec()
    spec['name'] = dict(spec['name'], required=True)
    return spec


MONITORS_ARGSPEC = dict(
    config=dict(type='list', elements='dict', options=config_argument_spec()),
    state=dict(type='str', default='merged', choices=STATES),
    workers=dict(type='int', default=4),
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

    def __init__(self, kind, name, record=None, desired=None, before=None, after=None, changed_keys=()):
        self.kind = kind  # create, update, delete or none
        self.name = name
        self.record = record
        self.desired = desired
        self.before = before
        self.after = after
        self.changed_keys = list(changed_keys)
        self.after_record = None
        self.error = None
        self.attempted = False

    @property
    def writes(self):
        return self.kind != 'none'

    @property
    def done(self):
        return self.attempted and self.error is None

    def report(self, check_mode):
        names = ['name'] + [key for key in self.changed_keys if key != 'name']
        before, after = diff_views(MONITOR, self.before, self.after, names)
        entry = dict(name=self.name, action=self.kind, changed_keys=self.changed_keys, before=before, after=after)
        record = self.after_record or self.record
        entry['id'] = record_id(record) if record is not None else None
        if not check_mode:
            entry['status'] = 'failed' if self.error else ('done' if self.attempted else 'not attempted')
        if self.error:
            entry['msg'] = self.error
        return entry


def _changed_keys(before, after):
    return [field.name for field in MONITOR.fields
            if field.comparable(before.get(field.name)) != field.comparable(after.get(field.name))]


def _prefixed(exc, index, name):
    message = str(exc)[len(exc.field) + 2:]
    where = ' (monitor %r)' % name if name else ''
    return ValidationError('config[%d].%s' % (index, exc.field), message + where)


def desired_state(item, state):
    """The validated, normalised monitor one ``config`` entry asks for."""
    desired = MONITOR.desired(item)
    if state in REPLACING_STATES:
        for name in REQUIRED_WHEN_REPLACING:
            if desired.get(name) is None:
                raise ValidationError(name, 'is required with state=%s (the monitor is set to exactly the entry, '
                                            'and %s have no default)' % (state, ', '.join(REQUIRED_WHEN_REPLACING)))
        desired = dict(RESET_VALUES, **desired)
    validate_monitor(desired, item)
    return desired


class RecordMatcher:
    """The monitor of each config name, as ``MonitorManager.find_by_name`` finds it.

    The exact name wins; failing that, a monitor whose name differs only in
    case and is not listed under its own name (a service on a case-insensitive
    database holds such names unique). Each monitor matches one entry at most.
    """

    def __init__(self, records, names):
        self.exact = {}
        for record in records:
            self.exact.setdefault(record.get('name'), record)
        listed = set(names)
        self.folded = {}
        for record in records:
            if record.get('name') not in listed:
                self.folded.setdefault(_folded(record.get('name')), record)
        self.matched = set()

    def find(self, name):
        record = self.exact.get(name)
        if record is None:
            record = self.folded.pop(_folded(name), None)
        if record is not None:
            self.matched.add(id(record))
        return record

    def unmatched(self, records):
        return [record for record in records if id(record) not in self.matched]


def _folded(name):
    return str(name if name is not None else '').casefold()


def validate_config(state, config, hide=lambda values: None):
    """The desired state of every entry (None with state=deleted), checked before any request."""
    wanted = []
    listed = {}
    for index, item in enumerate(config):
        name = item.get('name')
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
        hide(MONITOR.secret_values(desired))
        wanted.append(desired)
    return wanted


def plan(state, config, records, hide=lambda values: None, wanted=None):
    """Every action of the sync, computed from one read of the account and no request.

    ``wanted`` is what :func:`validate_config` returned for ``config``.
    """
    if wanted is None:
        wanted = validate_config(state, config, hide)
    matcher = RecordMatcher(records, [item.get('name') for item in config])
    planner = MonitorManager(None, check_mode=True)
    actions = []
    for index, (item, desired) in enumerate(zip(config, wanted)):
        name = item.get('name')
        record = matcher.find(name)
        if record is not None:
            hide(MONITOR.secret_values(MONITOR.current(record)))
        if state == 'deleted':
            kind = 'delete' if record is not None else 'none'
            current = MONITOR.current(record) if record is not None else None
            actions.append(Action(kind, name, record=record, before=current))
            continue
        try:
            changed, before, after, dummy = planner.ensure_present(desired, record=record, found=True)
        except ValidationError as exc:
            raise _prefixed(exc, index, name)
        if record is None:
            kind, keys = 'create', [key for key in desired if desired[key] not in (None, [])]
        else:
            kind, keys = ('update' if changed else 'none'), _changed_keys(before, after)
        actions.append(Action(kind, name, record=record, desired=desired, before=before, after=after, changed_keys=keys))
    if state == 'overridden':
        for record in matcher.unmatched(records):
            hide(MONITOR.secret_values(MONITOR.current(record)))
            actions.append(Action('delete', record.get('name'), record=record, before=MONITOR.current(record)))
    return actions


class MonitorSync:
    """The whole task of the ``monitors`` module."""

    def __init__(self, client, new_client, check_mode=False, workers=4, gate=None):
        self.client = client
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
        return self.client.list(MONITORS_PATH, dict(READ_QUERY))

    # -- writing ------------------------------------------------------------

    def _manager(self):
        manager = getattr(self._local, 'manager', None)
        if manager is None:
            client = self.new_client(self.gate.sleep)
            with self._lock:
                self.worker_clients.append(client)
            manager = self._local.manager = MonitorManager(client)
        return manager

    def _apply(self, action):
        self.gate.wait()
        if self._stop.is_set():
            return
        manager = self._manager()
        action.attempted = True
        try:
            if action.kind == 'delete':
                manager.delete(action.record)
                action.after = None
            else:
                dummy, dummy, action.after, action.after_record = manager.ensure_present(
                    action.desired, record=action.record, found=True)
        except (UptimeApiError, ValidationError) as exc:
            action.error = manager.client.redact(str(exc))
            if isinstance(exc, UptimeApiError) and (exc.status in FATAL_STATUSES or
                                                    (exc.status is None and not exc.ambiguous)):
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

    def run(self, params, hide):
        state = params['state']
        if not 1 <= params['workers'] <= MAX_WORKERS:
            raise ValidationError('workers', 'must be 1 to %d, got %s' % (MAX_WORKERS, params['workers']))
        if state == 'gathered':
            if params['config'] is not None:
                raise ValidationError('config', 'is not used with state=gathered (it reads every monitor)')
            return self.gather()
        if params['config'] is None:
            raise ValidationError('config', 'is required with state=%s' % state)
        # Every entry is checked before the account is read: bad input costs no request.
        wanted = validate_config(state, params['config'], hide)
        records = self.read_all()
        actions = plan(state, params['config'], records, hide, wanted)
        if not self.check_mode:
            self.apply(actions)
        return self.result(records, actions)

    def gather(self):
        views = sorted((public_view(record) for record in self.read_all()), key=_name_key)
        gathered, omitted = [], {}
        for view in views:
            args, left_out = to_module_args(view)
            gathered.append(args)
            if left_out:
                omitted[view['name']] = left_out
        return dict(changed=False, gathered=gathered, gathered_omitted=omitted, requests=self.request_count)

    def result(self, records, actions):
        views = {id(record): public_view(record) for record in records}
        before = sorted(views.values(), key=_name_key)
        effective = [action for action in actions
                     if action.writes and (self.check_mode or action.done)]
        for action in effective:
            key = id(action.record) if action.record is not None else id(action)
            if action.kind == 'delete':
                views.pop(key, None)
            else:
                views[key] = public_view_of_options(action.after, action.after_record or action.record)
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
            after=sorted(views.values(), key=_name_key),
            summary=summary,
            changes=reports,
            diff=dict(before=diff_before, after=diff_after),
        )
        if failed or summary['not_attempted']:
            result['failed'] = True
            result['msg'] = _failure_message(failed, summary)
        return result


def _count(actions, kind):
    return len([action for action in actions if action.kind == kind])


def _name_key(view):
    return (view.get('name') is None, view.get('name') or '', view.get('id') or 0)


def _failure_message(failed, summary):
    done = summary['created'] + summary['updated'] + summary['deleted']
    lines = ['%d of %d writes failed (%d done%s); running the task again finishes the job:'
             % (len(failed), done + len(failed) + summary['not_attempted'], done,
                ', %d not attempted after a failure every write would repeat' % summary['not_attempted']
                if summary['not_attempted'] else '')]
    lines.extend('%s %r: %s' % (action.kind, action.name, action.error) for action in failed)
    return '\n'.join(lines)


def client_factory(params):
    """A function that opens one more client with the connection options, given how it should wait."""
    options = {name: params[name] for name in CONNECTION_OPTIONS}
    return lambda sleep: UptimeClient(sleep=sleep, **options)
