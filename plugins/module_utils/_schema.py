# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The fields of a resource, described once as data, and everything derived from them.

A :class:`Field` holds every fact about one field: its option, how its value
is normalised, checked, sent and masked, what the service stores when it is
not sent, and whether it may change after creation. A :class:`Schema` turns a
list of fields into an argument spec, validation, a reading of service records,
differences, form bodies and masked views.
"""

from __future__ import annotations

import datetime
import decimal
import ipaddress
import re
import threading
from urllib.parse import unquote_plus, urlsplit

try:
    import zoneinfo
except ImportError:  # pragma: no cover - Python < 3.9 on a managed node
    zoneinfo = None

from ._client import in_position_order

MASK = '********'
# Instants are held, compared and returned in UTC with their zone; the service is sent local times without one.
UTC_FORMAT = '%Y-%m-%dT%H:%M:%SZ'
SERVICE_FORMAT = '%Y-%m-%dT%H:%M:%S'
# The widest offsets from UTC a zone has (UTC-12 to UTC+14): a local time later than now by more is in the
# future in every zone.
LARGEST_UTC_OFFSET = datetime.timedelta(hours=14)
# The years a Y-m-d date holds (the service's format has four digits for the year).
MIN_YEAR, MAX_YEAR = 1000, 9999
SENSITIVE_NAME = re.compile(r'auth|cookie|token|secret|pass|key|session|signature|credential', re.IGNORECASE)
# Names too short to find inside others (X-Design-Version holds 'sig'): secret only as the whole name, as presigned
# and shared-access URLs use them.
SENSITIVE_WHOLE_NAMES = frozenset(('sig', 'pwd', 'sas'))
# A field that the record does not carry at all (a create answer lacks some): not the same as null.
MISSING = object()


class ValidationError(Exception):
    """Bad input, found before anything is sent to the service."""

    def __init__(self, field, message):
        super().__init__('%s: %s' % (field, message))
        self.field = field


class Unresolved(tuple):
    """A masked secret given as input that no stored secret answers for, read as ``(where, message)``.

    ``field`` and ``index`` (of an item of a list; None for a whole value) say which part of the input it is, so that
    it can be left out (:meth:`Schema.leaving_out`).
    """

    def __new__(cls, field, index, message):
        problem = tuple.__new__(cls, (field if index is None else '%s[%d]' % (field, index), message))
        problem.field, problem.index = field, index
        return problem


class UnresolvedMaskError(ValidationError):
    """Masked secrets given as input that no stored secret answers for, each ``(option, message)``
    (:class:`Unresolved`): nothing is sent."""

    def __init__(self, problems):
        self.problems = list(problems)
        field = self.problems[0][0]
        super().__init__(field, '; '.join('%s: %s' % problem for problem in self.problems)[len(field) + 2:])


# -- normalisers: service or user value -> comparable value ---------------

def to_text(value, field='value'):
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
        # A whole number in any form, as Ansible's int type takes it (a Jinja division gives 60.0).
        number = decimal.Decimal(str(value).strip())
        if number != int(number):
            raise ValueError(value)
        return int(number)
    except (decimal.DecimalException, ValueError, OverflowError):
        raise ValidationError(field, 'expected an integer, got %r' % (value,))


def to_bool(value, field='value'):
    if value is None or value == '':
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    # What Ansible's bool type accepts.
    if text in ('1', 'true', 'yes', 'on', 'y', 't', '1.0'):
        return True
    if text in ('0', 'false', 'no', 'off', 'n', 'f', '0.0'):
        return False
    raise ValidationError(field, 'expected a boolean, got %r' % (value,))


def parse_timestamp(value, field='value'):
    """A datetime from a timestamp as given: naive when it has no offset, aware when it has one."""
    if isinstance(value, datetime.datetime):
        return value
    text = str(value).strip()
    if text.endswith(('Z', 'z')):
        text = text[:-1] + '+00:00'
    try:
        parsed = datetime.datetime.fromisoformat(text.replace(' ', 'T', 1))
    except ValueError:
        raise ValidationError(field, '%r is not a timestamp: use Y-m-dTH:i:s for the account\'s local time '
                                     '(2026-01-31T23:00:00) or ISO 8601 with an offset for an instant '
                                     '(2026-01-31T23:00:00Z, 2026-01-31T23:00:00+01:00)' % (value,))
    return in_year_range(parsed, field, 'as given')


def in_year_range(moment, field, reading):
    """``moment``, refused unless its year has four digits, the only years the service's Y-m-d format holds."""
    if not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise ValidationError(field, '%s is out of range: its year %s is %d, and the service takes only years %d to %d'
                                     % (moment.isoformat(), reading, moment.year, MIN_YEAR, MAX_YEAR))
    return moment


def in_zone(moment, zone, field, reading):
    """``moment`` (aware) in ``zone``, refused when that takes it out of the years the service takes."""
    try:
        converted = moment.astimezone(zone)
    except OverflowError:
        converted = None
    if converted is None or not MIN_YEAR <= converted.year <= MAX_YEAR:
        raise ValidationError(field, '%s is out of range: %s it is not within the years %d to %d, the only ones the '
                                     'service takes' % (moment.isoformat(), reading, MIN_YEAR, MAX_YEAR))
    return converted


