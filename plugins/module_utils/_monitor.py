# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Monitors: their fields, how one is found by name, and how one is shown and exported."""

from __future__ import annotations

import re

from ._resource import NameMatcher, Resource
from ._schema import (
    MASK,
    MISSING,
    UTC_FORMAT,
    Field,
    Schema,
    ValidationError,
    is_sensitive_name,
    mask_sensitive_header,
    mask_url,
    record_id,
    timestamp_or_text,
    host_problem,
    unencoded_user_info,
    url_authority,
    url_secret_spans,
    to_text,
)

INTERVALS = [60, 180, 300, 600, 900, 1800, 3600]
# What the service reports as a monitor's status (docs/service.md); paused wins over the others.
STATUSES = ['pending', 'online', 'offline', 'paused', 'maintenance']
ALERT_CONDITIONS = ['url_unavailable', 'url_text', 'url_no_text']
REQUEST_METHODS = ['GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']
EXPIRY_ALERT_DAYS = [0, 1, 2, 3, 7, 14, 30, 60]
# The service's configuration (and its web UI) offers two more for a domain, so records hold them.
DOMAIN_ALERT_DAYS = EXPIRY_ALERT_DAYS + [90, 180]
ALERT_CHANNELS = ['email', 'webhook', 'slack', 'teams', 'discord', 'flock', 'telegram', 'sms']
# Channels whose value is an incoming-webhook URL: a credential, since whoever holds it can post to the channel.
URL_CHANNELS = ('webhook', 'slack', 'teams', 'discord', 'flock')
# The framework's RFC rule, no stricter: a dot-atom or quoted local part, and a domain of labels none of which is
# empty (a single label, as in ops@localhost, is one) or an address literal in brackets.
EMAIL = re.compile(r'^(?:"(?:[^"\\]|\\.)*"|[^@\s".]+(?:\.[^@\s".]+)*)@(?:[^@\s.\[\]]+(?:\.[^@\s.\[\]]+)*|\[[^\s\[\]]+\])$')
SMS = re.compile(r'^[0-9+]{1,16}$')
# Times the service keeps about a monitor's checks: when its current status began, its last check.
READ_ONLY_TIMESTAMPS = ('started_at', 'checked_at')


def url_problem(value, max_length):
    """Why the service's URL rule (the framework's ``url`` rule, for http and https) refuses ``value``, or None.

    The reason shows at most the scheme and host: the rest of a URL may hold credentials.
    """
    if not value or len(value) > max_length:
        return 'must be an http:// or https:// URL of 1 to %d characters, got %d' % (max_length, len(value or ''))
    if any(char.isspace() for char in value):
        return 'must be an http:// or https:// URL without white space'
    authority = url_authority(value)
    if authority is None or value.split(':', 1)[0].lower() not in ('http', 'https'):
        return 'must be an http:// or https:// URL: it starts with neither'
    start, at, end = authority
    problem = host_problem(value[at + 1 if at != -1 else start:end])
    if problem and unencoded_user_info(value) is not None:
        # Neither the host nor what may be a password is quoted: the host as written may hold part of one.
        return 'its user-info must have a ?, # or / of its password percent-encoded (%3F, %23, %2F)'
    return problem


def check_url(value):
    problem = url_problem(value, 2048)
    return ('', problem) if problem else None


def check_header(header):
    for part, limit in (('key', 128), ('value', 256)):
        if not header[part] or len(header[part]) > limit:
            return part, 'must be 1 to %d characters long' % limit
    return None


def check_alert(alert):
    channel, value = alert['key'], alert['value']
    if channel not in ALERT_CHANNELS:
        return 'key', 'must be one of %s, got %r' % (', '.join(ALERT_CHANNELS), channel)
    if channel == 'email' and not EMAIL.match(value):
        return 'value', '%r is not an e-mail address (channel email)' % value
    if channel == 'sms' and not SMS.match(value):
        return 'value', '%r is not a phone number: digits and + only, at most 16 (channel sms)' % value
    # The value is a bot token and a chat id: a credential, never shown.
    if channel == 'telegram' and not (len(value) <= 128 and re.search(r'\s', value)):
        return 'value', ('must be a bot token and a chat id separated by a space, at most 128 characters (channel '
                         'telegram, %d characters given)' % len(value))
    problem = url_problem(value, 256) if channel in URL_CHANNELS else None
    if problem:
        return 'value', '%s (channel %s)' % (problem, channel)
    return None


