# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""HTTP client for the uptime-monitoring service API.

This layer knows HTTP, the service's envelopes, paging and errors; it knows
nothing about monitors or incidents.
"""

from __future__ import annotations

import datetime
import email.utils
import ipaddress
import json
import math
import os
import random
import re
import time
import warnings
from urllib.parse import parse_qsl, urlsplit

try:
    import requests
    HAS_REQUESTS = True
    REQUESTS_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - exercised only without requests
    requests = None
    HAS_REQUESTS = False
    REQUESTS_IMPORT_ERROR = exc

COLLECTION_VERSION = '1.1.0-dev0'
USER_AGENT = 'uptime.monitoring/%s (Ansible collection)' % COLLECTION_VERSION
API_PREFIX = '/api/v1'

# Writes other than POST are idempotent on this service: repeating a PUT or a
# DELETE leaves the same state, so they may be retried like reads.
IDEMPOTENT_METHODS = frozenset(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'])
READ_METHODS = frozenset(['GET', 'HEAD'])
RETRYABLE_STATUSES = frozenset([429, 502, 503, 504])
MAX_RETRY_AFTER = 300.0
MAX_PAGES = 10000
# A whole list that moved while its pages were read is read again from its first page: at most this many reads.
LIST_READS = 3
# The largest page the service serves (per_page must be 10, 25, 50 or 100): every read of a whole list uses it.
PAGE_SIZE = 100
# Seconds an address that cannot be connected to (refused, unknown host, connect timeout) is tried for,
# from its first failure: a service restarting for a few seconds is ridden out, a wrong address fails
# soon. Retries stop at whichever comes first, this or ``retries``.
UNREACHABLE_BUDGET = 6.0
if HAS_REQUESTS:
    NEVER_SENT_ERRORS = (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
                         requests.exceptions.InvalidSchema, requests.exceptions.InvalidHeader)
else:  # pragma: no cover - the modules fail before using the client
    NEVER_SENT_ERRORS = ()
CA_OPTIONS_HINT = 'set ca_path to the CA bundle that signed it, or validate_certs: false to skip the check'
# The service's own answers for a record that is not there (or is another account's): its API's message, and the
# one Laravel gives when a form request looks the record up first (PUT /api/v1/incidents/{id}). Any other 404 (a
# proxy's page, a wrong path in api_url, an unknown route) says nothing about the record.
NOT_FOUND_MESSAGES = (re.compile(r'^Resource not found\.?$'), re.compile(r'^No query results for model \['))
# Said inside the parentheses of an error: no parentheses of its own.
API_URL_HINT = ('api_url must be the base address of the service, such as https://uptime.example.com, with no path '
                'of its own: a trailing /api/v1 is ignored')
# Said of an answer that is not the service's: the service answers every request of this client in JSON, and
# takes each method it is sent at each path it is sent to.
NOT_THE_SERVICE = 'a wrong address or a proxy answered'
# The service counts an account's requests in windows of one minute (Laravel's throttle): what X-RateLimit-Remaining
# says is renewed at the latest this long after it was read.
RATE_WINDOW = 60.0


class UptimeApiError(Exception):
    """One error type for every failure of a request to the service.

    ``ambiguous`` is true when a write may or may not have been applied
    (the request was sent but no trustworthy answer came back); the message
    then says so. ``transient`` is true for a failure that a later attempt may
    not meet (429, 502-504, a timeout, a dropped or refused connection), and
    ``retry_after`` holds the seconds the service asked to wait, if it did.
    """

    def __init__(self, message, status=None, method=None, path=None, field_errors=None, ambiguous=False):
        super().__init__(message)
        self.message = message
        self.status = status
        self.method = method
        self.path = path
        self.field_errors = field_errors or {}
        self.ambiguous = ambiguous
        self.transient = False
        self.retry_after = None
        # The service's own answer that the record is not there: the only 404 that means "absent".
        self.not_found = False
        # Not sent at all: the account had no more requests to spare than the reserve the caller keeps.
        self.held_back = False
        # An answer came, but not the service's (a web page, JSON without its envelope, a 404 or 405 it never gives):
        # it tells nothing of what the service did with the request.
        self.not_the_service = False
        # An earlier attempt of this request was sent and got no answer of the service's: it may still be running.
        self.earlier_unanswered = False

    def __str__(self):
        where = ' '.join(part for part in (self.method, self.path) if part)
        status = ('HTTP %s: ' % self.status) if self.status else ''
        prefix = ('%s failed: ' % where) if where else ''
        outcome = ' (no definite answer: the service may have applied this change)' if self.ambiguous else ''
        return '%s%s%s%s' % (prefix, status, self.message, outcome)

    def to_result(self):
        """What a failed task returns beside its message: only what this failure has to tell.

        ``status_code`` when an HTTP answer came, ``request`` (its ``method`` and ``path``) when the failure is a
        request's, ``field_errors`` when the service named the fields it refused. Not ``path`` at the top: AnsibleModule
        reads a result's ``path`` as a file of the host and adds its owner, mode and size.
        """
        request = dict(method=self.method, path=self.path) if self.method or self.path else None
        result = dict(status_code=self.status, request=request, field_errors=self.field_errors or None)
        return {key: value for key, value in result.items() if value is not None}


class _TransientError(Exception):
    """A failure worth another attempt, when the method allows one.

    ``unreachable`` marks a connection that could not be opened at all: such
    failures share the client's budget of UNREACHABLE_BUDGET seconds.
    """

    def __init__(self, error, retry_after=None, request_sent=True, unreachable=False, hint=None):
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after
        self.request_sent = request_sent
        self.unreachable = unreachable
        self.hint = hint


def normalise_base_url(api_url):
    """Accept the service root with or without a trailing ``/api/v1``."""
    url = (api_url or '').strip().rstrip('/')
    if url.endswith(API_PREFIX):
        url = url[:-len(API_PREFIX)]
    return url


def origin(url):
    """``scheme://host:port`` of a URL: what a message may name (never a path, query or credentials)."""
    parts = urlsplit(url or '')
    scheme = (parts.scheme or '').lower()
    host = parts.hostname or ''
    if ':' in host:
        host = '[%s]' % host
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is None:
        port = {'http': 80, 'https': 443}.get(scheme)
    return '%s://%s%s' % (scheme, host, ':%d' % port if port else '')


