"""State of the phpUptime emulator: accounts, monitors, incidents and status pages in SQLite.

This module knows nothing about HTTP.  It receives request input already decoded the way PHP and
Laravel decode a form body (see ``decode_form``), validates it the way the real service does and
returns plain dictionaries shaped like the service's JSON records.  Every public method of
``Store`` holds one lock, so the HTTP layer may call it from many threads.

Timestamps are stored in UTC.  Like the service, the emulator reads every timestamp it is sent in the
account's time zone (``accounts.timezone``, an IANA name; null means the instance default, UTC) and
converts it to UTC.  They are kept as ``YYYY-MM-DDTHH:MM:SS`` text in the database and rendered like
Laravel renders dates in JSON: ``2026-01-01T12:00:00.000000Z``.
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import ipaddress
import json
import re
import sqlite3
import threading
import zoneinfo
from urllib.parse import parse_qsl, urlencode

INTERVALS = (60, 180, 300, 600, 900, 1800, 3600)
SSL_ALERT_DAYS = (0, 1, 2, 3, 7, 14, 30, 60)
# The service's configuration offers two more for a domain (its web UI lists them).
DOMAIN_ALERT_DAYS = SSL_ALERT_DAYS + (90, 180)
ALERT_CONDITIONS = ('url_unavailable', 'url_text', 'url_no_text')
REQUEST_METHODS = ('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS')
URL_CHANNELS = ('webhook', 'slack', 'teams', 'discord', 'flock')
ALERT_CHANNELS = ('email',) + URL_CHANNELS + ('telegram', 'sms')
# The incident list's ``status`` filter; another value is no filter.
INCIDENT_STATUS_FILTERS = {'unresolved': 'i.ended_at IS NULL AND i.acknowledged_at IS NULL',
                           'acknowledged': 'i.ended_at IS NULL AND i.acknowledged_at IS NOT NULL',
                           'resolved': 'i.ended_at IS NOT NULL'}
PER_PAGE_CHOICES = (10, 25, 50, 100)
DEFAULT_PER_PAGE = 100
MAX_LIST_ITEMS = 100
# What the checker records as an incident's cause when the check gave none (the service stores the HTTP status or error).
CHECKER_DEFAULT_CAUSE = 'HTTP 500'

# POST /_emulator/seed: a history that holds together.  Resolved incidents start within the last SEED_RESOLVED_SPAN and
# last at most SEED_MAX_DURATION, ending by now; the monitors exist since SEED_AGE ago, before any of them; offline
# monitors went down within the last SEED_OFFLINE_SPAN.
SEED_MAX_MONITORS = 100000
SEED_RESOLVED_SPAN = datetime.timedelta(hours=6)
SEED_MAX_DURATION = datetime.timedelta(minutes=30)
SEED_AGE = SEED_RESOLVED_SPAN + datetime.timedelta(minutes=10)
SEED_OFFLINE_SPAN = datetime.timedelta(minutes=10)
SEED_CAUSES = ('HTTP 500', 'HTTP 502', 'HTTP 503', 'Connection timed out')

# The fields a client may send for a monitor, in the order the service returns them.
MONITOR_FIELDS = (
    'name', 'url', 'interval', 'alert_condition', 'alert_text_lookup', 'request_method', 'request_headers',
    'request_auth_username', 'request_auth_password', 'cache_buster', 'ssl_alert_days', 'domain_alert_days',
    'maintenance_start_at', 'maintenance_end_at', 'alerts',
)
INCIDENT_FIELDS = ('monitor_id', 'started_at', 'acknowledged_at', 'ended_at', 'cause', 'comment')

INPUT_FORMAT = '%Y-%m-%dT%H:%M:%S'
INPUT_FORMAT_PHP = 'Y-m-d\\TH:i:s'
INPUT_PATTERN = re.compile(r'\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}')
INTEGER_PATTERN = re.compile(r'[+-]?\d+')
# The RFC rule of the framework (egulias' RFCValidation) in its main lines: no empty dot-separated part on either side.
EMAIL_PATTERN = re.compile(r'(?:"(?:[^"\\]|\\.)*"|[^@\s".]+(?:\.[^@\s".]+)*)@(?:[^@\s.\[\]]+(?:\.[^@\s.\[\]]+)*|\[[^\s\[\]]+\])')
TELEGRAM_PATTERN = re.compile(r'\s+')
URL_AUTHORITY_PATTERN = re.compile(r'(?i)https?://([^/?#]*)')
SMS_PATTERN = re.compile(r'[0-9+]+')
FORM_KEY_PATTERN = re.compile(r'([^\[]*)((?:\[[^\]]*\])*)')

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    api_key TEXT NOT NULL UNIQUE,
    api_access INTEGER NOT NULL DEFAULT 1,
    timezone TEXT,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%S', 'now', clock_shift()))
);
CREATE TABLE IF NOT EXISTS monitors (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    name TEXT NOT NULL,
    url TEXT NOT NULL,
    interval INTEGER NOT NULL,
    alert_condition TEXT NOT NULL,
    alert_text_lookup TEXT,
    request_method TEXT NOT NULL,
    request_headers TEXT,
    request_auth_username TEXT,
    request_auth_password TEXT,
    cache_buster INTEGER NOT NULL DEFAULT 0,
    ssl_alert_days INTEGER,
    domain_alert_days INTEGER,
    maintenance_start_at TEXT,
    maintenance_end_at TEXT,
    alerts TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    started_at TEXT,
    checked_at TEXT,
    token TEXT
);
-- A monitor's started_at is when its current status began: set on create and at every status change
-- (pause, resume, an incident opened or ended, a check that flips it), without touching updated_at.
CREATE TRIGGER IF NOT EXISTS monitor_created AFTER INSERT ON monitors BEGIN
    UPDATE monitors SET started_at = NEW.created_at, token = lower(hex(randomblob(16))) WHERE id = NEW.id;
END;
CREATE TRIGGER IF NOT EXISTS monitor_status_changed AFTER UPDATE OF status ON monitors
WHEN OLD.status IS NOT NEW.status BEGIN
    UPDATE monitors SET started_at = strftime('%Y-%m-%dT%H:%M:%S', 'now', clock_shift()) WHERE id = NEW.id;
END;
CREATE TABLE IF NOT EXISTS incidents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    monitor_id INTEGER NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    cause TEXT,
    comment TEXT,
    started_at TEXT NOT NULL,
    acknowledged_at TEXT,
    ended_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- With 10,000 monitors, a create's name check (so creating N through the API costs N squared), the checker's and
-- pause/resume's look-up of a monitor's ongoing incident, an incident create's look-up of the latest one and a monitor
-- delete's cascade each read every row without these.  monitors_by_account keeps the list a walk down the index: with
-- only monitors_by_name the planner took that one and sorted, and a page of 100 went from 4 ms to 49 ms.  An index on
-- incidents' account made their sorted list slower, not faster; the list reads every row of the account anyway.
CREATE INDEX IF NOT EXISTS monitors_by_account ON monitors (account_id, id);
CREATE INDEX IF NOT EXISTS monitors_by_name ON monitors (account_id, name);
CREATE INDEX IF NOT EXISTS incidents_by_monitor ON incidents (monitor_id, started_at);
CREATE TABLE IF NOT EXISTS status_page_monitors (
    account_id INTEGER NOT NULL,
    page_id INTEGER NOT NULL,
    monitor_id INTEGER NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    PRIMARY KEY (account_id, page_id, monitor_id)
);
"""


