# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Monitors: their description, validation, and find/compare/create/update/delete."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ._client import UptimeApiError
from ._resource import (
    MASK,
    Field,
    Schema,
    ValidationError,
    confirm_after_ambiguity,
    diff_views,
    is_sensitive_name,
    record_id,
    timestamp_or_text,
)

MONITORS_PATH = '/api/v1/monitors'
INTERVALS = [60, 180, 300, 600, 900, 1800, 3600]
ALERT_CONDITIONS = ['url_unavailable', 'url_text', 'url_no_text']
REQUEST_METHODS = ['GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']
EXPIRY_ALERT_DAYS = [0, 1, 2, 3, 7, 14, 30, 60]
ALERT_CHANNELS = ['email', 'webhook', 'slack', 'teams', 'discord', 'flock', 'telegram', 'sms']
URL_CHANNELS = ('webhook', 'slack', 'teams', 'discord', 'flock')
MAX_LIST_ENTRIES = 100
EMAIL = re.compile(r'^[^@\s]+@[^@\s]+$')
SMS = re.compile(r'^[0-9+]{1,16}$')


def _paused_from_status(record):
    status = record.get('status')
    if status is None:
        return None
    return status == 'paused'


MONITOR = Schema([
    Field('name', required_on_create=True, companions=()),
    Field('url', required_on_create=True),
    Field('interval', 'int', choices=INTERVALS, required_on_create=True),
    # The service checks the lookup text against the condition of the same request.
    Field('alert_condition', choices=ALERT_CONDITIONS, create_default='url_unavailable',
          companions=('alert_text_lookup',)),
    Field('alert_text_lookup', companions=('alert_condition',)),
    Field('request_method', choices=REQUEST_METHODS, create_default='GET'),
    Field('request_headers', 'pairs', sensitive_items=True),
    Field('request_auth_username', companions=('request_auth_password',)),
    Field('request_auth_password', secret=True, companions=('request_auth_username',)),
    Field('cache_buster', 'bool'),
    Field('ssl_alert_days', 'int', choices=EXPIRY_ALERT_DAYS),
    Field('domain_alert_days', 'int', choices=EXPIRY_ALERT_DAYS),
    Field('maintenance_start_at', 'timestamp', companions=('maintenance_end_at',)),
    Field('maintenance_end_at', 'timestamp', companions=('maintenance_start_at',)),
    Field('alerts', 'pairs', item_key_choices=ALERT_CHANNELS),
    Field('pause', 'bool', aliases=['paused'], on_create=False, read=_paused_from_status),
])

MONITOR_API_NAMES = frozenset(field.api_name for field in MONITOR.fields)

MONITOR_ARGSPEC = dict(
    MONITOR.argument_spec(),
    id=dict(type='int'),
    state=dict(type='str', default='present', choices=['present', 'absent']),
    update_password=dict(type='str', default='always', choices=['always', 'on_create'], no_log=False),
)


def is_url(value, max_length):
    if not value or len(value) > max_length or any(char.isspace() for char in value):
        return False
    parts = urlsplit(value)
    return parts.scheme in ('http', 'https') and bool(parts.netloc)


def validate_monitor(desired, params=None):
    """Check what the service would refuse, before any request is sent."""
    params = params or {}
    name = desired.get('name')
    if 'name' in desired and (name is None or not 1 <= len(name) <= 128):
        raise ValidationError('name', 'must be 1 to 128 characters long')
    if 'url' in desired and not is_url(desired['url'], 2048):
        raise ValidationError('url', '%r is not a valid http:// or https:// URL of at most 2048 characters'
                              % (desired['url'],))
    condition = desired.get('alert_condition')
    if condition in ('url_text', 'url_no_text') and not desired.get('alert_text_lookup'):
        raise ValidationError('alert_text_lookup', 'is required when alert_condition is %s (the text to look for '
                                                   'in the response)' % condition)
    if len(desired.get('alert_text_lookup') or '') > 255:
        raise ValidationError('alert_text_lookup', 'must be at most 255 characters long')
    _require_together(params, 'request_auth_username', 'request_auth_password')
    _require_together(params, 'maintenance_start_at', 'maintenance_end_at')
    start, end = desired.get('maintenance_start_at'), desired.get('maintenance_end_at')
    if bool(start) != bool(end):
        raise ValidationError('maintenance_start_at', 'set both maintenance_start_at and maintenance_end_at, '
                                                      'or clear both with empty strings')
    if start and start >= end:
        raise ValidationError('maintenance_end_at', 'must be after maintenance_start_at (%s UTC), got %s UTC'
                              % (start, end))
    _validate_headers(desired.get('request_headers'))
    _validate_alerts(desired.get('alerts'))


