# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The tasks of the modules, from their parameters to their result: one record ensured, or records read.

Nothing here knows AnsibleModule: ``_module.py`` calls these with the
module's parameters and turns what they return or raise into its exit.
"""

from __future__ import annotations

from ._client import PAGE_SIZE
from ._engine import Engine, WrittenBeforeFailure
from ._schema import MISSING, ValidationError, is_local, record_id, to_text, to_utc_timestamp

# The options every info module has; what else a resource can be listed by is in its table.
INFO_ARGSPEC = dict(
    id=dict(type='int'),
    search=dict(type='str'),
    sort=dict(type='str', choices=['asc', 'desc']),
    per_page=dict(type='int', choices=[10, 25, 50, 100], default=PAGE_SIZE),
    limit=dict(type='int'),
    fields=dict(type='list', elements='str'),
)
QUERY_OPTIONS = ('search', 'sort', 'per_page')


def argument_spec(resource, identity, state_choices=('present', 'absent')):
    """The options of a module that manages one record: its fields, its identity and ``state``."""
    spec = resource.schema.argument_spec()
    spec.update((name, dict(type='int' if name == 'id' else 'str')) for name in identity if name not in spec)
    spec.update(resource.task_options)
    spec['state'] = dict(type='str', default='present', choices=list(state_choices))
    return spec


def info_argument_spec(resource):
    spec = dict(INFO_ARGSPEC, **dict(resource.list_filters, **resource.lookup_options))
    spec.update((option, dict(type='str')) for option in resource.list_bounds)
    return spec


class TimeBounds:
    """The time bounds of an info task, checked before any request, applied to each record while paging; with them the
    filters the service's list lacks (see :meth:`Resource.list_test`)."""

    def __init__(self, resource, params, query, zone=None):
        self.schema = resource.schema
        given = [(field, side, params[option], option) for option, (field, side) in resource.list_bounds.items()
                 if params.get(option) is not None]
        # Two local times, or two instants, keep their order whatever the zone: refused before it is read.
        self._refuse_inverted([(field, side, to_utc_timestamp(value, option), option, is_local(value, option))
                               for field, side, value, option in given], same_kind=True)
        self.bounds = [(field, side, to_utc_timestamp(value, option, zone), option)
                       for field, side, value, option in given]
        self._refuse_inverted([bound + (None,) for bound in self.bounds])
        default_sort_by, default_sort = resource.default_order
        self.sort_by = query.get('sort_by') or default_sort_by
        self.descending = (query.get('sort') or default_sort) == 'desc'
        self.keep, self.past = resource.list_test(query, (self.sort_by, self.descending)) or (None, None)

    @staticmethod
    def _refuse_inverted(bounds, same_kind=False):
        since = {field: (instant, option, kind) for field, side, instant, option, kind in bounds if side == 'since'}
        for field, side, instant, option, kind in bounds:
            if side != 'until' or field not in since or (same_kind and since[field][2] != kind):
                continue
            if since[field][0] > instant:
                raise ValidationError(since[field][1], 'must not be after %s (%s), got %s'
                                      % (option, instant, since[field][0]))

    def _value(self, record, field):
        value = self.schema.by_name[field].from_record(record)
        return None if value is MISSING else value

    def admit(self, record):
        """Whether ``record`` lies within every bound (a record without the bounded time does not) and passes the
        filters."""
        if self.keep is not None and not self.keep(record):
            return False
        for field, side, instant, dummy in self.bounds:
            value = self._value(record, field)
            if value is None or (value < instant if side == 'since' else value > instant):
                return False
        return True

    def passed(self, record):
        """Whether the list, in its order, has passed a bound or a filter: no later record can lie within it."""
        if self.past is not None and self.past(record):
            return True
        for field, side, instant, dummy in self.bounds:
            if field != self.sort_by or side != ('since' if self.descending else 'until'):
                continue
            value = self._value(record, field)
            if value is not None and (value < instant if self.descending else value > instant):
                return True
        return False

    def read(self, client, resource, query, limit):
        """The records within the bounds, up to ``limit``. Without a limit, a list that can be read whole is (see
        :meth:`Resource.read_all`), then put in the order asked; else its pages, up to the page that passed a bound."""
        if limit is None and resource.newest_first is not None:
            return resource.in_order(resource.read_all(client, query), self.sort_by, self.descending)
        found = []
        for records in client.iter_pages(resource.path, query):
            for record in records:
                if self.passed(record):
                    return found
                if self.admit(record):
                    found.append(record)
                    if limit is not None and len(found) >= limit:
                        return found
        return found