def is_local(value, field='value'):
    """Whether a timestamp as given is a local time (it has no offset), not an instant."""
    return parse_timestamp(value, field).tzinfo is None


def utc_text(moment):
    """An aware datetime as the collection holds, compares and returns instants: UTC, to the second, with ``Z``."""
    return moment.astimezone(datetime.timezone.utc).replace(microsecond=0).strftime(UTC_FORMAT)


def to_utc_timestamp(value, field='value', zone=None):
    """A timestamp as the UTC instant ``Y-m-dTH:i:sZ``.

    A value with an offset (``Z``, ``+02:00``) is an instant. A value without
    one is read in ``zone`` (an :class:`AccountZone`: the account's local time,
    as the service reads what it is sent), or as UTC without a zone (the
    service stores and returns UTC).
    """
    if value is None or value == '':
        return None
    parsed = parse_timestamp(value, field)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone.tzinfo() if zone is not None else datetime.timezone.utc)
    return utc_text(in_zone(parsed, datetime.timezone.utc, field, 'in UTC'))


def named_zone(name, field='account_timezone'):
    """The tzinfo of an IANA zone name; UTC needs no time zone database."""
    if name.upper() in ('UTC', 'Z', 'ETC/UTC'):
        return datetime.timezone.utc
    if zoneinfo is None:
        raise ValidationError(field, 'time zone %r needs Python 3.9 or later (zoneinfo) on the host that runs the '
                                     'task' % (name,))
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, TypeError):
        raise ValidationError(field, '%r is not a known IANA time zone name (such as UTC, Europe/Berlin or '
                                     'America/New_York); if it is one, install the tzdata package' % (name,))


class AccountZone:
    """The time zone the service reads sent timestamps in: the one given, or the account's, read once when needed.

    ``read_account`` returns the account record (``GET /api/v1/account``); a
    null ``timezone`` there means the instance's default, UTC.
    """

    def __init__(self, name=None, read_account=None):
        self.name = to_text(name)
        self.given = self.name is not None
        self._read_account = read_account
        self._tzinfo = named_zone(self.name) if self.given else None
        self._lock = threading.Lock()

    def tzinfo(self):
        with self._lock:
            if self._tzinfo is None:
                account = self._read_account() if self._read_account is not None else None
                self.name = to_text((account or {}).get('timezone')) or 'UTC'
                self._tzinfo = named_zone(self.name, 'timezone of the account')
            return self._tzinfo

    def local(self, instant, field='value'):
        """A UTC instant as the account's local time, in the only format the service accepts.

        When daylight saving time ends, an hour of local times occurs twice and
        the service reads such a time as its first occurrence: an instant in the
        second one cannot be sent, and is refused rather than stored an hour early.
        """
        zone = self.tzinfo()
        moment = datetime.datetime.strptime(instant, UTC_FORMAT).replace(tzinfo=datetime.timezone.utc)
        local = in_zone(moment, zone, field, 'as the local time of an account in %s' % self.describe()
                        ).strftime(SERVICE_FORMAT)
        read_back = utc_text(datetime.datetime.strptime(local, SERVICE_FORMAT).replace(tzinfo=zone))
        if read_back != instant:
            raise ValidationError(field, '%s cannot be sent to an account in %s: it is the local time %s, which '
                                         'occurs twice when daylight saving time ends, and the service would read it '
                                         'as the first time, %s; give a time outside the repeated hour'
                                  % (instant, self.describe(), local, read_back))
        return local

    def latest_sendable(self, instant):
        """``instant``, or the latest instant before it that the service can be sent in the account's zone.

        Only an instant in the second occurrence of the hour repeated when daylight
        saving time ends cannot be sent; the latest one before it is the last second
        of the first occurrence.
        """
        zone = self.tzinfo()
        moment = datetime.datetime.strptime(instant, UTC_FORMAT).replace(tzinfo=datetime.timezone.utc)
        first = moment.astimezone(zone).replace(fold=0).astimezone(datetime.timezone.utc)
        if first == moment:
            return instant
        # The second occurrence began after ``first`` (in the first one), at the latest at ``moment``.
        began = _fold_changes(zone, int(first.timestamp()), int(moment.timestamp()))
        return utc_text(datetime.datetime.fromtimestamp(began - 1, datetime.timezone.utc))

    def repeat_over(self, instant):
        """When the second occurrence of the repeated hour that holds ``instant`` is over (UTC); ``instant`` if none."""
        zone = self.tzinfo()
        moment = int(datetime.datetime.strptime(instant, UTC_FORMAT).replace(tzinfo=datetime.timezone.utc).timestamp())
        if not datetime.datetime.fromtimestamp(moment, zone).fold:
            return instant
        over = _fold_changes(zone, moment, moment + 3 * 3600)  # no zone repeats more than an hour or two
        return utc_text(datetime.datetime.fromtimestamp(over, datetime.timezone.utc))

    def describe(self):
        """The zone as a message names it, and where it came from."""
        source = 'option account_timezone' if self.given else 'the account\'s setting'
        return '%s (%s)' % (self.name or 'not known yet', source)


