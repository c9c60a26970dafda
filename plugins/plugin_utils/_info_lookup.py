# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the lookups monitors and incidents share: the filters and fields of the info modules, checked by the same
argument spec, read by the same task (``info_task``), on the same connection options."""

from __future__ import annotations

from ansible import constants as C
from ansible.errors import AnsibleLookupError
from ansible.module_utils.basic import missing_required_lib
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.lookup import LookupBase

from ansible_collections.uptime.monitoring.plugins.module_utils._client import HAS_REQUESTS, UptimeApiError
from ansible_collections.uptime.monitoring.plugins.module_utils._connection import (
    PLUGIN_CONNECTION_NAMES,
    account_fingerprint,
    account_zone,
    connect,
    connection_settings,
)
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import ValidationError
from ansible_collections.uptime.monitoring.plugins.module_utils._tasks import info_argument_spec, info_task
from ansible_collections.uptime.monitoring.plugins.plugin_utils._lookup_cache import kept_read

# An export is a module's answer (monitor_info export=true): a template reads records.
MODULE_ONLY = ('export', 'reveal_secrets')


class InfoLookup(LookupBase):
    """A lookup that returns the records an info module would, as a list (one record an item)."""

    resource = None
    mutually_exclusive = ()
    reads_times = False

    def run(self, terms, variables=None, **kwargs):
        name = 'uptime.monitoring.%s' % self.resource.plural
        if terms:
            raise AnsibleLookupError('%s takes options only (such as status=offline), no terms; got %r' % (name, terms))
        self.set_options(var_options=self._declared_variables(variables or {}), direct=kwargs)
        try:
            settings = connection_settings(self.get_option, PLUGIN_CONNECTION_NAMES + (('account_timezone',) if self.reads_times else ()))
        except ValidationError as exc:
            raise AnsibleLookupError('%s: %s' % (name, exc)) from None
        spec = {option: rule for option, rule in info_argument_spec(self.resource).items() if option not in MODULE_ONLY}
        given = {option: self.get_option(option) for option in spec}
        checked = ArgumentSpecValidator(spec, mutually_exclusive=self.mutually_exclusive).validate(
            {option: value for option, value in given.items() if value is not None})
        if checked.error_messages:
            raise AnsibleLookupError('%s: %s' % (name, checked.error_messages[0]))
        if not HAS_REQUESTS:
            raise AnsibleLookupError(missing_required_lib('requests'))
        client = connect(settings)

        def read():
            """The records, or the failure met, as ``{'failed': message}``: the forks asking the same get it too."""
            try:
                zone = account_zone(client, settings.get('account_timezone')) if self.reads_times else None
                return info_task(self.resource, client, checked.validated_parameters, zone)[self.resource.plural]
            except ValidationError as exc:
                return {'failed': str(exc)}
            except UptimeApiError as exc:
                return {'failed': client.redact(str(exc))}
        # Every option but the key (the fingerprint stands for it) names what was read.
        options = [self.resource.plural, checked.validated_parameters, {key: value for key, value in settings.items() if key != 'api_key'}]
        found = kept_read(account_fingerprint(settings), options, self.get_option('cache_seconds'), read)
        if isinstance(found, dict):
            raise AnsibleLookupError('%s: %s' % (name, found['failed']))
        return found

    def _declared_variables(self, variables):
        """The variables the options declare (``uptime_api_key``, ...), templated as a task's are: a play's
        ``uptime_api_key: "{{ vault_uptime_api_key }}"`` gives its value, not its template."""
        declared = {entry['name'] for definition in C.config.get_configuration_definitions('lookup', self._load_name).values()
                    for entry in definition.get('vars') or ()}
        return {name: self._templar.template(variables[name]) for name in declared if name in variables}
