"""Laws about sequences: any sequence of monitor, monitors and incident tasks on names that differ in case or unicode form
keeps the account equal to a model of what should be stored, each task applied again changes nothing, and what
gathered shows applies back with overridden without a write."""

from __future__ import annotations

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from laws import budget, fresh, holds, run, stored, writes
import strategies as gen

POOL = ['api', 'API', 'Api', 'straße', 'STRASSE', ' web ', 'ǅemo', 'ǆemo']


class Account(RuleBasedStateMachine):
    """One account; ``model`` holds, per exact name, the interval it should have; ``opened`` the names with an incident
    this sequence opened and has not resolved, ``ended`` those whose last incident it resolved."""

    emulator = connection = None

    def __init__(self):
        super().__init__()
        self.model, self.opened, self.ended, self.ignore_case, self.steps = {}, set(), set(), False, []

    @initialize(ignore_case=st.booleans(), zone=st.sampled_from(gen.ZONES))
    def start(self, ignore_case, zone):
        fresh(self.emulator, zone=zone, ignore_case=ignore_case)
        self.ignore_case = ignore_case

    def apply(self, module, args, refused=False, changed=None):
        """Run a task; it is refused when the model says so, and else applied again changes nothing."""
        out = run(self.connection, module, args)
        self.steps.append((module, args, out.changed, out.msg if out.failed else ''))
        holds(out.failed == refused and (changed is None or out.changed == changed), 'the model of the account',
              task=args, expected=dict(refused=refused, changed=changed), steps=self.steps, result=out.result)
        writes(self.emulator)
        if not refused:
            again = run(self.connection, module, args)
            holds(again.changed is False and not again.failed and not writes(self.emulator), 'idempotence in a sequence',
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
        for held in (self.model, self.opened, self.ended):
            held.discard(name.strip()) if isinstance(held, set) else held.pop(name.strip(), None)

    @rule(config=st.lists(gen.monitors(name=st.sampled_from(POOL), full=False), min_size=1, max_size=3,
                          unique_by=lambda args: args['name'].strip().casefold()), state=st.sampled_from(['merged', 'replaced']))
    def bulk(self, config, state):
        listed = [args['name'].strip() for args in config]
        # (Two entries that differ in case only are left out: on a service that compares names without case, the
        # second is refused after the first is written, which no client can foresee; the result says so.)
        refused = any(name not in self.model and self.held_otherwise(name, listed) for name in listed)
        self.apply('monitors', {'state': state, 'config': config}, refused=refused)
        if not refused:
            self.model.update((name, int(args['interval'])) for name, args in zip(listed, config))

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def open_incident(self, data):
        """Open an incident: at a given time the first time; "now" after one ended changes nothing (item 13's rule)."""
        name = data.draw(st.sampled_from(sorted(self.model)))
        args = {'monitor': name, 'cause': 'down'}
        if name not in self.ended:
            args['started_at'] = '2020-01-01T00:00:00'
        self.apply('incident', args, changed=name not in self.opened and name not in self.ended)
        self.opened.add(name) if name not in self.ended else None

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
        holds(held == self.model and ongoing == self.opened, 'the account holds what the tasks said', held=held,
              model=self.model, ongoing=sorted(ongoing), opened=sorted(self.opened), steps=self.steps)


def test_sequences(emulator, connection):
    """Any sequence of tasks on names that differ in case: the model holds, each task is idempotent, gathered applies back."""
    Account.emulator, Account.connection = emulator, connection
    run_state_machine_as_test(Account, settings=settings(budget(25), stateful_step_count=10))
