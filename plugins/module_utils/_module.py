# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""AnsibleModule glue shared by every module of the collection."""

from __future__ import annotations

import decimal
import math
import os
import traceback

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

from ._client import HAS_REQUESTS, REQUESTS_IMPORT_ERROR, UptimeApiError
from ._connection import CONNECTION_OPTIONS, account_zone, connect, connection_settings
from ._engine import WrittenBeforeFailure
from ._renamed import refuse_renamed
from ._schema import MASK, Field, ValidationError
from ._tasks import ensure_task, info_task

try:  # ansible-core 2.22: what the controller's display hides wherever it appears
    from ansible.module_utils.secrets import register_secrets
except ImportError:
    register_secrets = None

# The shortest secret the display is told to hide wherever it appears. A shorter one is too likely to be true text
# (a password `web`, the monitor `staging web`): the collection masks it where it stands, in its field or URL part.
DISPLAY_SECRET_MIN_LENGTH = 8


def register_for_display(secrets):
    """Tell ansible-core's display (2.22 and later) to hide each of ``secrets`` long enough to be no true text."""
    if register_secrets is not None:
        register_secrets(secret for secret in secrets if len(secret.strip()) >= DISPLAY_SECRET_MIN_LENGTH)


def connection_argument_spec():
    """The connection options as an argument spec, with their environment variables as fallbacks."""
    spec = {}
    for name, option in CONNECTION_OPTIONS.items():
        spec[name] = dict(type=option['type'])
        if option.get('default') is not None:
            spec[name]['default'] = option['default']
        if option.get('secret'):
            spec[name]['no_log'] = True
        if option.get('env'):
            spec[name]['fallback'] = (env_fallback, [option['env']])
    return spec


CONNECTION_ARGSPEC = connection_argument_spec()


def no_log_option_names(spec):
    """Names of the options, at any depth, whose values Ansible must never show."""
    names = set()
    for name, option in spec.items():
        if option.get('no_log'):
            names.add(name)
        names.update(no_log_option_names(option.get('options') or {}))
    return names


def raw_secrets(value, secret_names, fields=None):
    """Secret values in module arguments as given, before any validation, whatever their YAML type.

    Values of options named in ``secret_names`` and of secret fields of ``fields``; the ``value`` of every
    ``{key, value}`` item of a list option of ``fields`` whose rule (the
    field's ``sensitive_items``) finds it secret: a field is secret by what it
    is, so a number (``value: 987654321``) is as secret as a string; and the
    secret parts of a text option of ``fields`` (a URL's password).
    """
    fields = fields or {}
    found = []
    if isinstance(value, dict):
        for name, item in value.items():
            field = fields.get(name)
            if name in secret_names or (field is not None and field.secret):
                found.extend(text for text in _scalar_texts(item) if text != MASK)
                continue
            if field is not None and field.sensitive_items:
                found.extend(_secret_item_texts(item, field.sensitive_items))
            elif field is not None and isinstance(item, str):
                found.extend(field.secret_values(item))
            found.extend(raw_secrets(item, secret_names, fields))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found.extend(raw_secrets(item, secret_names, fields))
    return found


def _secret_item_texts(items, rule):
    """The values of the items of a list option as given that ``rule`` finds secret, in whatever shape they were
    given: a list, a dict by position, one item without its list, or nested lists (all refused later)."""
    if isinstance(items, dict) and 'key' in items:
        # A masked value (as results show it) is no secret: it stands for the stored one.
        shown = rule(items)
        return _scalar_texts(items.get('value')) if shown is not None and shown != items.get('value') else []
    if isinstance(items, dict):
        items = list(items.values())
    if not isinstance(items, (list, tuple)):
        return []
    return [text for item in items for text in _secret_item_texts(item, rule)]


def _scalar_texts(value):
    """A secret value as text, as Ansible compares its no_log values (nested values too)."""
    if isinstance(value, (dict, list, tuple)):
        return [text for item in (value.values() if isinstance(value, dict) else value) for text in _scalar_texts(item)]
    return [str(value)] if value is not None and str(value) != '' else []


