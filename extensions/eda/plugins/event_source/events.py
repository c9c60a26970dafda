# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""uptime.monitoring.events: an ansible-rulebook event source for a phpUptime service.

It polls the service and puts one event on the queue per transition it sees:
an incident opened, acknowledged, resolved or deleted, and a monitor whose
status changed.

It talks to the service with the collection's own ``plugins/module_utils``
(connection options, client, paging, errors, masking, incident status), the
code the modules run: see :func:`_load_module_utils` for how it finds them.
What it knows between polls, the events a poll makes of it and the state file
are ``_event_tracker``'s; this file holds the arguments, the polls and the queue.
Their blocking calls run in a worker thread (``asyncio.to_thread``) so the
event loop of ansible-rulebook is never held.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import importlib
import importlib.machinery
import importlib.util
import logging
import math
import os
import random
import sys
import time

DOCUMENTATION = r"""
---
short_description: Poll a phpUptime service for incident and monitor status transitions.
description:
  - An ansible-rulebook event source that polls the C(/api/v1) API of a phpUptime service and sends one event per
    transition, an incident opened, acknowledged, resolved or deleted, or a monitor whose status changed.
  - Each poll reads the incidents and a few pages of the monitor list; it never spends the O(reserve) of the account's
    rate limit left to playbooks and people.
  - Each transition is sent once, with a C(meta.uuid) derived from it; the first poll records what the account looks
    like and sends nothing, unless O(catch_up) or O(emit_existing).
requirements:
  - ansible-rulebook
  - requests
options:
  api_url:
    description:
      - Base address of the service, for example C(https://uptime.example.com) (a trailing C(/api/v1) is accepted).
        An address with a user name or password before its host is refused (the API key is the only credential).
      - When not given, the environment variable E(UPTIME_API_URL) is used.
    type: str
  api_key:
    description:
      - "API key of the account, sent as C(Authorization: Bearer <api_key>). Never logged."
      - White space around it (a line break read from a file) is removed, as the modules do.
      - When not given, the environment variable E(UPTIME_API_KEY) is used.
    type: str
  validate_certs:
    description:
      - Verify the service's TLS certificate.
      - When not given, the environment variable E(UPTIME_VALIDATE_CERTS) is used, else V(true). Both take what
        Ansible's booleans take (V(true), V(yes), V(y), V(t), V(1) and their opposites).
    type: bool
  ca_path:
    description:
      - CA bundle used to verify the service's certificate.
    type: str
  timeout:
    description:
      - Seconds to wait for one request.
    type: float
    default: 30
  interval:
    description:
      - Seconds between two polls. An event reaches the rulebook at most O(interval) seconds (plus the time of one
        poll) after the transition.
    type: float
    default: 60
  watch:
    description:
      - What to watch.
    type: list
    elements: str
    choices: [incidents, monitors]
    default: [incidents, monitors]
  state_file:
    description:
      - A file where the source keeps what it knows after each poll, read again when it starts.
      - With it, a restarted source carries on where it stopped; the transitions that happened while it was
        stopped are sent as the polls find them (the incidents at the first poll, a pause when the sweep reaches its
        page), those within O(lookback) of the poll that finds them, and none is sent twice.
      - Without it, a restarted source starts with a new baseline (or with O(catch_up) or O(emit_existing)).
      - The file names its account by the account's id (read from the service as the source starts; where the
        service does not tell it, by a one-way fingerprint of O(api_url) and O(api_key), never the key). A new
        API key of the same account, given with the same file, carries on where the old one stopped.
      - A file written by an earlier version of this source is taken over (versions 2 to 5, which named the account
        by its key, when the key is the same).
      - A file of another api_url or account is ignored with a warning; the source starts as without it and
        overwrites it. A file that cannot be taken over otherwise (cut short, damaged, edited by hand, of version 1,
        of an earlier version with another key, or of a version this one does not know) is ignored with a warning,
        and the source catches up as with O(catch_up), whatever that option says. An empty file is taken for no file.
    type: path
  emit_existing:
    description:
      - When V(false), the first poll records a baseline and sends nothing.
      - When V(true), the first poll sends an event for every ongoing incident (opened, and acknowledged when it is)
        and every monitor that is not C(online). Their uuids are those of the live events, so with
        ansible-rulebook's persistence a restart sends again only what it had not handled.
      - Not used when O(state_file) holds the state of an earlier run.
    type: bool
    default: false
  catch_up:
    description:
      - What a start without a state to carry on from sends (no O(state_file), no file yet, or a file of another
        account), read from the service itself.
      - When V(true), each incident opened, acknowledged or resolved within O(lookback) before the first poll, and
        every monitor C(offline), C(paused) or in C(maintenance) (an offline one at the first poll, the others as the
        first sweep of the monitor list reads them). Each such event has C(found_on_start),
        and the uuid of the live event of the same transition, so that ansible-rulebook's persistence drops what a
        restart sends again.
      - When V(false), the first poll records a baseline and sends nothing (unless O(emit_existing)).
      - For an activation without storage (EDA), what a restart would otherwise lose; O(state_file) adds, where
        there is storage, what no catch-up can tell (a monitor resumed or out of maintenance, an incident deleted).
    type: bool
    default: false
    version_added: 1.1.0
  lookback:
    description:
      - Seconds before each poll, by the service's clock (the C(Date) of its answers), within which a transition is
        news. An older one is history and never sent, whatever the list holds, such as incidents recorded with past
        times (an import) or what happened long before a restart with O(state_file).
      - A larger value reads more incidents per poll (those resolved within it). At least O(sweep_period) plus
        O(interval), since a change the sweep of the monitor list finds may be that old.
    type: float
    default: 3600
  sweep_period:
    description:
      - Seconds in which the source reads the whole monitor list once, a few pages at each poll, to find the status
        changes that only the monitors show (pause, resume, maintenance).
      - A change of that kind is reported within about O(sweep_period) plus O(interval) of when it happened;
        offline and online changes are reported by the next poll anyway, from the incidents.
      - A shorter period costs more requests on a big account. At least O(interval).
    type: float
    default: 900
  reserve:
    description:
      - Requests of the account's rate limit (120 a minute) that the source leaves to playbooks and people. It never
        sends a request that the service's last C(X-RateLimit-Remaining) says would leave fewer.
      - When the account is that busy, the source reads less and later, and says so once.
      - V(0) lets the source use the whole limit. A reserve at or above the limit leaves it one request a minute.
    type: int
    default: 30
notes:
  - "The event, under the key C(uptime): C(type), C(kind), C(status), C(previous_status), C(at), C(monitor_id),
    C(monitor_name), C(incident_id), C(monitor) and C(incident) (as the info modules return them, secrets masked),
    C(existing), C(flapped), C(found_on_start), C(seen_at), C(late) and C(api_url). See
    L(docs/eda.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/eda.md#events)."
  - "Offline and online changes come with the incidents at the next poll; a pause, resume or maintenance within about
    O(sweep_period) plus O(interval). See L(docs/eda.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/eda.md#the-request-budget)."
  - With the defaults, the source sends about 2 requests a minute up to 1,500 monitors, and 8 for 10,000.
  - "A transition older than O(lookback) by the service's clock is never sent; one found after the fact is sent with
    C(late). See L(docs/eda.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/eda.md#the-past)."
  - "A refused key, a wrong O(api_url), a TLS failure or an invalid argument stops the source with one message; other
    failures are logged as warnings and polling goes on. See
    L(docs/eda.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/eda.md#errors)."
  - "The strings of an event are what the account's users typed, and a playbook started by ansible-rulebook evaluates
    its extra vars as templates: read only the ids there, as the playbook C(uptime.monitoring.acknowledge_incident)
    does."
  - At start the source logs the address it polls (never the key) at the WARNING level. Timestamps in events are UTC,
    C(Y-m-dTH:i:sZ).
  - The source needs the collection installed whole (it uses its C(plugins/module_utils)).
"""