def _fold_changes(zone, low, high):
    """The first whole second (POSIX time) after ``low``, at the latest ``high``, whose fold in ``zone`` is not that of
    ``low``: where the second occurrence of a repeated hour begins, or ends."""
    fold = datetime.datetime.fromtimestamp(low, zone).fold
    while high - low > 1:
        middle = (low + high) // 2
        if datetime.datetime.fromtimestamp(middle, zone).fold == fold:
            low = middle
        else:
            high = middle
    return high


def to_pairs(value, field='value'):
    """A list of ``{key, value}`` in service order, whatever shape it arrived in."""
    if value is None or value == '':
        return []
    if isinstance(value, dict):
        value = in_position_order(value)
    pairs = []
    for item in value:
        if not isinstance(item, dict):
            # Its position and type, never its text: a header or alert may hold a secret in any shape.
            raise ValidationError(field, 'each entry must be a dict with key and value, got a %s at position %d'
                                  % (type(item).__name__, len(pairs)))
        pairs.append({'key': to_text(item.get('key')) or '', 'value': to_text(item.get('value')) or ''})
    return pairs


def record_id(record):
    """The id of a service record as an integer (the service may send it as a string)."""
    try:
        return int(record.get('id'))
    except (TypeError, ValueError):
        return record.get('id')


def timestamp_or_text(value):
    """A read-only timestamp of the service as a UTC instant ``Y-m-dTH:i:sZ``; anything else as it came."""
    try:
        return to_utc_timestamp(value)
    except ValidationError:
        return str(value)


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)


def is_sensitive_name(name):
    """Whether a header or query parameter of this name holds a secret, by the one rule both share."""
    text = str(name or '').strip()
    return bool(SENSITIVE_NAME.search(text)) or text.lower() in SENSITIVE_WHOLE_NAMES


def mask_sensitive_header(item):
    """A request header's value as shown: masked whole when the header's name looks secret; None when it is not."""
    return MASK if is_sensitive_name(item.get('key')) else None


def url_authority(url):
    """``(start, at, end)`` of the authority of ``url`` after its ``scheme://``, as RFC 3986 reads it (and the
    service): it ends at the first ``/``, ``?`` or ``#``; its user-info is ``url[start:at]``, up to its last ``@``
    (``at`` is -1 without one), and its host and port ``url[at + 1 or start:end]``. None without a scheme."""
    scheme = re.match(r'[A-Za-z][A-Za-z0-9+.-]*://', url)
    if not scheme:
        return None
    start = scheme.end()
    end = min([position for position in (url.find(char, start) for char in '/?#') if position != -1] + [len(url)])
    return start, url.rfind('@', start, end), end


def host_problem(host):
    """Why the service's URL rule (the framework's ``url`` rule) refuses ``host``, a URL's host and port as its
    authority ends, or None: an empty host or label, an IPv6 address unclosed or wrong, a port of other than digits.
    The reason shows the host, never what follows its colon: it may be a password."""
    if host.startswith('['):
        address, bracket, port = host[1:].partition(']')
        if not bracket:
            return 'the host %s lacks the ] that closes an IPv6 address' % host
        try:
            ipaddress.IPv6Address(address)
        except ValueError:
            return 'the host [%s] is not an IPv6 address' % address
        if port and not port.startswith(':'):
            return 'the host [%s] is followed by %s, not by a port' % (address, port)
        port = port[1:]
    else:
        name, colon, port = host.partition(':')
        if not name:
            return 'must be an http:// or https:// URL with a host'
        # A single trailing dot marks a fully qualified name; any other empty label is refused.
        if '' in (name[:-1] if name.endswith('.') else name).split('.'):
            return 'the host %s has an empty label (nothing before its first dot or between two dots)' % name
        if colon and not port:
            port = ':'
    if port and not port.isdigit():
        return 'the port after the host %s must be a number' % host.rpartition(':')[0]
    return None


def unencoded_user_info(url):
    """The end (its ``@``) of a user-info whose password holds a ``?``, ``#`` or ``/`` it should have encoded, or
    None: a URL whose authority, as RFC 3986 reads it, is no host the service takes (``admin:p``: what follows the
    colon is no port), with an ``@`` after it (``https://admin:p?w@host/``, ``https://admin:p/w@host/``): its last
    ``@``. The service refuses such a URL, and so does the collection: its masked form is only ever shown in a
    refusal, where hiding more than the password hides nothing kept."""
    authority = url_authority(url)
    if authority is None:
        return None
    start, at, end = authority
    host = url[at + 1 if at != -1 else start:end]
    late = url.rfind('@', end)
    # A bracketed IPv6 host is no user name: a user-info holds no [.
    if host.startswith('[') or host_problem(host) is None or late == -1:
        return None
    return late