def is_loopback(host):
    """Whether ``host`` names this machine (``localhost``, 127.0.0.0/8, ``::1``): traffic never leaves it."""
    host = (host or '').strip('[]').lower().rstrip('.')
    if host == 'localhost' or host.endswith('.localhost'):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def transport_warnings(api_url, validate_certs=True):
    """What is weak in how the API key would travel to ``api_url``: one sentence per fact, [] when nothing is.

    Shared by everything that talks to the service (modules, inventory, event source), so that all of them
    warn alike: an unencrypted address that leaves this machine, or a certificate that is not checked.
    """
    parts = urlsplit((api_url or '').strip())
    scheme = (parts.scheme or '').lower()
    where = origin(api_url)
    warnings = []
    if scheme == 'http' and not is_loopback(parts.hostname):
        warnings.append('api_url %s uses http://: the API key and all data travel unencrypted, readable by anyone '
                        'on the network path; use https://' % where)
    if scheme == 'https' and not validate_certs:
        warnings.append('validate_certs is false: the TLS certificate of %s is not checked, so anyone able to '
                        'intercept the connection can read the API key; set ca_path to the CA bundle that signed '
                        'the certificate instead' % where)
    return warnings


def ca_path_problem(ca_path):
    """Why ``ca_path`` cannot be used as a CA bundle, or None: said before any request."""
    if ca_path is None:
        return None
    if not os.path.exists(ca_path):
        return 'ca_path: no such file or directory: %s' % ca_path
    if not os.access(ca_path, os.R_OK):
        return 'ca_path: not readable: %s' % ca_path
    return None