EXAMPLES = r"""
- name: React to phpUptime incidents and monitors going offline
  hosts: all
  sources:
    - uptime.monitoring.events:
        api_url: https://uptime.example.com
        api_key: "{{ uptime_api_key }}"
        interval: 30
  rules:
    - name: A monitor went offline
      condition: event.uptime.type == "monitor_status_changed" and event.uptime.status == "offline"
      action:
        run_playbook:
          name: uptime.monitoring.acknowledge_incident

- name: Only incidents, with what is ongoing at start-up
  hosts: all
  sources:
    - uptime.monitoring.events:
        watch: [incidents]
        emit_existing: true
  rules:
    - name: Show opened incidents
      condition: event.uptime.type == "incident_opened"
      action:
        debug:
          msg: "Incident {{ event.uptime.incident_id }} on {{ event.uptime.monitor_name }}"
"""

LOGGER = logging.getLogger('uptime.monitoring.events')

MAX_BACKOFF = 300.0
# A Retry-After of 0 (or an HTTP date already past) would poll again at once, again and again.
LEAST_RETRY_AFTER = 1.0
WATCH_CHOICES = ('incidents', 'monitors')
# The connection options, read and checked by the collection's own code; the others are this source's.
CONNECTION_NAMES = ('api_url', 'api_key', 'validate_certs', 'ca_path', 'timeout')
OPTIONS = CONNECTION_NAMES + ('interval', 'watch', 'state_file', 'emit_existing', 'catch_up', 'lookback', 'sweep_period',
                              'reserve')
