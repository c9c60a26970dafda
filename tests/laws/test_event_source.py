# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The law of the event source (docs/eda.md, "Events", "The past", "Restarts", "Limits"): for any sequence of changes
between polls (monitors created, renamed, deleted, paused, resumed, going offline and online; incidents opened,
acknowledged, resolved, deleted, recorded after the fact), the events of a poll are exactly the transitions docs/eda.md
defines, each once (no uuid twice), oldest first, those found after the fact flagged late and none older than lookback;
a restart on the state file (one run of main()) repeats none and misses none; another source started on the same
account at any time gives each transition it sends the uuid this one gave it; no secret is in an event. Each change
moves the service's clock a second on: the service's timestamps have a resolution of one second."""

from __future__ import annotations

import asyncio
import datetime
import functools
import itertools
import json
import logging
import os
import runpy
import sys
import urllib.parse

from hypothesis import example, given, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

from emulator.control import PRIMARY_KEY
from state_versions import EARLIER_SHAPES, written_by
from laws import ago, budget, fresh
from strategies import ISSUE_35_URL, MARKED_SECRETS as SECRETS, EVENT_NAMES as NAMES, SECRET_URLS as URLS
import strategies as gen

SOURCE_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                           'extensions', 'eda', 'plugins', 'event_source', 'events.py')


def load_source():
    """The source's globals, run as ansible-rulebook runs the file (not imported through the collection loader)."""
    sys.path_importer_cache[SOURCE_PATH] = None
    return runpy.run_path(SOURCE_PATH)


def assert_no_secret(events, secrets):
    text = events if isinstance(events, str) else json.dumps(events, ensure_ascii=False)
    for secret in secrets:
        assert secret not in text, secret
        assert urllib.parse.quote(secret, safe='') not in text, secret


async def _stop(seconds):
    raise asyncio.CancelledError(seconds)


def run_main_once(source, args):
    """One run of main(): it reads the state file, polls, hands the events over, writes the state; its sleep stops it."""
    queue, source['main'].__globals__['_sleep'] = asyncio.Queue(), _stop
    try:
        asyncio.run(source['main'](queue, args))
    except asyncio.CancelledError:
        pass
    return [queue.get_nowait() for dummy in range(queue.qsize())]


RUNS = itertools.count()
LOOKBACK = 3600  # the source's default
RANK = {None: -1, 'unresolved': 0, 'acknowledged': 1, 'resolved': 2}
TRANSITIONS = (('opened', 'unresolved'), ('acknowledged', 'acknowledged'), ('resolved', 'resolved'))