def mask_alert(alert):
    """An alert's value as shown: a webhook URL with only its scheme and host, a telegram value (it holds a bot token)
    masked whole; None for the channels whose value is no secret."""
    if alert.get('key') in URL_CHANNELS:
        return mask_url(alert.get('value'))
    return MASK if alert.get('key') == 'telegram' else None


def paused_from_status(record):
    """The service returns no pause flag: a paused monitor has the status ``paused``."""
    return record['status'] == 'paused' if record.get('status') is not None else MISSING


MONITOR_SCHEMA = Schema([
    Field('name', required=True, min_length=1, max_length=128),
    Field('url', required=True, check=check_url, secret_spans=url_secret_spans),
    Field('interval', 'int', choices=INTERVALS, required=True),
    Field('alert_condition', choices=ALERT_CONDITIONS, default='url_unavailable', send_default=True,
          sent_with=('alert_text_lookup',)),
    Field('alert_text_lookup', max_length=255, sent_with=('alert_condition',),
          required_when=('alert_condition', ('url_text', 'url_no_text'))),
    Field('request_method', choices=REQUEST_METHODS, default='GET', send_default=True),
    Field('request_headers', 'pairs', max_items=100, check=check_header, sensitive_items=mask_sensitive_header),
    Field('request_auth_username', together='request_auth_password'),
    Field('request_auth_password', secret=True, together='request_auth_username'),
    Field('cache_buster', 'bool', default=False),
    Field('ssl_alert_days', 'int', choices=EXPIRY_ALERT_DAYS, default=0),
    Field('domain_alert_days', 'int', choices=DOMAIN_ALERT_DAYS, default=0),
    Field('maintenance_start_at', 'timestamp', together='maintenance_end_at'),
    Field('maintenance_end_at', 'timestamp', together='maintenance_start_at', later_than='maintenance_start_at'),
    Field('alerts', 'pairs', max_items=100, check=check_alert, item_key_choices=ALERT_CHANNELS,
          sensitive_items=mask_alert),
    Field('paused', 'bool', api_name='pause', default=False, on_create=False, read=paused_from_status),
])


def _shown_fact(key, value):
    """A read-only fact of a monitor as a view shows it: masked when its name looks secret."""
    return MASK if value is not None and is_sensitive_name(key) else value