# Incidents that were ongoing and left the list are read one by one, at most this many a poll: the others wait
# for the next polls, so that many at once (a bulk delete) cannot spend the account's whole request budget.
VANISHED_READS_PER_POLL = 20
REINSTALL_HINT = 'install the collection again (ansible-galaxy collection install --force uptime.monitoring)'

# The pause between polls (a name of its own so that the tests can watch it).
_sleep = asyncio.sleep


class SourceError(Exception):
    """A problem that polling again cannot fix: the source stops with this message."""


# -- the collection's module_utils ---------------------------------------------------------------


def _load_module_utils(source_file):
    """The collection's ``plugins/module_utils`` beside ``source_file``: ``(modules by name, None)`` or ``(None, why)``.

    ansible-rulebook loads a source with ``runpy.run_path`` and puts nothing on
    ``sys.path``, so ``import ansible_collections.uptime.monitoring...`` would
    find the collection only by chance, and maybe another copy of it (one in
    site-packages, an older version, a regular package that shadows the rest).
    A private copy of the client in this file drifted from the modules. So the
    modules are loaded from the files of this very collection,
    ``<collection>/plugins/module_utils`` (this file is
    ``<collection>/extensions/eda/plugins/event_source/events.py``), as a
    package of a private name whose ``__path__`` is that directory alone; they
    import each other relatively, and none imports Ansible.
    """
    root = os.path.abspath(source_file)
    for dummy in range(5):  # events.py, event_source, plugins, eda, extensions
        root = os.path.dirname(root)
    directory = os.path.join(root, 'plugins', 'module_utils')
    if not os.path.isfile(os.path.join(directory, '_connection.py')):
        return None, ('the collection\'s plugins/module_utils is not beside this source (looked in %s): the '
                      'collection is installed incompletely; %s' % (directory, REINSTALL_HINT))
    # One name per directory: two copies of the collection loaded in one process never mix.
    name = '_uptime_monitoring_events_%s' % hashlib.sha256(directory.encode('utf-8', 'surrogateescape')).hexdigest()[:16]
    if name not in sys.modules:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [directory]
        sys.modules[name] = importlib.util.module_from_spec(spec)
    problem = None
    try:
        modules = {short: importlib.import_module('%s.%s' % (name, short))
                   for short in ('_client', '_schema', '_connection', '_monitor', '_incident', '_event_tracker')}
        if not modules['_client'].HAS_REQUESTS:
            problem = ('the Python library requests is required by uptime.monitoring.events: pip install requests '
                       '(or add it to the decision environment)')
    except Exception as exc:  # pylint: disable=broad-exception-caught
        problem = ('cannot load the collection\'s plugins/module_utils from %s (%s: %s): %s'
                   % (directory, exc.__class__.__name__, ' '.join(str(exc).split()), REINSTALL_HINT))
    if problem is not None:
        # Forgotten, so that a later load (once the cause is fixed) starts afresh.
        for loaded in [key for key in sys.modules if key == name or key.startswith(name + '.')]:
            del sys.modules[loaded]
        return None, problem
    return modules, None


_MODULE_UTILS, LOAD_ERROR = _load_module_utils(__file__)
if _MODULE_UTILS is not None:
    _client, _schema, _connection = _MODULE_UTILS['_client'], _MODULE_UTILS['_schema'], _MODULE_UTILS['_connection']
    MONITOR_RESOURCE, INCIDENT_RESOURCE = _MODULE_UTILS['_monitor'].MONITOR_RESOURCE, _MODULE_UTILS['_incident'].INCIDENT_RESOURCE
    UptimeApiError, ValidationError = _client.UptimeApiError, _schema.ValidationError
    UTC_FORMAT = _schema.UTC_FORMAT
    # What the source knows between polls, and the events a poll makes of it.
    _event_tracker = _MODULE_UTILS['_event_tracker']
    Tracker, load_state, save_state = _event_tracker.Tracker, _event_tracker.load_state, _event_tracker.save_state
    STATE_VERSION, StateFileError = _event_tracker.STATE_VERSION, _event_tracker.StateFileError