class ValidationError(Exception):
    """Input was rejected; ``messages`` maps field keys (``alerts.0.key``) to lists of texts."""

    def __init__(self, messages):
        super().__init__(messages)
        self.messages = messages


class NotFound(Exception):
    """The record does not exist or belongs to another account."""


# One page of a list: the records plus what the paginator needs.
Page = collections.namedtuple('Page', 'records total page per_page')


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)


def render_time(value):
    """Render a stored ``YYYY-MM-DDTHH:MM:SS`` text the way Laravel serialises dates."""
    return None if value is None else value + '.000000Z'


def parse_time(value):
    if not isinstance(value, str) or not INPUT_PATTERN.fullmatch(value):
        return None
    try:
        return datetime.datetime.strptime(value, INPUT_FORMAT)
    except ValueError:
        return None


def decode_form(body):
    """Decode a form body the way PHP fills ``$_POST`` and Laravel then cleans it.

    ``alerts[0][key]=email`` becomes ``{'alerts': {'0': {'key': 'email'}}}``, ``name[]`` appends, a later
    key wins over an earlier one, and every empty string becomes None (Laravel's ConvertEmptyStringsToNull).
    """
    data = {}
    for raw_key, value in parse_qsl(body, keep_blank_values=True):
        match = FORM_KEY_PATTERN.match(raw_key)
        name = match.group(1)
        if not name:
            continue
        path = [name] + re.findall(r'\[([^\]]*)\]', match.group(2))
        target = data
        for depth, part in enumerate(path):
            if part == '' and depth > 0:
                part = str(len(target))
            if depth == len(path) - 1:
                target[part] = value if value != '' else None
            else:
                if not isinstance(target.get(part), dict):
                    target[part] = {}
                target = target[part]
    return data


def encode_form(data):
    """Form-encode a dict the way the service expects.

    Lists of dicts become indexed fields (``alerts[0][key]=...``), an empty list becomes the bare key
    (``alerts=``, which clears the list), booleans become 1/0 and None an empty value.  A list of
    ``(key, value)`` tuples is sent exactly as given.
    """
    if data is None:
        return None
    if isinstance(data, (list, tuple)):
        pairs = list(data)
    else:
        pairs = []
        for key, value in data.items():
            if isinstance(value, (list, tuple)):
                if not value:
                    pairs.append((key, ''))
                for index, item in enumerate(value):
                    for sub_key, sub_value in item.items():
                        pairs.append(('%s[%d][%s]' % (key, index, sub_key), _scalar(sub_value)))
            else:
                pairs.append((key, _scalar(value)))
    return urlencode(pairs).encode('ascii')


def _scalar(value):
    if value is None:
        return ''
    if isinstance(value, bool):
        return '1' if value else '0'
    return str(value)


def is_truthy(value):
    """PHP truthiness of a decoded form value: None (empty string) and '0' are false, the rest true."""
    if isinstance(value, dict):
        return bool(value)
    return value not in (None, '0')


def attribute(key):
    """The name Laravel uses for a field in its messages."""
    return key.replace('_', ' ')


def valid_url(value, max_length=None):
    """The host rules of Laravel's ``url`` rule, limited to http and https: a host (a single label will do) whose
    dot-separated labels are none empty (a final dot aside), or an IPv6 address in brackets; a port of digits."""
    if not isinstance(value, str) or re.search(r'\s', value):
        return False
    if max_length is not None and len(value) > max_length:
        return False
    match = URL_AUTHORITY_PATTERN.match(value)
    if match is None:
        return False
    host = match.group(1).rpartition('@')[2]
    if host.startswith('['):
        address, bracket, port = host[1:].partition(']')
        try:
            ipaddress.IPv6Address(address)
        except ValueError:
            return False
        if not bracket or (port and not port.startswith(':')):
            return False
        port = port[1:]
    else:
        name, colon, port = host.partition(':')
        if not name or '' in name.removesuffix('.').split('.') or (colon and not port):
            return False
    return not port or port.isdigit()


class Errors:
    """Collects validation messages, one per field like a Laravel rule list that stops at the first failure."""

    def __init__(self):
        self.messages = {}

    def add(self, key, message):
        if key not in self.messages:
            self.messages[key] = [message]

    def raise_if_any(self):
        if self.messages:
            raise ValidationError(self.messages)


