# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The life of every resource, written once.

A :class:`Resource` declares what is its own (its path, its schema, how to find
it by its natural key, a hook or two); an :class:`Engine` creates, updates and
deletes it for one task, with check mode, recovery after a lost answer and a
before/after result. Nothing here reads module parameters.
"""

from __future__ import annotations

from collections import namedtuple

from ._client import UptimeApiError
from ._resource import AccountZone, record_id, to_text, utc_now

# The outcome of one ensure: before/after in option terms (None when absent), and the record written.
Outcome = namedtuple('Outcome', 'changed before after record')
# Where the task's resource was found: the record (None when absent) and what the lookup learnt on the way.
Located = namedtuple('Located', 'record context')
ACCOUNT_PATH = '/api/v1/account'


def account_zone(client, name=None):
    """The zone the service reads sent times in: ``name`` when given, else the account's, read when first needed."""
    def read_account():
        try:
            return client.get(ACCOUNT_PATH)
        except UptimeApiError as exc:
            if exc.status != 404:
                raise
            exc.message += (': this service does not tell the account\'s time zone; set account_timezone '
                            '(or UPTIME_ACCOUNT_TIMEZONE) to it')
            raise
    return AccountZone(name, read_account)


def confirm_after_ambiguity(write, confirm):
    """Run ``write``; when its answer was lost, ask ``confirm`` whether it took effect.

    ``confirm`` re-reads the service and returns what the write should have
    returned when the service already shows the wanted state, else None, and
    the original error stands.
    """
    try:
        return write()
    except UptimeApiError as exc:
        if not exc.ambiguous:
            raise
        confirmed = confirm()
        if confirmed is None:
            raise
        return confirmed


class Resource:
    """What a resource brings to the engine; subclasses override the parts that are their own."""

    noun = 'resource'
    path = None
    schema = None
    update_method = 'PUT'
    always_shown = ()
    list_filters = {}
    lookup_options = {}
    # Options of a task that are no field: how the task applies its values (argument specs by name).
    task_options = {}
    # Time bounds of an info task: option -> (timestamp field, 'since' or 'until'), both ends included.
    list_bounds = {}
    # The order the service lists records in when the task asks none: (sort_by, sort).
    default_order = (None, None)
    default_search_by = None
    create_hint = 'leave id out to create it'
    # Read-only values the service gives every new record, which a create answer may lack.
    created_facts = {}

    def label(self, values):
        """How messages name a record (or the values of one to create)."""
        return '%s %s' % (self.noun, record_id(values)) if values.get('id') is not None else 'a new %s' % self.noun

    def get(self, client, resource_id):
        return client.get_or_none('%s/%s' % (self.path, resource_id))

    def locate(self, engine, identity):
        """Find the record the task addresses; ``identity`` holds ``id`` and the natural key."""
        if identity.get('id') is not None:
            return Located(engine.get(identity['id']), {})
        return Located(self.find_by_key(engine.client, identity), {})

    def find_by_key(self, client, values):
        """The record whose natural key is in ``values``, or None."""
        raise NotImplementedError

    def is_conflict(self, exc):
        """Whether a refused create may mean that a concurrent run created the same record."""
        return False

    def prepare(self, engine, desired, located, state):
        """The desired state to apply to the located record (or to create one); a hook for derived values."""
        return desired

    def settle_missing(self, engine, desired, located, state):
        """An Outcome when the record was not found and the task must not create it; None to create."""
        return None

    def complete(self, engine, record):
        """A created record with what the create answer lacked, as the service sets it on create."""
        return dict(record, **{key: value for key, value in self.created_facts.items() if record.get(key) is None})

    def view(self, values, record, context):
        """The returned form of option-term values; read-only facts come from ``record``."""
        raise NotImplementedError

    def record_view(self, record):
        return self.view(self.schema.current(record), record, {})

    def diff_names(self, desired):
        """The names a task's diff shows: the fields it manages and those that name the record."""
        return [field.name for field in self.schema.fields if field.name in desired or field.name in self.always_shown]

    def with_derived(self, values):
        """Option-term values with the read-only values derived from them, for diffs."""
        return values

    def narrow(self, client, lookups, query):
        """For an info task: the records a lookup option finds, or None to list with ``query`` (narrowed here)."""
        return None

    def info_extras(self, views, lookups):
        """More keys of an info task's result."""
        return {}


