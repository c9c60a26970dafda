# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""AnsibleModule glue shared by every module of the collection."""

from __future__ import annotations

import traceback

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

from ._client import HAS_REQUESTS, REQUESTS_IMPORT_ERROR, UptimeApiError, UptimeClient
from ._resource import ValidationError, is_sensitive_name

CONNECTION_ARGSPEC = dict(
    api_url=dict(type='str', fallback=(env_fallback, ['UPTIME_API_URL'])),
    api_key=dict(type='str', no_log=True, fallback=(env_fallback, ['UPTIME_API_KEY'])),
    validate_certs=dict(type='bool', default=True, fallback=(env_fallback, ['UPTIME_VALIDATE_CERTS'])),
    ca_path=dict(type='path'),
    timeout=dict(type='int', default=30),
    retries=dict(type='int', default=5),
)


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

    def hide(self, values):
        """Have Ansible censor these values wherever they might appear."""
        for value in values:
            if value:
                self.ansible.no_log_values.add(value)

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