class EventSourceMachine(RuleBasedStateMachine):
    """The service (the emulator) and a model of it: ``model``, monitor id -> name, status, epoch (its status changes
    so far), step (of the last one); ``incident``, id -> monitor, status, steps (transition -> step); ``seen``, what
    the source saw at its last poll ({monitor id: (status, epoch)}, {incident id: status}), None before the first."""

    emulator = tmp_dir = None  # set by the test

    def __init__(self):
        super().__init__()
        fresh(self.emulator)
        self.emulator.rate_limit(0)
        self.source, self.model, self.incident = load_source(), {}, {}
        self.clock = self.step = self.last_incident = self.polled = 0
        self.state_file = os.path.join(self.tmp_dir, 'state-%d.json' % next(RUNS))
        self.args = {'api_url': self.emulator.url, 'api_key': PRIMARY_KEY, 'interval': 1, 'sweep_period': 1,
                     'reserve': 0, 'state_file': self.state_file}
        self.seen, self.uuids, self.secrets, self.checked, self.unreadable = None, set(), {PRIMARY_KEY}, True, None
        self.poller, self.other_source = self.new_poller(), None
        self.create('first', '\u00a7first', (ISSUE_35_URL, ('Sup3rS3cret', 'K3Y')))  # issue 35, item 10

    def new_poller(self):
        poller = self.source['Poller'](self.source['parse_args'](dict(self.args), environ={}))
        poller.resume(self.state_file)  # as main() does
        return poller

    def tick(self):
        """A second later on the service's clock: each change has a time of its own."""
        self.clock, self.step = self.clock + 1, self.step + 1
        self.emulator.clock(self.clock)

    def api(self, method, path, **data):
        answer = self.emulator.api(method, path, data=data or None)
        assert answer.status in (200, 201, 204), answer.text
        return answer

    def set_status(self, monitor_id, status):
        monitor = self.model[monitor_id]
        if monitor['status'] != status:
            monitor.update(status=status, epoch=monitor['epoch'] + 1, step=self.step)

    def ongoing(self, monitor_id=None):
        return [key for key, value in self.incident.items()
                if monitor_id in (None, value['monitor']) and value['status'] != 'resolved']

    def monitors(self, paused=None, without_incident=False):
        busy = {value['monitor'] for value in self.incident.values()} if without_incident else ()
        return sorted(key for key, value in self.model.items()
                      if paused in (None, value['status'] == 'paused') and key not in busy)

    # -- the changes ---------------------------------------------------------------------------------------------

    @rule(name=NAMES, password=SECRETS, url=URLS)
    def create(self, name, password, url):
        self.tick()
        name = '%s-%d' % (name, self.step)
        self.secrets.update((password,) + url[1])
        answer = self.api('POST', '/api/v1/monitors', name=name, url=url[0], interval=60, request_method='GET',
                          alert_condition='url_unavailable', request_auth_username='bob', request_auth_password=password)
        self.model[answer.json['data']['id']] = {'name': name, 'status': 'pending', 'epoch': 0, 'step': self.step}

    @precondition(monitors)
    @rule(data=st.data(), name=NAMES, delete=st.sampled_from([False, False, True]))
    def rename_or_delete(self, data, name, delete):
        monitor = data.draw(st.sampled_from(self.monitors()))
        self.tick()
        if not delete:
            self.model[monitor]['name'] = '%s-%d' % (name, self.step)
            self.api('PUT', '/api/v1/monitors/%d' % monitor, name=self.model[monitor]['name'])
            return
        self.api('DELETE', '/api/v1/monitors/%d' % monitor)  # its incidents with it
        del self.model[monitor]
        self.incident = {key: value for key, value in self.incident.items() if value['monitor'] != monitor}

    @precondition(monitors)
    @rule(data=st.data())
    def pause_or_resume(self, data):
        monitor = data.draw(st.sampled_from(self.monitors()))
        self.tick()
        pause = self.model[monitor]['status'] != 'paused'
        self.api('PUT', '/api/v1/monitors/%d' % monitor, pause=int(pause))
        self.set_status(monitor, 'paused' if pause else 'offline' if self.ongoing(monitor) else 'online')

    @precondition(lambda self: self.monitors(paused=False))
    @rule(data=st.data(), status=st.sampled_from(['offline', 'offline', 'online']))
    def check(self, data, status):
        """The service's checker: going offline opens an incident, coming online ends it."""
        candidates = self.monitors(paused=False)
        monitor = data.draw(st.sampled_from(candidates) | st.just(candidates[-1]))  # often the newest: not polled yet
        self.tick()
        self.emulator.check(monitor, status)
        flipped, ongoing = self.model[monitor]['status'] != status, self.ongoing(monitor)
        self.set_status(monitor, status)
        if flipped and status == 'online' and ongoing:
            self.incident[ongoing[0]].update(status='resolved')
            self.incident[ongoing[0]]['steps']['resolved'] = self.step
        if flipped and status == 'offline' and not ongoing:
            self.last_incident += 1
            self.incident[self.last_incident] = {'monitor': monitor, 'status': 'unresolved', 'steps': {'opened': self.step}}

    @precondition(ongoing)
    @rule(data=st.data(), resolve=st.booleans())
    def acknowledge_or_resolve(self, data, resolve):
        incident = data.draw(st.sampled_from(sorted(self.ongoing())))
        record = self.incident[incident]
        resolve = resolve or record['status'] == 'acknowledged'
        self.tick()
        now = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=self.clock)).strftime('%Y-%m-%dT%H:%M:%S')
        self.api('PUT', '/api/v1/incidents/%d' % incident, **{'ended_at' if resolve else 'acknowledged_at': now})
        record['status'] = 'resolved' if resolve else 'acknowledged'
        record['steps'][record['status']] = self.step
        if resolve and self.model[record['monitor']]['status'] != 'paused':
            self.set_status(record['monitor'], 'online')

    @precondition(lambda self: self.monitors(without_incident=True))
    @rule(data=st.data(), seconds_ago=st.sampled_from([1200, 3900, 2 * 3600, 300 * 86400]))
    def record_history(self, data, seconds_ago):
        """An incident of the past recorded as import_account does (10 minutes long): a transition older than lookback
        (an hour) is history and never sent (3900: its start, not its end); within it, it is sent, late."""
        monitor = data.draw(st.sampled_from(self.monitors(without_incident=True)))
        self.tick()
        started = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=self.clock - seconds_ago)
        answer = self.api('POST', '/api/v1/incidents', monitor_id=monitor, started_at=started.strftime('%Y-%m-%dT%H:%M:%S'),
                          ended_at=(started + datetime.timedelta(minutes=10)).strftime('%Y-%m-%dT%H:%M:%S'))
        # Sorted with the others by time: a step is a second of the service's clock.
        steps = {'opened': self.step - seconds_ago, 'resolved': self.step - seconds_ago + 600}
        self.last_incident = answer.json['data']['id']  # the checker's next incident comes after it
        self.incident[self.last_incident] = {'monitor': monitor, 'status': 'resolved', 'steps': steps}

    @precondition(lambda self: self.incident and self.unreadable is None)
    @rule(data=st.data(), field=st.sampled_from([('started_at', 'soon'), ('ended_at', []), ('monitor', {'id': 'x'})]))
    def unreadable(self, data, field):
        """The next poll's incident list holds one incident the source cannot read: its transitions wait for a poll
        that can read it (then late), the others are sent."""
        self.unreadable = data.draw(st.sampled_from(sorted(self.incident)))
        self.other_source = None  # the fault meets one of the two: they would send its transitions at different polls
        self.emulator.fault('record', method='GET', path='/api/v1/incidents', record=self.unreadable, set=dict([field]))

    @precondition(lambda self: self.incident)
    @rule(data=st.data())
    def delete_incident(self, data):
        incident = data.draw(st.sampled_from(sorted(self.incident)))
        record = self.incident.pop(incident)
        self.tick()
        self.api('DELETE', '/api/v1/incidents/%d' % incident)
        if record['status'] != 'resolved':  # its monitor goes back to pending, a paused one too: the pause is lost
            self.set_status(record['monitor'], 'pending')

    # -- the source ----------------------------------------------------------------------------------------------

    @precondition(lambda self: self.step > self.polled)
    @rule(restart=st.sampled_from([False, False, True]))
    def poll(self, restart=False):
        """A poll of the running source, or a restart (one run of main() on the state file), a second after the last
        change: what it finds of the changes up to the previous poll was found after the fact."""
        self.tick()
        previous_poll, self.polled = self.polled, self.step
        if restart:
            events = run_main_once(self.source, self.args)
            self.poller = self.new_poller()
        else:
            events = self.poller.poll()
            self.source['save_state'](self.poller.tracker, self.state_file)  # as main() does after each poll
        with open(self.state_file, encoding='utf-8') as handle:
            assert_no_secret(handle.read(), self.secrets)  # the state file holds no secret
        self.compare(events, previous_poll)
        if self.other_source is not None:
            foreign = [event for event in self.other_source.poll() if event['meta']['uuid'] not in self.uuids]
            assert foreign == [], 'a transition sent by another source under a uuid of its own'

    @precondition(lambda self: self.other_source is None and self.unreadable is None)
    @rule()
    def start_other_source(self):
        """Another source (another rulebook, a second controller) starts on the account without a state file: what it
        sends from its first poll on, this source sent under the same uuid (docs/eda.md, "One transition, one uuid")."""
        self.other_source = self.source['Poller'](self.source['parse_args'](dict(self.args, state_file=None), environ={}))

    def teardown(self):
        if self.checked:  # what changed since the last poll is told too
            self.poll()

    def expected(self, previous_poll):
        """The transitions since the last poll as docs/eda.md defines them, oldest first: (type, id, previous, status,
        flapped, late). A deletion has the time it was noticed, by this machine's clock: those come last here, by id."""
        seen_monitors, seen_incidents = self.seen
        events = []
        for incident_id, record in self.incident.items():
            if incident_id == self.unreadable:
                continue
            previous = seen_incidents.get(incident_id)
            for transition, status in TRANSITIONS:
                step = record['steps'].get(transition)
                if step is not None and RANK[status] > RANK[previous]:
                    if step < self.polled - LOOKBACK:  # history: not sent, but it is what the incident went through
                        previous = status
                        continue
                    events.append((step, False, 'incident_' + transition, incident_id, previous, status, False,
                                   step <= previous_poll))
                    previous = status
        events.extend((float('inf'), False, 'incident_deleted', incident_id, status, 'deleted', False, False)
                      for incident_id, status in seen_incidents.items()  # an ongoing one, with its monitor or alone
                      if incident_id not in self.incident and status != 'resolved')
        for monitor_id, monitor in self.model.items():
            status, epoch = seen_monitors.get(monitor_id, (None, None))
            if epoch is not None and epoch != monitor['epoch']:  # changed; to the same status again: a flap
                events.append((monitor['step'], True, 'monitor_status_changed', monitor_id, status, monitor['status'],
                               status == monitor['status'], False))
            elif epoch is None and monitor['status'] == 'paused':
                # New since the last poll, in a status only the sweep shows; a first online or offline is no change.
                events.append((monitor['step'], True, 'monitor_status_changed', monitor_id, None, 'paused', False, False))
        return [event[2:] for event in sorted(events)]

    def compare(self, events, previous_poll):
        self.checked = False
        found = [(event['uptime']['type'], event['uptime']['incident_id'] or event['uptime']['monitor_id'],
                  event['uptime']['previous_status'], event['uptime']['status'], event['uptime']['flapped'],
                  event['uptime']['late'] and event['uptime']['kind'] == 'incident') for event in events]
        found = [item for item in found if item[0] != 'incident_deleted'] + sorted(item for item in found if item[0] == 'incident_deleted')
        assert found == ([] if self.seen is None else self.expected(previous_poll))
        for event in events:
            assert event['meta']['uuid'] not in self.uuids, 'sent twice: %r' % (event,)
            self.uuids.add(event['meta']['uuid'])
            if event['uptime']['type'] != 'incident_deleted':
                assert event['uptime']['monitor_name'] == self.model[event['uptime']['monitor_id']]['name']
        assert_no_secret(events, self.secrets)
        seen_before = {} if self.seen is None else self.seen[1]
        self.seen = ({key: (value['status'], value['epoch']) for key, value in self.model.items()},
                     {key: value['status'] for key, value in self.incident.items() if key != self.unreadable})
        if self.unreadable in seen_before and self.unreadable in self.incident:
            self.seen[1][self.unreadable] = seen_before[self.unreadable]
        self.unreadable = None
        self.checked = True


