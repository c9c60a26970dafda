# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The life of every resource, written once.

A resource (``_resource.py``) declares what is its own (its path, its schema,
how to find it by its natural key, a hook or two); an :class:`Engine` creates,
updates and deletes it for one task, with check mode, recovery after a lost answer and a
before/after result. Nothing here reads module parameters.
"""

from __future__ import annotations

import copy
import datetime

from ._client import UptimeApiError
from ._connection import account_zone
from ._resource import Outcome
from ._schema import UTC_FORMAT, ValidationError, record_id, utc_now

# How far a time the task chooses as now may wait for the service's clock to pass the time it must follow (ended_at
# after started_at): an incident opened in the very second a task resolves it needs one second. Further than this, the
# time it must follow is not one the service's clock has passed, and the order check refuses it, naming both.
LONGEST_CLOCK_WAIT = 2
SERVICE_CLOCK = 'the service\'s clock'


class WrittenBeforeFailure(Exception):
    """The failure of a task that had changed the service before it.

    ``error``: the UptimeApiError or ValidationError that ended the task; ``written``: the Outcome of the task so far,
    what the service now holds; ``located``: where the task began, once ``Engine.ensure`` knows it; ``result``: what
    the task returns, once the task has built it.
    """

    def __init__(self, error, written):
        super().__init__(str(error))
        self.error = error
        self.written = written
        self.located = None
        self.result = None

    def __str__(self):
        return str(self.error)


# What a write of the engine may fail with.
FAILURES = (UptimeApiError, ValidationError, WrittenBeforeFailure)


def written_before(exc, outcome):
    """``exc`` (of FAILURES) as the failure of a task that had written ``outcome``.

    A later write that failed after its own write keeps its after and record:
    the service holds that, and ``outcome`` says where the task started from.
    """
    if isinstance(exc, WrittenBeforeFailure):
        exc.written = outcome._replace(after=exc.written.after, record=exc.written.record)
        return exc
    return WrittenBeforeFailure(exc, outcome)


# Whether a write whose answer was lost took effect, as a read shows it: applied, not applied, or not known.
APPLIED, UNAPPLIED, UNKNOWN = 'applied', 'unapplied', 'unknown'


def confirm_after_ambiguity(write, confirm):
    """Run ``write``; when its answer was lost, ask ``confirm`` whether it took effect.

    ``confirm`` re-reads the service and returns ``(APPLIED, what the write
    should have returned)``, ``(UNAPPLIED, None)`` when the service still holds
    what it held before, or ``(UNKNOWN, None)``. When the service itself answered
    (an HTTP 500) and the read shows nothing applied, the error says so and is no
    longer ambiguous; otherwise the write may still be in flight, and the error stands.
    """
    try:
        return write()
    except UptimeApiError as exc:
        if not exc.ambiguous:
            raise
        found, confirmed = read_after(exc, confirm)
        if found == APPLIED:
            return confirmed
        if found == UNAPPLIED:
            _settle_unapplied(exc, 'changed')
        raise


def read_after(exc, read):
    """``read()`` after the ambiguous ``exc``; when the read fails too, ``exc`` stands (its write may have been
    applied), naming the read that failed."""
    try:
        return read()
    except UptimeApiError as read_error:
        exc.message += '; the read that would tell failed: %s' % read_error
        raise exc from read_error


def _settle_unapplied(exc, what):
    """An ambiguous ``exc`` after which a read shows nothing ``what`` (changed, created): say so, when that is proof."""
    if exc.ambiguous and answered_by_service(exc):
        exc.ambiguous = False
        exc.message += ': the service failed, and a read shows that nothing was %s by this request' % what


def answered_by_service(exc):
    """Whether the service itself ended the request it failed: a read after it shows all the request did.

    A gateway's 502, 503 or 504, a timeout, a dropped connection or an answer that
    is not the service's (a proxy's page) may leave the request running behind it,
    so that a read cannot prove it unapplied, and the service cannot be said to have failed.
    """
    unsettled = exc.status is None or exc.status in (502, 503, 504) or exc.not_the_service
    return not (unsettled or exc.earlier_unanswered)


class Engine:
    """Creates, updates and deletes records of one resource for one task."""

    def __init__(self, resource, client, check_mode=False, now=None, zone=None, options=None):
        self.resource = resource
        self.schema = resource.schema
        self.client = client
        self.check_mode = check_mode
        # A given now is the task's clock; otherwise now is read from the service once it has answered (_read_clock).
        self._now_given = now is not None
        self.now = now or utc_now()
        self.clock_name = 'the local clock'
        self.zone = zone or account_zone(client)
        # The values of the resource's task_options for this task.
        self.options = dict(options or {})
        # The timestamps of the current ensure that the task chose as now (see _sendable).
        self._chosen_now = set()
        # The time a chosen now waited to pass (see _past_bounds): its name and value.
        self._waited = None

    def _path(self, record):
        return '%s/%s' % (self.resource.path, record_id(record))

    def get(self, resource_id):
        return self.resource.get(self.client, resource_id)

    def ensure(self, identity, desired, state='present', ignore=()):
        """The whole present/absent task of one record: locate, then create, update or delete."""
        located = self.resource.locate(self.client, identity)
        if state == 'absent':
            if located.record is None:
                return Outcome(False, None, None, None), located
            self._refuse_another_key(located.record, identity)
            return self.delete(located.record), located
        if located.record is None and identity.get('id') is not None:
            raise UptimeApiError('%s id %s was not found (no %s can be created with a chosen id: %s)'
                                 % (self.resource.noun, identity['id'], self.resource.noun,
                                    self.resource.create_hint), status=404)
        self._read_clock()
        try:
            outcome = self._apply(desired, located, state, ignore)
        except WrittenBeforeFailure as exc:
            exc.located = located
            raise
        return (self._told_now(outcome) if outcome.changed else outcome), located

    def _apply(self, asked, located, state, ignore):
        """What the task ``asked``, as the resource prepares it for the located record, applied to that record, or to one
        created for it; a record another actor created after the task looked for it is applied to as a re-run would."""
        desired = self.resource.prepare(asked, located, state, self.now, self.options)
        now_text = self.now.strftime(UTC_FORMAT)
        self._chosen_now = {name for name, value in desired.items()
                            if name not in asked and value == now_text and self.schema.by_name[name].kind == 'timestamp'}
        if located.record is not None:
            return self.update(located.record, self._past_bounds(desired, located.record), ignore)
        settled = self.resource.settle_missing(self.client, desired, located, state, self.options, self.check_mode)
        if settled is not None:
            return settled

        def converge(found):
            relocated = copy.copy(located)
            relocated.record = found
            outcome = self._apply(asked, relocated, state, ignore)
            told = ('%s was created meanwhile, after this task looked for it (by the service or another task): the task '
                    'applied its values to it' % self.resource.label(found))
            return outcome._replace(message=_joined(told, outcome.message))
        return self.create(self._past_bounds(desired, None), located, converge)

    def _read_clock(self):
        """Take now from the service's clock, as its latest answer told it: a time the task chooses as now must be
        one the service accepts, and it refuses one later than its own clock. The local clock when no answer told it."""
        if self._now_given or self.client.service_date is None:
            return
        self.now, self.clock_name = self.client.service_date, SERVICE_CLOCK

    def _past_bounds(self, desired, record):
        """``desired`` with each time the task chose as now past the time it must follow (``ended_at`` after
        ``started_at``).

        Now is not past it when the record began in the very second the task
        acts (an incident the checker opened as the task resolves it): the task then
        waits until the service's clock passes it, a second or two at most, and takes that
        now; check mode tells the now the run would take, without waiting.
        """
        self._waited = None
        current = self.schema.current(record) if record is not None else {}
        bounds = []
        for name in self._chosen_now:
            other = self.schema.by_name[name].later_than
            bound = desired.get(other, current.get(other)) if other else None
            if bound and desired.get(name) and desired[name] <= bound:
                bounds.append((bound, other))
        if not bounds:
            return desired
        bound, other = max(bounds)
        try:
            target = datetime.datetime.strptime(bound, UTC_FORMAT) + datetime.timedelta(seconds=1)
        except ValueError:
            return desired
        if (target - self.now).total_seconds() > LONGEST_CLOCK_WAIT:
            return desired
        if self.check_mode or self._now_given:
            self.now = target
        else:
            self.now = self.client.wait_until(target)
            if self.client.service_date is not None:
                self.clock_name = SERVICE_CLOCK
        self._waited = (other, bound)
        now_text = self.now.strftime(UTC_FORMAT)
        return dict(desired, **{name: now_text for name in self._chosen_now})

    def _told_now(self, outcome):
        """``outcome`` with a message naming each time the task chose as now, its value, and whose clock it read."""
        chosen = [field.name for field in self.schema.fields if field.name in self._chosen_now]
        if not chosen or outcome.after is None:
            return outcome
        told = '; '.join('%s is now by %s, %s' % (name, self.clock_name, outcome.after.get(name)) for name in chosen)
        if self._waited is not None:
            told += (': the task %s for it to pass %s, %s, which %s must follow'
                     % ('would wait' if self.check_mode else 'waited', self._waited[0], self._waited[1], ' and '.join(chosen)))
        return outcome._replace(message=_joined(outcome.message, told))

    def _refuse_another_key(self, record, identity):
        """A delete by id takes the record only when the task's other keys (a name) are that record's too: an id of
        one record and a name of another say two things, and which one was meant is a guess. (Renaming by id is for
        state=present.)"""
        if identity.get('id') is None:
            return
        given = {name: value for name, value in identity.items() if name != 'id' and name in self.schema.by_name}
        current = self.schema.current(record)
        for name, value in sorted(self.schema.differences(given, current).items()):
            field = self.schema.by_name[name]
            shown = repr if field.kind == 'str' else field.shown
            raise ValidationError(name, '%s has %s %s, not %s: with state=absent, id and %s must name the same %s '
                                        '(nothing was deleted)' % (self.resource.label(record), name,
                                                                   shown(current.get(name)), shown(value),
                                                                   name, self.resource.noun))

    def create(self, desired, located=None, converge=None):
        """Create a record; after a lost answer, converge the one found by natural key.

        After a refusal as a conflict, the record another actor created meanwhile (``located``: where the task looked
        for it before) is given to ``converge``, by default updated to ``desired``.
        """
        # A masked secret keeps a stored one: a record yet to be created has none.
        desired = self.schema.unmasked(self._sendable(desired), None, '%s (to be created)' % self.resource.label(desired))
        body = self.schema.create_body(desired, self.resource.label(desired))
        predicted = self.schema.created(dict(body, **desired))
        self.schema.check_required(predicted, self.resource.label(desired))
        self._check_order(predicted, desired, self.now)
        # What the service does not accept on create is set by an update right after it.
        later = {name: value for name, value in desired.items()
                 if not self.schema.by_name[name].on_create and value != self.schema.by_name[name].default}
        # Built in check mode too: a time that cannot be sent in the account's zone is refused before any write.
        form = self.schema.form(body, self.zone)
        if self.check_mode:
            return Outcome(True, None, predicted, None)
        try:
            record = self.client.create(self.resource.path, form)
        except UptimeApiError as exc:
            if not (exc.ambiguous or self.resource.is_conflict(exc)):
                raise
            if exc.ambiguous:
                existing = read_after(exc, lambda: self.resource.find_by_key(self.client, body))
            else:
                existing = self.resource.find_conflicting(self.client, body, located)
            if existing is None:
                _settle_unapplied(exc, 'created')
                raise
            if exc.ambiguous:
                return self._converge(existing, desired)
            return converge(existing) if converge is not None else self.update(existing, desired)
        # What the create answer lacks, the service holds as sent or as its default: not yet as ``later``.
        stored = self.schema.created(body)
        record = self.schema.unechoed(record, form, body)
        written = Outcome(True, None, self.schema.current(record, stored), record)
        try:
            if self.zone.given and any(value and self.schema.by_name[name].kind == 'timestamp'
                                       for name, value in body.items()):
                # A create answer may echo the local times sent, and a zone given as an option may not be the one
                # the service read them in: only a read shows what it stored. The account's own zone needs no check.
                record = self.get(record_id(record)) or record
            record = self.resource.complete(self.client, record, self.now)
            written = Outcome(True, None, self.schema.current(record, stored), record)
            self._check_stored(body, written.after, record, 'POST', self.resource.path)
            if later:
                return Outcome(True, None, *self.update(record, later, fallback=stored)[2:])
        except FAILURES as exc:
            raise written_before(exc, written)  # pylint: disable=raise-missing-from
        return written

    def _converge(self, existing, desired):
        """The record this task's create made, found by natural key after the create's answer was lost, brought to
        what this task gave (not to the defaults a create sends, which it holds already)."""
        found = Outcome(True, None, self.schema.current(existing), existing)
        try:
            converged = self.update(existing, desired)
        except FAILURES as exc:
            raise written_before(exc, found)  # pylint: disable=raise-missing-from
        return Outcome(True, None, converged.after, converged.record, converged.message)

    def update(self, record, desired, ignore=(), fallback=None):
        """Update a record to ``desired`` (``ignore``: names not compared); a lost answer is settled by a read."""
        before = self.schema.current(record, fallback)
        desired = self.schema.unmasked(self._sendable(desired), before, self.resource.label(record))
        compared = {name: value for name, value in desired.items() if name not in ignore}
        changes = self.schema.differences(compared, before)
        if not changes:
            return Outcome(False, before, before, record)
        self.schema.refuse_fixed(changes, before, self.resource.label(record))
        send = self.schema.with_companions(changes, desired, before)
        predicted = dict(before, **send)
        self.schema.check_required(predicted, self.resource.label(record))
        self._check_order(predicted, desired)
        self._check_order(send, desired, self.now)
        form = self.schema.form(send, self.zone)
        self.resource.check_update(self.client, record, send)
        if self.check_mode:
            return Outcome(True, before, predicted, record)

        def confirm():
            fresh = self.get(record_id(record))
            if fresh is None:
                return UNKNOWN, None
            current = self.schema.current(fresh, predicted)
            if not self.schema.differences(compared, current):
                return APPLIED, fresh
            if not self.schema.differences({name: before.get(name) for name in send}, current):
                return UNAPPLIED, None
            return UNKNOWN, None
        try:
            updated = confirm_after_ambiguity(
                lambda: self.client.update(self._path(record), form, method=self.resource.update_method),
                confirm)
        except UptimeApiError as exc:
            if not exc.ambiguous and self.resource.is_conflict(exc):
                self.resource.check_update(self.client, record, send, refused=exc)
            raise
        after = self.schema.current(updated, predicted)
        written = Outcome(True, before, after, updated)
        meanwhile = self._set_meanwhile(send, after, before)
        if meanwhile:
            # Set by another actor between the read and this write: the service holds it as that actor set it, and
            # what this task changed is the rest.
            before = dict(before, **{name: after[name] for name in meanwhile})
            send = {name: value for name, value in send.items() if name not in meanwhile}
            self._chosen_now.difference_update(meanwhile)
            told = '; '.join('%s of %s was set meanwhile, to %s (by the service or another task), and the service '
                             'sets it only once: it keeps that, not the %s this task sent'
                             % (name, self.resource.label(record), after[name], sent)
                             for name, sent in sorted(meanwhile.items()))
            written = Outcome(bool(self.schema.differences(after, before)), before, after, updated, told)
        try:
            self._check_stored(send, after, record, self.resource.update_method, self._path(record))
        except UptimeApiError as exc:
            raise written_before(exc, written)  # pylint: disable=raise-missing-from
        return written

    def _set_meanwhile(self, sent, stored, before):
        """The write-once values ``sent`` that were empty when read and that the service holds otherwise, no time zone
        explaining the difference: another actor set them between the read and the write. By name, the value sent."""
        unexplained = [name for name in self.schema.not_taken(sent, stored)
                       if not self._zone_explains(name, sent[name], stored.get(name))]
        return {name: sent[name] for name in unexplained
                if self.schema.by_name[name].write_once and before.get(name) is None and stored.get(name) is not None}

    def _zone_explains(self, name, sent, stored):
        """Whether the service reading a local time in another zone than the one it was made for can have stored
        ``stored`` for the instant ``sent``: a shift by whole quarter hours (the steps of every zone's offset), of a
        day at most."""
        if self.schema.by_name[name].kind != 'timestamp':
            return False
        try:
            stored_at, sent_at = (datetime.datetime.strptime(value, UTC_FORMAT) for value in (stored, sent))
        except (TypeError, ValueError):  # nothing stored, or not a time: no zone explains that
            return False
        shift = abs((stored_at - sent_at).total_seconds())
        return 0 < shift <= 26 * 3600 and shift % 900 == 0

    def _sendable(self, desired):
        """``desired`` with the times the task chose as now moved to the latest instant the service can be sent.

        In the hour repeated when daylight saving time ends, the service reads a
        local time as its first occurrence: "now" in the second one cannot be
        sent, and becomes the last second before it. A time the user gave is never moved.
        """
        moved = {name: self.zone.latest_sendable(desired[name]) for name in self._chosen_now if desired.get(name)}
        return dict(desired, **moved) if moved else desired

    def _check_order(self, values, desired, now=None):
        """The schema's time order; a time moved out of the repeated hour (``_sendable``) is told as such."""
        try:
            self.schema.check_order(values, now)
        except ValidationError as exc:
            if exc.field not in self._chosen_now or desired.get(exc.field) in (None, self.now.strftime(UTC_FORMAT)):
                raise  # not moved: the order is the user's (or now's) own
            moved = desired[exc.field]
            raise ValidationError(exc.field, 'now falls in the hour repeated when daylight saving time ends in %s, '
                                             'in which the service cannot be sent a time, and the latest time it can '
                                             'be sent, %s, does not fit: %s; run the task again from %s, when the '
                                             'repeated hour is over'
                                  % (self.zone.describe(), moved, str(exc)[len(exc.field) + 2:],
                                     self.zone.repeat_over(self.now.strftime(UTC_FORMAT)))) from None

    def _check_stored(self, sent, stored, record, method, path):
        """Fail when the service stored other values than sent: a time read in another zone than the one the local time
        was made for (a wrong zone would otherwise loop), or a write-once value set meanwhile."""
        for name in self.schema.not_taken(sent, stored):
            field = self.schema.by_name[name]
            if self._zone_explains(name, sent[name], stored.get(name)):
                reason = ('it was sent as %s, local time in %s, and the service read it in another zone: set '
                          'account_timezone to the account\'s time zone, or leave it out to read it from the service'
                          % (self.zone.local(sent[name]), self.zone.describe()))
                if field.write_once:
                    reason += '; or it is set only once and was set meanwhile'
            elif field.write_once and stored.get(name) is not None:
                reason = 'it is set only once and was set meanwhile'
            else:
                reason = 'the service did not store what it was sent'
            raise UptimeApiError('%s: the service stored %s for %s instead of %s (%s)'
                                 % (name, stored.get(name), self.resource.label(record), sent[name], reason),
                                 method=method, path=path)

    def delete(self, record):
        """Delete a record found just before; a lost answer is settled by a read (gone is done). What the service
        undoes on another record with the delete (the pause of an incident's monitor) is put back."""
        before = self.schema.current(record)
        if not self.check_mode:
            confirm_after_ambiguity(lambda: self.client.delete(self._path(record)),
                                    lambda: (APPLIED, True) if self.get(record_id(record)) is None else (UNAPPLIED, None))
        deleted = Outcome(True, before, None, record)
        kept = self.resource.kept_after_delete(record)
        if kept is None:
            return deleted
        resource, left, values, told = kept
        try:
            Engine(resource, self.client, self.check_mode, zone=self.zone).update(left, values)
        except FAILURES as exc:
            if self.check_mode:
                raise
            raise written_before(exc, deleted)  # pylint: disable=raise-missing-from
        return deleted._replace(message=told, after_header=told)


def _joined(*messages):
    """The messages given, in one line."""
    return '; '.join(message for message in messages if message) or None
