# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a resource brings to the engine: its path, its schema, how it is found, and its hooks.

A resource (monitor, incident) subclasses :class:`Resource` and overrides
only what is its own. Each hook receives what it needs (a client, the time of
the task, the task's options), never the engine that calls it.
"""

from __future__ import annotations

from collections import namedtuple

from ._client import PAGE_SIZE
from ._schema import record_id, to_text

# The outcome of one ensure: before/after in option terms (None when absent), the record written, what the task
# found to do when it is not plain from the result (a resource's lookup may say), and what the diff's after side says
# beyond the record (a write on another record that the task made to keep what the operator set).
Outcome = namedtuple('Outcome', 'changed before after record message after_header', defaults=(None, None))


class Located:
    """Where a task's record was found: ``record``, None when there is none. A resource may find more on the way."""

    def __init__(self, record):
        self.record = record


class Resource:
    """What a resource brings to the engine; subclasses override the parts that are their own."""

    noun = 'resource'
    plural = 'resources'
    path = None
    schema = None
    update_method = 'PUT'
    always_shown = ()
    list_filters = {}
    lookup_options = {}
    # The top-level keys of a returned record (what an info task's fields may name).
    view_keys = ()
    # Options of a task that are no field: how the task applies its values (argument specs by name).
    task_options = {}
    # Time bounds of an info task: option -> (timestamp field, 'since' or 'until'), both ends included.
    list_bounds = {}
    # The order the service lists records in when the task asks none: (sort_by, sort).
    default_order = (None, None)
    # The query that lists every new record first, in which a whole list is read (see read_all); None when the list
    # has no such order.
    newest_first = None
    default_search_by = None
    create_hint = 'leave id out to create it'
    # Read-only values the service gives every new record, which a create answer may lack.
    created_facts = {}

    def label(self, values):
        """How messages name a record (or the values of one to create)."""
        return '%s %s' % (self.noun, record_id(values)) if values.get('id') is not None else 'a new %s' % self.noun

    def get(self, client, resource_id):
        return client.get_or_none('%s/%s' % (self.path, resource_id))

    def read_all(self, client, query=None, until=None):
        """Every record of the list (filtered by ``query``), oldest first, as it stood while its pages were read.

        Read newest first, in which the client notices a record created or deleted between two pages and reads the
        list again (see :meth:`UptimeClient.list`); ``until`` stops the reading at the page where it is true.
        """
        return client.list(self.path, dict(query or {}, **self.newest_first, per_page=PAGE_SIZE), until)[::-1]

    def read_page(self, client, page):
        """Page ``page`` of the list, oldest first, so that a record created meanwhile lands on the last page: its
        records and the number of pages."""
        return client.read_page(self.path, dict(sort_by='id', sort='asc', per_page=PAGE_SIZE, page=page))

    def in_order(self, records, sort_by, descending):
        """``records`` (oldest first) in the order the service lists them by ``sort_by``: by id, or by the text of
        the field without regard to case (as the service on MySQL sorts), then by id."""
        if sort_by in (None, 'id'):
            return records[::-1] if descending else records
        return sorted(records, key=lambda record: ((to_text(record.get(sort_by)) or '').casefold(), record_id(record)),
                      reverse=descending)

    def locate(self, client, identity):
        """Find the record the task addresses; ``identity`` holds ``id`` and the natural key."""
        if identity.get('id') is not None:
            return Located(self.get(client, identity['id']))
        return Located(self.find_by_key(client, identity))

    def find_by_key(self, client, values):
        """The record whose natural key is in ``values``, or None."""
        raise NotImplementedError

    def is_conflict(self, exc):
        """Whether a refused create may mean that a concurrent run created the same record."""
        return False

    def find_conflicting(self, client, values, located=None):
        """After a create refused as a conflict: the record another actor created meanwhile that the task addresses
        (``located``: where the task looked for it before), or None.

        Raises, naming it, when the key is held by a record the service takes for the same and the task does not.
        """
        return self.find_by_key(client, values)

    def check_update(self, client, record, changes, refused=None):
        """Refuse, before the write and in check mode alike, ``changes`` to ``record`` that what another record holds
        rules out; with ``refused`` (the service's refusal of the write), name what the service took for a clash."""

    def kept_after_delete(self, record):
        """What deleting ``record`` makes the service undo on another record, which the task puts back:
        ``(resource, that record as the delete leaves it, the values to put back, what to tell)``, or None."""
        return None

    def prepare(self, desired, located, state, now, options):
        """The desired state to apply to the located record (or to create one); a hook for derived values.

        ``now`` is the time of the task (UTC, naive); ``options`` the values of the resource's task options.
        """
        return desired

    def settle_missing(self, client, desired, located, state, options, check_mode):
        """An Outcome when the record was not found and the task must not create it; None to create."""
        return None

    def complete(self, client, record, now):
        """A created record with what the create answer lacked, as the service sets it on create (``now``, UTC)."""
        return dict(record, **{key: value for key, value in self.created_facts.items() if record.get(key) is None})

    def view(self, values, record, located=None):
        """The returned form of option-term values; read-only facts come from ``record``."""
        raise NotImplementedError

    def record_view(self, record):
        return self.view(self.schema.current(record), record)

    def diff_names(self, desired):
        """The names a task's diff shows: the fields it manages and those that name the record."""
        return [field.name for field in self.schema.fields if field.name in desired or field.name in self.always_shown]

    def with_derived(self, values):
        """Option-term values with the read-only values derived from them, for diffs."""
        return values

    def narrow(self, client, lookups, query):
        """For an info task: the records a lookup option finds, or None to list with ``query`` (narrowed here)."""
        return None

    def list_test(self, query, order):
        """For an info task, a filter of ``query`` that the service's list lacks, taken out of ``query``: ``(keep, past)``,
        whether to keep a listed record and whether, in ``order`` (``(sort_by, descending)``), no record to keep can
        follow it (None when it cannot tell); None when ``query`` asks no such filter."""
        return None

    def check_lookups(self, lookups):
        """Refuse lookup options that do not go together, before any request."""

    def info_extras(self, records, lookups):
        """More keys of an info task's result, from the records it returns."""
        return {}


class NameMatcher:
    """Find records by their exact name, trimmed as the service stores names.

    A name that differs only in case is another record's, never this one's:
    :meth:`in_other_case` finds such records, which a service on a
    case-insensitive database takes for the same name. Each record matches one
    name at most.
    """

    def __init__(self):
        self.exact = {}
        self.folded = {}
        self.matched = set()

    def add(self, records):
        for record in records:
            name = to_text(record.get('name'))
            self.exact.setdefault(name, record)
            self.folded.setdefault(_folded(name), []).append(record)
        return self

    def has_exact(self, name):
        return to_text(name) in self.exact

    def find(self, name):
        record = self.exact.get(to_text(name))
        if record is not None:
            self.matched.add(id(record))
        return record

    def in_other_case(self, name):
        """The records whose name differs from ``name`` only in case."""
        name = to_text(name)
        return [record for record in self.folded.get(_folded(name), []) if to_text(record.get('name')) != name]

    def unmatched(self, records):
        return [record for record in records if id(record) not in self.matched]


def _folded(name):
    return (name or '').casefold()