def test_the_events_are_the_transitions_each_once_across_restarts(emulator, tmp_path):
    EventSourceMachine.emulator, EventSourceMachine.tmp_dir = emulator, str(tmp_path)
    # A third of the profile's examples (33 in CI: 15 to 30 s; 333 with HYPOTHESIS_PROFILE=deep), up to 40 steps each.
    run_state_machine_as_test(EventSourceMachine, settings=settings(max_examples=settings.default.max_examples // 3,
                                                                    stateful_step_count=40))


@settings(max_examples=10)
@given(url=URLS, password=SECRETS, header=SECRETS, webhook=SECRETS)
@example(url=(ISSUE_35_URL, ('Sup3rS3cret', 'K3Y')), password='hunter2-secret', header='header-secret',
         webhook='discord-secret')  # issue 35, item 10, and the secrets the source masked before it
def test_no_secret_of_a_monitor_reaches_an_event(emulator_server, url, password, header, webhook):
    """Each secret a monitor holds is masked in every event that shows it, monitor and incident events alike."""
    source = load_source()
    (monitor_id,) = fresh(emulator_server, stored=[gen.record(dict(
        name='web', url=url[0], interval=60, request_auth_username='bob', request_auth_password=password,
        request_headers=[{'key': 'X-Api-Key', 'value': header}],
        alerts=[{'key': 'discord', 'value': 'https://discord.com/api/webhooks/1/' + urllib.parse.quote(webhook)}]))])
    poller = source['Poller'](source['parse_args']({'api_url': emulator_server.url, 'api_key': PRIMARY_KEY, 'emit_existing': True}, environ={}))
    events = poller.poll()
    emulator_server.check(monitor_id, 'offline')
    events += poller.poll()
    assert [event['uptime']['type'] for event in events] == ['monitor_status_changed', 'incident_opened', 'monitor_status_changed']
    assert_no_secret(events, (PRIMARY_KEY, password, header, webhook) + url[1])
    assert all('********@intranet.example.org' in event['uptime']['monitor']['url'] for event in events)


