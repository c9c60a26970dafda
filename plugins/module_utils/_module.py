# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""AnsibleModule glue shared by every module of the collection."""

from __future__ import annotations

import traceback

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

from ._client import HAS_REQUESTS, REQUESTS_IMPORT_ERROR, UptimeApiError, UptimeClient
from ._engine import Engine, account_zone
from ._resource import ValidationError, is_sensitive_name, to_text

CONNECTION_ARGSPEC = dict(
    api_url=dict(type='str', fallback=(env_fallback, ['UPTIME_API_URL'])),
    api_key=dict(type='str', no_log=True, fallback=(env_fallback, ['UPTIME_API_KEY'])),
    validate_certs=dict(type='bool', default=True, fallback=(env_fallback, ['UPTIME_VALIDATE_CERTS'])),
    ca_path=dict(type='path'),
    timeout=dict(type='int', default=30),
    retries=dict(type='int', default=5),
    account_timezone=dict(type='str', fallback=(env_fallback, ['UPTIME_ACCOUNT_TIMEZONE'])),
)

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

    def __init__(self, secret_names, **kwargs):
        self._secret_names = secret_names
        super().__init__(**kwargs)

    def _load_params(self):
        super()._load_params()
        self.no_log_values.update(raw_secrets(self.params, self._secret_names))


class UptimeModule:
    """An AnsibleModule with the connection options, a client and error handling."""

    def __init__(self, argument_spec, supports_check_mode=True, **kwargs):
        spec = dict(CONNECTION_ARGSPEC)
        spec.update(argument_spec)
        self.ansible = _CensoringModule(no_log_option_names(spec), argument_spec=spec,
                                        supports_check_mode=supports_check_mode, **kwargs)
        self.params = self.ansible.params
        self.check_mode = self.ansible.check_mode
        if not HAS_REQUESTS:
            self.ansible.fail_json(msg=missing_required_lib('requests'), exception=str(REQUESTS_IMPORT_ERROR))
        for option, env in (('api_url', 'UPTIME_API_URL'), ('api_key', 'UPTIME_API_KEY')):
            if not self.params.get(option):
                self.ansible.fail_json(msg='%s is required: set the %s option or the %s environment variable'
                                       % (option, option, env))
        if not self.params['api_url'].lower().startswith(('http://', 'https://')):
            self.ansible.fail_json(msg='api_url: must start with http:// or https://, got %r' % self.params['api_url'])
        if self.params['timeout'] <= 0:
            self.ansible.fail_json(msg='timeout: must be a positive number of seconds, got %s' % self.params['timeout'])
        if self.params['retries'] < 0:
            self.ansible.fail_json(msg='retries: must be 0 or more, got %s' % self.params['retries'])
        self.client = UptimeClient(
            api_url=self.params['api_url'],
            api_key=self.params['api_key'],
            validate_certs=self.params['validate_certs'],
            ca_path=self.params['ca_path'],
            timeout=self.params['timeout'],
            retries=self.params['retries'],
        )
        try:
            self.zone = account_zone(self.client, self.params['account_timezone'])
        except ValidationError as exc:
            self.ansible.fail_json(msg=str(exc), field=exc.field)

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
        self.run(lambda: info_task(resource, self.client, self.params))

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
    spec['state'] = dict(type='str', default='present', choices=list(state_choices))
    return spec


def info_argument_spec(resource):
    return dict(INFO_ARGSPEC, **dict(resource.list_filters, **resource.lookup_options))


def ensure_task(resource, client, params, check_mode=False, identity=('id',), ignore=(), hide=None, now=None,
                zone=None):
    """The task of a module that manages one record: params in, the module result out."""
    schema, state = resource.schema, params['state']
    engine = Engine(resource, client, check_mode, now, zone)
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
    return {'changed': outcome.changed, resource.noun: view, 'diff': dict(before=diff_before, after=diff_after)}


def info_task(resource, client, params):
    """The task of an info module: one record by id, a lookup, or every page of a filtered list."""
    if params.get('limit') is not None and params['limit'] < 1:
        raise ValidationError('limit', 'must be 1 or more, got %s' % params['limit'])
    lookups = {name: params.get(name) for name in resource.lookup_options}
    if params.get('id') is not None:
        records = [resource.get(client, params['id'])]
    else:
        query = {name: params[name] for name in QUERY_OPTIONS + tuple(resource.list_filters)
                 if params.get(name) is not None}
        if 'search' in query:
            query['search_by'] = query.get('search_by') or resource.default_search_by
        else:
            query.pop('search_by', None)
        records = resource.narrow(client, lookups, query)
        if records is None:
            records = client.list(resource.path, query, limit=params.get('limit'))
    views = [resource.record_view(record) for record in records if record is not None]
    return dict({'changed': False, resource.plural: views}, **resource.info_extras(views, lookups))