def url_secret_spans(url):
    """Where a URL holds secrets, as ``(start, end)`` positions: every credential of its user-info, and the value of
    each query parameter whose name looks secret. Read from the text itself, so that a malformed URL cannot raise.

    User-info with a password shows its user name and hides the password; without one (``token@``, or ``token:@``
    with an empty password) the user name is the credential, a token, and is hidden whole. A password that holds a
    character it should have encoded (see :func:`unencoded_user_info`) is hidden up to the ``@`` that may end it, and
    with it all before, unless that is a user name.
    """
    url = str(url)
    authority = url_authority(url)
    if authority is None:
        return []
    start, at, end = authority
    late = unencoded_user_info(url)
    spans = []
    colon = url.find(':', start, at)  # without user-info (at is -1), neither span below is taken
    if late is not None:
        # A user name holds none of @ / ? #: where what comes before the first colon does, it is no user name, and
        # all up to the last @ is hidden.
        colon = url.find(':', start, late)
        named = colon != -1 and not any(char in url[start:colon] for char in '@/?#')
        spans.append((colon + 1, late) if named else (start, late))
        end = late + 1
    elif colon != -1 and colon + 1 < at:
        spans.append((colon + 1, at))
    elif at > start:
        spans.append((start, at))
    fragment = url.find('#', end)
    query_end = fragment if fragment != -1 else len(url)
    query = url.find('?', end, query_end)
    if query != -1:
        position = query + 1
        for parameter in url[query + 1:query_end].split('&'):
            name, equals, value = parameter.partition('=')
            if equals and value and is_sensitive_name(unquote_plus(name)):
                spans.append((position + len(name) + 1, position + len(parameter)))
            position += len(parameter) + 1
    return spans


def mask_spans(text, spans):
    """``text`` with each ``(start, end)`` span masked in place."""
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + MASK + text[end:]
    return text


def mask_url(value):
    """A URL that is itself a credential (an incoming webhook) as shown: where it leads, its scheme and host, and the
    rest masked."""
    try:
        parts = urlsplit(str(value))
        host = parts.netloc.rpartition('@')[2]
    except ValueError:
        return MASK
    if not parts.scheme or not host:
        return MASK
    return '%s://%s/%s' % (parts.scheme, host, MASK)


KINDS = {
    'str': (to_text, 'str'),
    'int': (to_int, 'int'),
    'bool': (to_bool, 'bool'),
    'timestamp': (to_utc_timestamp, 'str'),
    'pairs': (to_pairs, 'list'),
}