def _require_together(params, first, second):
    if (params.get(first) is None) != (params.get(second) is None):
        given, missing = (first, second) if params.get(first) is not None else (second, first)
        raise ValidationError(missing, 'is required together with %s (the service accepts them only as a pair)'
                              % given)


def _validate_headers(headers):
    if headers is None:
        return
    if len(headers) > MAX_LIST_ENTRIES:
        raise ValidationError('request_headers', 'at most %d headers are allowed, got %d'
                              % (MAX_LIST_ENTRIES, len(headers)))
    for index, header in enumerate(headers):
        if not header['key'] or len(header['key']) > 128:
            raise ValidationError('request_headers[%d].key' % index, 'must be 1 to 128 characters long')
        if not header['value'] or len(header['value']) > 256:
            raise ValidationError('request_headers[%d].value' % index, 'must be 1 to 256 characters long')


def _validate_alerts(alerts):
    if alerts is None:
        return
    if len(alerts) > MAX_LIST_ENTRIES:
        raise ValidationError('alerts', 'at most %d alerts are allowed, got %d' % (MAX_LIST_ENTRIES, len(alerts)))
    for index, alert in enumerate(alerts):
        channel, value = alert['key'], alert['value']
        field = 'alerts[%d].value' % index
        if channel not in ALERT_CHANNELS:
            raise ValidationError('alerts[%d].key' % index, 'must be one of %s, got %r'
                                  % (', '.join(ALERT_CHANNELS), channel))
        if channel == 'email' and not EMAIL.match(value):
            raise ValidationError(field, '%r is not an e-mail address (channel email)' % value)
        if channel == 'sms' and not SMS.match(value):
            raise ValidationError(field, '%r is not a phone number: digits and + only, at most 16 (channel sms)'
                                  % value)
        if channel == 'telegram' and not 1 <= len(value) <= 128:
            raise ValidationError(field, 'must be 1 to 128 characters long (channel telegram)')
        if channel in URL_CHANNELS and not is_url(value, 256):
            raise ValidationError(field, '%r is not a valid http(s) URL of at most 256 characters (channel %s)'
                                  % (value, channel))


def to_module_args(view):
    """Turn a ``public_view`` into arguments of the monitor module (the export).

    Returns ``(args, omitted)``. Secrets cannot be exported: they are masked in
    the view. Basic authentication (a pair the service wants together) and
    sensitive header values are left out and named in ``omitted``, for the
    operator to supply from a vault.
    """
    args = {}
    for field in MONITOR.fields:
        value = view.get('paused' if field.name == 'pause' else field.name)
        if value is None or field.secret:
            continue
        args[field.name] = value
    omitted = []
    if view.get('request_auth_username') is not None or view.get('request_auth_password') is not None:
        args.pop('request_auth_username', None)
        omitted.extend(['request_auth_username', 'request_auth_password'])
    # The list is compared as a whole: exporting part of it would remove the rest on re-apply.
    if any(header['value'] == MASK for header in args.get('request_headers') or []):
        args.pop('request_headers')
        omitted.append('request_headers')
    return args, omitted