def encode_form(fields):
    """Encode a dict into the service's form fields.

    Lists of key/value pairs become indexed fields (``alerts[0][key]``); an
    empty list becomes the bare key with an empty value, which clears the list
    on the service. Booleans become ``1``/``0``; ``None`` becomes an empty
    value, which clears the field.
    """
    pairs = []
    for name, value in fields.items():
        if isinstance(value, (list, tuple)):
            if not value:
                pairs.append((name, ''))
            for index, item in enumerate(value):
                for sub_key in ('key', 'value'):
                    pairs.append(('%s[%d][%s]' % (name, index, sub_key), _form_scalar(item.get(sub_key))))
        else:
            pairs.append((name, _form_scalar(value)))
    return pairs


def _form_scalar(value):
    if value is None:
        return ''
    if isinstance(value, bool):
        return '1' if value else '0'
    return str(value)


def parse_retry_after(value, now=None):
    """Seconds to wait from a Retry-After header (seconds or an HTTP date)."""
    if value is None:
        return None
    value = str(value).strip()
    try:
        seconds = float(value)
        if not math.isfinite(seconds):
            return None
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


class RateLimit:
    """What the service last said of the account's requests (``X-RateLimit-Limit`` / ``-Remaining``), and when.

    Other clients of the account spend from the same count unseen, so what is
    known is an upper bound that holds until the window renews: at the latest
    RATE_WINDOW seconds after it was read.
    """

    def __init__(self, clock=time.monotonic, window=None):
        self._clock = clock
        self.window = RATE_WINDOW if window is None else window
        self.limit = None
        self.remaining = None
        self._read_at = None

    def observe(self, headers):
        limit, remaining = _as_int(headers.get('X-RateLimit-Limit')), _as_int(headers.get('X-RateLimit-Remaining'))
        if remaining is None:
            return
        self.limit, self.remaining, self._read_at = limit, remaining, self._clock()

    def seconds_until_renewed(self):
        """Seconds until what was read no longer holds (0 when nothing is known)."""
        if self._read_at is None:
            return 0.0
        return max(self._read_at + self.window - self._clock(), 0.0)

    def known_remaining(self):
        """The requests left in this window as last read, or None when unknown or renewed since."""
        return self.remaining if self.seconds_until_renewed() > 0 else None

    def may_send(self, keep=0):
        """Whether one more request leaves the account at least ``keep`` requests, as far as is known."""
        remaining = self.known_remaining()
        return remaining is None or remaining - 1 >= keep