class Field:
    """One field of a resource, with every rule the service applies to it.

    - ``default``: what the service holds when the field was never sent (a
      null in a record reads as this value too); ``send_default`` sends it on
      create when the user gave none, for the fields the service requires.
    - ``required``: needed to create; ``required_when=(other, values)``: needed
      in a request that sets ``other`` to one of ``values``; ``on_create``/``on_update`` say whether
      the service accepts the field in that write (``on_update=False`` is
      create-only); ``write_once`` fields are set only while they are empty.
    - ``together``: the partner field that must be given, set, cleared and
      sent with this one; ``sent_with``: fields the service checks against
      this one, sent in the same request.
    - ``min_length``/``max_length``/``max_items``/``check``: what the service
      accepts; ``check(value)`` returns ``(field suffix, message)`` or None.
    - ``later_than``/``not_before``: timestamp order; ``not_future``.
    - ``read(record)`` derives the value when the service returns it under
      another key.
    - ``secret``: the value is masked whole. ``secret_spans(text)``: where a
      text holds secrets (a URL's password), each masked in place.
      ``sensitive_items`` (pairs): ``sensitive_items(item)`` is how the value
      of a secret ``{key, value}`` item is shown, None for an item that is not
      secret; whether an item is secret is told by its key, so an item as
      shown still tells it.

    Every secret has one masked form, and a masked form given as input means
    "keep what is stored there" (:meth:`unmask`): so whatever a read shows
    applies back without loss. A value that merely looks like a mask in a
    field that is not secret is taken literally.
    """

    RULES = dict(choices=None, api_name=None, default=None, send_default=False, required=False, required_when=None,
                 on_create=True, on_update=True, write_once=False, together=None, sent_with=(), min_length=None,
                 max_length=None, max_items=None, check=None, later_than=None, not_before=None, not_future=False,
                 read=None, secret=False, secret_spans=None, sensitive_items=None, item_key_choices=None)

    def __init__(self, name, kind='str', **rules):
        unknown = sorted(set(rules) - set(self.RULES))
        if kind not in KINDS or unknown:
            raise ValueError('field %s: unknown kind %s or rules %s' % (name, kind, unknown))
        self.name, self.kind = name, kind
        for rule, value in self.RULES.items():
            setattr(self, rule, rules.get(rule, value))
        self.api_name = self.api_name or name
        if kind == 'pairs' and self.default is None:
            self.default = []
        self.sent_with = tuple(self.sent_with) + ((self.together,) if self.together else ())

    def normalise(self, value, zone=None):
        """The comparable value; ``zone`` reads a user's timestamp without an offset (records are UTC)."""
        if self.kind == 'timestamp':
            return to_utc_timestamp(value, self.name, zone)
        value = KINDS[self.kind][0](value, self.name)
        return self.default if value is None and self.default is not None else value

    def comparable(self, value):
        if self.kind == 'pairs':
            return sorted((item['key'], item['value']) for item in value or [])
        return value

    def argument_spec(self):
        spec = {'type': KINDS[self.kind][1]}
        if self.choices:
            spec['choices'] = list(self.choices)
        if self.secret:
            # Masked by the collection where it stands (_module.py), not by ansible-core wherever its text appears:
            # 2.22's display hides every occurrence of a no_log value, a password `web` in the name `staging web` too.
            spec['no_log'] = False
        if self.kind == 'pairs':
            key_spec = {'type': 'str', 'required': True, 'no_log': False}
            if self.item_key_choices:
                key_spec['choices'] = list(self.item_key_choices)
            spec['elements'] = 'dict'
            spec['options'] = {'key': key_spec, 'value': {'type': 'str', 'required': True}}
        return spec

    def from_record(self, record):
        if self.read is not None:
            value = self.read(record)
            return value if value is MISSING else self.normalise(value)
        if self.api_name not in record:
            return MISSING
        return self.normalise(record[self.api_name])

    def validate(self, value):
        """Raise when the service would refuse ``value`` (a normalised, non-empty value)."""
        if value is None:
            if self.required:
                raise ValidationError(self.name, self._length_rule(0) if self.max_length else 'cannot be empty')
            return
        self.check_choice(value)
        if self.kind == 'str' and self.max_length is not None and not (self.min_length or 0) <= len(value) <= self.max_length:
            raise ValidationError(self.name, self._length_rule(len(value)))
        if self.max_items is not None and len(value) > self.max_items:
            raise ValidationError(self.name, 'at most %d entries are allowed, got %d' % (self.max_items, len(value)))
        if self.check is None:
            return
        # A masked item stands for a stored one, which the service accepted: only the stored value is checked.
        problems = ([self.check(value)] if self.kind != 'pairs' else
                    [None if self.is_masked_item(item) else self.check(item) for item in value])
        for index, problem in enumerate(problems):
            if problem is not None:
                where = '[%d].%s' % (index, problem[0]) if self.kind == 'pairs' else ''
                raise ValidationError(self.name + where, problem[1])

    def check_as_given(self, value):
        """Refuse, naming this field, a value as a user gave it that Ansible's type check would refuse in words of its
        own, which name neither a config entry nor, for a list of pairs, the option: pairs in another shape than a list
        of dicts with key and value, an empty number or boolean, a value outside the choices."""
        if self.kind == 'pairs' and isinstance(value, str):
            # Never the text itself: it may hold a secret.
            raise ValidationError(self.name, 'must be a list of dicts with key and value, such as [{key: %s, value: ...}], '
                                             'got a string' % (self.item_key_choices or ['X-Name'])[0])
        if self.kind == 'pairs':
            for position, pair in enumerate(value if isinstance(value, list) else [value]):
                where = '%s[%d]' % (self.name, position)
                if not isinstance(pair, dict) or set(pair) != {'key', 'value'}:
                    keys = ', '.join(sorted(str(key) for key in pair)) if isinstance(pair, dict) else type(pair).__name__
                    raise ValidationError(where, 'must be a dict with exactly key and value, got %s' % keys)
                if self.item_key_choices and pair['key'] not in self.item_key_choices:
                    raise ValidationError(where + '.key', 'must be one of %s, got %r'
                                          % (', '.join(self.item_key_choices), pair['key']))
        elif (self.kind in ('int', 'bool') or self.choices) and isinstance(value, str) and not value.strip():
            expected = 'one of %s' % ', '.join(str(choice) for choice in self.choices) if self.choices else \
                'an integer' if self.kind == 'int' else 'a boolean'
            raise ValidationError(self.name, 'expected %s, got an empty string (leave the option out to keep the value)'
                                  % expected)
        self.check_choice(self.normalise(value))

    def check_choice(self, value):
        """Refuse a value outside ``choices`` (the argument spec of a nested option is not the only gate)."""
        if self.choices and value is not None and value not in self.choices:
            allowed = ', '.join(str(choice) for choice in self.choices)
            raise ValidationError(self.name, 'must be one of %s, got %r' % (allowed, value))

    def shown(self, value):
        """A value in a message; a timestamp says its zone."""
        return 'empty' if value is None else str(value)

    def _length_rule(self, length):
        limit = '%d to %d' % (self.min_length, self.max_length) if self.min_length else 'at most %d' % self.max_length
        return 'must be %s characters long, got %d' % (limit, length)

    def mask(self, value):
        if value is None:
            return None
        if self.secret:
            return MASK
        if self.secret_spans:
            text = str(value)
            return mask_spans(text, self.secret_spans(text))
        if self.sensitive_items:
            return [self._masked_item(item) for item in value]
        return value

    def _masked_item(self, item):
        shown = self.sensitive_items(item)
        return dict(item) if shown is None else dict(item, value=shown)

    def masked_group(self, item):
        """What a ``{key, value}`` item shows (its key compared without case, as header names are, and its value as
        shown): the items a masked one may stand for share it."""
        return item['key'].casefold(), self.sensitive_items(item)

    def is_masked_item(self, item):
        """Whether a ``{key, value}`` item as given is a secret item in its masked form: it asks to keep a stored one."""
        return bool(self.sensitive_items) and item.get('value') is not None and \
            self.sensitive_items(item) == item['value']

    def holds_mask(self, value):
        """Whether a value as given (or shown) holds a masked secret."""
        if value is None:
            return False
        if self.secret:
            return str(value) == MASK
        if self.secret_spans:
            text = str(value)
            return any(text[start:end] == MASK for start, end in self.secret_spans(text))
        if self.sensitive_items:
            return any(self.is_masked_item(item) for item in value)
        return False

    def secret_values(self, value):
        """The plain secrets a text of a secret field, or of one with secret spans, holds (for Ansible's no_log list
        until the arguments are validated, and to tell a change); masks are none. The items of a list are read by
        their own rule (``sensitive_items``, ``changed_items``)."""
        if value is None:
            return []
        text = str(value)
        found = [text] if self.secret else [text[start:end] for start, end in self.secret_spans(text)]
        return [each for each in found if each != MASK]

    def unmask(self, value, stored, owner):
        """``value`` with each masked secret replaced by the stored one it stands for, and the problems found.

        ``owner`` names the record in messages; ``stored`` is None for a record
        yet to be created. A problem is ``(where, message)``: a masked value
        with nothing stored to keep, or one that matches more stored items than
        the input gives masked ones for (which to keep would be a guess).
        """
        if not self.holds_mask(value):
            return value, []
        if self.kind == 'pairs':
            return self._unmask_items(value, stored, owner)
        if stored is not None and self.mask(stored) == str(value):
            return stored, []
        if stored is None:
            what = 'holds no %s to keep' % self.name
        else:
            what = 'holds %s, which does not show as the masked value given' % self.mask(stored)
        return value, [Unresolved(self.name, None, '%s %s (%s keeps the stored secret): give the %s whole'
                                  % (owner, what, MASK, self.name))]

    def _unmask_items(self, given, stored, owner):
        # Stored items that the input gives plainly are its own; each masked one takes one of the others, in stored
        # order, among those of its key (compared without case, as header names are) with its masked form.
        remaining = list(stored or [])
        for item in given:
            if not self.is_masked_item(item) and item in remaining:
                remaining.remove(item)
        candidates = {}
        for item in remaining:
            shown = self.sensitive_items(item)
            if shown is not None:
                candidates.setdefault((item['key'].casefold(), shown), []).append(item)
        asked = {}
        for item in given:
            if self.is_masked_item(item):
                group = (item['key'].casefold(), item['value'])
                asked[group] = asked.get(group, 0) + 1
        unmasked, problems = list(given), []
        taken = set()
        # A stored item of the very same key first, so that a reordered list keeps each value under its own key.
        for exact in (True, False):
            for index, item in enumerate(given):
                group = (item['key'].casefold(), item['value'])
                if index in taken or not self.is_masked_item(item) or len(candidates.get(group, ())) != asked[group]:
                    continue
                found = [stored_item for stored_item in candidates[group] if not exact or stored_item['key'] == item['key']]
                if found:
                    taken.add(index)
                    candidates[group].remove(found[0])
                    asked[group] -= 1
                    unmasked[index] = dict(item, value=found[0]['value'])
        for index, item in enumerate(given):
            if self.is_masked_item(item) and index not in taken:
                group = (item['key'].casefold(), item['value'])
                problems.append(Unresolved(self.name, index,
                                           self._unmatched(owner, item, len(candidates.get(group, ())), asked[group])))
        return unmasked, problems

    def _unmatched(self, owner, item, stored, masked):
        shown = '%s %r shown as %s' % (self.name, item['key'], item['value'])
        if not stored:
            return '%s holds no %s to keep (a masked value keeps the stored one): give the value whole' % (owner, shown)
        if masked > stored:
            return ('%s holds only %d %s and the task gives %d masked: a masked value keeps a stored one, and one is '
                    'left with nothing to keep; give the values whole' % (owner, stored, shown, masked))
        return ('%s holds %d %s and the task gives %d masked, so which to keep would be a guess: give the values whole'
                % (owner, stored, shown, masked))

    def changed_items(self, before, after, shown):
        """``shown`` (the masked ``after``) with every masked item whose value ``before`` lacks marked as changed.

        A key whose case alone changed (a header's name) keeps its value: the diff shows the key's change, and marking
        the value would say a secret changed that did not.
        """
        old = {(item['key'].casefold(), item['value']) for item in before or []}
        return [dict(shown_item, value=shown_item['value'] + ' (changed)')
                if self.sensitive_items(plain) is not None and (plain['key'].casefold(), plain['value']) not in old
                else shown_item for plain, shown_item in zip(after, shown)]


