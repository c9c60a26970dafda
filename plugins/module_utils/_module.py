# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""AnsibleModule glue shared by every module of the collection."""

from __future__ import annotations

import traceback

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

from ._client import HAS_REQUESTS, REQUESTS_IMPORT_ERROR, UptimeApiError, UptimeClient, ca_path_problem
from ._engine import Engine, account_zone
from ._resource import MISSING, ValidationError, is_local, is_sensitive_name, to_text, to_utc_timestamp

# The environment variables the connection options fall back to (also in the doc fragment, and the AWX credential type).
CONNECTION_ENV = dict(api_url='UPTIME_API_URL', api_key='UPTIME_API_KEY', validate_certs='UPTIME_VALIDATE_CERTS',
                      account_timezone='UPTIME_ACCOUNT_TIMEZONE')
CONNECTION_ARGSPEC = dict(
    api_url=dict(type='str', fallback=(env_fallback, [CONNECTION_ENV['api_url']])),
    api_key=dict(type='str', no_log=True, fallback=(env_fallback, [CONNECTION_ENV['api_key']])),
    validate_certs=dict(type='bool', default=True, fallback=(env_fallback, [CONNECTION_ENV['validate_certs']])),
    ca_path=dict(type='path'),
    timeout=dict(type='int', default=30),
    retries=dict(type='int', default=5),
    account_timezone=dict(type='str', fallback=(env_fallback, [CONNECTION_ENV['account_timezone']])),
)


def connection_problem(options):
    """What is wrong with the connection options (modules' params or a plugin's options), as one line; None if nothing.

    Checked before any request, so a bad option never reaches the service.
    """
    for option in ('api_url', 'api_key'):
        if not options.get(option):
            return '%s is required: set the %s option or the %s environment variable' % (option, option,
                                                                                         CONNECTION_ENV[option])
    if not str(options['api_url']).lower().startswith(('http://', 'https://')):
        return 'api_url: must start with http:// or https://, got %r' % options['api_url']
    if options['timeout'] <= 0:
        return 'timeout: must be a positive number of seconds, got %s' % options['timeout']
    if options['retries'] < 0:
        return 'retries: must be 0 or more, got %s' % options['retries']
    return ca_path_problem(options.get('ca_path'))


def connect(options):
    """A client on the connection options (checked with ``connection_problem``)."""
    return UptimeClient(api_url=options['api_url'], api_key=options['api_key'],
                        validate_certs=options['validate_certs'], ca_path=options['ca_path'],
                        timeout=options['timeout'], retries=options['retries'])


# The options every info module has; what else a resource can be listed by is in its table.
INFO_ARGSPEC = dict(
    id=dict(type='int'),
    search=dict(type='str'),
    sort=dict(type='str', choices=['asc', 'desc']),
    per_page=dict(type='int', choices=[10, 25, 50, 100], default=100),
    limit=dict(type='int'),
)
QUERY_OPTIONS = ('search', 'sort', 'per_page')


def no_log_option_names(spec):
    """Names of the options, at any depth, whose values Ansible must never show."""
    names = set()
    for name, option in spec.items():
        if option.get('no_log'):
            names.add(name)
        names.update(no_log_option_names(option.get('options') or {}))
    return names


def raw_secrets(value, secret_names):
    """Secret values in module arguments as given, before any validation.

    Values of options named in ``secret_names`` and the ``value`` of every
    ``{key, value}`` item whose key names a sensitive header.
    """
    found = []
    if isinstance(value, dict):
        if is_sensitive_name(value.get('key')) and isinstance(value.get('value'), str) and value['value']:
            found.append(value['value'])
        for name, item in value.items():
            if name in secret_names and isinstance(item, (str, int)) and str(item):
                found.append(str(item))
            else:
                found.extend(raw_secrets(item, secret_names))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found.extend(raw_secrets(item, secret_names))
    return found


class _CensoringModule(AnsibleModule):
    """An AnsibleModule that knows the secrets of its arguments before validating them.

    Argument validation may fail before Ansible has collected the no_log
    values of nested options, and its failure result echoes the arguments.
    """

    def __init__(self, secret_names, precheck=None, **kwargs):
        self._secret_names = secret_names
        self._precheck = precheck
        super().__init__(**kwargs)

    def _load_params(self):
        super()._load_params()
        self.no_log_values.update(raw_secrets(self.params, self._secret_names))

    def _set_internal_properties(self):
        # The last step before Ansible validates the arguments: a module's own check of the arguments as given
        # runs here, so that its messages (naming a nested entry, say) come first.
        super()._set_internal_properties()
        if self._precheck is not None:
            try:
                self._precheck(self.params)
            except ValidationError as exc:
                self.fail_json(msg=str(exc), field=exc.field)