else:  # main() stops with LOAD_ERROR before anything below needs these
    _client = _schema = _connection = MONITOR_RESOURCE = INCIDENT_RESOURCE = UTC_FORMAT = None
    _event_tracker = Tracker = load_state = save_state = STATE_VERSION = None
    UptimeApiError = ValidationError = StateFileError = type('Unavailable', (Exception,), {})


# -- arguments ---------------------------------------------------------------


def _seconds(value, name, least=None, bound=None):
    """A number of seconds greater than 0 (or at least ``least``, which ``bound`` names)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float('nan')
    if not math.isfinite(seconds) or (seconds < least if least is not None else seconds <= 0):
        limit = 'at least %g%s' % (least, ' (%s)' % bound if bound else '') if least is not None else 'greater than 0'
        raise ValidationError(name, 'expected a number of seconds %s, got %r' % (limit, value))
    return seconds


def _count(value, name):
    """A whole number of 0 or more, in any form the modules take (30, '30', 30.0); never a boolean."""
    try:
        number = None if isinstance(value, bool) else _schema.to_int(value, name)
    except ValidationError:
        number = None
    if number is None or number < 0:
        raise ValidationError(name, 'expected a whole number of 0 or more, got %r' % (value,))
    return number


def _watch(value):
    if isinstance(value, str):
        value = [item.strip() for item in value.split(',') if item.strip()]
    if not isinstance(value, (list, tuple)) or not value or any(item not in WATCH_CHOICES for item in value):
        raise ValidationError('watch', 'expected a list of %s, got %r' % (' and '.join(WATCH_CHOICES), value))
    return tuple(item for item in WATCH_CHOICES if item in value)


def parse_args(args, environ=None):
    """The source's settings from its rulebook arguments; the connection's are read as the modules read theirs."""
    unknown = sorted(key for key in args if key not in OPTIONS and not str(key).startswith('eda_'))
    if unknown:
        raise SourceError('unknown argument(s) %s; the arguments are %s' % (', '.join(unknown), ', '.join(OPTIONS)))
    try:
        settings = _connection.connection_settings(args.get, names=CONNECTION_NAMES, environ=environ)
        settings.update(
            base_url=_client.normalise_base_url(settings['api_url']),
            interval=_seconds(args.get('interval', 60), 'interval'),
            watch=_watch(args.get('watch', list(WATCH_CHOICES))),
            emit_existing=bool(_schema.to_bool(args.get('emit_existing', False), 'emit_existing')),
            catch_up=bool(_schema.to_bool(args.get('catch_up', False), 'catch_up')),
            reserve=_count(args.get('reserve', 30), 'reserve'),
            state_file=os.path.expanduser(str(args['state_file'])) if args.get('state_file') else None,
        )
        settings['sweep_period'] = _seconds(args.get('sweep_period', 900), 'sweep_period', least=settings['interval'],
                                            bound='interval')
        # A change the sweep finds is up to sweep_period + interval old: a shorter lookback would never send it.
        settings['lookback'] = _seconds(args.get('lookback', 3600), 'lookback',
                                        least=settings['sweep_period'] + settings['interval'], bound='sweep_period + interval')
    except ValidationError as exc:
        raise SourceError('argument %s' % exc) from None
    settings['account'] = _connection.account_fingerprint(settings)
    return settings


# -- polling -----------------------------------------------------------------------


class Poller:
    """One poll: the incidents, then a few pages of the monitor list. The state changes only when a poll succeeds."""

    def __init__(self, settings, client=None):
        self.settings = settings
        # No retries inside a poll: a failed poll is polled again after a pause (main), which loses nothing.
        self.client = client or _connection.connect(settings, retries=0, reserve=settings['reserve'])
        # Known by its key until identify() reads who the account is.
        self.tracker = Tracker(settings['base_url'], settings['emit_existing'], settings['lookback'],
                               'key %s' % settings['account'], settings['account'], settings['catch_up'])
        # What the last poll left unread: held back by the reserve, or a page that failed (then retried next poll).
        self.held_back = False
        self.sweep_failure = None
        self.reserve_warned = False
        self.last_poll = None  # when the last sweep began (time.monotonic)
        self.page_credit = 0.0  # pages of the list due and not read yet
        self.page_read_at = time.monotonic()  # when the sweep last read a page

    def poll(self):
        """The events of one poll, oldest first (blocking: run it in a thread).

        Raises UptimeApiError for a failure a later poll may not meet
        (``transient``), SourceError for one that every poll would meet. A poll
        that fails leaves the tracker as it was: the next one finds the same
        transitions again.
        """
        before, page_read_at = self.tracker.to_state(), self.page_read_at
        try:
            return self._poll()
        except Exception as exc:
            # A page read by a poll that failed is read again: the sweep's turn is not spent.
            self.tracker.load_state(before)
            self.page_read_at = page_read_at
            if isinstance(exc, UptimeApiError) and not exc.transient:
                raise SourceError(refusal(exc)) from None
            raise

    def _poll(self):
        tracker, watch = self.tracker, self.settings['watch']
        self.held_back, self.sweep_failure = False, None
        observed_at = datetime.datetime.now(datetime.timezone.utc).strftime(UTC_FORMAT)
        # A sweep the reserve held back for a whole sweep_period reads a page before the incidents, so it moves on.
        starved = 'monitors' in watch and tracker.incidents is not None and \
            time.monotonic() - self.page_read_at >= self.settings['sweep_period']
        first_page = self._read_page() if starved else None
        # Read in full before the tracker learns anything: a failure here leaves it as it was.
        incidents, missing = self._read_incidents(spared=first_page is not None)
        tracker.begin_poll(observed_at, self.service_now())
        incident_events, monitor_events = tracker.incidents_read(incidents, missing, monitors='monitors' in watch)
        events = (incident_events if 'incidents' in watch else []) + monitor_events
        if 'monitors' in watch:
            events.extend(self._sweep(first_page))
        tracker.end_poll()
        return tracker.admitted(events)

    def identify(self):
        """Who the key reaches, as the state keeps it: the account's id, so that a new key of the same account carries
        on where the old one stopped; the key itself (its fingerprint) where the service does not tell (no account
        endpoint). Raises as poll() does."""
        try:
            account = self.client.get(_connection.ACCOUNT_PATH)
        except UptimeApiError as exc:
            if exc.status == 404:
                return 'key %s' % self.settings['account']
            if not exc.transient:
                raise SourceError(refusal(exc)) from None
            raise
        return 'account %s' % account['id'] if isinstance(account, dict) and account.get('id') is not None \
            else 'key %s' % self.settings['account']

    def resume(self, path):
        """Know whose account this is (identify), then take over the state file at ``path``: True when it carries on
        from it, False for a fresh start."""
        self.tracker.account = self.identify()
        return load_state(self.tracker, path)

    def service_now(self):
        """The service's clock, as the Date of its latest answer told it; this machine's when it told none."""
        date = self.client.service_date or datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        return date.strftime(UTC_FORMAT)

    def _read_incidents(self, spared=False):
        """Every ongoing incident and those resolved down to the floor, newest end first; then the vanished ones.

        The floor is ``lookback`` before the service's clock. When the reserve
        holds back a page after the first, the pages read are kept (the newest
        incidents) and the others wait for a poll with more requests to spare;
        no incident is then taken for deleted, since the list was not read to
        its end. ``spared``: this poll spent its share on the sweep; when the
        first page is held back, the incidents are not read (None) and wait.
        """
        tracker = self.tracker
        records, complete = [], True
        try:
            for page in INCIDENT_RESOURCE.pages_ended_since(self.client, lambda: tracker.floor(self.service_now())):
                records.extend(page)
        except UptimeApiError as exc:
            if not (exc.held_back and (records or spared) and tracker.incidents is not None):
                raise  # the first poll's incidents are the baseline: only a whole list will do
            self.held_back, complete = True, False
            if not records:
                return None, []
        missing = []
        read = {_schema.record_id(record) for record in records if isinstance(record, dict)}
        vanished = [incident_id for incident_id in tracker.ongoing_ids() if incident_id not in read] if complete else []
        if len(vanished) > VANISHED_READS_PER_POLL:
            LOGGER.info('%d incidents were ongoing and left the list: %d are read now, the others by the next polls',
                        len(vanished), VANISHED_READS_PER_POLL)
        for incident_id in vanished[:VANISHED_READS_PER_POLL]:
            # Ongoing at the last poll, not among the ongoing ones now, and no end above the floor: deleted, or
            # resolved with an end below it. One read tells.
            try:
                record = INCIDENT_RESOURCE.get(self.client, incident_id)
            except UptimeApiError as exc:
                if not exc.held_back:
                    raise
                self.held_back = True
                break  # the others stay ongoing in the tracker and are read by the next polls
            if record is None:
                missing.append(incident_id)
            else:
                records.append(record)
        return records, missing

    def _sweep(self, first_page=None):
        """The next pages of the monitor list, so that every page is read once in about ``sweep_period``.

        A page that cannot be read now ends the sweep of this poll: the next poll
        starts with it, so nothing is skipped, only seen later.
        """
        tracker, sweep = self.tracker, self.tracker.sweep
        pages = max(sweep['pages'] or 1, 1)
        # The share of the list for the time since the last sweep began, so that polls that take long, or a
        # backoff, do not stretch the sweep; the fraction of a page left over is carried to the next poll.
        now = time.monotonic()
        elapsed = max(now - self.last_poll, self.settings['interval']) if self.last_poll else self.settings['interval']
        self.last_poll = now
        self.page_credit += pages * elapsed / self.settings['sweep_period']
        share = min(pages, max(1, int(self.page_credit)))
        self.page_credit = max(0.0, self.page_credit - share)
        events = []
        for index in range(share):
            page = first_page if index == 0 and first_page is not None else self._read_page()
            if page is None:
                break
            records, last_page = page
            events.extend(tracker.monitor_events(records))
            last_page = last_page or max(sweep['pages'] or 1, sweep['page'] + (len(records) >= _client.PAGE_SIZE))
            sweep['pages'] = last_page
            if not records or sweep['page'] >= last_page:
                tracker.sweep_over()
                break
            sweep['page'] += 1
        return events

    def _read_page(self):
        """The sweep's next page, or None when it cannot be read now (held back, or failed: read again next poll)."""
        try:
            page = MONITOR_RESOURCE.read_page(self.client, self.tracker.sweep['page'])
        except UptimeApiError as exc:
            if not exc.transient:
                raise
            if exc.held_back:
                self.held_back = True
            else:
                self.sweep_failure = exc
            return None
        self.page_read_at = time.monotonic()
        return page


