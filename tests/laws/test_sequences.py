"""Laws about sequences: any sequence of monitor, monitors and incident tasks on names that differ in case or unicode form,
between which other actors act (the service's checker flips a monitor, another client edits or deletes one), keeps the
account equal to a model of what should be stored, each task applied again changes nothing, and what gathered shows
applies back with overridden without a write."""

from __future__ import annotations

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from emulator.control import PRIMARY_KEY
from laws import budget, fresh, holds, run, stored, writes
import strategies as gen

POOL = ['api', 'API', 'Api', 'straße', 'STRASSE', ' web ', 'ǅemo', 'ǆemo']


class Account(RuleBasedStateMachine):
    """One account; ``model`` holds, per exact name, the interval it should have; ``opened`` the names with an ongoing
    incident, ``ended`` those whose last incident ended, ``dated`` those whose ongoing incident a task opened at its own
    start (not now)."""

    emulator = connection = None

    def __init__(self):
        super().__init__()
        self.model, self.opened, self.ended, self.dated, self.ignore_case, self.steps = {}, set(), set(), set(), False, []

    @initialize(ignore_case=st.booleans(), zone=st.sampled_from(gen.ZONES))
    def start(self, ignore_case, zone):
        fresh(self.emulator, zone=zone, ignore_case=ignore_case)
        self.ignore_case = ignore_case

    def apply(self, module, args, refused=False, changed=None):
        """Run a task; it is refused when the model says so, and else applied again changes nothing."""
        out = run(self.connection, module, args)
        self.steps.append((module, args, out.changed, out.msg if out.failed else ''))
        holds(out.failed == refused, 'the model of the account: refused or applied',
              task=args, expected=dict(refused=refused, changed=changed), steps=self.steps, result=out.result)
        holds(changed is None or out.changed == changed, 'the model of the account: changed',
              task=args, expected=dict(refused=refused, changed=changed), steps=self.steps, result=out.result)
        writes(self.emulator)
        if not refused:
            again = run(self.connection, module, args)
            holds(again.changed is False, 'idempotence in a sequence: no change',
                  task=args, steps=self.steps, again=again.result)
            holds(not again.failed, 'idempotence in a sequence: no failure',
                  task=args, steps=self.steps, again=again.result)
            holds(not writes(self.emulator), 'idempotence in a sequence: no write',
                  task=args, steps=self.steps, again=again.result)
        return out

    def held_otherwise(self, name, listed=()):
        """Stored names that differ from ``name`` in case only (not ``listed``)."""
        return [each for each in self.model if each != name and each.casefold() == name.casefold() and each not in listed]

    @rule(args=gen.monitors(name=st.sampled_from(POOL), full=False))
    def put(self, args):
        name = args['name'].strip()
        refused = self.ignore_case and name not in self.model and bool(self.held_otherwise(name))
        self.apply('monitor', args, refused=refused)
        if not refused:
            self.model[name] = int(args['interval'])

    @rule(name=st.sampled_from(POOL))
    def remove(self, name):
        self.apply('monitor', {'name': name, 'state': 'absent'}, changed=name.strip() in self.model)
        self.forget([name.strip()])

    def forget(self, names):
        """``names`` deleted: their incidents went with them."""
        for name in names:
            self.model.pop(name, None)
            for held in (self.opened, self.ended, self.dated):
                held.discard(name)

    @rule(form=st.sampled_from(['absent', 'empty', 'full']),
          names=st.lists(st.sampled_from(POOL), min_size=1, max_size=3, unique_by=str.strip))
    def bulk_delete(self, form, names):
        """monitors state=deleted: without config every monitor, with an empty one none, else those named exactly."""
        gone = sorted(self.model) if form == 'absent' else [] if form == 'empty' else \
            [name.strip() for name in names if name.strip() in self.model]
        args = {'state': 'deleted'}
        if form != 'absent':
            args['config'] = [] if form == 'empty' else [{'name': name} for name in names]
        self.apply('monitors', args, changed=bool(gone))
        self.forget(gone)

    @rule(config=st.lists(gen.monitors(name=st.sampled_from(POOL), full=False), min_size=1, max_size=3,
                          unique_by=lambda args: args['name'].strip().casefold()),
          state=st.sampled_from(['merged', 'replaced', 'overridden']))
    def bulk(self, config, state):
        """monitors merged, replaced or overridden (which deletes every monitor its config does not name exactly)."""
        listed = [args['name'].strip() for args in config]
        # (Two entries that differ in case only are left out: on a service that compares names without case, the
        # second is refused after the first is written, which no client can foresee; the result says so.)
        refused = any(name not in self.model and self.held_otherwise(name, listed) for name in listed)
        self.apply('monitors', {'state': state, 'config': config}, refused=refused)
        if not refused:
            self.model.update((name, int(args['interval'])) for name, args in zip(listed, config))
            if state == 'overridden':
                self.forget([name for name in list(self.model) if name not in listed])

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def open_incident(self, data):
        """Open an incident: at a given time the first time; "now" after one ended, or while the checker's is ongoing,
        changes nothing (item 13's rule: the task addresses the monitor's last incident)."""
        name = data.draw(st.sampled_from(sorted(self.model)))
        args = {'monitor': name, 'cause': 'down'}
        if name not in self.ended and (name not in self.opened or name in self.dated):
            args['started_at'] = '2020-01-01T00:00:00'
            self.dated.add(name)
        self.apply('incident', args, changed=name not in self.opened and name not in self.ended)
        self.opened.add(name) if name not in self.ended else None

    @precondition(lambda self: set(self.model) - self.opened - self.ended)
    @rule(data=st.data())
    def open_raced(self, data):
        """Another actor opens the same incident after the task looked and found none, before its own create: the task
        addresses that incident, which holds what it asks, and changes nothing."""
        name = data.draw(st.sampled_from(sorted(set(self.model) - self.opened - self.ended)), label='monitor')
        self.emulator.fault('check', method='POST', path='/api/v1/incidents',
                            check={'monitor_id': self.emulator.monitor_id(name), 'status': 'offline', 'cause': 'down'})
        self.apply('incident', {'monitor': name, 'cause': 'down'}, changed=False)
        self.emulator.clear_faults()
        self.opened.add(name)

    @precondition(lambda self: self.model)
    @rule(data=st.data(), status=st.sampled_from(['online', 'offline']))
    def checker(self, data, status):
        """The service's checker finds a monitor up or down: offline opens an incident when none is ongoing (now, its
        cause the tasks' own), online ends the ongoing one."""
        name = data.draw(st.sampled_from(sorted(self.model)), label='monitor')
        self.emulator.check(self.emulator.monitor_id(name), status, cause='down')
        self.emulator.clear_log()
        self.steps.append(('checker', name, status))
        if status == 'offline' and name not in self.opened:
            self.opened.add(name)
            self.ended.discard(name)
            self.dated.discard(name)
        elif status == 'online' and name in self.opened:
            self.opened.discard(name)
            self.ended.add(name)

    @precondition(lambda self: self.model)
    @rule(data=st.data(), interval=st.sampled_from([60, 300, 3600]))
    def edited_elsewhere(self, data, interval):
        """Another client changes a monitor's interval through the API."""
        name = data.draw(st.sampled_from(sorted(self.model)), label='monitor')
        self.emulator.api('PUT', '/api/v1/monitors/%d' % self.emulator.monitor_id(name), api_key=PRIMARY_KEY,
                          data={'interval': interval})
        self.emulator.clear_log()
        self.steps.append(('edited elsewhere', name, interval))
        self.model[name] = interval

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def deleted_while_read(self, data):
        """Another client deletes a monitor once gathered has read the page that holds it: gathered shows it (it lived
        while read); the account no longer holds it."""
        name = data.draw(st.sampled_from(sorted(self.model)), label='monitor')
        self.emulator.fault('meanwhile', method='GET', path='/api/v1/monitors', delete=[self.emulator.monitor_id(name)])
        gathered = run(self.connection, 'monitors', {'state': 'gathered'})
        self.emulator.clear_faults()
        self.steps.append(('deleted while gathered read', name))
        shown = sorted(entry['name'] for entry in gathered.get('gathered') or [])
        holds(not gathered.failed, 'gathered reads a list another client changes', result=gathered.result, steps=self.steps)
        holds(shown == sorted(self.model), 'gathered shows every monitor that lived while it read', shown=shown,
              model=sorted(self.model), steps=self.steps)
        self.forget([name])

    @precondition(lambda self: self.opened)
    @rule(data=st.data())
    def resolve(self, data):
        name = data.draw(st.sampled_from(sorted(self.opened)))
        self.apply('incident', {'monitor': name, 'cause': 'down', 'state': 'resolved'}, changed=True)
        self.opened.discard(name)
        self.ended.add(name)

    @precondition(lambda self: self.model)
    @rule()
    def gathered_overridden(self):
        gathered = run(self.connection, 'monitors', {'state': 'gathered'})['gathered']
        self.apply('monitors', {'state': 'overridden', 'config': gathered}, changed=False)

    @invariant()
    def matches_model(self):
        if self.emulator is None or not self.steps:
            return
        now = stored(self.emulator)
        held = {record['name']: record['interval'] for record in now['monitors']}
        ongoing = {item['monitor']['name'] for item in now['incidents'] if not item['ended_at']}
        holds(held == self.model, 'the account holds the monitors the tasks and the other actors said', held=held,
              model=self.model, steps=self.steps)
        holds(ongoing == self.opened, 'the account holds the ongoing incidents the tasks and the checker said',
              ongoing=sorted(ongoing), opened=sorted(self.opened), steps=self.steps)


def test_sequences(emulator, connection):
    """Any sequence of tasks on names that differ in case, other actors acting between them: the model holds, each task
    is idempotent, gathered applies back."""
    Account.emulator, Account.connection = emulator, connection
    run_state_machine_as_test(Account, settings=settings(budget(25), stateful_step_count=10))