class UptimeModule:
    """An AnsibleModule with the connection options, a client and error handling."""

    def __init__(self, argument_spec, supports_check_mode=True, precheck=None, **kwargs):
        """``precheck(params)``: raises ValidationError on arguments as given, before Ansible validates them."""
        spec = dict(CONNECTION_ARGSPEC)
        spec.update(argument_spec)
        self.ansible = _CensoringModule(no_log_option_names(spec), precheck, argument_spec=spec,
                                        supports_check_mode=supports_check_mode, **kwargs)
        self.params = self.ansible.params
        self.check_mode = self.ansible.check_mode
        if not HAS_REQUESTS:
            self.ansible.fail_json(msg=missing_required_lib('requests'), exception=str(REQUESTS_IMPORT_ERROR))
        problem = connection_problem(self.params)
        if problem:
            self.ansible.fail_json(msg=problem)
        self.client = connect(self.params)
        try:
            self.zone = account_zone(self.client, self.params['account_timezone'])
        except ValidationError as exc:
            self.ansible.fail_json(msg=str(exc), field=exc.field)
        for warning in self.client.transport_warnings:
            self.ansible.warn(warning)

    def hide(self, values):
        """Have Ansible censor these values wherever they might appear."""
        for value in values:
            if value:
                self.ansible.no_log_values.add(value)

    def ensure(self, resource, identity, ignore=()):
        """Run the present/absent task of ``resource`` and exit."""
        self.run(lambda: ensure_task(resource, self.client, self.params, self.check_mode, identity, ignore,
                                     self.hide, zone=self.zone))

    def info(self, resource):
        self.run(lambda: info_task(resource, self.client, self.params, self.zone))

    def run(self, action):
        """Call ``action()`` (returning the result dict) and exit; failures become clear messages."""
        try:
            result = action()
        except ValidationError as exc:
            self.ansible.fail_json(msg=str(exc), field=exc.field)
        except UptimeApiError as exc:
            self.ansible.fail_json(msg=self.client.redact(str(exc)), **exc.to_result())
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # A defect must still end in one readable line; the trace stays available with -vvv.
            self.ansible.fail_json(msg=self.client.redact('unexpected error: %s: %s' % (type(exc).__name__, exc)),
                                   exception=self.client.redact(traceback.format_exc()))
        self.ansible.exit_json(**result)


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
    """The time bounds of an info task, checked before any request, applied to each record while paging."""

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
        """Whether ``record`` lies within every bound (a record without the bounded time does not)."""
        for field, side, instant, dummy in self.bounds:
            value = self._value(record, field)
            if value is None or (value < instant if side == 'since' else value > instant):
                return False
        return True

    def passed(self, record):
        """Whether the list, in its order, has passed a bound: no later record can lie within it."""
        for field, side, instant, dummy in self.bounds:
            if field != self.sort_by or side != ('since' if self.descending else 'until'):
                continue
            value = self._value(record, field)
            if value is not None and (value < instant if self.descending else value > instant):
                return True
        return False

    def read(self, client, path, query, limit):
        """The records of every page within the bounds, up to ``limit``; stops at the page that passed a bound."""
        found = []
        for records in client.iter_pages(path, query):
            for record in records:
                if self.passed(record):
                    return found
                if self.admit(record):
                    found.append(record)
                    if limit is not None and len(found) >= limit:
                        return found
        return found


def ensure_task(resource, client, params, check_mode=False, identity=('id',), ignore=(), hide=None, now=None,
                zone=None):
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
    outcome, located = engine.ensure(keys, desired, state, ignore)
    for values in (desired, outcome.before):
        if hide is not None and values:
            hide(schema.secret_values(values))
    before, after = resource.with_derived(outcome.before), resource.with_derived(outcome.after)
    diff_before, diff_after = schema.diff(before, after, resource.diff_names(desired))
    view = resource.view(outcome.after, outcome.record, located.context) if outcome.after is not None else {}
    result = {'changed': outcome.changed, resource.noun: view, 'diff': dict(before=diff_before, after=diff_after)}
    # What the task found to do, when it is not plain from the result (a resource's lookup may say).
    if located.context.get('message'):
        result['msg'] = located.context['message']
    return result


def info_task(resource, client, params, zone=None):
    """The task of an info module: one record by id, a lookup, or every page of a filtered list."""
    if params.get('limit') is not None and params['limit'] < 1:
        raise ValidationError('limit', 'must be 1 or more, got %s' % params['limit'])
    lookups = {name: params.get(name) for name in resource.lookup_options}
    query = {name: params[name] for name in QUERY_OPTIONS + tuple(resource.list_filters)
             if params.get(name) is not None}
    if 'search' in query:
        query['search_by'] = query.get('search_by') or resource.default_search_by
    else:
        query.pop('search_by', None)
    bounds = TimeBounds(resource, params, query, zone)
    if params.get('id') is not None:
        records = [resource.get(client, params['id'])]
    else:
        records = resource.narrow(client, lookups, query)
        if records is None:
            records = bounds.read(client, resource.path, query, params.get('limit'))
    views = [resource.record_view(record) for record in records if record is not None and bounds.admit(record)]
    return dict({'changed': False, resource.plural: views}, **resource.info_extras(views, lookups))
