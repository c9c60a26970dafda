# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Describe a resource once, as data, and derive everything else from it.

A :class:`Field` knows how its value is normalised for comparison, encoded
into a form body and masked in output; a :class:`Schema` turns a list of
fields into an argument spec, reads a service record into option terms,
computes differences and builds the form body of a write.
"""

from __future__ import annotations

import datetime
import re

from ._client import UptimeApiError

MASK = '********'
TIMESTAMP_FORMAT = '%Y-%m-%dT%H:%M:%S'
SENSITIVE_NAME = re.compile(r'auth|cookie|token|secret|pass|key|session|signature|credential', re.IGNORECASE)


class ValidationError(Exception):
    """Bad input, found before anything is sent to the service."""

    def __init__(self, field, message):
        super().__init__('%s: %s' % (field, message))
        self.field = field


# -- normalisers: service or user value -> comparable value ---------------

def to_text(value):
    """Text as the service keeps it: trimmed, and empty as no value (Laravel's input middleware)."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def to_int(value, field='value'):
    if value is None or value == '':
        return None
    if isinstance(value, bool):
        return int(value)
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValidationError(field, 'expected an integer, got %r' % (value,))


def to_bool(value, field='value'):
    if value is None or value == '':
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ('1', 'true', 'yes', 'on'):
        return True
    if text in ('0', 'false', 'no', 'off'):
        return False
    raise ValidationError(field, 'expected a boolean, got %r' % (value,))


def to_utc_timestamp(value, field='value'):
    """A timestamp as UTC ``Y-m-dTH:i:s``; a naive one is taken as UTC.

    Accepts the service's ``2026-01-01T12:00:00.000000Z`` and ISO 8601 times
    with an offset, which are converted to UTC.
    """
    if value is None or value == '':
        return None
    if isinstance(value, datetime.datetime):
        parsed = value
    else:
        text = str(value).strip()
        if text.endswith(('Z', 'z')):
            text = text[:-1] + '+00:00'
        try:
            parsed = datetime.datetime.fromisoformat(text.replace(' ', 'T', 1))
        except ValueError:
            raise ValidationError(field, '%r is not a timestamp: use the format Y-m-dTH:i:s (2026-01-31T23:00:00) '
                                         'or ISO 8601 with an offset (2026-01-31T23:00:00+01:00)' % (value,))
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return parsed.replace(microsecond=0).strftime(TIMESTAMP_FORMAT)


def to_pairs(value, field='value'):
    """A list of ``{key, value}`` in service order, whatever shape it arrived in."""
    if value is None or value == '':
        return []
    if isinstance(value, dict):
        value = [value[position] for position in sorted(value, key=_position)]
    pairs = []
    for item in value:
        if not isinstance(item, dict):
            raise ValidationError(field, 'each entry must be a dict with key and value, got %r' % (item,))
        pairs.append({'key': to_text(item.get('key')) or '', 'value': to_text(item.get('value')) or ''})
    return pairs


def _position(key):
    try:
        return (0, int(key))
    except (TypeError, ValueError):
        return (1, str(key))


def pairs_multiset(pairs):
    """Order-free comparison form of a list of key/value pairs."""
    return sorted((item['key'], item['value']) for item in pairs or [])


def record_id(record):
    """The id of a service record as an integer (the service may send it as a string)."""
    try:
        return int(record.get('id'))
    except (TypeError, ValueError):
        return record.get('id')


def timestamp_or_text(value):
    """A read-only timestamp of the service in UTC ``Y-m-dTH:i:s``; anything else as it came."""
    try:
        return to_utc_timestamp(value)
    except ValidationError:
        return str(value)


def confirm_after_ambiguity(write, confirm):
    """Run ``write``; when its answer was lost, ask ``confirm`` whether it took effect.

    ``confirm`` re-reads the service and returns what the write should have
    returned when the service already shows the wanted state, else None, and
    the original error stands.
    """
    try:
        return write()
    except UptimeApiError as exc:
        if not exc.ambiguous:
            raise
        confirmed = confirm()
        if confirmed is None:
            raise
        return confirmed


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)


def is_sensitive_name(name):
    return bool(name) and bool(SENSITIVE_NAME.search(str(name)))


KINDS = {
    'str': (to_text, 'str'),
    'int': (to_int, 'int'),
    'bool': (to_bool, 'bool'),
    'timestamp': (to_utc_timestamp, 'str'),
    'pairs': (to_pairs, 'list'),
}


