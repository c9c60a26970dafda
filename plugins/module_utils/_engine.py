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

from ._client import UptimeApiError
from ._connection import account_zone
from ._resource import Outcome
from ._schema import UTC_FORMAT, ValidationError, record_id, utc_now


def _mark_written(exc, outcome):
    """Tell whoever catches ``exc`` that the service was changed before it: ``outcome`` of this task so far.

    A later write that failed after its own write keeps its after and record:
    the service holds that, and ``outcome`` says where the task started from.
    """
    earlier = getattr(exc, 'written', None)
    exc.written = outcome if earlier is None else outcome._replace(after=earlier.after, record=earlier.record)


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
        asked = desired
        self._read_clock()
        desired = self.resource.prepare(desired, located, state, self.now, self.options)
        now_text = self.now.strftime(UTC_FORMAT)
        self._chosen_now = {name for name, value in desired.items()
                            if name not in asked and value == now_text and self.schema.by_name[name].kind == 'timestamp'}
        try:
            if located.record is None:
                settled = self.resource.settle_missing(self.client, desired, located, state, self.options,
                                                       self.check_mode)
                return (settled or self._told_now(self.create(desired))), located
            return self._told_now(self.update(located.record, desired, ignore)), located
        except (UptimeApiError, ValidationError) as exc:
            if getattr(exc, 'written', None) is not None:
                exc.located = located
            raise

    def _read_clock(self):
        """Take now from the service's clock, as its latest answer told it: a time the task chooses as now must be
        one the service accepts, and it refuses one later than its own clock. The local clock when no answer told it."""
        if self._now_given or self.client.service_date is None:
            return
        self.now, self.clock_name = self.client.service_date, 'the service\'s clock'

    def _told_now(self, outcome):
        """``outcome`` with a message naming each time the task chose as now, its value, and whose clock it read."""
        chosen = [field.name for field in self.schema.fields if field.name in self._chosen_now]
        if not chosen or outcome.after is None:
            return outcome
        told = '; '.join('%s is now by %s, %s' % (name, self.clock_name, outcome.after.get(name)) for name in chosen)
        return outcome._replace(message='%s; %s' % (outcome.message, told) if outcome.message else told)

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

    def create(self, desired):
        """Create a record; after a lost answer or a conflict, converge the one found by natural key."""
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
            find = self.resource.find_by_key if exc.ambiguous else self.resource.find_conflicting
            existing = read_after(exc, lambda: find(self.client, body)) if exc.ambiguous else find(self.client, body)
            if existing is None:
                _settle_unapplied(exc, 'created')
                raise
            return self._converge(existing, desired, created=exc.ambiguous)
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
        except (UptimeApiError, ValidationError) as exc:
            _mark_written(exc, written)
            raise
        return written

    def _converge(self, existing, desired, created):
        """The record found by natural key after a create that failed, brought to what this task gave.

        Not to the defaults a create must send: the record may be another run's, with values this task never
        asked for. ``created``: the create's answer was lost, so the record found is taken for this task's own.
        """
        found = Outcome(True, None, self.schema.current(existing), existing)
        try:
            converged = self.update(existing, desired)
        except (UptimeApiError, ValidationError) as exc:
            if created:
                _mark_written(exc, found)
            raise
        if created:
            return Outcome(True, None, converged.after, converged.record)
        return converged

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
        updated = confirm_after_ambiguity(
            lambda: self.client.update(self._path(record), form, method=self.resource.update_method),
            confirm)
        written = Outcome(True, before, self.schema.current(updated, predicted), updated)
        try:
            self._check_stored(send, written.after, record, self.resource.update_method, self._path(record))
        except UptimeApiError as exc:
            _mark_written(exc, written)
            raise
        return written

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
        """Fail when the service stored other values than sent: a write-once value set meanwhile, or a time
        read in another zone than the one the local time was made for (a wrong zone would otherwise loop)."""
        for name in self.schema.not_taken(sent, stored):
            field = self.schema.by_name[name]
            label = self.resource.label(record)
            if field.kind != 'timestamp':
                reason = 'it is set only once and was set meanwhile'
            else:
                reason = ('it was sent as %s, local time in %s, and the service read it in another zone: set '
                          'account_timezone to the account\'s time zone, or leave it out to read it from the service'
                          % (self.zone.local(sent[name]), self.zone.describe()))
                if field.write_once:
                    reason += '; or it is set only once and was set meanwhile'
            raise UptimeApiError('%s: the service stored %s for %s instead of %s (%s)'
                                 % (name, stored.get(name), label, sent[name], reason), method=method, path=path)

    def delete(self, record):
        """Delete a record found just before; a lost answer is settled by a read (gone is done)."""
        before = self.schema.current(record)
        if not self.check_mode:
            confirm_after_ambiguity(lambda: self.client.delete(self._path(record)),
                                    lambda: (APPLIED, True) if self.get(record_id(record)) is None else (UNAPPLIED, None))
        return Outcome(True, before, None, None)