class MonitorManager:
    """Find, compare, create, update and delete monitors for one module run."""

    def __init__(self, client, check_mode=False):
        self.client = client
        self.check_mode = check_mode

    # -- finding ----------------------------------------------------------

    def get(self, monitor_id):
        return self.client.get_or_none('%s/%s' % (MONITORS_PATH, monitor_id))

    def find_by_name(self, name):
        """The monitor named ``name``: the service's search matches substrings.

        An exact match wins; failing that, a match that differs only in case,
        since a service on a case-insensitive database holds such names unique.
        """
        # The search is an SQL LIKE, where a backslash escapes: search for the longest part without one.
        params = {'search': max(name.split('\\'), key=len), 'search_by': 'name', 'per_page': 100}
        folded = None
        for records in self.client.iter_pages(MONITORS_PATH, params):
            for record in records:
                if record.get('name') == name:
                    return record
                if folded is None and str(record.get('name', '')).casefold() == name.casefold():
                    folded = record
        return folded

    def find(self, monitor_id=None, name=None):
        if monitor_id is not None:
            return self.get(monitor_id)
        return self.find_by_name(name)

    def list(self, params=None, limit=None):
        return self.client.list(MONITORS_PATH, params, limit=limit)

    # -- desired state ------------------------------------------------------

    @staticmethod
    def desired_from_params(params):
        desired = MONITOR.desired(params)
        validate_monitor(desired, params)
        return desired

    # -- ensuring -----------------------------------------------------------

    def ensure_present(self, desired, monitor_id=None, update_password='always', record=None, found=False):
        """Create or update one monitor; returns ``(changed, before, after, record)`` in option terms.

        ``found`` says the caller already looked the monitor up and ``record`` is the answer.
        """
        if not found:
            record = self.find(monitor_id, desired.get('name'))
        if record is None:
            if monitor_id is not None:
                raise UptimeApiError('monitor id %s was not found (a monitor cannot be created with a chosen id: '
                                     'leave id out to create it by name)' % monitor_id, status=404)
            return self._create(desired)
        return self._update(record, desired, update_password)

    def _create(self, desired):
        required = [field.name for field in MONITOR.fields if field.required_on_create]
        missing = [name for name in required if desired.get(name) is None]
        if missing:
            raise ValidationError(missing[0], 'is required to create monitor %r (%s are required on create)'
                                  % (desired.get('name'), ', '.join(required)))
        body = {name: value for name, value in desired.items()
                if MONITOR.by_name[name].on_create and value not in (None, [])}
        for field in MONITOR.fields:
            if field.create_default is not None and body.get(field.name) is None:
                body[field.name] = field.create_default
        predicted = dict({field.name: None for field in MONITOR.fields}, **body)
        predicted['request_headers'] = body.get('request_headers', [])
        predicted['alerts'] = body.get('alerts', [])
        predicted['pause'] = bool(desired.get('pause'))
        if self.check_mode:
            return True, None, predicted, None
        record = self._post(body)
        if desired.get('pause'):
            record = self.client.update('%s/%s' % (MONITORS_PATH, record_id(record)), MONITOR.form({'pause': True}))
        after = MONITOR.current(record)
        if after.get('pause') is None:
            after['pause'] = predicted['pause']
        return True, None, after, record

    def _post(self, body):
        try:
            return self.client.create(MONITORS_PATH, MONITOR.form(body))
        except UptimeApiError as exc:
            # The answer to a POST may be lost after the service stored the monitor, and a
            # concurrent run may have created the same name: look before failing.
            name_taken = exc.status == 422 and 'name' in exc.field_errors
            if not (exc.ambiguous or name_taken):
                raise
            existing = self.find_by_name(body['name'])
            if existing is None:
                raise
            return self._converge_existing(existing, body)

    def _converge_existing(self, record, body):
        current = MONITOR.current(record)
        changes = MONITOR.differences(body, current)
        if not changes:
            return record
        send = MONITOR.with_companions(changes, body, current)
        return self.client.update('%s/%s' % (MONITORS_PATH, record_id(record)), MONITOR.form(send))

    def _update(self, record, desired, update_password):
        compared = dict(desired)
        if update_password == 'on_create':
            compared.pop('request_auth_password', None)
        before = MONITOR.current(record)
        changes = MONITOR.differences(compared, before)
        if not changes:
            return False, before, before, record
        send = MONITOR.with_companions(changes, desired, before)
        predicted = dict(before, **send)
        if self.check_mode:
            return True, before, predicted, record
        monitor_id = record_id(record)

        def confirm():
            fresh = self.get(monitor_id)
            return fresh if fresh is not None and not MONITOR.differences(compared, MONITOR.current(fresh)) else None
        updated = confirm_after_ambiguity(
            lambda: self.client.update('%s/%s' % (MONITORS_PATH, monitor_id), MONITOR.form(send)), confirm)
        after = MONITOR.current(updated)
        if after.get('pause') is None:
            after['pause'] = predicted['pause']
        return True, before, after, updated

    def run_module(self, params, hide):
        """The whole task of the monitor module; ``hide`` registers values Ansible must censor."""
        if params['state'] == 'absent':
            changed, record = self.ensure_absent(params['id'], params['name'])
            before = MONITOR.current(record) if record is not None else None
            if before is not None:
                hide(MONITOR.secret_values(before))
            return monitor_result(changed, before, None, None, ['name'])
        # Before validation, which may fail: the failure result echoes the module arguments.
        hide(MONITOR.secret_values(params))
        desired = self.desired_from_params(params)
        hide(MONITOR.secret_values(desired))
        changed, before, after, record = self.ensure_present(desired, params['id'], params['update_password'])
        return monitor_result(changed, before, after, record, desired)

    def run_info(self, params):
        """The whole task of the monitor_info module."""
        if params['limit'] is not None and params['limit'] < 1:
            raise ValidationError('limit', 'must be 1 or more, got %s' % params['limit'])
        if params['id'] is not None:
            records = [self.get(params['id'])]
        elif params['name'] is not None:
            records = [self.find_by_name(params['name'])]
        else:
            query = {key: params[key] for key in ('search', 'search_by', 'status_page_id', 'sort_by', 'sort', 'per_page')
                     if params[key] is not None}
            if 'search' in query:
                query.setdefault('search_by', 'name')
            records = self.list(query, limit=params['limit'])
        monitors = [public_view(record) for record in records if record is not None]
        result = dict(changed=False, monitors=monitors)
        if params['export']:
            result['export'], result['export_omitted'] = [], {}
            for view in monitors:
                args, omitted = to_module_args(view)
                result['export'].append(args)
                if omitted:
                    result['export_omitted'][view['name']] = omitted
        return result

    def ensure_absent(self, monitor_id=None, name=None):
        """Delete one monitor; returns ``(changed, before)``."""
        record = self.find(monitor_id, name)
        if record is None:
            return False, None
        if not self.check_mode:
            self.delete(record)
        return True, record

    def delete(self, record):
        """Delete the monitor of ``record``; a lost answer is settled by a read (gone is done)."""
        monitor_id = record_id(record)
        confirm_after_ambiguity(lambda: self.client.delete('%s/%s' % (MONITORS_PATH, monitor_id)),
                                lambda: True if self.get(monitor_id) is None else None)