class Field:
    """One field of a resource: option, service key, comparison, encoding, masking.

    ``on_create``/``on_update`` say whether the service accepts the field in
    that write; ``create_default`` is sent on create when the user gave none;
    ``companions`` are fields the service wants in the same request whenever
    this one is sent; ``read`` derives the value from a record when the
    service does not return the field under its own name; ``write_once``
    fields are set by the service only while they are empty.
    """

    def __init__(self, name, kind='str', choices=None, api_name=None, aliases=None, secret=False,
                 required_on_create=False, create_default=None, on_create=True, on_update=True,
                 companions=(), read=None, item_key_choices=None, sensitive_items=False, no_log=None,
                 write_once=False):
        if kind not in KINDS:
            raise ValueError('unknown kind %s' % kind)
        self.name = name
        self.kind = kind
        self.choices = choices
        self.api_name = api_name or name
        self.aliases = aliases or []
        self.secret = secret
        self.required_on_create = required_on_create
        self.create_default = create_default
        self.on_create = on_create
        self.on_update = on_update
        self.companions = tuple(companions)
        self.read = read
        self.item_key_choices = item_key_choices
        self.sensitive_items = sensitive_items
        self.no_log = no_log
        self.write_once = write_once

    def normalise(self, value):
        normaliser = KINDS[self.kind][0]
        if self.kind == 'str':
            return normaliser(value)
        return normaliser(value, self.name)

    def comparable(self, value):
        if self.kind == 'pairs':
            return pairs_multiset(value)
        return value

    def argument_spec(self):
        spec = {'type': KINDS[self.kind][1]}
        if self.choices:
            spec['choices'] = list(self.choices)
        if self.aliases:
            spec['aliases'] = list(self.aliases)
        if self.secret:
            spec['no_log'] = True
        elif self.no_log is not None:
            spec['no_log'] = self.no_log
        if self.kind == 'pairs':
            key_spec = {'type': 'str', 'required': True, 'no_log': False}
            if self.item_key_choices:
                key_spec['choices'] = list(self.item_key_choices)
            spec['elements'] = 'dict'
            spec['options'] = {'key': key_spec, 'value': {'type': 'str', 'required': True}}
        return spec

    def from_record(self, record):
        if self.read is not None:
            return self.read(record)
        return self.normalise(record.get(self.api_name))

    def mask(self, value):
        if value is None:
            return None
        if self.secret:
            return MASK
        if self.sensitive_items:
            return [dict(item, value=MASK) if is_sensitive_name(item['key']) else dict(item) for item in value]
        return value

    def secret_values(self, value):
        """The plain values this field would reveal, for Ansible's no_log list."""
        if value is None:
            return []
        if self.secret:
            return [str(value)]
        if self.sensitive_items:
            return [item['value'] for item in value if is_sensitive_name(item['key']) and item['value']]
        return []


class Schema:
    """The fields of one resource and everything derived from them."""

    def __init__(self, fields):
        self.fields = list(fields)
        self.by_name = {field.name: field for field in self.fields}

    def argument_spec(self):
        return {field.name: field.argument_spec() for field in self.fields}

    def desired(self, params, names=None):
        """The normalised values the user set (options left unset are not managed)."""
        wanted = {}
        for field in self.fields:
            if names is not None and field.name not in names:
                continue
            value = params.get(field.name)
            if value is not None:
                wanted[field.name] = field.normalise(value)
        return wanted

    def current(self, record):
        """A service record in option terms, normalised."""
        return {field.name: field.from_record(record) for field in self.fields}

    def differences(self, desired, current):
        """The managed fields whose desired value differs from the current one."""
        return {name: value for name, value in desired.items()
                if self.by_name[name].comparable(value) != self.by_name[name].comparable(current.get(name))}

    def with_companions(self, changes, desired, current):
        """Add the fields the service wants sent together with a changed one."""
        complete = dict(changes)
        for name in changes:
            for companion in self.by_name[name].companions:
                if companion not in complete:
                    complete[companion] = desired.get(companion, current.get(companion))
        return complete

    def form(self, values):
        """The form body (service keys) of a write of option-term values."""
        return {self.by_name[name].api_name: value for name, value in values.items()}

    def masked(self, view):
        """A copy of an option-terms dict safe to print."""
        return {name: (self.by_name[name].mask(value) if name in self.by_name else value)
                for name, value in view.items()}

    def secret_values(self, view):
        found = []
        for name, value in view.items():
            if name in self.by_name:
                found.extend(self.by_name[name].secret_values(value))
        return found


def diff_views(schema, before, after, names):
    """Masked before/after dicts limited to ``names``; a changed secret shows as such."""
    before_view = {name: before.get(name) for name in names} if before is not None else {}
    after_view = {name: after.get(name) for name in names} if after is not None else {}
    masked_before = schema.masked(before_view)
    masked_after = schema.masked(after_view)
    for name in names:
        field = schema.by_name.get(name)
        if field is None or before is None or after is None:
            continue
        if field.secret and before_view.get(name) != after_view.get(name) and after_view.get(name) is not None:
            masked_after[name] = MASK + ' (changed)'
        elif field.sensitive_items:
            masked_after[name] = _mark_changed_items(before_view.get(name) or [], after_view.get(name) or [],
                                                     masked_after.get(name))
    return masked_before, masked_after


def _mark_changed_items(before_items, after_items, masked_after):
    if masked_after is None:
        return None
    old = {(item['key'], item['value']) for item in before_items}
    marked = []
    for plain, shown in zip(after_items, masked_after):
        if shown['value'] == MASK and (plain['key'], plain['value']) not in old:
            shown = dict(shown, value=MASK + ' (changed)')
        marked.append(shown)
    return marked