def refusal(exc):
    """The message of a failure every poll would meet; after a refused key, how to rotate one without losing events."""
    if exc.status == 401:
        return ('%s. To rotate the API key without losing events, start the source again with the new key of the same '
                'account and the same state_file: it carries on from where the old key stopped' % exc)
    return str(exc)


async def main(queue, args):
    """Poll the service forever and put one event per transition on ``queue``.

    Returns only by raising SourceError (the collection cannot be loaded, bad arguments, a refused key, no API
    access, a refused TLS handshake).
    """
    if LOAD_ERROR is not None:
        raise SourceError(LOAD_ERROR)
    settings = parse_args(args)
    poller = Poller(settings)
    for warning in poller.client.transport_warnings:
        LOGGER.warning(warning)
    interval = settings['interval']
    failures = 0
    while True:
        try:
            resumed = await asyncio.to_thread(poller.resume, settings['state_file'])
            break
        except UptimeApiError as exc:  # transient: identify() turns the others into SourceError
            failures += 1
            delay = max(exc.retry_after or 0, backoff(interval, failures))
            LOGGER.warning('%s; asking again in %.1fs who the account is (attempt %d failed)', exc, delay, failures)
            await _sleep(delay)
        except SourceError as exc:
            LOGGER.error('uptime.monitoring.events stops: %s', exc)
            raise
    if resumed:
        first_poll = 'carrying on from state_file %s' % settings['state_file']
    elif poller.tracker.catch_up or settings['emit_existing']:
        # What each sends on start, by what is watched.
        sent = {'incidents': ('every ongoing incident', 'each incident opened, acknowledged or resolved within lookback'),
                'monitors': ('every monitor that is not online', 'every monitor offline, paused or in maintenance')}
        first_poll = 'the first poll sends %s, found on start' % ' and '.join(
            sent[kind][poller.tracker.catch_up] for kind in settings['watch'])
    else:
        first_poll = 'the first poll records what is there and sends nothing'
    # ansible-rulebook shows a source's log lines only from WARNING up unless run with -v: this one tells, by
    # default, that the source runs, where it polls and how often (until the first event nothing else would).
    LOGGER.warning('polling %s every %gs for %s; %s', poller.client.redact(settings['base_url']), interval,
                   ' and '.join(settings['watch']), first_poll)
    failures, busy = 0, False
    while True:
        try:
            events = await asyncio.to_thread(poller.poll)
        except UptimeApiError as exc:  # transient: poll() turns the others into SourceError
            if exc.held_back:
                busy = tell_busy(poller, busy, True)
                await _sleep(max(exc.retry_after, LEAST_RETRY_AFTER))
                continue
            if exc.retry_after is not None:
                # Refused before any work, not a failure of the service: no longer pause than it asks.
                delay = max(exc.retry_after, LEAST_RETRY_AFTER)
                LOGGER.warning('%s; polling again in %.0fs as the service asks', exc, delay)
            else:
                failures += 1
                delay = backoff(interval, failures)
                LOGGER.warning('%s; polling again in %.1fs (attempt %d failed, nothing is lost: the next poll that '
                               'succeeds reports what happened meanwhile)', exc, delay, failures)
            await _sleep(delay)
            continue
        except SourceError as exc:
            LOGGER.error('uptime.monitoring.events stops: %s', exc)
            raise
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # A record this source cannot read, or a defect: stopping would lose every later transition.
            failures += 1
            delay = backoff(interval, failures)
            LOGGER.warning('a poll failed unexpectedly (%s: %s); polling again in %.1fs',
                           exc.__class__.__name__, poller.client.redact(exc), delay)
            await _sleep(delay)
            continue
        if failures:
            LOGGER.warning('polling %s works again after %d failed attempt(s)', poller.client.redact(settings['base_url']),
                           failures)
        failures = 0
        delay = interval
        if poller.sweep_failure is not None:
            delay = max(interval, poller.sweep_failure.retry_after or 0)
            LOGGER.warning('%s; the monitor list is read on from that page at the next poll, in %.0fs%s',
                           poller.sweep_failure, delay, ' as the service asks' if delay > interval else '')
        busy = tell_busy(poller, busy, poller.held_back)
        warn_reserve_above_limit(poller)
        for event in events:
            await queue.put(event)
        if settings['state_file']:
            # After the events are handed over: a crash in between sends them again, with the same uuids.
            try:
                save_state(poller.tracker, settings['state_file'])
            except StateFileError as exc:
                LOGGER.error('uptime.monitoring.events stops: %s', exc)
                raise SourceError(str(exc)) from None
        await _sleep(delay)