class UptimeClient:
    """A session on the service: auth, retries, envelopes, paging.

    With ``reserve``, a request that would take the account's remaining
    requests (as the service last said) below it is not sent: it fails at once
    with ``held_back`` and ``retry_after`` (when the window renews).
    """

    def __init__(self, api_url, api_key, validate_certs=True, ca_path=None, timeout=30, retries=5,
                 backoff_base=0.5, backoff_max=30.0, sleep=time.sleep, clock=time.monotonic,
                 unreachable_budget=UNREACHABLE_BUDGET, reserve=None):
        if not HAS_REQUESTS:
            raise RuntimeError('the Python library requests is required')
        self.base_url = normalise_base_url(api_url)
        self.origin = origin(self.base_url)
        self._api_key = api_key or ''
        self.timeout = timeout
        self.retries = max(int(retries), 0)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self._sleep = sleep
        self._clock = clock
        self.unreachable_budget = unreachable_budget
        # When the address first could not be connected to, since the last answer it gave.
        self._unreachable_since = None
        self.request_count = 0
        self.rate_limit = RateLimit(clock)
        self.reserve = reserve
        # The service's clock as the Date header of its latest answer told it (naive UTC), None before one, and the
        # local monotonic clock when that answer was read.
        self.service_date = None
        self._service_date_read = None
        self.transport_warnings = transport_warnings(self.base_url, validate_certs)
        self.session = requests.Session()
        self.session.headers.update({
            'Authorization': 'Bearer %s' % self._api_key,
            'Accept': 'application/json',
            'User-Agent': USER_AGENT,
        })
        self.verify = (ca_path or True) if validate_certs else False
        if not validate_certs and HAS_REQUESTS:
            # transport_warnings says it once, in the caller's words, instead of once per request on stderr.
            warnings.filterwarnings('ignore', category=requests.packages.urllib3.exceptions.InsecureRequestWarning)

    # -- public verbs -----------------------------------------------------

    def get(self, path, params=None):
        return self.request('GET', path, params=params)['data']

    def get_or_none(self, path):
        """The record at ``path``, or None when the service says it is not there."""
        try:
            return self.get(path)
        except UptimeApiError as exc:
            if exc.not_found:
                return None
            raise

    def create(self, path, fields):
        return self.request('POST', path, form=fields)['data']

    def update(self, path, fields, method='PUT'):
        return self.request(method, path, form=fields)['data']

    def delete(self, path):
        """Delete ``path``; False when it was already absent."""
        try:
            self.request('DELETE', path)
        except UptimeApiError as exc:
            if exc.not_found:
                return False
            raise
        return True

    def iter_pages(self, path, params=None):
        """Yield the records of every page of a list, following ``links.next``."""
        for body in self._pages(path, params):
            yield _list_records(body.get('data'))

    def _pages(self, path, params):
        """Yield the answer of every page of a list, following ``links.next``; an empty page or a link seen before ends
        the reading."""
        url = self._url(path)
        query = dict(params or {})
        seen = set()
        for dummy in range(MAX_PAGES):
            body = self.request('GET', url, params=query)
            yield body
            next_url = self._next_page(body, url, query)
            if not _list_records(body.get('data')) or next_url is None:
                return
            key = (next_url[0], tuple(sorted(next_url[1].items())))
            if key in seen:
                return
            seen.add(key)
            url, query = next_url

    def read_page(self, path, params):
        """One page of a list: its records, and how many pages the list has (None when the service does not say)."""
        body = self.request('GET', path, params=params)
        meta = body.get('meta') if isinstance(body.get('meta'), dict) else {}
        return _list_records(body.get('data')), _as_int(meta.get('last_page'))

    def list(self, path, params=None, until=None):
        """Every record of a list as it stood while its pages were read: the one reader of whole lists.

        The service cuts each page by offset when it is read, so a record created or deleted between two pages moves
        the later ones, and a record that lived throughout can be on no page. ``params`` must order the list newest
        first (every new record comes first): then a create moves the records back (an id is read twice) and a delete
        moves them forward (``meta.total`` changes), and a read that shows neither sign missed no record. A read that
        shows one is read again from the first page, at most LIST_READS times, else fails naming the list. ``until``
        is asked of each page: when it is true, the reading stops there (what the caller looks for is found).
        """
        for attempt in range(LIST_READS):
            if attempt:
                self._sleep(self._backoff(attempt - 1, None))
            records = self._read_whole(path, params, until)
            if records is not None:
                return records
        error = self._error('the list changed while its pages were read, %d times in a row (records were created or '
                            'deleted meanwhile); nothing was done with a part of it: run again once the changes are '
                            'over' % LIST_READS, None, 'GET', urlsplit(self._url(path)).path)
        error.transient = True
        raise error

    def _read_whole(self, path, params, until):
        """The records of every page of a list, or None when the list moved while they were read (see :meth:`list`)."""
        collected, ids, total = [], set(), None
        for index, body in enumerate(self._pages(path, params)):
            meta = body.get('meta') if isinstance(body.get('meta'), dict) else {}
            if index == 0:
                total = _as_int(meta.get('total'))
            elif _as_int(meta.get('total')) != total:
                return None
            records = _list_records(body.get('data'))
            for record in records:
                record_id = record.get('id') if isinstance(record, dict) else None
                if record_id is not None:
                    if str(record_id) in ids:
                        return None
                    ids.add(str(record_id))
                collected.append(record)
            if until is not None and until(records):
                return collected
        return collected if total in (None, len(collected)) else None

    # -- plumbing ---------------------------------------------------------

    def _url(self, path):
        if path.startswith('http://') or path.startswith('https://'):
            return path
        return self.base_url + path

    def _next_page(self, body, url, query):
        """The URL and query of the next page, or None on the last one.

        Only the query of ``links.next`` is taken, over the query of this
        page: behind a proxy the service may announce an address this client
        cannot reach, and a link need not repeat every filter (page size,
        status page) of the first request.
        """
        links = body.get('links') if isinstance(body.get('links'), dict) else {}
        next_link = links.get('next')
        if next_link:
            next_query = dict(query)
            next_query.update(_parse_query(urlsplit(str(next_link)).query))
            return url, next_query
        meta = body.get('meta') if isinstance(body.get('meta'), dict) else {}
        current, last = _as_int(meta.get('current_page')), _as_int(meta.get('last_page'))
        if current is not None and last is not None and current < last:
            next_query = dict(query)
            next_query['page'] = current + 1
            return url, next_query
        return None

    def request(self, method, path, params=None, form=None):
        """Send one request with retries; the decoded JSON body of a success."""
        method = method.upper()
        url = self._url(path)
        display_path = urlsplit(url).path
        data = encode_form(form) if form is not None else None
        attempt, sent, unanswered = 0, False, False
        while True:
            self._hold_back_below_reserve(method, display_path)
            try:
                return self._send_once(method, url, display_path, params, data)
            except _TransientError as transient:
                # A write an earlier attempt sent may have been applied, whatever the last attempt met.
                sent = sent or transient.request_sent
                retry_allowed = method in IDEMPOTENT_METHODS or not transient.request_sent
                wait = self._backoff(attempt, transient.retry_after)
                if transient.unreachable:
                    wait = self._unreachable_wait(wait)
                if not retry_allowed or attempt >= self.retries or wait is None:
                    error = transient.error
                    error.transient, error.retry_after = True, transient.retry_after
                    if method not in READ_METHODS and sent:
                        error.ambiguous, error.earlier_unanswered = True, unanswered
                    if attempt:
                        error.message += self._attempts_note(attempt + 1, transient.unreachable)
                    if transient.hint:
                        error.message += ': ' + transient.hint
                    raise error
                unanswered = unanswered or transient.request_sent and transient.error.status in (None, 502, 503, 504)
                self._sleep(wait)
                attempt += 1

    def _hold_back_below_reserve(self, method, display_path):
        if self.reserve is None or self.rate_limit.may_send(self.reserve):
            return
        error = self._error('not sent: the account has %d requests left this minute, and %d are kept for others'
                            % (self.rate_limit.remaining, self.reserve), None, method, display_path)
        error.held_back = error.transient = True
        error.retry_after = self.rate_limit.seconds_until_renewed()
        raise error

    def _unreachable_wait(self, wait):
        """The wait before trying an unreachable address again, or None once its budget is spent.

        The budget counts from the first failure of the address, across requests, and
        the last wait is cut so that the last attempt falls at the end of the budget.
        """
        now = self._clock()
        if self._unreachable_since is None:
            self._unreachable_since = now
        remaining = self._unreachable_since + self.unreachable_budget - now
        if remaining <= 0:
            return None
        return min(wait, remaining)

    def _attempts_note(self, attempts, unreachable):
        if unreachable and self._unreachable_since is not None:
            return ' (%d attempts in %.1f s)' % (attempts, self._clock() - self._unreachable_since)
        return ' (%d attempts)' % attempts

    def _backoff(self, attempt, retry_after):
        if retry_after is not None:
            return retry_after
        ceiling = min(self.backoff_max, self.backoff_base * (2 ** attempt))
        return random.uniform(ceiling / 2.0, ceiling)

    def _send_once(self, method, url, display_path, params, data):
        self.request_count += 1
        try:
            # verify is passed on each call: requests lets REQUESTS_CA_BUNDLE override a session's setting.
            response = self.session.request(method, url, params=params, data=data, timeout=self.timeout,
                                            allow_redirects=False, verify=self.verify)
            content = response.content
        except NEVER_SENT_ERRORS as exc:
            # Nothing went out and trying again cannot help: a malformed URL.
            raise self._error('request not sent: %s' % _exception_summary(exc), None, method, display_path) from exc
        except requests.exceptions.SSLError as exc:
            tls_failure = _tls_failure(exc, urlsplit(url))
            if tls_failure is None:
                # A TLS error after the handshake: the request may have reached the service.
                raise _TransientError(self._error('connection failed: TLS error: %s' % _exception_summary(exc),
                                                  None, method, display_path)) from exc
            # The handshake failed, so nothing was sent, and another attempt would meet the same certificate.
            raise self._error('request not sent: %s' % tls_failure, None, method, display_path) from exc
        except requests.exceptions.ConnectTimeout as exc:
            raise _TransientError(self._error('no connection to %s within %gs (timeout)' % (self.origin, self.timeout),
                                              None, method, display_path),
                                  request_sent=False, unreachable=True, hint='is api_url right?') from exc
        except requests.exceptions.Timeout as exc:
            raise _TransientError(self._error('no answer within %gs (timeout)' % self.timeout, None, method,
                                              display_path)) from exc
        except requests.exceptions.ConnectionError as exc:
            unreachable = _connect_failure(exc, self.origin)
            if unreachable:
                raise _TransientError(self._error(unreachable[0], None, method, display_path), request_sent=False,
                                      unreachable=True, hint=unreachable[1]) from exc
            raise _TransientError(self._error('connection failed: %s' % _exception_summary(exc), None, method,
                                              display_path), request_sent=_was_sent(exc)) from exc
        except requests.exceptions.RequestException as exc:
            raise _TransientError(self._error('request failed: %s' % _exception_summary(exc), None, method,
                                              display_path)) from exc
        self._unreachable_since = None
        self.rate_limit.observe(response.headers)
        body = self._read_response(response, content, method, display_path)
        self._observe_date(response.headers)
        return body

    def _observe_date(self, headers):
        """Take the service's clock from the ``Date`` of an answer read as the service's own (a proxy's page may carry
        another machine's)."""
        date = _http_date(headers.get('Date'))
        if date is not None:
            self.service_date, self._service_date_read = date, self._clock()

    def wait_until(self, instant):
        """Sleep until the service's clock reaches ``instant`` (naive UTC), and return its time then; the local clock's
        when no answer told the service's.

        The service's time is its latest ``Date`` plus the whole seconds the local
        monotonic clock has counted since: a ``Date`` is cut to the second, so this is
        never ahead of the service's clock, and at most a second behind it.
        """
        if self.service_date is None:
            remaining = (instant - datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)).total_seconds()
        else:
            remaining = (instant - self.service_date).total_seconds() - (self._clock() - self._service_date_read)
        if remaining > 0:
            # A little more, so that a sleep cut short by the clock's resolution still counts the whole seconds.
            self._sleep(remaining + 0.01)
        if self.service_date is None:
            return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
        return self.service_date + datetime.timedelta(seconds=int(self._clock() - self._service_date_read))

    def _read_response(self, response, content, method, path):
        status = response.status_code
        if 300 <= status < 400:
            location = response.headers.get('Location', '')
            if 'login' in location:
                raise self._error('authentication failed: check api_key (the service redirected to its login page)',
                                  status, method, path)
            raise self._error('redirected to %s, which is not followed so that the API key goes nowhere else: set '
                              'api_url to the address the service answers at' % location, status, method, path)
        body = _decode_json(content)
        if status == 401:
            raise self._error('authentication failed: check api_key (%s)' % _service_message(body, 'Unauthenticated.'),
                              status, method, path)
        if status in RETRYABLE_STATUSES:
            retry_after = parse_retry_after(response.headers.get('Retry-After'))
            # A 429 is refused before any processing, so even a POST may repeat it.
            raise _TransientError(self._error(_service_message(body, response.reason or 'service unavailable'),
                                              status, method, path),
                                  retry_after=retry_after, request_sent=status != 429)
        if status == 404:
            message = _service_message(body, None)
            error = self._error(message or response.reason or 'Not Found', status, method, path)
            error.not_found = any(pattern.match(message or '') for pattern in NOT_FOUND_MESSAGES)
            if not error.not_found:
                error.message += ' (not the service\'s answer for a missing record: %s)' % self.api_url_hint()
                error.not_the_service = True
            raise error
        if status == 405:
            # This client sends only the methods the service takes at each of its paths.
            error = self._error('%s (the service takes this method at this path: %s)' % (
                _service_message(body, response.reason or 'Method Not Allowed'), self.api_url_hint()),
                status, method, path)
            error.not_the_service = True
            raise error
        if status >= 400:
            field_errors = _field_errors(body) if status == 422 else {}
            if field_errors:
                message = 'validation failed: ' + '; '.join(
                    '%s: %s' % (field, ' '.join(texts)) for field, texts in sorted(field_errors.items()))
            else:
                message = _service_message(body, response.reason or 'error')
            error = self._error(message, status, method, path, field_errors)
            # A server error may come after the record was stored: a create cannot know.
            error.ambiguous = status >= 500 and method not in READ_METHODS
            # Not retried here (one clear line, never a loop), but a poll a minute later may well succeed.
            error.transient = status >= 500 or status == 408
            raise error
        if not isinstance(body, dict):
            kind = response.headers.get('Content-Type', 'unknown content type').split(';')[0].strip()
            # Broken JSON may be a glitch of the service; a web page is another server's answer, or a proxy's.
            hint = None if _is_json_type(kind) else self.api_url_hint()
            error = self._error('the answer is not the expected JSON (%s, %d bytes)' % (kind, len(content)), status,
                                method, path)
            error.not_the_service = hint is not None
            raise _TransientError(error, hint=hint)
        if 'data' not in body and method != 'DELETE':
            error = self._error('the answer is JSON without the service\'s "data" envelope', status, method, path)
            error.not_the_service = True
            raise _TransientError(error, hint=self.api_url_hint())
        return body

    def api_url_hint(self):
        """What to check when an answer is not the service's: api_url, naming the path it has, if any."""
        path = urlsplit(self.base_url).path
        return '%s; %s%s' % (NOT_THE_SERVICE, API_URL_HINT, ', and this one has the path %s' % path if path else '')

    def _error(self, message, status, method, path, field_errors=None):
        return UptimeApiError(self.redact(message), status=status, method=method, path=path,
                              field_errors={key: [self.redact(text) for text in value]
                                            for key, value in (field_errors or {}).items()})

    def redact(self, text):
        """Never let the API key travel in a message, whatever produced it."""
        text = str(text)
        if self._api_key and len(self._api_key) >= 4:
            text = text.replace(self._api_key, '********')
        return text