class NameMatcher:
    """Find records by name the way the service holds names unique.

    The exact name (trimmed, as the service stores it) wins; failing that, a
    record whose name differs only in case and that no other wanted name takes
    exactly, since a service on a case-insensitive database holds such names
    unique. Each record matches one name at most.
    """

    def __init__(self, wanted=()):
        self.wanted = {to_text(name) for name in wanted}
        self.exact = {}
        self.folded = {}
        self.matched = set()

    def add(self, records):
        for record in records:
            name = to_text(record.get('name'))
            self.exact.setdefault(name, record)
            if name not in self.wanted:
                self.folded.setdefault(_folded(name), record)
        return self

    def has_exact(self, name):
        return to_text(name) in self.exact

    def find(self, name):
        name = to_text(name)
        record = self.exact.get(name)
        if record is None:
            record = self.folded.pop(_folded(name), None)
        if record is not None:
            self.matched.add(id(record))
        return record

    def unmatched(self, records):
        return [record for record in records if id(record) not in self.matched]


def _folded(name):
    return (name or '').casefold()


class Engine:
    """Creates, updates and deletes records of one resource for one task."""

    def __init__(self, resource, client, check_mode=False, now=None, zone=None, options=None):
        self.resource = resource
        self.schema = resource.schema
        self.client = client
        self.check_mode = check_mode
        self.now = now or utc_now()
        self.zone = zone or account_zone(client)
        # The values of the resource's task_options for this task.
        self.options = dict(options or {})

    def _path(self, record):
        return '%s/%s' % (self.resource.path, record_id(record))

    def get(self, resource_id):
        return self.resource.get(self.client, resource_id)

    def ensure(self, identity, desired, state='present', ignore=()):
        """The whole present/absent task of one record: locate, then create, update or delete."""
        located = self.resource.locate(self, identity)
        if state == 'absent':
            if located.record is None:
                return Outcome(False, None, None, None), located
            return self.delete(located.record), located
        if located.record is None and identity.get('id') is not None:
            raise UptimeApiError('%s id %s was not found (no %s can be created with a chosen id: %s)'
                                 % (self.resource.noun, identity['id'], self.resource.noun,
                                    self.resource.create_hint), status=404)
        desired = self.resource.prepare(self, desired, located, state)
        if located.record is None:
            settled = self.resource.settle_missing(self, desired, located, state)
            return (settled or self.create(desired)), located
        return self.update(located.record, desired, ignore), located

    def create(self, desired):
        """Create a record; after a lost answer or a conflict, converge the one found by natural key."""
        body = self.schema.create_body(desired, self.resource.label(desired))
        predicted = self.schema.created(dict(body, **desired))
        self.schema.check_order(predicted, self.now)
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
            existing = self.resource.find_by_key(self.client, body)
            if existing is None:
                raise
            return Outcome(True, None, *self.update(existing, dict(body, **later))[2:])
        if self.zone.given and any(value and self.schema.by_name[name].kind == 'timestamp'
                                   for name, value in body.items()):
            # A create answer may echo the local times sent, and a zone given as an option may not be the one the
            # service read them in: only a read shows what it stored. The account's own zone needs no such check.
            record = self.get(record_id(record)) or record
        record = self.resource.complete(self, self.schema.unechoed(record, form, body))
        # What the create answer lacks, the service holds as sent or as its default: not yet as ``later``.
        stored = self.schema.created(body)
        self._check_stored(body, self.schema.current(record, stored), record, 'POST', self.resource.path)
        if later:
            return Outcome(True, None, *self.update(record, later, fallback=stored)[2:])
        return Outcome(True, None, self.schema.current(record, stored), record)

    def update(self, record, desired, ignore=(), fallback=None):
        """Update a record to ``desired`` (``ignore``: names not compared); a lost answer is settled by a read."""
        before = self.schema.current(record, fallback)
        compared = {name: value for name, value in desired.items() if name not in ignore}
        changes = self.schema.differences(compared, before)
        if not changes:
            return Outcome(False, before, before, record)
        self.schema.refuse_fixed(changes, before, self.resource.label(record))
        send = self.schema.with_companions(changes, desired, before)
        predicted = dict(before, **send)
        self.schema.check_order(predicted)
        self.schema.check_order(send, self.now)
        form = self.schema.form(send, self.zone)
        if self.check_mode:
            return Outcome(True, before, predicted, record)

        def confirm():
            fresh = self.get(record_id(record))
            if fresh is None or self.schema.differences(compared, self.schema.current(fresh, predicted)):
                return None
            return fresh
        updated = confirm_after_ambiguity(
            lambda: self.client.update(self._path(record), form, method=self.resource.update_method),
            confirm)
        after = self.schema.current(updated, predicted)
        self._check_stored(send, after, record, self.resource.update_method, self._path(record))
        return Outcome(True, before, after, updated)

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
                                    lambda: True if self.get(record_id(record)) is None else None)
        return Outcome(True, before, None, None)