class Input:
    """Typed access to decoded form input with the checks shared by monitors and incidents."""

    def __init__(self, data, errors, zone=datetime.timezone.utc):
        self.zone = zone
        self.data = data
        self.errors = errors

    def present(self, key):
        return key in self.data

    def text(self, key, max_length=None, required=False):
        return self.string(key, self.data.get(key), max_length, required)

    def string(self, key, value, max_length=None, required=False):
        """Laravel's ``required|string|max`` on ``value``; returns it, or None when it is absent or refused."""
        if value is None:
            if required:
                self.errors.add(key, 'The %s field is required.' % attribute(key))
            return None
        if not isinstance(value, str):
            self.errors.add(key, 'The %s must be a string.' % attribute(key))
            return None
        if max_length is not None and len(value) > max_length:
            self.errors.add(key, 'The %s must not be greater than %d characters.' % (attribute(key), max_length))
            return None
        return value

    def choice(self, key, choices, required=False):
        value = self.text(key, required=required)
        if value is not None and value not in choices:
            self.errors.add(key, 'The selected %s is invalid.' % attribute(key))
            return None
        return value

    def integer_choice(self, key, choices, required=False):
        value = self.text(key, required=required)
        if value is None:
            return None
        if not INTEGER_PATTERN.fullmatch(value):
            self.errors.add(key, 'The %s must be an integer.' % attribute(key))
            return None
        if int(value) not in choices:
            self.errors.add(key, 'The selected %s is invalid.' % attribute(key))
            return None
        return int(value)

    def boolean(self, key):
        """Laravel's ``boolean`` rule for form input: only 0 and 1."""
        value = self.text(key)
        if value is None:
            return None
        if value not in ('0', '1'):
            self.errors.add(key, 'The %s field must be true or false.' % attribute(key))
            return None
        return int(value)

    def timestamp(self, key, required=False):
        value = self.text(key, required=required)
        if value is None:
            return None
        parsed = parse_time(value)
        if parsed is None:
            self.errors.add(key, 'The %s does not match the format %s.' % (attribute(key), INPUT_FORMAT_PHP))
            return None
        # Carbon::parse($value, $user->timezone) then UTC: a local time of the account, stored as UTC.
        return parsed.replace(tzinfo=self.zone).astimezone(datetime.timezone.utc).replace(tzinfo=None)

    def pairs(self, key, check_entry):
        """A list of ``{key, value}`` entries sent as ``key[index][key]`` / ``key[index][value]``.

        Returns ``(sent, items)``: ``sent`` is False when the field was not in the form at all,
        ``items`` is None when it was cleared (bare ``key=``) or invalid.
        """
        if key not in self.data:
            return False, None
        raw = self.data[key]
        if raw is None:
            return True, None
        if not isinstance(raw, dict):
            self.errors.add(key, 'The %s must be an array.' % attribute(key))
            return True, None
        if len(raw) > MAX_LIST_ITEMS:
            self.errors.add(key, 'The %s must not have more than %d items.' % (attribute(key), MAX_LIST_ITEMS))
        items = []
        for index, entry in raw.items():
            entry = entry if isinstance(entry, dict) else {}
            item = check_entry('%s.%s' % (key, index), entry.get('key'), entry.get('value'))
            items.append(item)
        return True, (items or None)