def _http_date(value):
    """An HTTP ``Date`` header as a naive UTC datetime, or None when it is missing or not a date."""
    try:
        moment = email.utils.parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment is None:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return moment.replace(microsecond=0)


def _decode_json(content):
    if not content:
        return None
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None


def _is_json_type(content_type):
    content_type = content_type.lower()
    return content_type == 'application/json' or content_type.endswith('+json')


def _service_message(body, default):
    if isinstance(body, dict):
        message = body.get('message')
        if isinstance(message, str) and message:
            return message
        if isinstance(message, dict):
            return '; '.join('%s: %s' % (key, ' '.join(_as_texts(value))) for key, value in sorted(message.items()))
    return default


def _field_errors(body):
    """Per-field errors of a 422: the service puts them under ``message``."""
    if not isinstance(body, dict):
        return {}
    for key in ('message', 'errors'):
        value = body.get(key)
        if isinstance(value, dict):
            return {str(field): _as_texts(texts) for field, texts in value.items()}
    return {}


def _as_texts(value):
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    return [str(value)]


def _list_records(data):
    if data is None:
        return []
    if isinstance(data, dict):
        return in_position_order(data)
    return list(data)


def in_position_order(items):
    """The values of a list the service sent as an object keyed by position (``{"0": .., "2": ..}``)."""
    def position(key):
        number = _as_int(key)
        return (0, number, '') if number is not None else (1, 0, str(key))
    return [items[key] for key in sorted(items, key=position)]