def tell_busy(poller, busy, held_back):
    """Say once when the reserve starts holding the source back, and once when it no longer does."""
    reserve = poller.settings['reserve']
    if held_back and not busy:
        LOGGER.warning('the account has %s requests left this minute and %d are kept for playbooks and people '
                       '(reserve): reading less until the service renews the count; nothing is lost, events come '
                       'later', poller.client.rate_limit.remaining, reserve)
    elif busy and not held_back:
        LOGGER.warning('the account has more requests to spare than the reserve of %d again: reading at full pace',
                       reserve)
    return held_back


def warn_reserve_above_limit(poller):
    """A reserve at or above the account's limit leaves the source one request a minute: say so, once."""
    limit, reserve = poller.client.rate_limit.limit, poller.settings['reserve']
    if limit is not None and reserve >= limit and not poller.reserve_warned:
        poller.reserve_warned = True
        LOGGER.warning('reserve %d is not below the account\'s limit of %d requests a minute: the source sends one '
                       'request each time the count is renewed, for the incidents; the monitor list (pause, resume, '
                       'maintenance) is not read', reserve, limit)


def backoff(interval, failures):
    """The pause after ``failures`` failed polls in a row: doubling from the interval, with jitter, capped."""
    ceiling = min(interval * (2 ** (failures - 1)), max(MAX_BACKOFF, interval))
    return random.uniform(ceiling * 0.8, ceiling)


if __name__ == '__main__':
    class _PrintQueue:
        async def put(self, event):
            print(event)

    logging.basicConfig(level=logging.INFO)
    asyncio.run(main(_PrintQueue(), {}))