class Store:
    def __init__(self, path=':memory:'):
        self.lock = threading.RLock()
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        # How far the service's clock is from the real one (set_clock): every now it uses, SQLite's too.
        self.clock_offset = 0
        self.db.create_function('clock_shift', 0, lambda: '%+d seconds' % self.clock_offset)
        self.db.execute('PRAGMA foreign_keys = ON')
        self.db.executescript(SCHEMA)
        self.db.create_function('casefold', 1, lambda text: text.casefold() if isinstance(text, str) else text,
                                deterministic=True)
        # False: names unique as written, as on SQLite and PostgreSQL; True: without regard to case, as MySQL's
        # default collation holds them.
        self.names_ignore_case = False

    def close(self):
        with self.lock:
            self.db.close()

    @contextlib.contextmanager
    def _transaction(self):
        """One transaction (the connection is in autocommit mode otherwise): committed, or rolled back on an exception."""
        self.db.execute('BEGIN')
        try:
            yield self.db
        except BaseException:
            self.db.execute('ROLLBACK')
            raise
        self.db.execute('COMMIT')

    def ensure_account(self, api_key, api_access=True):
        with self.lock, self._transaction():
            self.db.execute('INSERT OR IGNORE INTO accounts (api_key, api_access) VALUES (?, ?)', (api_key, int(api_access)))
            self.db.execute('UPDATE accounts SET api_access = ? WHERE api_key = ?', (int(api_access), api_key))
            return self.db.execute('SELECT id FROM accounts WHERE api_key = ?', (api_key,)).fetchone()['id']

    def set_timezone(self, api_key, timezone):
        if timezone is not None:
            zoneinfo.ZoneInfo(timezone)
        with self.lock, self._transaction():
            cursor = self.db.execute('UPDATE accounts SET timezone = ? WHERE api_key = ?', (timezone, api_key))
            if cursor.rowcount == 0:
                raise KeyError(api_key)

    def rotate_key(self, api_key, new_key):
        """Give the account of ``api_key`` the key ``new_key`` instead, as the service's settings page does: the old
        key is refused from then on."""
        with self.lock, self._transaction():
            cursor = self.db.execute('UPDATE accounts SET api_key = ? WHERE api_key = ?', (new_key, api_key))
            if cursor.rowcount == 0:
                raise KeyError(api_key)

    def set_clock(self, offset):
        """Run the service's clock ``offset`` seconds ahead of the real one (negative: behind)."""
        if isinstance(offset, bool) or not isinstance(offset, int):
            raise ValueError('offset must be a whole number of seconds')
        self.clock_offset = offset

    def now(self):
        return utcnow() + datetime.timedelta(seconds=self.clock_offset)

    def account(self, account_id):
        """The account as ``GET /api/v1/account`` shows it."""
        with self.lock:
            row = self.db.execute('SELECT * FROM accounts WHERE id = ?', (account_id,)).fetchone()
        return {
            'id': row['id'], 'name': 'Account %d' % row['id'], 'email': 'account%d@example.com' % row['id'],
            'avatar_url': None, 'locale': 'en', 'timezone': row['timezone'],
            'plan': {'id': 1, 'name': 'Emulated', 'features': {
                'monitors': -1, 'monitor_intervals': '60', 'ssl_monitoring': 1, 'domain_monitoring': 1,
                'webhook_alerts': 1, 'email_alerts': 1, 'sms_alerts': 1, 'status_pages': -1,
                'status_page_customization': 1, 'data_retention': -1, 'data_export': 1, 'api': 1}},
            'created_at': render_time(row['created_at']),
        }

    def _zone(self, account_id):
        row = self.db.execute('SELECT timezone FROM accounts WHERE id = ?', (account_id,)).fetchone()
        return zoneinfo.ZoneInfo(row['timezone']) if row and row['timezone'] else datetime.timezone.utc

    def account_for_key(self, api_key):
        with self.lock:
            row = self.db.execute('SELECT * FROM accounts WHERE api_key = ?', (api_key,)).fetchone()
            return dict(row) if row else None

    def reset(self):
        """Remove every monitor, incident and status page; accounts stay, in UTC again, id sequences restart, the
        clock is the real one again."""
        with self.lock, self._transaction():
            self.db.execute('UPDATE accounts SET timezone = NULL')
            self.clock_offset = 0
            self.db.execute('DELETE FROM status_page_monitors')
            self.db.execute('DELETE FROM incidents')
            self.db.execute('DELETE FROM monitors')
            self.db.execute("DELETE FROM sqlite_sequence WHERE name IN ('monitors', 'incidents')")
            self.names_ignore_case = False

    def seed(self, account_id, monitors, offline=0, resolved=0):
        """``POST /_emulator/seed`` (see README.md): ``monitors`` monitors in one transaction, ``seed-00001``..."""
        counts = {'monitors': monitors, 'offline': offline, 'resolved': resolved}
        for field, value in counts.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError('%s must be a non-negative integer' % field)
        if monitors > SEED_MAX_MONITORS:
            raise ValueError('monitors must be at most %d' % SEED_MAX_MONITORS)
        if offline > monitors:
            raise ValueError('offline must be at most monitors (%d)' % monitors)
        if resolved > monitors - offline:
            raise ValueError('resolved must be at most monitors - offline (%d)' % (monitors - offline))

        names = ['seed-%05d' % number for number in range(1, monitors + 1)]
        now = self.now()
        stamp = now.strftime(INPUT_FORMAT)
        created = (now - SEED_AGE).strftime(INPUT_FORMAT)
        with self.lock, self._transaction():
            taken = self.db.execute("SELECT name FROM monitors WHERE account_id = ? AND name LIKE 'seed-%'", (account_id,)).fetchall()
            if not {row['name'] for row in taken}.isdisjoint(names):
                raise ValueError('the account already has monitors of these names')
            # Inserted with their final status, so monitor_status_changed never fires; monitor_created sets started_at
            # to created_at and a random token, row by row.
            statuses = ['offline'] * offline + ['online'] * (monitors - offline)
            self.db.executemany(
                'INSERT INTO monitors (account_id, name, url, interval, alert_condition, request_method, cache_buster, ssl_alert_days,'
                ' domain_alert_days, status, created_at, updated_at, checked_at)'
                " VALUES (?, ?, ?, 60, 'url_unavailable', 'GET', 0, 0, 0, ?, ?, ?, ?)",
                ((account_id, name, 'https://%s.example.com' % name, status, created, created, stamp)
                 for name, status in zip(names, statuses)))
            if not monitors:
                return dict(counts, first_id=None, last_id=None)
            last_id = self.db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'monitors'").fetchone()['seq']
            first_id = last_id - monitors + 1

            incidents, starts = [], []
            offline_seconds = int(SEED_OFFLINE_SPAN.total_seconds())
            for index in range(offline):
                down = (now - datetime.timedelta(seconds=index * offline_seconds // offline)).strftime(INPUT_FORMAT)
                incidents.append((account_id, first_id + index, SEED_CAUSES[index % len(SEED_CAUSES)], down, None, down, down))
                starts.append((down, first_id + index))
            window = int((SEED_RESOLVED_SPAN - SEED_MAX_DURATION).total_seconds())
            longest = int(SEED_MAX_DURATION.total_seconds())
            for index in range(resolved):
                monitor_id = first_id + offline + index
                began = now - SEED_RESOLVED_SPAN + datetime.timedelta(seconds=index * window // resolved)
                # Durations from one to thirty minutes, scattered by a prime step so neighbours differ.
                ended = began + datetime.timedelta(seconds=60 + index * 7919 % (longest - 60))
                began, ended = began.strftime(INPUT_FORMAT), ended.strftime(INPUT_FORMAT)
                incidents.append((account_id, monitor_id, SEED_CAUSES[index % len(SEED_CAUSES)], began, ended, began, ended))
                starts.append((ended, monitor_id))  # online again since the incident ended
            self.db.executemany('INSERT INTO incidents (account_id, monitor_id, cause, started_at, ended_at, created_at, updated_at)'
                                ' VALUES (?, ?, ?, ?, ?, ?, ?)', incidents)
            # started_at alone: monitor_status_changed only fires on an update of status.
            self.db.executemany('UPDATE monitors SET started_at = ? WHERE id = ?', starts)
            return dict(counts, first_id=first_id, last_id=last_id)

    def add_records(self, account_id, monitors=(), incidents=()):
        """``POST /_emulator/records`` (see README.md): ``monitors``, then ``incidents``, created one by one as the API
        would; a ValueError names the first refused entry."""
        if not isinstance(monitors, list) or not isinstance(incidents, list):
            raise ValueError('monitors and incidents must be lists')
        created = {'monitors': [], 'incidents': []}
        for kind, entries in (('monitors', monitors), ('incidents', incidents)):
            for index, entry in enumerate(entries):
                if not isinstance(entry, dict):
                    raise ValueError('%s[%d] must be an object' % (kind, index))
                entry = dict(entry)
                if kind == 'incidents' and 'monitor' in entry:
                    name = entry.pop('monitor')
                    with self.lock:
                        row = self.db.execute('SELECT id FROM monitors WHERE account_id = ? AND name = ?',
                                              (account_id, name)).fetchone()
                    if row is None:
                        raise ValueError('%s[%d]: no monitor is named %r' % (kind, index, name))
                    entry['monitor_id'] = row['id']
                create = self.create_monitor if kind == 'monitors' else self.create_incident
                try:
                    created[kind].append(create(account_id, decode_form(encode_form(entry).decode('ascii')))['id'])
                except ValidationError as exc:
                    raise ValueError('%s[%d]: %s' % (kind, index, json.dumps(exc.messages, sort_keys=True))) from None
        return created

    def set_status_page(self, account_id, page_id, monitor_ids):
        with self.lock, self._transaction():
            self.db.execute('DELETE FROM status_page_monitors WHERE account_id = ? AND page_id = ?', (account_id, page_id))
            for monitor_id in monitor_ids:
                if self._monitor_row(account_id, monitor_id) is None:
                    raise NotFound()
                self.db.execute('INSERT OR IGNORE INTO status_page_monitors VALUES (?, ?, ?)', (account_id, page_id, monitor_id))

    def _contains(self, column):
        """The condition of ``search`` on ``column`` (one parameter, the text searched): LIKE %x%, which folds ASCII
        case only on SQLite and every letter's case on MySQL (names_ignore_case plays MySQL)."""
        if self.names_ignore_case:
            return "instr(casefold(%s), casefold(?)) > 0" % column
        return "%s LIKE '%%' || ? || '%%'" % column

    def list_monitors(self, account_id, query):
        where = ['m.account_id = ?']
        args = [account_id]
        search = query.get('search')
        if search:
            column = 'url' if query.get('search_by') == 'url' else 'name'
            where.append(self._contains('m.' + column))
            args.append(search)
        page_id = query.get('status_page_id')
        if page_id not in (None, ''):
            where.append('m.id IN (SELECT monitor_id FROM status_page_monitors WHERE account_id = ? AND page_id = ?)')
            args.extend([account_id, int(page_id) if INTEGER_PATTERN.fullmatch(page_id) else -1])
        direction = 'ASC' if query.get('sort') == 'asc' else 'DESC'
        sort_by = query.get('sort_by') if query.get('sort_by') in ('name', 'url') else 'id'
        if sort_by == 'id':
            order = 'm.id %s' % direction
        else:
            order = 'm.%s COLLATE NOCASE %s, m.id %s' % (sort_by, direction, direction)
        with self.lock:
            return self._page('SELECT m.* FROM monitors m WHERE %s' % ' AND '.join(where), args, order, query, self._monitor_record)

    def get_monitor(self, account_id, monitor_id):
        with self.lock:
            row = self._monitor_row(account_id, monitor_id)
            if row is None:
                raise NotFound()
            return self._monitor_record(row)

    def create_monitor(self, account_id, data):
        """Store a monitor; returns the echo of the submitted fields the service answers with."""
        with self.lock, self._transaction():
            values = self._validate_monitor(account_id, data, None)
            now = self.now().strftime(INPUT_FORMAT)
            row = {
                'alert_text_lookup': None, 'request_headers': None, 'request_auth_username': None,
                'request_auth_password': None, 'cache_buster': 0, 'ssl_alert_days': 0, 'domain_alert_days': 0,
                'maintenance_start_at': None, 'maintenance_end_at': None, 'alerts': None,
            }
            row.update(values)
            row.update(account_id=account_id, status='pending', created_at=now, updated_at=now)
            for key in ('request_headers', 'alerts'):
                row[key] = json.dumps(row[key]) if row[key] is not None else None
            columns = sorted(row)
            cursor = self.db.execute('INSERT INTO monitors (%s) VALUES (%s)' % (', '.join(columns), ', '.join('?' * len(columns))),
                                     [row[column] for column in columns])
            echo = {}
            for key in MONITOR_FIELDS:
                if key in data:
                    echo[key] = values[key] if key in ('request_headers', 'alerts') else data[key]
            echo.update(updated_at=render_time(now), created_at=render_time(now), id=cursor.lastrowid)
            return echo

    def update_monitor(self, account_id, monitor_id, data):
        """Apply the sent keys (and ``pause``) to a monitor; returns the whole record."""
        with self.lock, self._transaction():
            current = self._monitor_row(account_id, monitor_id)
            values = self._validate_monitor(account_id, data, monitor_id, current)
            if current is None:
                raise NotFound()
            for key in ('request_headers', 'alerts'):
                if key in values:
                    values[key] = json.dumps(values[key]) if values[key] is not None else None
            if values.get('cache_buster', 0) is None:
                values['cache_buster'] = 0
            if 'pause' in data:
                if is_truthy(data['pause']):
                    values['status'] = 'paused'
                elif current['status'] == 'paused':
                    values['status'] = 'offline' if self._ongoing_incident(monitor_id) else 'online'
            self._update_row('monitors', current, values)
            return self._monitor_record(self._monitor_row(account_id, monitor_id))

    def check_monitor(self, account_id, monitor_id, status, cause=None):
        """``POST /_emulator/check`` (see README.md): what the service's checker writes after a check."""
        if status not in ('pending', 'online', 'offline'):
            raise ValueError('status must be pending, online or offline')
        if cause is not None and (not isinstance(cause, str) or len(cause) > 255):
            raise ValueError('cause must be a string of at most 255 characters')
        with self.lock, self._transaction():
            row = self._monitor_row(account_id, monitor_id)
            if row is None:
                raise NotFound()
            if row['status'] == 'paused':
                raise ValueError('a paused monitor is not checked')
            if self._in_maintenance(row):
                raise ValueError('a monitor in maintenance is not checked')
            flipped = row['status'] != status
            # Pending is a monitor not checked (again) yet: no check time, no new token.
            checked = "strftime('%Y-%m-%dT%H:%M:%S', 'now', clock_shift())" if status != 'pending' else 'checked_at'
            token = "lower(hex(randomblob(16)))" if flipped and status != 'pending' else 'token'
            # SQLite's 'now' is one value for the whole statement, the trigger included: checked_at = started_at on a flip.
            self.db.execute("UPDATE monitors SET status = ?, checked_at = %s, token = %s WHERE id = ?" % (checked, token),
                            (status, monitor_id))
            if flipped:
                # The trigger took the moment from SQLite's clock; the incident must carry exactly that moment.
                moment = self.db.execute('SELECT started_at FROM monitors WHERE id = ?', (monitor_id,)).fetchone()['started_at']
                ongoing = self._ongoing_incident(monitor_id)
                if status == 'offline' and ongoing is None:
                    self.db.execute('INSERT INTO incidents (account_id, monitor_id, cause, started_at, created_at, updated_at)'
                                    ' VALUES (?, ?, ?, ?, ?, ?)',
                                    (account_id, monitor_id, cause or CHECKER_DEFAULT_CAUSE, moment, moment, moment))
                elif status == 'online' and ongoing is not None:
                    self.db.execute('UPDATE incidents SET ended_at = ?, updated_at = ? WHERE id = ?', (moment, moment, ongoing['id']))
            return self._monitor_record(self._monitor_row(account_id, monitor_id))

    def delete_monitor(self, account_id, monitor_id):
        """Delete a monitor together with its incidents."""
        with self.lock, self._transaction():
            if self._monitor_row(account_id, monitor_id) is None:
                raise NotFound()
            self.db.execute('DELETE FROM monitors WHERE id = ?', (monitor_id,))

    def _monitor_row(self, account_id, monitor_id):
        if monitor_id is None:
            return None
        return self.db.execute('SELECT * FROM monitors WHERE id = ? AND account_id = ?', (monitor_id, account_id)).fetchone()

    def _set_status(self, monitor_id, status):
        """What an incident does to its monitor (a paused one stays paused; the trigger moves ``started_at``)."""
        self.db.execute("UPDATE monitors SET status = ? WHERE id = ? AND status != 'paused'", (status, monitor_id))

    def _in_maintenance(self, row):
        if not (row['maintenance_start_at'] and row['maintenance_end_at']):
            return False
        return row['maintenance_start_at'] <= self.now().strftime(INPUT_FORMAT) < row['maintenance_end_at']

    def _ongoing_incident(self, monitor_id):
        return self.db.execute('SELECT id FROM incidents WHERE monitor_id = ? AND ended_at IS NULL', (monitor_id,)).fetchone()

    def _monitor_record(self, row):
        status = row['status']
        if status != 'paused' and self._in_maintenance(row):
            status = 'maintenance'
        record = {'id': row['id']}
        for key in MONITOR_FIELDS:
            record[key] = row[key]
        for key in ('request_headers', 'alerts'):
            record[key] = json.loads(row[key]) if row[key] else None
        for key in ('maintenance_start_at', 'maintenance_end_at'):
            record[key] = render_time(row[key])
        record.update(status=status, created_at=render_time(row['created_at']), updated_at=render_time(row['updated_at']),
                      started_at=render_time(row['started_at']), checked_at=render_time(row['checked_at']), token=row['token'])
        return record

    def _validate_monitor(self, account_id, data, monitor_id, current=None):
        """Validate monitor input for create (``monitor_id`` None) or update; returns the column values to set.

        On update the rules are Laravel's ``sometimes``: a field is checked only when sent.  Runs before
        the ownership check, so ``current`` may be None on update (a foreign or missing id).
        """
        creating = monitor_id is None
        errors = Errors()
        form = Input(data, errors, self._zone(account_id))
        values = {}

        def sent(key):
            return creating or form.present(key)

        if sent('name'):
            values['name'] = form.text('name', max_length=128, required=True)
            if values['name'] is not None:
                same = 'casefold(name) = casefold(?)' if self.names_ignore_case else 'name = ?'
                clash = self.db.execute('SELECT id FROM monitors WHERE account_id = ? AND %s AND id != ?' % same,
                                        (account_id, values['name'], monitor_id or 0)).fetchone()
                if clash:
                    errors.add('name', 'The name has already been taken.')
        if sent('url'):
            values['url'] = form.text('url', max_length=2048, required=True)
            if values['url'] is not None and not valid_url(values['url']):
                errors.add('url', 'The url must be a valid URL.')
        if sent('interval'):
            values['interval'] = form.integer_choice('interval', INTERVALS, required=True)
        if sent('alert_condition'):
            values['alert_condition'] = form.choice('alert_condition', ALERT_CONDITIONS, required=True)
        if sent('request_method'):
            values['request_method'] = form.choice('request_method', REQUEST_METHODS, required=True)
        if form.present('alert_text_lookup'):
            values['alert_text_lookup'] = form.text('alert_text_lookup', max_length=255)
        self._check_text_lookup(data, values, errors, current)

        def check_header(prefix, key, value):
            return {'key': form.string(prefix + '.key', key, 128, True), 'value': form.string(prefix + '.value', value, 256, True)}

        headers_sent, headers = form.pairs('request_headers', check_header)
        if headers_sent:
            values['request_headers'] = headers

        for key, other in (('request_auth_username', 'request_auth_password'), ('request_auth_password', 'request_auth_username')):
            if form.present(key):
                values[key] = form.text(key, max_length=255)
            if data.get(other) is not None and data.get(key) is None:
                errors.add(key, 'The %s field is required when %s is present.' % (attribute(key), attribute(other)))

        if form.present('cache_buster'):
            values['cache_buster'] = form.boolean('cache_buster')
        for key, choices in (('ssl_alert_days', SSL_ALERT_DAYS), ('domain_alert_days', DOMAIN_ALERT_DAYS)):
            if form.present(key):
                values[key] = form.integer_choice(key, choices)

        self._check_maintenance(form, values, errors)

        alerts_sent, alerts = form.pairs('alerts', lambda prefix, key, value: self._check_alert(form, prefix, key, value))
        if alerts_sent:
            values['alerts'] = alerts

        errors.raise_if_any()
        return values

    @staticmethod
    def _check_text_lookup(data, values, errors, current):
        """``alert_text_lookup`` is required unless the (sent or stored) condition is ``url_unavailable``."""
        stored = dict(current) if current is not None else {}
        condition = values['alert_condition'] if 'alert_condition' in values else stored.get('alert_condition')
        if condition not in ('url_text', 'url_no_text') or 'alert_text_lookup' in errors.messages:
            return
        if (values.get('alert_text_lookup') if 'alert_text_lookup' in data else stored.get('alert_text_lookup')) is None:
            errors.add('alert_text_lookup', 'The alert text lookup field is required unless alert condition is in url_unavailable.')

    @staticmethod
    def _check_maintenance(form, values, errors):
        """Both maintenance timestamps or neither, each ``Y-m-dTH:i:s``, start before end."""
        start_key, end_key = 'maintenance_start_at', 'maintenance_end_at'
        start = form.timestamp(start_key) if form.present(start_key) else None
        end = form.timestamp(end_key) if form.present(end_key) else None
        for key, other in ((start_key, end_key), (end_key, start_key)):
            if form.data.get(other) is not None and form.data.get(key) is None:
                errors.add(key, 'The %s field is required when %s is present.' % (attribute(key), attribute(other)))
        if start is not None and end is not None and start >= end:
            errors.add(start_key, 'The %s must be a date before %s.' % (attribute(start_key), attribute(end_key)))
            errors.add(end_key, 'The %s must be a date after %s.' % (attribute(end_key), attribute(start_key)))
        for key, value in ((start_key, start), (end_key, end)):
            if form.present(key):
                values[key] = value.strftime(INPUT_FORMAT) if value is not None else None

    @staticmethod
    def _check_alert(form, prefix, key, value):
        """One alert channel: a known key and a value in that channel's format."""
        key_name, value_name = prefix + '.key', prefix + '.value'
        if key is None:
            form.errors.add(key_name, 'The %s field is required.' % attribute(key_name))
        elif key not in ALERT_CHANNELS:
            form.errors.add(key_name, 'The selected %s is invalid.' % attribute(key_name))
        if form.string(value_name, value, required=True) is None:
            pass
        elif key == 'email' and not EMAIL_PATTERN.fullmatch(value):
            form.errors.add(value_name, 'The %s must be a valid email address.' % attribute(value_name))
        elif key == 'sms' and (len(value) > 16 or not SMS_PATTERN.fullmatch(value)):
            form.errors.add(value_name, 'The %s format is invalid.' % attribute(value_name))
        elif key == 'telegram' and len(value) > 128:
            form.errors.add(value_name, 'The %s must not be greater than 128 characters.' % attribute(value_name))
        elif key == 'telegram' and not TELEGRAM_PATTERN.search(value):
            form.errors.add(value_name, 'The %s format is invalid.' % attribute(value_name))
        elif key in URL_CHANNELS and not valid_url(value, 256):
            form.errors.add(value_name, 'The %s must be a valid URL.' % attribute(value_name))
        return {'key': key, 'value': value}

    def list_incidents(self, account_id, query):
        where = ['i.account_id = ?']
        args = [account_id]
        search = query.get('search')
        if search:
            search_by = query.get('search_by')
            column = {'cause': 'i.cause', 'comment': 'i.comment'}.get(search_by, 'm.name')
            where.append(self._contains(column))
            args.append(search)
        monitor_id = query.get('monitor_id')
        if monitor_id not in (None, ''):
            where.append('i.monitor_id = ?')
            args.append(int(monitor_id) if INTEGER_PATTERN.fullmatch(monitor_id) else -1)
        status_filter = INCIDENT_STATUS_FILTERS.get(query.get('status'))
        if status_filter:
            where.append(status_filter)
        direction = 'ASC' if query.get('sort') == 'asc' else 'DESC'
        if query.get('sort_by') == 'started_at':
            order = 'i.started_at %s, i.id %s' % (direction, direction)
        else:
            # Ongoing incidents (no ended_at) first when descending, last when ascending.
            nulls = 'DESC' if direction == 'DESC' else 'ASC'
            order = 'i.ended_at IS NULL %s, i.ended_at %s, i.id %s' % (nulls, direction, direction)
        sql = 'SELECT i.* FROM incidents i JOIN monitors m ON m.id = i.monitor_id WHERE %s' % ' AND '.join(where)
        with self.lock:
            return self._page(sql, args, order, query, self._incident_record)

    def get_incident(self, account_id, incident_id):
        with self.lock:
            row = self._incident_row(account_id, incident_id)
            if row is None:
                raise NotFound()
            return self._incident_record(row)

    def create_incident(self, account_id, data):
        with self.lock, self._transaction():
            errors = Errors()
            form = Input(data, errors, self._zone(account_id))
            now = self.now()
            monitor = None
            monitor_id = form.text('monitor_id', required=True)
            if monitor_id is not None:
                if not INTEGER_PATTERN.fullmatch(monitor_id):
                    errors.add('monitor_id', 'The monitor id must be an integer.')
                else:
                    monitor = self._monitor_row(account_id, int(monitor_id))
                    if monitor is None:
                        errors.add('monitor_id', 'The selected monitor id is invalid.')
            started = form.timestamp('started_at', required=True)
            if started is not None and started > now:
                errors.add('started_at', 'The started at must be a date before or equal to now.')
            ended = form.timestamp('ended_at')
            if ended is not None and started is not None and ended <= started:
                errors.add('ended_at', 'The ended at must be a date after started at.')
            if ended is not None and ended > now:
                errors.add('ended_at', 'The ended at must be a date before or equal to now.')
            acknowledged = form.timestamp('acknowledged_at')
            cause = form.text('cause', max_length=255)
            comment = form.text('comment', max_length=1024)
            if monitor is not None:
                last = self.db.execute('SELECT * FROM incidents WHERE monitor_id = ? ORDER BY started_at DESC, id DESC LIMIT 1',
                                       (monitor['id'],)).fetchone()
                if last is not None and last['ended_at'] is None:
                    errors.add('monitor_id', "There's already an ongoing incident for this monitor.")
                elif last is not None and started is not None and started <= parse_time(last['ended_at']):
                    errors.add('started_at', 'The started at must be a date after %s.' % last['ended_at'].replace('T', ' '))
            errors.raise_if_any()

            stamp = now.strftime(INPUT_FORMAT)
            cursor = self.db.execute(
                'INSERT INTO incidents (account_id, monitor_id, cause, comment, started_at, acknowledged_at, ended_at, created_at, updated_at)'
                ' VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
                (account_id, monitor['id'], cause, comment, started.strftime(INPUT_FORMAT),
                 acknowledged.strftime(INPUT_FORMAT) if acknowledged else None,
                 ended.strftime(INPUT_FORMAT) if ended else None, stamp, stamp))
            if ended is None and monitor['status'] != 'paused':
                self._set_status(monitor['id'], 'offline')
            echo = {key: data[key] for key in INCIDENT_FIELDS if key in data}
            echo.update(updated_at=render_time(stamp), created_at=render_time(stamp), id=cursor.lastrowid)
            return echo

    def update_incident(self, account_id, incident_id, data):
        """PUT an incident: cause/comment change, acknowledged_at/ended_at are write-once, started_at is ignored."""
        with self.lock, self._transaction():
            errors = Errors()
            form = Input(data, errors, self._zone(account_id))
            if data.get('monitor_id') is not None:
                errors.add('monitor_id', 'The monitor id field is prohibited.')
            acknowledged = form.timestamp('acknowledged_at')
            ended = form.timestamp('ended_at')
            values = {}
            for key, max_length in (('cause', 255), ('comment', 1024)):
                if form.present(key):
                    values[key] = form.text(key, max_length=max_length)
            errors.raise_if_any()

            current = self._incident_row(account_id, incident_id)
            if current is None:
                raise NotFound()
            if acknowledged is not None and current['acknowledged_at'] is None:
                values['acknowledged_at'] = acknowledged.strftime(INPUT_FORMAT)
            if ended is not None and current['ended_at'] is None:
                if ended <= parse_time(current['started_at']):
                    errors.add('ended_at', 'The ended at must be a date after started at.')
                elif ended > self.now():
                    errors.add('ended_at', 'The ended at must be a date before or equal to now.')
                values['ended_at'] = ended.strftime(INPUT_FORMAT)
            errors.raise_if_any()

            if 'ended_at' in self._update_row('incidents', current, values):
                self._set_status(current['monitor_id'], 'online')
            return self._incident_record(self._incident_row(account_id, incident_id))

    def delete_incident(self, account_id, incident_id):
        """Delete an incident; an ongoing one sends its monitor back to ``pending``, a paused one too (the pause is lost)."""
        with self.lock, self._transaction():
            row = self._incident_row(account_id, incident_id)
            if row is None:
                raise NotFound()
            self.db.execute('DELETE FROM incidents WHERE id = ?', (incident_id,))
            if row['ended_at'] is None:
                self.db.execute("UPDATE monitors SET status = 'pending' WHERE id = ?", (row['monitor_id'],))

    def _update_row(self, table, current, values):
        """Write those of ``values`` that differ from the ``current`` row, and then ``updated_at``; returns them."""
        changed = {key: value for key, value in values.items() if current[key] != value}
        if changed:
            changed['updated_at'] = self.now().strftime(INPUT_FORMAT)
            columns = sorted(changed)
            self.db.execute('UPDATE %s SET %s WHERE id = ?' % (table, ', '.join('%s = ?' % column for column in columns)),
                            [changed[column] for column in columns] + [current['id']])
        return changed

    def _incident_row(self, account_id, incident_id):
        if incident_id is None:
            return None
        return self.db.execute('SELECT * FROM incidents WHERE id = ? AND account_id = ?', (incident_id, account_id)).fetchone()

    def _incident_record(self, row):
        """The incident as the service returns it: derived status, the whole monitor nested, no monitor_id."""
        monitor = self._monitor_record(self.db.execute('SELECT * FROM monitors WHERE id = ?', (row['monitor_id'],)).fetchone())
        status = 'resolved' if row['ended_at'] else 'acknowledged' if row['acknowledged_at'] else 'unresolved'
        duration = int((parse_time(row['ended_at']) - parse_time(row['started_at'])).total_seconds()) if row['ended_at'] else None
        return {
            'id': row['id'],
            'status': status,
            'monitor': monitor,
            'url': monitor['url'],
            'cause': row['cause'],
            'comment': row['comment'],
            'duration': duration,
            'acknowledged_at': render_time(row['acknowledged_at']),
            'started_at': render_time(row['started_at']),
            'ended_at': render_time(row['ended_at']),
            'created_at': render_time(row['created_at']),
            'updated_at': render_time(row['updated_at']),
        }

    def _page(self, sql, args, order, query, render):
        """Run a list query for the requested ``page``; ``per_page`` outside the choices falls back to the default."""
        per_page = query.get('per_page', '')
        per_page = int(per_page) if per_page in [str(choice) for choice in PER_PAGE_CHOICES] else DEFAULT_PER_PAGE
        page = query.get('page', '')
        page = max(int(page), 1) if INTEGER_PATTERN.fullmatch(page) else 1
        total = self.db.execute('SELECT COUNT(*) FROM (%s)' % sql, args).fetchone()[0]
        rows = self.db.execute('%s ORDER BY %s LIMIT ? OFFSET ?' % (sql, order), args + [per_page, (page - 1) * per_page]).fetchall()
        return Page([render(row) for row in rows], total, page, per_page)