def monitor_result(changed, before, after, record, managed):
    """The module result: ``changed``, the masked monitor and a diff of the managed keys."""
    names = [field.name for field in MONITOR.fields if field.name in managed or field.name == 'name']
    diff_before, diff_after = diff_views(MONITOR, before, after, names)
    monitor = public_view_of_options(after, record) if after is not None else {}
    return dict(changed=changed, monitor=monitor, diff=dict(before=diff_before, after=diff_after))


def public_view(record):
    """A service record as the modules return it: option names, normalised, secrets masked."""
    return public_view_of_options(MONITOR.current(record), record)


def public_view_of_options(values, record=None):
    """The returned form of option-term values; read-only facts come from ``record``."""
    view = MONITOR.masked(dict(values))
    view['paused'] = view.pop('pause', None)
    view['id'] = record_id(record) if record is not None else None
    view['status'] = record.get('status') if record is not None else None
    for key in ('created_at', 'updated_at'):
        view[key] = timestamp_or_text(record.get(key)) if record is not None and record.get(key) else None
    # Other read-only facts a deployment returns pass through; a name that looks secret is masked.
    for key, value in (record or {}).items():
        if key not in view and key not in MONITOR_API_NAMES:
            view[key] = MASK if value is not None and is_sensitive_name(key) else value
    return view