def non_finite(value, path='', option=None):
    """The option path of the first value a number check would read as infinite or not a number, or None: Ansible's
    int type check ends in an OverflowError on one. Any float counts (YAML's .inf and .nan, which no option can take);
    a text counts where ``option`` is a number ('inf', 'NaN')."""
    option = option or {}
    if isinstance(value, float) and not math.isfinite(value):
        return path
    if isinstance(value, str) and option.get('type') in ('int', 'float'):
        try:
            return None if decimal.Decimal(value.strip()).is_finite() else path
        except decimal.InvalidOperation:
            return None
    if isinstance(value, dict):
        spec = option.get('options') or {}
        items = (('%s.%s' % (path, key) if path else str(key), item, spec.get(key)) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        element = {'type': option.get('elements'), 'options': option.get('options')}
        items = (('%s[%d]' % (path, index), item, element) for index, item in enumerate(value))
    else:
        return None
    for where, item, item_option in items:
        found = non_finite(item, where, item_option)
        if found:
            return found
    return None


def list_given_as_text(params, spec):
    """The option of ``spec`` that takes a list of dicts and was given a string: Ansible splits the string at commas
    and then fails in words that name no option ("dictionary requested, could not parse JSON or key=value")."""
    for name, option in spec.items():
        if option.get('type') == 'list' and option.get('elements') == 'dict' and isinstance(params.get(name), str):
            return name
    return None


# What AnsibleModule shows for a value that is a no_log value whole.
NO_LOG_WHOLE = 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'


def censored(value, secrets):
    """``value`` with ``secrets`` censored as AnsibleModule censored its no_log values up to ansible-core 2.21 (2.22
    leaves it to the controller's display): a text that is one of them whole, or a number holding one, as
    NO_LOG_WHOLE; each one in a longer text as the mask. Keys, booleans and None stay as they are."""
    secrets = [secret for secret in secrets if secret]
    if not secrets:
        return value

    def censor(item):
        if isinstance(item, dict):
            return {key: censor(each) for key, each in item.items()}
        if isinstance(item, (list, tuple)):
            return [censor(each) for each in item]
        if isinstance(item, str):
            if item in secrets:
                return NO_LOG_WHOLE
            for secret in secrets:
                item = item.replace(secret, MASK)
            return item
        if isinstance(item, (int, float)) and not isinstance(item, bool) and any(secret in str(item) for secret in secrets):
            return NO_LOG_WHOLE
        return item
    return censor(value)


def task_result(result, params, shown, secrets):
    """``result`` as a task of the collection returns it, in the module or in the worker: its ``invocation`` the
    arguments as shown (``shown``), or as given (``params``) while validation has not ended, and ``secrets`` censored."""
    result.setdefault('invocation', {'module_args': params if shown is None else shown})
    return censored(result, secrets)


def shown_arguments(values, spec, fields):
    """Validated arguments as ``-vvv`` shows them (the result's ``invocation``): every secret in the collection's own
    masked form, what a result shows for it, and nothing else changed."""
    shown = {}
    for name, value in values.items():
        option = spec.get(name) or {}
        if value is None:
            shown[name] = None
        elif option.get('no_log'):
            shown[name] = MASK
        elif name in fields:
            shown[name] = fields[name].mask(value)
        elif option.get('options'):  # the collection's nested options are lists of dicts
            shown[name] = [shown_arguments(item, option['options'], fields) for item in value]
        else:
            shown[name] = value
    return shown


def secrets_as_given(params, secret_names, fields):
    """The secret values of module arguments as given (see :func:`raw_secrets`), with the connection options left out
    that validation takes from the environment: its failure echoes them too."""
    given = dict(params)
    for name, option in CONNECTION_OPTIONS.items():
        if option.get('env') and given.get(name) in (None, ''):
            given[name] = os.environ.get(option['env'])
    return raw_secrets(given, secret_names, fields)


def check_as_given(params, spec, precheck=None):
    """A module's own checks of its arguments as given, before Ansible validates them, so that their messages (naming
    a nested entry, say) come first: raises ValidationError naming the option."""
    where = non_finite(params, option={'options': spec})
    if where:
        raise ValidationError(where, 'must be a finite number or text, got an infinite number or not a number')
    if precheck is not None:
        precheck(params)
    where = list_given_as_text(params, spec)
    if where:
        raise ValidationError(where, 'must be a list of dicts, got a string')


class _MaskingModule(AnsibleModule):
    """An AnsibleModule whose results are masked by the collection, never censored by Ansible.

    Ansible replaced every occurrence of each of its no_log values anywhere in a
    result: a password ``web`` turned the monitor ``staging web`` into ``staging
    ********``, and its cost grows with the values times the text. Until the
    arguments are validated, they are censored (a failed validation echoes the
    arguments as given, in any shape): by the collection itself, as ansible-core
    2.22 no longer censors a module's result; after, every result is masked where
    a secret is, as the collection shows it, and the ``invocation`` too.
    """

    def __init__(self, secret_names, fields, precheck=None, **kwargs):
        self._secret_names = secret_names
        self._fields = fields
        self._precheck = precheck
        self._shown_arguments = None
        self._task_no_log = False
        # no_log: AnsibleModule's own record of the invocation in the system log would show a secret it does not
        # know as one (a password the collection masks itself, a header's value): the module writes its own.
        super().__init__(supports_check_mode=True, no_log=True, **kwargs)
        self._shown_arguments = shown_arguments(self.params, self.argument_spec, fields)
        self.no_log_values.clear()
        self.no_log = self._task_no_log
        self.log('Invoked with %s' % ' '.join('%s=%s' % item for item in self._shown_arguments.items()),
                 log_args={name: str(value) for name, value in self._shown_arguments.items()})

    def _load_params(self):
        super()._load_params()
        # The task's no_log says whether the module logs; it would also set AnsibleModule's own, kept on.
        self._task_no_log = self.boolean(self.params.pop('_ansible_no_log', False))
        self.no_log_values.update(secrets_as_given(self.params, self._secret_names, self._fields))

    def _set_internal_properties(self):
        # The last step before Ansible validates the arguments.
        super()._set_internal_properties()
        try:
            check_as_given(self.params, self.argument_spec, self._precheck)
        except ValidationError as exc:
            self.fail_json(msg=str(exc), field=exc.field)

    def _return_formatted(self, kwargs):
        super()._return_formatted(task_result(kwargs, self.params, self._shown_arguments, self.no_log_values))


def _before(first, then=None):
    """A precheck that runs ``first``, then ``then`` when there is one."""
    def precheck(params):
        first(params)
        if then is not None:
            then(params)
    return precheck


class UptimeModule:
    """An AnsibleModule with the connection options, a client and error handling."""

    def __init__(self, argument_spec, precheck=None, schema=None, runner=None, renamed=None, **kwargs):
        """``precheck(params)``: raises ValidationError on arguments as given, before Ansible validates them.

        ``renamed``: the module's part of ``_renamed.RENAMED``, the options renamed before the first release.

        ``schema``: the resource whose fields the arguments hold (at any depth), whose secret list items and
        secret parts of texts are masked in the arguments shown.

        ``runner``: what takes the arguments, validates them and ends the task, as an AnsibleModule does; built as
        ``runner(secret_names, fields, precheck, argument_spec=..., **kwargs)``. By default
        the module's own process; the action plugins pass one that runs the task in Ansible's worker.
        """
        spec = dict(CONNECTION_ARGSPEC)
        spec.update(argument_spec)
        fields = {field.name: field for field in (schema.fields if schema else ())
                  if field.secret or field.sensitive_items or field.secret_spans}
        fields.update((name, Field(name, secret_spans=option['secret_spans']))
                      for name, option in CONNECTION_OPTIONS.items() if option.get('secret_spans'))
        if schema is not None:
            # The fields as given first, named as the module's own checks name them (Ansible's words name no option
            # of a list of pairs given as a string).
            precheck = _before(schema.check_as_given, precheck)
        if renamed:  # first: an old spelling is no unknown option
            precheck = _before(lambda params: refuse_renamed(params, renamed), precheck)
        secret_names = no_log_option_names(spec)
        self.ansible = (runner or _MaskingModule)(secret_names, fields, precheck, argument_spec=spec, **kwargs)
        self.params = self.ansible.params
        self.check_mode = self.ansible.check_mode
        register_for_display(secrets_as_given(self.params, secret_names, fields))
        if not HAS_REQUESTS:
            self.ansible.fail_json(msg=missing_required_lib('requests'), exception=str(REQUESTS_IMPORT_ERROR))
        try:
            # As the inventory plugin and the event source read them: an empty value is unset, and falls back to its
            # environment variable (Ansible's fallback takes only a value left out).
            self.params.update(connection_settings(self.params.get))
            # The one value Ansible still censors: the key every request carries, so that text quoting a request (a
            # proxy's error page) never shows it. A key is a long random token, which no true text of a result holds.
            self.ansible.no_log_values.add(self.params['api_key'])
            self.client = connect(self.params)
            self.zone = account_zone(self.client, self.params['account_timezone'])
        except ValidationError as exc:
            self.ansible.fail_json(msg=str(exc), field=exc.field)
        for warning in self.client.transport_warnings:
            self.ansible.warn(warning)

    def ensure(self, resource, identity, ignore=()):
        """Run the present/absent task of ``resource`` and exit."""
        self.run(lambda: ensure_task(resource, self.client, self.params, self.check_mode, identity, ignore,
                                     zone=self.zone))

    def info(self, resource):
        self.run(lambda: info_task(resource, self.client, self.params, self.zone))

    def run(self, action):
        """Call ``action()`` (returning the result dict) and exit; failures become clear messages."""
        try:
            result = action()
        except (ValidationError, UptimeApiError, WrittenBeforeFailure) as exc:
            # A failure after a write carries the result of that write (changed, the record, the diff).
            written = exc if isinstance(exc, WrittenBeforeFailure) else None
            error = written.error if written else exc
            failure = dict(msg=str(error), field=error.field) if isinstance(error, ValidationError) else \
                dict(error.to_result(), msg=str(error))
            if written is not None:
                failure.update(written.result or {})
            failure['msg'] = self.client.redact(failure['msg'])
            self.ansible.fail_json(**failure)
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # A defect must still end in one readable line; the trace stays available with -vvv.
            self.ansible.fail_json(msg=self.client.redact('unexpected error: %s: %s' % (type(exc).__name__, exc)),
                                   exception=self.client.redact(traceback.format_exc()))
        self.ansible.exit_json(**result)