@budget(20)
@given(incidents=st.lists(st.tuples(st.sampled_from([120, 3900, 2 * 86400, 400 * 86400, 9 * 365 * 86400]), st.booleans()),
                          min_size=1, max_size=4),
       lookback=st.sampled_from([None, 960, 3600, 7 * 86400]), watch=st.sampled_from([None, ['incidents']]))
def test_emit_existing_sends_every_ongoing_incident_however_old(emulator_server, incidents, lookback, watch):
    """With emit_existing, the first poll sends every ongoing incident (opened, and acknowledged when it is), whatever
    its age against lookback: lookback bounds what is news, not what is ongoing (docs/eda.md, emit_existing)."""
    source = load_source()
    now = datetime.datetime.now(datetime.timezone.utc)

    def stamp(seconds):
        return (now - datetime.timedelta(seconds=seconds)).strftime('%Y-%m-%dT%H:%M:%S')

    monitors = [gen.record(dict(name='m%d' % index, url='https://m%d.example.com/' % index, interval=60))
                for index in range(len(incidents))]
    recorded = [dict({'monitor': 'm%d' % index, 'started_at': stamp(age), 'cause': 'HTTP 500'},
                     **({'acknowledged_at': stamp(age // 2)} if acknowledged else {}))
                for index, (age, acknowledged) in enumerate(incidents)]
    fresh(emulator_server, stored=monitors, incidents=recorded)
    args = dict({'api_url': emulator_server.url, 'api_key': PRIMARY_KEY, 'emit_existing': True},
                **{key: value for key, value in (('lookback', lookback), ('watch', watch)) if value is not None})
    events = source['Poller'](source['parse_args'](args, environ={})).poll()
    sent = sorted((event['uptime']['monitor_name'], event['uptime']['type']) for event in events if event['uptime']['kind'] == 'incident')
    expected = sorted([('m%d' % index, 'incident_opened') for index in range(len(incidents))]
                      + [('m%d' % index, 'incident_acknowledged') for index, (dummy, acknowledged) in enumerate(incidents) if acknowledged])
    assert sent == expected
    assert all(event['uptime']['existing'] for event in events)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2, 2) | st.floats(allow_nan=False) | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2), max_leaves=3)


def transitions(events):
    """What the events of a poll say happened, without when this machine saw it."""
    return sorted((event['meta']['uuid'], event['uptime']['type'], event['uptime']['status'], event['uptime']['previous_status'],
                   event['uptime']['existing'], event['uptime']['found_on_start']) for event in events)


def places(value, path=()):
    """Every place of a JSON document, as the keys and indexes that lead to it."""
    yield path
    for key, item in value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ():
        yield from places(item, path + (key,))


@budget(60)  # the shapes of seven versions, each damaged anywhere
@given(data=st.data())
def test_a_state_file_of_this_version_but_another_shape_is_a_fresh_start_with_a_warning(emulator_server, tmp_path_factory, caplog, data):
    """A damaged or hand-edited state file, of this version or an earlier one, never stops the source nor fails its
    polls (issue 44, item 8: a ValueError ended the rulebook, a KeyError failed every poll): it is taken, or ignored with one warning, as
    docs/eda.md says; then the first poll sends what a source started without it sends: a catch-up (issue 56), or a
    new baseline when the file names another service or account."""
    web, api = fresh(emulator_server, stored=[gen.record(gen.entry('web')), gen.record(gen.entry('api'))],
                     incidents=[{'monitor': 'web', 'started_at': ago(30)}, {'monitor': 'api', 'started_at': ago(20), 'ended_at': ago(10)}])
    args = {'api_url': emulator_server.url, 'api_key': PRIMARY_KEY, 'interval': 1, 'sweep_period': 1, 'reserve': 0,
            'state_file': str(tmp_path_factory.mktemp('state') / 'state.json')}
    source = load_source()
    poller = source['Poller'](source['parse_args'](dict(args), environ={}))
    poller.poll()
    source['save_state'](poller.tracker, args['state_file'])
    with open(args['state_file'], encoding='utf-8') as handle:
        state = json.load(handle)
    shape = data.draw(st.sampled_from(EARLIER_SHAPES + ('this version',)), label='written by')
    if shape != 'this version':  # as an earlier version wrote it, for this key (issue 56: migrated)
        state = written_by(state, shape, poller.tracker.key)
    place = data.draw(st.sampled_from(list(places(state))), label='place')
    damage = data.draw(st.just('removed') | JSON if place else JSON, label='damage')
    if not place:
        state = damage
    elif damage == 'removed':
        del functools.reduce(lambda part, key: part[key], place[:-1], state)[place[-1]]
    else:
        functools.reduce(lambda part, key: part[key], place[:-1], state)[place[-1]] = damage
    with open(args['state_file'], 'w', encoding='utf-8') as handle:
        json.dump(state, handle)
    caplog.clear()
    restarted = source['Poller'](source['parse_args'](dict(args), environ={}))
    with caplog.at_level(logging.WARNING):
        taken = restarted.resume(args['state_file'])
    emulator_server.check(api, 'offline')
    polls = [restarted.poll(), restarted.poll()]
    if taken:
        return
    warned = [record.getMessage() for record in caplog.records if 'cannot be used' in record.getMessage()]
    assert len(warned) == 1 and args['state_file'] in warned[0], warned
    names_another = isinstance(state, dict) and (state.get('api_url', restarted.tracker.base_url) != restarted.tracker.base_url or (
        state.get('version') == source['STATE_VERSION'] and state.get('account', restarted.tracker.account) != restarted.tracker.account))
    assert restarted.tracker.catch_up is not names_another
    without_file = source['Poller'](source['parse_args'](dict(args, state_file=None, catch_up=not names_another), environ={}))
    without_file.resume(None)
    assert transitions(polls[0]) == transitions(without_file.poll())