def _as_int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _parse_query(query):
    return parse_qsl(query, keep_blank_values=True)


def _connect_failure(exc, where):
    """``(message, hint)`` when a connection to ``where`` could not be opened (refused, unknown host), or None."""
    text = repr(exc)
    if 'Connection refused' in text:
        return 'connection refused by %s' % where, 'is the service running there, and is api_url right?'
    for marker in ('Name or service not known', 'nodename nor servname', 'Failed to resolve', 'getaddrinfo failed',
                   'Temporary failure in name resolution', 'No address associated with hostname'):
        if marker in text:
            return 'cannot resolve the host name of %s' % where, 'check api_url'
    if 'No route to host' in text or 'Network is unreachable' in text:
        return 'no route to %s' % where, 'check api_url and the network'
    return None


def _tls_failure(exc, url):
    """The certificate or handshake problem of a TLS error, in one line with what solves it; None if unknown."""
    where = origin(url.geturl())
    text = str(exc)
    verify = re.search(r'certificate verify failed: (.+?)\.? \(_ssl', text)
    if not verify:
        verify = re.search(r'certificate verify failed: ([^(\'"]+)', text)
    if verify:
        detail = verify.group(1).strip().rstrip('.')
        lowered = detail.lower()
        if 'expired' in lowered:
            return ('the TLS certificate of %s has expired (%s): the service must renew it; validate_certs: false '
                    'skips the check meanwhile (ca_path cannot help)' % (where, detail))
        if 'mismatch' in lowered or 'not valid for' in lowered:
            return ('the TLS certificate of %s is not valid for the host name in api_url (%s): use in api_url a host '
                    'name the certificate names, or validate_certs: false to skip the check (ca_path cannot help)'
                    % (where, detail))
        if 'not yet valid' in lowered:
            return ('the TLS certificate of %s is not valid yet (%s): check the clock of this machine and the '
                    'service; validate_certs: false skips the check (ca_path cannot help)' % (where, detail))
        return ('the TLS certificate of %s is not trusted (%s): %s' % (where, detail, CA_OPTIONS_HINT))
    if 'WRONG_VERSION_NUMBER' in text or 'wrong version number' in text:
        return ('%s did not answer in TLS (wrong version number): does api_url need http:// or another port?'
                % where)
    alert = re.search(r'alert ([a-z ]+?) \(_ssl', text)
    if alert or 'HANDSHAKE_FAILURE' in text or 'UNSUPPORTED_PROTOCOL' in text:
        reason = alert.group(1) if alert else 'handshake failure'
        return ('%s refused the TLS handshake (%s): the service accepts no TLS version or cipher this client '
                'offers, or wants a client certificate' % (where, reason))
    if 'NO_CERTIFICATE_OR_CRL_FOUND' in text or 'no certificate or crl found' in text:
        return 'ca_path holds no PEM certificate, so no certificate of %s can be trusted: %s' % (
            where, CA_OPTIONS_HINT)
    return None


def _was_sent(exc):
    """Whether a connection error happened after the request left the client."""
    text = repr(exc)
    refused_markers = ('NewConnectionError', 'Connection refused', 'Name or service not known',
                       'nodename nor servname', 'Failed to resolve', 'getaddrinfo failed')
    return not any(marker in text for marker in refused_markers)


def _exception_summary(exc):
    text = str(exc)
    for marker in ('Connection refused', 'Connection aborted', 'Connection reset', 'RemoteDisconnected',
                   'IncompleteRead', 'Read timed out', 'Failed to resolve', 'Name or service not known',
                   'certificate verify failed', 'Response ended prematurely', 'No connection adapters',
                   'Invalid URL', 'No scheme supplied'):
        if marker in text:
            return marker
    return exc.__class__.__name__