class MonitorResource(Resource):
    """A monitor: found by id, else by its name, unique in the account."""

    noun = 'monitor'
    plural = 'monitors'
    path = '/api/v1/monitors'
    schema = MONITOR_SCHEMA
    create_hint = 'leave id out to create it by name'
    always_shown = ('name',)
    created_facts = {'status': 'pending'}
    view_keys = ('id', 'name', 'status') + tuple(field.name for field in MONITOR_SCHEMA.fields if field.name != 'name') + (
        'created_at', 'updated_at') + READ_ONLY_TIMESTAMPS
    list_filters = dict(
        search_by=dict(type='str', choices=['name', 'url']),
        status_page_id=dict(type='int'),
        sort_by=dict(type='str', choices=['id', 'name', 'url']),
        status=dict(type='list', elements='str', choices=STATUSES),
    )
    lookup_options = dict(name=dict(type='str'), export=dict(type='bool', default=False),
                          reveal_secrets=dict(type='bool', default=False))
    default_search_by = 'name'
    default_order = ('id', 'desc')
    newest_first = {'sort_by': 'id', 'sort': 'desc'}

    def label(self, values):
        return '%s %r' % (self.noun, values.get('name')) if values.get('id') is None else Resource.label(self, values)

    def find_by_key(self, client, values):
        return self.find_by_name(client, values['name'])

    def find_by_name(self, client, name):
        """The monitor named exactly ``name`` (trimmed, as the service stores names), or None."""
        name = to_text(name)
        return self._named(client, name).find(name) if name else None

    def find_conflicting(self, client, values, located=None):
        """The monitor named exactly as in ``values``; when there is none, the one whose name differs only in case
        holds the name for a service that compares names without case (MySQL's default): it is named, never taken."""
        name = to_text(values['name'])
        matcher = self._named(client, name)
        found = matcher.find(name)
        if found is None:
            self._refuse_held_in_other_case(matcher, name)
        return found

    def check_update(self, client, record, changes, refused=None):
        """A rename to the name of another monitor is refused before the write, in check mode too; after the service
        refused one, the monitor whose name differs only in case is named (whether such a name clashes depends on
        the database's collation, which no client can know before)."""
        if 'name' not in changes:
            return
        name = to_text(changes['name'])
        matcher = self._named(client, name)
        holder = matcher.find(name)
        if holder is not None and record_id(holder) != record_id(record):
            raise ValidationError('name', 'monitor %r (id %s) cannot be renamed to %r: monitor %r (id %s) has that '
                                          'name, and names are unique in the account'
                                  % (record.get('name'), record_id(record), name, holder.get('name'), record_id(holder)))
        if refused is not None:
            self._refuse_held_in_other_case(matcher, name, record)

    @staticmethod
    def _refuse_held_in_other_case(matcher, name, renamed=None):
        """Name the one monitor whose name differs from ``name`` only in case (not ``renamed``, the monitor renamed):
        a service that compares names without case refused ``name`` as taken by it."""
        holders = [holder for holder in matcher.in_other_case(name)
                   if renamed is None or record_id(holder) != record_id(renamed)]
        if len(holders) != 1:
            return
        hint = 'choose another name' if renamed is not None else 'choose another name, or give that monitor\'s own'
        raise ValidationError('name', 'the service refused %r as taken by monitor %r (id %s): it compares names '
                                      'without case, and a monitor whose name differs in case is not this task\'s '
                                      'to rename: %s' % (name, holders[0].get('name'), record_id(holders[0]), hint))

    def _named(self, client, name):
        """The monitors whose name contains ``name``, read until the exact name is found.

        The service's search matches substrings (without regard to case on most databases): the match is made here.
        """
        # The search is an SQL LIKE, where a backslash escapes: search for the longest part without one.
        query = {'search': max(name.split('\\'), key=len), 'search_by': 'name'}
        return NameMatcher().add(self.read_all(client, query, until=lambda page: NameMatcher().add(page).has_exact(name)))

    def is_conflict(self, exc):
        return exc.status == 422 and 'name' in exc.field_errors

    def complete(self, client, record, now):
        """A created monitor with the status a create answer may lack: ``maintenance`` while the maintenance window
        it was given holds the time of the create, else ``pending``, as the service sets it."""
        if record.get('status') is None:
            start, end = (MONITOR_SCHEMA.by_name[name].from_record(record)
                          for name in ('maintenance_start_at', 'maintenance_end_at'))
            if start not in (None, MISSING) and end not in (None, MISSING) and start <= now.strftime(UTC_FORMAT) < end:
                record = dict(record, status='maintenance')
        return Resource.complete(self, client, record, now)

    def view(self, values, record=None, located=None):
        """A monitor as the modules return it: option names, normalised, secrets masked."""
        view = MONITOR_SCHEMA.masked(dict(values))
        record = record or {}
        view['id'] = record_id(record) if record else None
        view['status'] = record.get('status')
        for key in ('created_at', 'updated_at'):
            view[key] = timestamp_or_text(record[key]) if record.get(key) else None
        # Other read-only facts a deployment returns pass through; a name that looks secret is masked.
        for key, value in record.items():
            if key in view or key in MONITOR_SCHEMA.api_names:
                continue
            if key in READ_ONLY_TIMESTAMPS:
                view[key] = timestamp_or_text(value) if value else None
            else:
                view[key] = _shown_fact(key, value)
        return view

    def masked_view(self, view):
        """A view that an earlier version of the collection made (the event source's state file), masked as view()
        masks now."""
        masked = MONITOR_SCHEMA.masked(view)
        masked.update((key, _shown_fact(key, value)) for key, value in view.items() if key not in MONITOR_SCHEMA.by_name)
        return masked

    def narrow(self, client, lookups, query):
        return [self.find_by_name(client, to_text(lookups['name']))] if lookups.get('name') is not None else None

    def list_test(self, query, order):
        """The service cannot list monitors by status: those of ``status`` are kept as the list gives them."""
        statuses = query.pop('status', None)
        return ((lambda record: record.get('status') in statuses), None) if statuses else None

    def check_lookups(self, lookups):
        if lookups.get('reveal_secrets') and not lookups.get('export'):
            raise ValidationError('reveal_secrets', 'is used only with export=true (it reveals what the export holds)')

    def info_extras(self, records, lookups):
        if not lookups.get('export'):
            return {}
        export, masked = self.export(records, lookups.get('reveal_secrets'))
        return dict(export=export, export_masked=masked)

    def export(self, records, reveal=False):
        """The monitor options that recreate each of ``records``, and per monitor name the options that hold a masked
        secret (none with ``reveal``): see :meth:`Schema.exported`."""
        exported, masked = [], {}
        for values in (MONITOR_SCHEMA.current(record) for record in records):
            options, masked_options = MONITOR_SCHEMA.exported(values, reveal)
            exported.append(options)
            if masked_options:
                masked[values['name']] = masked_options
        return exported, masked


MONITOR_RESOURCE = MonitorResource()