def ensure_task(resource, client, params, check_mode=False, identity=('id',), ignore=(), now=None, zone=None):
    """The task of a module that manages one record: params in, the module result out."""
    schema, state = resource.schema, params['state']
    engine = Engine(resource, client, check_mode, now, zone,
                    {name: params.get(name) for name in resource.task_options})
    desired = schema.checked(params, engine.now, zone=engine.zone) if state != 'absent' else {}
    keys = {}
    for name in identity:
        value = params.get(name)
        if value is not None:
            if name in schema.by_name:
                value = schema.by_name[name].normalise(value, engine.zone)
            keys[name] = to_text(value) if isinstance(value, str) else value
    try:
        outcome, located = engine.ensure(keys, desired, state, ignore)
    except WrittenBeforeFailure as exc:
        # The service was changed before the failure: the result says so, and what it holds now.
        exc.result = _ensure_result(resource, desired, exc.written, exc.located)
        exc.result['msg'] = '%s (before this failure, the task %s)' % (exc, _written_summary(resource, exc.written))
        raise
    result = _ensure_result(resource, desired, outcome, located)
    if outcome.message:
        result['msg'] = outcome.message
    return result


def _ensure_result(resource, desired, outcome, located):
    schema = resource.schema
    before, after = resource.with_derived(outcome.before), resource.with_derived(outcome.after)
    diff_before, diff_after = schema.diff(before, after, resource.diff_names(desired))
    diff = dict(before=diff_before, after=diff_after)
    if outcome.after_header:
        diff['after_header'] = outcome.after_header
    view = resource.view(outcome.after, outcome.record, located) if outcome.after is not None else {}
    return {'changed': outcome.changed, resource.noun: view, 'diff': diff}


def _written_summary(resource, outcome):
    """What a task wrote before it failed, in one line: the record and the fields it changed."""
    values = outcome.after or outcome.before or {}
    label = '%s%s (id %s)' % (resource.noun, ' %r' % values['name'] if values.get('name') else '',
                              record_id(outcome.record or {}))
    if outcome.before is None:
        return 'created %s' % label
    if outcome.after is None:
        return 'deleted %s' % label
    changed = sorted(resource.schema.differences(outcome.after or {}, outcome.before))
    return 'updated %s%s' % (label, ' (%s)' % ', '.join(changed) if changed else '')


def info_task(resource, client, params, zone=None):
    """The task of an info module: one record by id, a lookup, or every page of a filtered list."""
    if params.get('limit') is not None and params['limit'] < 1:
        raise ValidationError('limit', 'must be 1 or more, got %s' % params['limit'])
    lookups = {name: params.get(name) for name in resource.lookup_options}
    resource.check_lookups(lookups)
    query = {name: params[name] for name in QUERY_OPTIONS + tuple(resource.list_filters)
             if params.get(name) is not None}
    if 'search' in query:
        query['search_by'] = query.get('search_by') or resource.default_search_by
    else:
        query.pop('search_by', None)
    fields = params.get('fields')
    unknown = [key for key in fields or () if key not in resource.view_keys]
    if unknown or fields == []:
        raise ValidationError('fields', 'must be keys of a returned %s, one or more of %s; got %s'
                              % (resource.noun, ', '.join(resource.view_keys), ', '.join(map(repr, unknown)) or 'none'))
    bounds = TimeBounds(resource, params, query, zone)
    if params.get('id') is not None:
        records = [resource.get(client, params['id'])]
    else:
        records = resource.narrow(client, lookups, query)
        if records is None:
            records = bounds.read(client, resource, query, params.get('limit'))
    records = [record for record in records if record is not None and bounds.admit(record)]
    views = [resource.record_view(record) for record in records]
    if fields:  # the keys asked, in the order asked: an answer that fits a terminal or a template
        views = [{key: view.get(key) for key in fields} for view in views]
    return dict({'changed': False, resource.plural: views}, **resource.info_extras(records, lookups))
