# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""AnsibleModule glue shared by every module of the collection."""

from __future__ import annotations

import traceback

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

from ._client import HAS_REQUESTS, REQUESTS_IMPORT_ERROR, UptimeApiError, UptimeClient
from ._resource import ValidationError

CONNECTION_ARGSPEC = dict(
    api_url=dict(type='str', fallback=(env_fallback, ['UPTIME_API_URL'])),
    api_key=dict(type='str', no_log=True, fallback=(env_fallback, ['UPTIME_API_KEY'])),
    validate_certs=dict(type='bool', default=True, fallback=(env_fallback, ['UPTIME_VALIDATE_CERTS'])),
    ca_path=dict(type='path'),
    timeout=dict(type='int', default=30),
    retries=dict(type='int', default=5),
)


class UptimeModule:
    """An AnsibleModule with the connection options, a client and error handling."""

    def __init__(self, argument_spec, supports_check_mode=True, **kwargs):
        spec = dict(CONNECTION_ARGSPEC)
        spec.update(argument_spec)
        self.ansible = AnsibleModule(argument_spec=spec, supports_check_mode=supports_check_mode, **kwargs)
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