class Schema:
    """The fields of one resource and everything derived from them."""

    def __init__(self, fields):
        self.fields = list(fields)
        self.by_name = {field.name: field for field in self.fields}
        self.api_names = frozenset(field.api_name for field in self.fields)

    def argument_spec(self):
        return {field.name: field.argument_spec() for field in self.fields}

    def check_as_given(self, params):
        """:meth:`Field.check_as_given` for every field ``params`` gives."""
        for name, value in params.items():
            if name in self.by_name and value is not None:
                self.by_name[name].check_as_given(value)

    def desired(self, params, zone=None, kind=None):
        """The normalised values of the options given (an empty string is given: it clears), of one kind if named."""
        return {field.name: field.normalise(params[field.name], zone) for field in self.fields
                if params.get(field.name) is not None and kind in (None, field.kind)}

    def checked(self, params, now=None, base=None, zone=None):
        """The desired values of ``params`` over ``base``, refused before any request where the service would.

        Without ``zone`` a time without an offset reads as UTC. With it, such a
        time becomes the instant it means in the account's zone, after every
        check that needs no instant has passed, so that bad input costs no
        request even when the zone must be read from the service.
        """
        desired = dict(base or {}, **self.desired(params))
        self.validate(desired)
        # Before the zone is read: two local times, or two instants, keep their order whatever the zone, and a
        # local time further ahead than any zone's offset is in the future wherever the account is.
        self.check_order(desired, now, LARGEST_UTC_OFFSET, local=self.local_times(params))
        if zone is not None:
            desired = self.localised(params, desired, zone)
            self.check_order(desired, now)
        return desired

    def local_times(self, params):
        """The names of the timestamps in ``params`` given as local times (without an offset)."""
        timestamps = [field.name for field in self.fields if field.kind == 'timestamp']
        return {name for name in timestamps if params.get(name) not in (None, '') and is_local(params[name], name)}

    def localised(self, params, desired, zone):
        """``desired`` with the timestamps of ``params`` read in the account's ``zone``."""
        return dict(desired, **self.desired(params, zone, kind='timestamp'))

    def validate(self, desired):
        """Refuse, naming the field, what the service would refuse in these values alone.

        A field another one requires (``required_when``) is refused here only
        when it is given empty; left out, the record may hold it already, which
        :meth:`check_required` tells once the record is known.
        """
        for name, value in desired.items():
            field = self.by_name[name]
            field.validate(value)
            for other in self._required_by(name, value):
                if other.name in desired and desired[other.name] is None:
                    raise ValidationError(other.name, 'is required when %s is %s' % (name, value))
            partner = field.together
            if partner is None:
                continue
            if partner not in desired:
                raise ValidationError(partner, 'is required together with %s (the service accepts them only as a '
                                               'pair)' % name)
            if (value is None) != (desired[partner] is None):
                given, empty = (name, partner) if value is not None else (partner, name)
                raise ValidationError(given, 'set both %s and %s, or clear both with empty strings (%s is empty)'
                                      % (given, empty, empty))

    def _required_by(self, name, value):
        return [other for other in self.fields
                if other.required_when and other.required_when[0] == name and value in other.required_when[1]]

    def check_required(self, values, label):
        """Refuse values a record would hold (created, or updated) that lack a field another one requires."""
        for name, value in values.items():
            for other in self._required_by(name, value):
                if values.get(other.name) is None:
                    raise ValidationError(other.name, 'is required when %s is %s (%s would have none)'
                                          % (name, value, label))

    def check_order(self, values, now=None, slack=None, local=None):
        """Timestamps in the order the service wants, and none in the future (by more than ``slack``).

        With ``local`` (the names of local times read as UTC, before the zone is
        known), a local time is compared only with another local time.
        """
        local = local or ()

        def shown(name):
            return values[name][:-1] + ' local time' if name in local else values[name]
        now_text = now.strftime(UTC_FORMAT) if now is not None else None
        latest = (now + slack).strftime(UTC_FORMAT) if now is not None and slack else now_text
        for field in self.fields:
            value = values.get(field.name)
            if value is None:
                continue
            if field.not_future and latest is not None and value > latest:
                raise ValidationError(field.name, '%s is in the future (now is %s): the service accepts only '
                                                  'times up to now' % (shown(field.name), now_text))
            other = field.later_than or field.not_before
            earlier = values.get(other)
            if earlier is None or (field.name in local) != (other in local):
                continue
            if field.later_than and value <= earlier:
                raise ValidationError(field.name, 'must be after %s (%s), got %s'
                                      % (other, shown(other), shown(field.name)))
            if field.not_before and value < earlier:
                raise ValidationError(field.name, 'must not be before %s (%s), got %s'
                                      % (other, shown(other), shown(field.name)))

    def current(self, record, fallback=None):
        """A service record in option terms; what the record lacks is taken from ``fallback``."""
        values = {}
        for field in self.fields:
            value = field.from_record(record)
            values[field.name] = (fallback or {}).get(field.name) if value is MISSING else value
        return values

    def differences(self, desired, current):
        """The managed fields whose desired value differs from the current one."""
        return {name: value for name, value in desired.items()
                if self.by_name[name].comparable(value) != self.by_name[name].comparable(current.get(name))}

    def with_companions(self, changes, desired, current):
        """Add the fields the service wants sent together with a changed one."""
        complete = dict(changes)
        for name in changes:
            for companion in self.by_name[name].sent_with:
                if companion not in complete:
                    complete[companion] = desired.get(companion, current.get(companion))
        return complete

    def refuse_fixed(self, changes, current, label):
        """Fail on a change the service would not make (it would answer 200 and keep the old value)."""
        for name, wanted in changes.items():
            field = self.by_name[name]
            now, wanted = field.shown(current.get(name)), field.shown(wanted)
            if not field.on_update:
                raise ValidationError(name, '%s has %s %s, which cannot be changed after creation (asked for %s)'
                                      % (label, name, now, wanted))
            if field.write_once and now != 'empty':
                raise ValidationError(name, '%s already has %s %s and the service sets it only once: it cannot be '
                                            'changed to %s' % (label, name, now, wanted))

    def create_body(self, desired, label):
        """What a create sends: the given values the service accepts on create, and the defaults it requires."""
        missing = [field.name for field in self.fields if field.required and desired.get(field.name) is None]
        if missing:
            required = ', '.join(field.name for field in self.fields if field.required)
            raise ValidationError(missing[0], 'is required to create %s (%s are required on create)'
                                  % (label, required))
        body = {}
        for field in self.fields:
            value = desired.get(field.name)
            if field.on_create and value not in (None, []):
                body[field.name] = value
            elif field.send_default:
                body[field.name] = field.default
        return body

    def created(self, desired):
        """The values a record created from ``desired`` holds: the service's defaults for what was not given."""
        return dict({field.name: field.default for field in self.fields}, **desired)

    def reset_values(self):
        """What a field left out of a full description goes back to: its value on a record created without it."""
        return {field.name: field.default for field in self.fields if not field.required}

    def not_taken(self, sent, after):
        """Fields sent whose value the service did not store: a write-once value set meanwhile, or a time misread."""
        checked = [name for name in sent if self.by_name[name].write_once or self.by_name[name].kind == 'timestamp']
        return [name for name in checked if after.get(name) != sent[name]]

    def form(self, values, zone):
        """The form body (service keys) of a write of option-term values; instants as the account's local time."""
        return {self.by_name[name].api_name: (zone.local(value, name) if value and self.by_name[name].kind == 'timestamp'
                                              else value)
                for name, value in values.items()}

    def unechoed(self, record, form, values):
        """A create answer whose timestamps echo the local times sent, with the instants they were sent for.

        The service may answer a create with the submitted form strings; such
        a string is the account's local time, not the UTC it returns otherwise.
        """
        sent = [field for field in self.fields if field.kind == 'timestamp' and form.get(field.api_name)]
        echoed = {field.api_name: values[field.name] for field in sent if record.get(field.api_name) == form[field.api_name]}
        return dict(record, **echoed) if echoed else record

    def masked(self, view):
        """A copy of an option-terms dict safe to print."""
        return {name: (self.by_name[name].mask(value) if name in self.by_name else value)
                for name, value in view.items()}

    def exported(self, values, reveal=False):
        """The options that recreate a record of ``values`` (option terms, plain), and the names of those that hold
        a masked secret (a secret's partner with it: the service takes the two only as a pair).

        Secrets are masked unless ``reveal``: applied back, a masked value keeps
        the stored one, so an export applies again without loss.
        """
        shown = values if reveal else self.masked(values)
        options = {field.name: shown[field.name] for field in self.fields if shown.get(field.name) is not None}
        masked = set()
        for field in self.fields:
            if field.holds_mask(options.get(field.name)):
                masked.update(name for name in (field.name, field.together) if name in options)
        return options, [field.name for field in self.fields if field.name in masked]

    def unmasked(self, desired, current, owner):
        """``desired`` with every masked secret replaced by the stored one it stands for (``current``: the record's
        values, None for a record yet to be created); raises UnresolvedMaskError naming each one that cannot be."""
        values, problems = dict(desired), []
        for name, value in desired.items():
            stored = current.get(name) if current is not None else None
            values[name], found = self.by_name[name].unmask(value, stored, owner)
            problems.extend(found)
        if problems:
            raise UnresolvedMaskError(problems)
        return values

    def leaving_out(self, desired, problems, current=None):
        """``desired`` without the masked secrets of ``problems`` (:class:`Unresolved`) that nothing stored answers for,
        the options left out whole, and the ``(option, index)`` of each item left out.

        A whole value goes with its partner (the service takes the two only as a pair). Masked items of a list whose
        stored counterparts (``current``, the record's values) are more or fewer than the masked ones, so that which
        stands for which is a guess, keep every stored one: nothing stored is lost, and only the masked items beyond
        them go. Their plain neighbours always stay.
        """
        values, whole, items = dict(desired), [], {}
        for problem in problems:
            if problem.index is not None:
                items.setdefault(problem.field, []).append(problem.index)
                continue
            for name in (problem.field, self.by_name[problem.field].together):
                if name in values and name not in whole:
                    whole.append(name)
                    del values[name]
        dropped = []
        for name, indexes in items.items():
            field, given = self.by_name[name], desired[name]
            group = field.masked_group
            spare = [item for item in (current or {}).get(name) or []
                     if item not in [each for each in given if not field.is_masked_item(each)]]
            kept = []
            for index, item in enumerate(given):
                if index not in indexes:
                    kept.append(item)
                    continue
                stored = [each for each in spare if group(each) == group(item)]
                if stored:
                    kept.append(stored[0])
                    spare.remove(stored[0])
                else:
                    dropped.append((name, index))
            # Stored items of those groups beyond the masked ones given stay too.
            groups = {group(given[index]) for index in indexes}
            values[name] = kept + [each for each in spare if group(each) in groups]
        return values, whole, dropped

    def diff(self, before, after, names):
        """Masked before/after dicts limited to ``names``; a changed secret shows as such."""
        before_view = {name: before.get(name) for name in names} if before is not None else {}
        after_view = {name: after.get(name) for name in names} if after is not None else {}
        masked_before, masked_after = self.masked(before_view), self.masked(after_view)
        if before is None or after is None:
            return masked_before, masked_after
        for name in names:
            field = self.by_name.get(name)
            if field is None:
                continue
            if (field.secret or field.secret_spans) and after_view[name] is not None and \
                    field.secret_values(before_view[name]) != field.secret_values(after_view[name]):
                masked_after[name] = masked_after[name] + ' (changed)'
            elif field.sensitive_items and masked_after[name] is not None:
                masked_after[name] = field.changed_items(before_view[name], after_view[name], masked_after[name])
        return masked_before, masked_after
