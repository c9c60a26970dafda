# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""uptime.monitoring.events: an ansible-rulebook event source for a phpUptime service.

It polls the service and puts one event on the queue per transition it sees:
an incident opened, acknowledged, resolved or deleted, and a monitor whose
status changed.

This file stands alone. ansible-rulebook loads an event source with
``runpy.run_path``, so it cannot import the collection's
``plugins/module_utils/_client.py`` or ``_resource.py`` (relative imports fail
and the collection is not a package on ``sys.path`` there). It therefore
carries a small copy of what it needs from them, kept to the behaviour the
modules have and tested in ``tests/unit/extensions/eda/``:

- from ``_client.py``: Bearer authentication, ``Accept: application/json``
  (without it the service answers a bad key with a redirect to its login
  page), the ``data`` envelope, reading every page by following
  ``links.next`` (only its query is taken), ``Retry-After`` on a 429, and
  treating 5xx answers, timeouts and refused or dropped connections as
  transient; the API key never appears in a message; and the transport
  checks every client shares (``transport_warnings``, ``ca_path_problem``,
  ``_tls_failure``), so that the source warns and fails as the modules do;
- from ``_resource.py``: ``SENSITIVE_NAME`` (which header names and record
  keys hold secrets), the mask, and the reading of returned timestamps as UTC
  ``Y-m-dTH:i:s`` (``to_utc_timestamp``). The service returns every timestamp
  in UTC, whatever the account's time zone, and this source never sends one.

The HTTP library is ``requests``, the one the modules use, so an execution or
decision environment that holds the collection needs nothing more; its
blocking calls run in a worker thread (``asyncio.to_thread``) so the event
loop of ansible-rulebook is never held.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import logging
import math
import os
import random
import re
import uuid
import warnings
from urllib.parse import parse_qsl, urlsplit

try:
    import requests
except ImportError:  # pragma: no cover - reported by main() with the fix
    requests = None

DOCUMENTATION = r"""
---
short_description: Poll a phpUptime service for incident and monitor status transitions.
description:
  - An ansible-rulebook event source that polls the C(/api/v1) API of a phpUptime service and sends one event per
    transition (an incident opened, acknowledged, resolved or deleted; a monitor whose status changed among
    C(pending), C(online), C(offline), C(paused) and C(maintenance), with its previous status).
  - Events of one poll are sent oldest first. Each carries the record with its secrets masked
    (C(request_auth_password), the values of sensitive request headers, secret-looking keys such as C(token)) and a
    C(meta.uuid) derived from the record and the transition, so the same transition always gets the same uuid and
    ansible-rulebook's persistence can drop it when it is sent again after a restart.
  - The first poll records what the account looks like and sends nothing, unless O(emit_existing) is set.
  - "Errors: a 429 answer is waited out as its C(Retry-After) asks; 5xx answers, timeouts and refused or dropped
    connections are logged as warnings and polling goes on with an increasing pause; the next poll that succeeds
    sends what happened meanwhile. A refused API key (401), an account without API access (403) and invalid
    arguments stop the source with one message."
  - "Requests per poll, for N monitors and M incidents: C(ceil(N / 100)) to read the monitors, plus C(ceil(K / 100))
    to read the incidents, where K is the number of ongoing incidents plus those that ended within O(lookback) of the
    newest end seen (usually one request), plus one per incident that was ongoing at the previous poll and is no
    longer listed (a deleted or back-dated one), at most 20 a poll (the others are read by the next polls). The
    service allows 120 requests a minute per account, shared with playbooks: with O(interval=60) and 1000 monitors
    a poll costs about 11 requests a minute."
  - Needs the Python library C(requests). Timestamps in events are UTC instants, C(Y-m-dTH:i:sZ).
options:
  api_url:
    description:
      - Base address of the service, for example C(https://uptime.example.com) (a trailing C(/api/v1) is accepted).
      - When not given, the environment variable E(UPTIME_API_URL) is used.
    type: str
  api_key:
    description:
      - "API key of the account, sent as C(Authorization: Bearer <api_key>). Never logged."
      - When not given, the environment variable E(UPTIME_API_KEY) is used.
    type: str
  validate_certs:
    description:
      - Verify the service's TLS certificate.
      - When not given, the environment variable E(UPTIME_VALIDATE_CERTS) is used, else V(true).
    type: bool
  ca_path:
    description:
      - CA bundle used to verify the service's certificate.
    type: str
  timeout:
    description:
      - Seconds to wait for one request.
    type: float
    default: 30
  interval:
    description:
      - Seconds between two polls. An event reaches the rulebook at most O(interval) seconds (plus the time of one
        poll) after the transition.
    type: float
    default: 60
  watch:
    description:
      - What to watch.
    type: list
    elements: str
    choices: [incidents, monitors]
    default: [incidents, monitors]
  state_file:
    description:
      - A file where the source keeps what it knows after each poll, read again when it starts.
      - With it, a restarted source carries on where it stopped; the transitions that happened while it was
        stopped are sent when it starts (none is missed) and none is sent twice.
      - Without it, a restarted source starts with a new baseline (or with O(emit_existing)).
      - A file written for another O(api_url) is ignored.
    type: path
  emit_existing:
    description:
      - When V(false), the first poll records a baseline and sends nothing.
      - When V(true), the first poll sends an event for every ongoing incident (opened, and acknowledged when it is)
        and every monitor that is not C(online). Their uuids are those of the live events, so with
        ansible-rulebook's persistence a restart sends again only what it had not handled.
      - Not used when O(state_file) holds the state of an earlier run.
    type: bool
    default: false
  lookback:
    description:
      - Seconds below the newest incident end seen for which resolved incidents are still read and remembered.
      - An incident opened and resolved between two polls is reported when its end is at most this much older than
        the newest end the source has seen (a writer's clock that lags, an C(ended_at) given by hand). One that ends
        further back is taken for history and not reported.
      - A larger value reads more incidents per poll (those resolved within it), a smaller one risks missing
        back-dated ends. V(0) reads only what ended after the newest end seen.
    type: float
    default: 3600
notes:
  - "Event payload, under the key C(uptime): C(type) (C(incident_opened), C(incident_acknowledged),
    C(incident_resolved), C(incident_deleted) or C(monitor_status_changed)), C(kind) (C(incident) or C(monitor)),
    C(status) and C(previous_status), C(at) (when the transition happened, UTC), C(monitor_id), C(monitor_name),
    C(monitor) (the masked monitor record), C(incident) (the masked incident record, for incident events),
    C(incident_id) (null for monitor events), C(existing) (true when sent by O(emit_existing)), C(flapped) (a monitor whose status changed
    away and back between two polls: the status in between was not seen) and C(api_url)."
  - "A deleted incident is reported when it was ongoing at the previous poll; a resolved incident that is deleted
    is not. A monitor that changes its status several times between two polls yields one event for its status now
    (with C(flapped) when that status equals the one seen before); poll more often than the checks run to see
    each change."
"""

EXAMPLES = r"""
- name: React to phpUptime incidents and monitors going offline
  hosts: all
  sources:
    - uptime.monitoring.events:
        api_url: https://uptime.example.com
        api_key: "{{ uptime_api_key }}"
        interval: 30
  rules:
    - name: A monitor went offline
      condition: event.uptime.type == "monitor_status_changed" and event.uptime.status == "offline"
      action:
        run_playbook:
          name: uptime.monitoring.acknowledge_incident

- name: Only incidents, with what is ongoing at start-up
  hosts: all
  sources:
    - uptime.monitoring.events:
        watch: [incidents]
        emit_existing: true
  rules:
    - name: Show opened incidents
      condition: event.uptime.type == "incident_opened"
      action:
        debug:
          msg: "Incident {{ event.uptime.incident_id }} on {{ event.uptime.monitor_name }}"
"""

LOGGER = logging.getLogger('uptime.monitoring.events')

API_PREFIX = '/api/v1'
PAGE_SIZE = 100
MAX_PAGES = 10000
MAX_RETRY_AFTER = 300.0
MAX_BACKOFF = 300.0
MASK = '********'
# The collection's rule for a secret-looking name (plugins/module_utils/_resource.py, SENSITIVE_NAME).
SENSITIVE_NAME = re.compile(r'auth|cookie|token|secret|pass|key|session|signature|credential', re.IGNORECASE)
# Monitor keys that are not secret although their name looks so.
PLAIN_MONITOR_KEYS = frozenset(['request_auth_username'])
WATCH_CHOICES = ('incidents', 'monitors')
OPTIONS = ('api_url', 'api_key', 'validate_certs', 'ca_path', 'timeout', 'interval', 'watch', 'state_file',
           'emit_existing', 'lookback')
# Incidents that were ongoing and left the list are read one by one, at most this many a poll: the others wait
# for the next polls, so that many at once (a bulk delete) cannot spend the account's whole request budget.
VANISHED_READS_PER_POLL = 20
STATE_VERSION = 1
# uuid5 namespace of this source's events: the same transition always gets the same uuid.
EVENT_NAMESPACE = uuid.UUID('6f1e8e52-4c4b-5b8e-9f0a-7a2d35c1e4b1')
INCIDENT_TRANSITIONS = (('opened', 'started_at', 'unresolved'), ('acknowledged', 'acknowledged_at', 'acknowledged'),
                        ('resolved', 'ended_at', 'resolved'))
ONGOING = ('unresolved', 'acknowledged')


CA_OPTIONS_HINT = 'set ca_path to the CA bundle that signed it, or validate_certs: false to skip the check'

# The pause between polls (a name of its own so that the tests can watch it).
_sleep = asyncio.sleep


class SourceError(Exception):
    """A problem that polling again cannot fix: the source stops with this message."""


class TransientError(Exception):
    """A failure worth another poll: 5xx, timeout, refused or dropped connection, a body that is not the API's."""

    def __init__(self, message, retry_after=None):
        super().__init__(message)
        self.retry_after = retry_after


class NotFound(Exception):
    """404 on a record."""


# -- arguments ---------------------------------------------------------------


def _as_bool(value, name):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ('1', 'true', 'yes', 'on'):
        return True
    if text in ('0', 'false', 'no', 'off'):
        return False
    raise SourceError('argument %s: expected a boolean, got %r' % (name, value))


def _as_seconds(value, name, least=None):
    """A number of seconds greater than 0 (or at least ``least``)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float('nan')
    if not math.isfinite(seconds) or (seconds < least if least is not None else seconds <= 0):
        bound = 'at least %s' % least if least is not None else 'greater than 0'
        raise SourceError('argument %s: expected a number of seconds %s, got %r' % (name, bound, value))
    return seconds


def parse_args(args, environ=None):
    """The source's settings from its rulebook arguments and the environment fallbacks of the modules."""
    environ = os.environ if environ is None else environ
    unknown = sorted(key for key in args if key not in OPTIONS and not str(key).startswith('eda_'))
    if unknown:
        raise SourceError('unknown argument(s) %s; the arguments are %s' % (', '.join(unknown), ', '.join(OPTIONS)))
    api_url = args.get('api_url') or environ.get('UPTIME_API_URL')
    api_key = args.get('api_key') or environ.get('UPTIME_API_KEY')
    if not api_url:
        raise SourceError('argument api_url is required (or the environment variable UPTIME_API_URL)')
    if not api_key:
        raise SourceError('argument api_key is required (or the environment variable UPTIME_API_KEY)')
    base_url = normalise_base_url(api_url)
    parts = urlsplit(base_url)
    if parts.scheme not in ('http', 'https') or not parts.netloc:
        raise SourceError('argument api_url: expected an http or https address such as https://uptime.example.com, '
                          'got %r' % (api_url,))
    validate = args.get('validate_certs')
    if validate is None:
        validate = environ.get('UPTIME_VALIDATE_CERTS', True)
    problem = ca_path_problem(args.get('ca_path') or None)
    if problem:
        raise SourceError('argument %s' % problem)
    watch = args.get('watch', list(WATCH_CHOICES))
    if isinstance(watch, str):
        watch = [item.strip() for item in watch.split(',') if item.strip()]
    if not isinstance(watch, (list, tuple)) or not watch or any(item not in WATCH_CHOICES for item in watch):
        raise SourceError('argument watch: expected a list of %s, got %r' % (' and '.join(WATCH_CHOICES), watch))
    return {
        'base_url': base_url,
        'api_key': str(api_key),
        'validate_certs': _as_bool(validate, 'validate_certs'),
        'ca_path': args.get('ca_path') or None,
        'timeout': _as_seconds(args.get('timeout', 30), 'timeout'),
        'interval': _as_seconds(args.get('interval', 60), 'interval'),
        'watch': tuple(item for item in WATCH_CHOICES if item in watch),
        'emit_existing': _as_bool(args.get('emit_existing', False), 'emit_existing'),
        'lookback': _as_seconds(args.get('lookback', 3600), 'lookback', least=0),
        'state_file': os.path.expanduser(str(args['state_file'])) if args.get('state_file') else None,
    }


def normalise_base_url(api_url):
    """Accept the service root with or without a trailing ``/api/v1``."""
    url = str(api_url or '').strip().rstrip('/')
    if url.endswith(API_PREFIX):
        url = url[:-len(API_PREFIX)]
    return url


# -- HTTP (a copy of the client behaviour this source needs, see the top of the file) -----


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
    """What is weak in how the API key would travel to ``api_url``: one sentence per fact, [] when nothing is."""
    parts = urlsplit((api_url or '').strip())
    scheme = (parts.scheme or '').lower()
    where = origin(api_url)
    found = []
    if scheme == 'http' and not is_loopback(parts.hostname):
        found.append('api_url %s uses http://: the API key and all data travel unencrypted, readable by anyone '
                     'on the network path; use https://' % where)
    if scheme == 'https' and not validate_certs:
        found.append('validate_certs is false: the TLS certificate of %s is not checked, so anyone able to '
                     'intercept the connection can read the API key; set ca_path to the CA bundle that signed '
                     'the certificate instead' % where)
    return found


def ca_path_problem(ca_path):
    """Why ``ca_path`` cannot be used as a CA bundle, or None: said before any request."""
    if ca_path is None:
        return None
    if not os.path.exists(ca_path):
        return 'ca_path: no such file or directory: %s' % ca_path
    if not os.access(ca_path, os.R_OK):
        return 'ca_path: not readable: %s' % ca_path
    return None


def _tls_failure(exc, url):
    """The certificate or handshake problem of a TLS error, in one line with what solves it; None if unknown."""
    where = origin(url)
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
        return 'the TLS certificate of %s is not trusted (%s): %s' % (where, detail, CA_OPTIONS_HINT)
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


def parse_retry_after(value):
    """Seconds to wait from a ``Retry-After`` header in seconds, capped; None when absent or not a number."""
    try:
        seconds = float(str(value).strip())
    except (TypeError, ValueError):
        return None
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


class Client:
    """Blocking reads of the service API with ``requests``; one error type per outcome."""

    def __init__(self, base_url, api_key, validate_certs=True, ca_path=None, timeout=30):
        if requests is None:
            raise SourceError('the Python library requests is required by uptime.monitoring.events: '
                              'pip install requests (or add it to the decision environment)')
        self.base_url = base_url
        self._api_key = api_key
        self.timeout = timeout
        self.verify = (ca_path or True) if validate_certs else False
        self.transport_warnings = transport_warnings(base_url, validate_certs)
        if not validate_certs:
            # transport_warnings says it once, at start, instead of once per request on stderr.
            warnings.filterwarnings('ignore', category=requests.packages.urllib3.exceptions.InsecureRequestWarning)
        self.request_count = 0
        self.session = requests.Session()
        self.session.headers.update({
            'Authorization': 'Bearer %s' % api_key,
            'Accept': 'application/json',
            'User-Agent': 'uptime.monitoring events source (ansible-rulebook)',
        })

    def redact(self, text):
        text = str(text)
        if self._api_key and len(self._api_key) >= 4:
            text = text.replace(self._api_key, MASK)
        return text

    def get(self, path, params=None):
        """The decoded body of one GET; raises SourceError, TransientError or NotFound."""
        url = path if path.startswith(('http://', 'https://')) else self.base_url + path
        where = 'GET %s' % urlsplit(url).path
        self.request_count += 1
        try:
            response = self.session.get(url, params=params, timeout=self.timeout, verify=self.verify,
                                        allow_redirects=False)
            content = response.content
        except requests.exceptions.SSLError as exc:
            tls_failure = _tls_failure(exc, url)
            if tls_failure is None:
                # A TLS error after the handshake: the next poll may do better.
                raise TransientError(self.redact('%s: connection failed: TLS error: %s' % (where, _summary(exc)))) from None
            # The handshake failed: every poll would meet the same certificate.
            raise SourceError(self.redact('%s: request not sent: %s' % (where, tls_failure))) from None
        except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
                requests.exceptions.InvalidSchema) as exc:
            raise SourceError(self.redact('%s: request not sent: %s' % (where, _summary(exc)))) from None
        except requests.exceptions.Timeout:
            raise TransientError('%s: no answer within %ss (timeout)' % (where, self.timeout)) from None
        except requests.exceptions.RequestException as exc:
            raise TransientError(self.redact('%s: connection failed: %s' % (where, _summary(exc)))) from None
        return self._read(response, content, where)

    def _read(self, response, content, where):
        status = response.status_code
        body = _decode_json(content)
        message = _service_message(body, response.reason or 'no reason given')
        if 300 <= status < 400:
            if 'login' in response.headers.get('Location', ''):
                raise SourceError('%s: HTTP %s: authentication failed: check api_key (the service redirected to its '
                                  'login page)' % (where, status))
            raise SourceError('%s: HTTP %s: redirected to %s, which is not followed so that the API key goes nowhere '
                              'else: set api_url to the address the service answers at'
                              % (where, status, self.redact(response.headers.get('Location', ''))))
        if status == 401:
            raise SourceError('%s: HTTP 401: authentication failed: check api_key (%s)' % (where, self.redact(message)))
        if status == 403:
            raise SourceError('%s: HTTP 403: the account has no API access (%s)' % (where, self.redact(message)))
        if status == 404:
            raise NotFound('%s: HTTP 404' % where)
        if status == 429:
            raise TransientError('%s: HTTP 429: rate limited (%s)' % (where, self.redact(message)),
                                 retry_after=parse_retry_after(response.headers.get('Retry-After')))
        if status >= 500 or status == 408:
            raise TransientError('%s: HTTP %s: the service failed (%s)' % (where, status, self.redact(message)))
        if status >= 400:
            raise SourceError('%s: HTTP %s: %s' % (where, status, self.redact(message)))
        if not isinstance(body, dict) or 'data' not in body:
            # A proxy's error page or a cut answer: the next poll may do better.
            raise TransientError('%s: HTTP %s with a body that is not the API\'s JSON envelope (%d bytes)'
                                 % (where, status, len(content or b'')))
        return body

    def pages(self, path, params):
        """Yield the records of each page of a list, following ``links.next``; only its query is taken.

        The service may announce an address behind a proxy that this client
        cannot reach, so the next page is asked from the same address with
        the query of the link over the query of this page.
        """
        url, query = self.base_url + path, dict(params)
        seen = set()
        for dummy in range(MAX_PAGES):
            try:
                body = self.get(url, query)
            except NotFound as exc:
                raise SourceError('%s: check api_url: it must be the base address of the service, such as '
                                  'https://uptime.example.com' % exc) from None
            records = _records(body.get('data'))
            yield records
            next_query = _next_query(body, query)
            if not records or next_query is None:
                return
            key = tuple(sorted(next_query.items()))
            if key in seen:
                return
            seen.add(key)
            query = next_query


def _next_query(body, query):
    links = body.get('links') if isinstance(body.get('links'), dict) else {}
    if links.get('next'):
        merged = dict(query)
        merged.update(parse_qsl(urlsplit(str(links['next'])).query, keep_blank_values=True))
        return merged
    meta = body.get('meta') if isinstance(body.get('meta'), dict) else {}
    current, last = _as_int(meta.get('current_page')), _as_int(meta.get('last_page'))
    if current is not None and last is not None and current < last:
        return dict(query, page=current + 1)
    return None


def _records(data):
    """A list the service may send as a list, null, or an object keyed by position."""
    if data is None:
        return []
    if isinstance(data, dict):
        return [data[key] for key in sorted(data, key=lambda key: (_as_int(key) is None, _as_int(key) or 0, str(key)))]
    return [record for record in data if isinstance(record, dict)]


def _decode_json(content):
    try:
        return json.loads(content) if content else None
    except (ValueError, UnicodeDecodeError):
        return None


def _service_message(body, default):
    if isinstance(body, dict) and isinstance(body.get('message'), str) and body['message']:
        return body['message']
    return default


def _summary(exc):
    text = str(exc)
    for marker in ('Connection refused', 'Connection aborted', 'Connection reset', 'RemoteDisconnected',
                   'IncompleteRead', 'Read timed out', 'Failed to resolve', 'Name or service not known',
                   'certificate verify failed', 'Response ended prematurely', 'Invalid URL', 'No scheme supplied'):
        if marker in text:
            return marker
    return exc.__class__.__name__


def _as_int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# -- records -------------------------------------------------------------------


def utc_timestamp(value):
    """A returned timestamp as the UTC instant ``Y-m-dTH:i:sZ`` (``to_utc_timestamp`` of _resource.py); None when empty.

    A value that is not a timestamp is kept as text: it still tells two transitions apart.
    """
    if value is None or value == '':
        return None
    text = str(value).strip()
    if text.endswith(('Z', 'z')):
        text = text[:-1] + '+00:00'
    try:
        parsed = datetime.datetime.fromisoformat(text.replace(' ', 'T', 1))
    except ValueError:
        return str(value)
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return parsed.replace(microsecond=0).strftime('%Y-%m-%dT%H:%M:%SZ')


def record_id(record):
    value = _as_int(record.get('id'))
    return value if value is not None else record.get('id')


def masked_monitor(monitor):
    """A monitor record without its secrets: the password, sensitive header values, secret-looking keys."""
    if not isinstance(monitor, dict):
        return monitor
    masked = {}
    for key, value in monitor.items():
        if key == 'request_headers':
            masked[key] = _masked_headers(value)
        elif value is not None and key not in PLAIN_MONITOR_KEYS and SENSITIVE_NAME.search(str(key)):
            masked[key] = MASK
        else:
            masked[key] = value
    return masked


def _masked_headers(headers):
    if not headers:
        return headers
    items = _records(headers) if isinstance(headers, dict) else headers
    return [dict(item, value=MASK) if _is_sensitive_header(item) else item for item in items]


def _is_sensitive_header(item):
    if not isinstance(item, dict) or item.get('value') in (None, ''):
        return False
    return bool(SENSITIVE_NAME.search(str(item.get('key') or '')))


def masked_incident(incident):
    """An incident record with its nested monitor masked, and any secret-looking key of its own."""
    masked = {}
    for key, value in incident.items():
        if key == 'monitor':
            masked[key] = masked_monitor(value)
        elif value is not None and SENSITIVE_NAME.search(str(key)):
            masked[key] = MASK
        else:
            masked[key] = value
    return masked


def incident_status(record):
    """The service's rule: resolved when ended, else acknowledged when acknowledged, else unresolved."""
    if record.get('ended_at'):
        return 'resolved'
    if record.get('acknowledged_at'):
        return 'acknowledged'
    return 'unresolved'


def incident_monitor(record):
    monitor = record.get('monitor')
    if isinstance(monitor, dict):
        return monitor
    return {'id': record.get('monitor_id')} if record.get('monitor_id') is not None else {}


# -- transitions -----------------------------------------------------------------


def event_uuid(*parts):
    """The uuid of a transition: uuid5 over the service, the record and what identifies the transition."""
    return str(uuid.uuid5(EVENT_NAMESPACE, '\x1f'.join('' if part is None else str(part) for part in parts)))


class Tracker:
    """What the source knows from its last poll, and the events a new poll makes of it. No I/O here."""

    def __init__(self, base_url, emit_existing=False, lookback=3600):
        self.base_url = base_url
        self.emit_existing = emit_existing
        self.lookback = lookback
        self.monitors = None   # id -> (status, moment, maintenance_start_at), after the first poll
        self.incidents = None  # id -> status, started_at, acknowledged_at, ended_at (UTC)
        self.cutoff = None     # newest ended_at seen

    def floor(self, cutoff=None):
        """The oldest end still read and remembered: ``lookback`` before the cut, so that an incident resolved with
        an end a little in the past (a lagging clock, an ``ended_at`` given by hand) is still news."""
        cutoff = self.cutoff if cutoff is None else cutoff
        return earlier(cutoff, self.lookback) if cutoff else None

    # monitors

    def monitor_events(self, records, observed_at):
        first = self.monitors is None
        known = {} if first else self.monitors
        seen, events = {}, []
        for record in records:
            monitor_id = record_id(record)
            status = str(record.get('status') or '')
            started_at = utc_timestamp(record.get('started_at'))
            maintenance = utc_timestamp(record.get('maintenance_start_at'))
            before = known.get(monitor_id)
            seen[monitor_id] = {'status': status, 'started_at': started_at, 'maintenance': maintenance, 'missed': 0}
            if first:
                if self.emit_existing and status != 'online':
                    events.append(self._monitor_event(record, status, None, started_at, maintenance, observed_at,
                                                      existing=True))
                continue
            if before is None:
                continue  # a monitor created since the last poll: its later changes are reported
            previous = before['status']
            if status == previous and (started_at is None or started_at == before['started_at']):
                continue
            if previous == 'maintenance' and status != 'maintenance' and started_at == before['started_at']:
                maintenance = 'after maintenance from %s' % (before['maintenance'],)
            events.append(self._monitor_event(record, status, previous, started_at, maintenance, observed_at,
                                              flapped=status == previous))
        # A monitor missing from one reading may have moved between pages while they were read: it is
        # forgotten (deleted) only when two readings in a row lack it.
        for monitor_id, before in known.items():
            if monitor_id not in seen and before['missed'] < 1:
                seen[monitor_id] = dict(before, missed=before['missed'] + 1)
        self.monitors = seen
        return events

    def _monitor_event(self, record, status, previous, started_at, maintenance, observed_at, existing=False,
                       flapped=False):
        monitor_id = record_id(record)
        if started_at is not None:
            moment = started_at
        else:
            moment = 'observed %s' % observed_at  # unique, not stable: this service does not say when
        if status == 'maintenance' or str(maintenance or '').startswith('after maintenance'):
            moment = '%s|%s' % (moment, maintenance)
        payload = {
            'type': 'monitor_status_changed',
            'kind': 'monitor',
            'status': status,
            'previous_status': previous,
            'at': started_at if status != 'maintenance' else (maintenance or started_at),
            'monitor_id': monitor_id,
            'monitor_name': record.get('name'),
            'incident_id': None,
            'monitor': masked_monitor(record),
            'existing': existing,
            'flapped': flapped,
            'api_url': self.base_url,
        }
        return _event(payload, event_uuid(self.base_url, 'monitor', monitor_id, status, moment))

    # incidents

    def incident_events(self, records, missing, observed_at):
        """Events of the incidents read (``records``) and of the ongoing ones found deleted (``missing``)."""
        first = self.incidents is None
        known = {} if first else self.incidents
        state, events = dict(known), []
        for record in records:
            incident_id = record_id(record)
            times = {key: utc_timestamp(record.get(key)) for key in ('started_at', 'acknowledged_at', 'ended_at')}
            status = incident_status(times)
            before = known.get(incident_id)
            if before is None and not first and status == 'resolved' and self.cutoff and times['ended_at'] < self.floor():
                continue  # history below the floor: known before, or recorded too long after the fact
            state[incident_id] = dict(times, status=status, record=masked_incident(record))
            if first:
                if self.emit_existing and status in ONGOING:
                    events.extend(self._incident_events(record, times, None, existing=True))
                continue
            events.extend(self._incident_events(record, times, before))
        for incident_id in missing:
            before = state.pop(incident_id, None)
            if before is not None:
                payload = self._incident_payload(before['record'], 'incident_deleted', 'deleted', before['status'],
                                                 None, observed_at)
                events.append(_event(payload, event_uuid(self.base_url, 'incident', incident_id, 'deleted',
                                                         before['started_at'])))
        ended = [value['ended_at'] for value in state.values() if value['ended_at']]
        newest = max(ended) if ended else ''
        self.cutoff = max(self.cutoff or '', newest) or None
        # Resolved incidents that ended below the floor are never read again: forget them.
        floor = self.floor() or ''
        self.incidents = {key: value for key, value in state.items()
                          if value['status'] in ONGOING or value['ended_at'] >= floor}
        return events

    def to_state(self):
        """What the tracker knows, as JSON-ready data."""
        return {'version': STATE_VERSION, 'api_url': self.base_url, 'cutoff': self.cutoff,
                'monitors': None if self.monitors is None else [dict(value, id=key) for key, value in self.monitors.items()],
                'incidents': None if self.incidents is None else [dict(value, id=key) for key, value in self.incidents.items()]}

    def load_state(self, state):
        """Take over what an earlier run knew; False (and nothing taken) when it is not a state of this service."""
        if not isinstance(state, dict) or state.get('version') != STATE_VERSION or state.get('api_url') != self.base_url:
            return False
        self.monitors, self.incidents = _by_id(state['monitors']), _by_id(state['incidents'])
        self.cutoff = state['cutoff']
        return True

    def ongoing_ids(self):
        return [key for key, value in (self.incidents or {}).items() if value['status'] in ONGOING]

    def _incident_events(self, record, times, before, existing=False):
        events = []
        previous = before['status'] if before else None
        # The transitions already reported: those up to the status seen at the last poll.
        done = {'unresolved': {'opened'}, 'acknowledged': {'opened', 'acknowledged'},
                'resolved': {'opened', 'acknowledged', 'resolved'}}.get(previous, set())
        for transition, stamp, status in INCIDENT_TRANSITIONS:
            if transition in done or (transition != 'opened' and not times[stamp]):
                continue
            payload = self._incident_payload(record, 'incident_' + transition, status, previous, times[stamp], None,
                                             existing)
            events.append(_event(payload, event_uuid(self.base_url, 'incident', record_id(record), transition,
                                                     times[stamp])))
            previous = status
        return events

    def _incident_payload(self, record, event_type, status, previous, at, observed_at, existing=False):
        monitor = incident_monitor(record)
        return {
            'type': event_type,
            'kind': 'incident',
            'status': status,
            'previous_status': previous,
            'at': at if at is not None else observed_at,
            'incident_id': record_id(record),
            'monitor_id': _as_int(monitor.get('id')) if monitor.get('id') is not None else None,
            'monitor_name': monitor.get('name'),
            'incident': masked_incident(record),
            'monitor': masked_monitor(monitor) if monitor else None,
            'existing': existing,
            'flapped': False,
            'api_url': self.base_url,
        }


def earlier(stamp, seconds):
    """The UTC timestamp ``seconds`` before ``stamp`` (a value that is no timestamp stays as it is)."""
    try:
        moment = datetime.datetime.strptime(stamp, '%Y-%m-%dT%H:%M:%SZ')
    except (TypeError, ValueError):
        return stamp
    return (moment - datetime.timedelta(seconds=seconds)).strftime('%Y-%m-%dT%H:%M:%SZ')


def _by_id(items):
    """A state file's list of entries back into a mapping by id."""
    return None if items is None else {item.pop('id'): item for item in (dict(entry) for entry in items)}


def _event(payload, event_id):
    return {'uptime': payload, 'meta': {'uuid': event_id}}


def _order(event):
    """Oldest first; a transition without a time (a deletion) after the others of its poll."""
    payload = event['uptime']
    return (payload['at'] is None, payload['at'] or '', payload['kind'] == 'monitor',
            str(payload.get('incident_id') or payload.get('monitor_id')))


# -- polling -----------------------------------------------------------------------


class Poller:
    """One poll: read what is needed, then turn it into events. The state changes only when a poll succeeds."""

    def __init__(self, settings, client=None):
        self.settings = settings
        self.client = client or Client(settings['base_url'], settings['api_key'], settings['validate_certs'],
                                       settings['ca_path'], settings['timeout'])
        self.tracker = Tracker(settings['base_url'], settings['emit_existing'], settings['lookback'])

    def poll(self):
        """The events of one poll, oldest first (blocking: run it in a thread)."""
        observed_at = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
        monitors = incidents = missing = None
        if 'monitors' in self.settings['watch']:
            monitors = self._read_monitors()
        if 'incidents' in self.settings['watch']:
            incidents, missing = self._read_incidents()
        events = []
        if monitors is not None:
            events.extend(self.tracker.monitor_events(monitors, observed_at))
        if incidents is not None:
            events.extend(self.tracker.incident_events(incidents, missing, observed_at))
        events.sort(key=_order)
        return events

    def _read_monitors(self):
        """Every monitor, oldest first, so that a monitor created while the pages are read lands on the last one."""
        records = []
        for page in self.client.pages(API_PREFIX + '/monitors', {'sort_by': 'id', 'sort': 'asc', 'per_page': PAGE_SIZE}):
            records.extend(page)
        return records

    def _read_incidents(self):
        """Every ongoing incident and those resolved down to the floor, newest end first; then the vanished ones.

        Sorted by ``ended_at`` descending, the service lists ongoing incidents
        first, then resolved ones by end: reading stops at the first page that
        reaches an end below the floor (``lookback`` before the newest end
        known; at the first poll, before the newest end read).
        """
        cutoff = self.tracker.cutoff
        params = {'sort_by': 'ended_at', 'sort': 'desc', 'per_page': PAGE_SIZE}
        records, newest = [], cutoff
        for page in self.client.pages(API_PREFIX + '/incidents', params):
            records.extend(page)
            ends = [utc_timestamp(record.get('ended_at')) for record in page]
            newest = newest or next((end for end in ends if end), None)
            if newest and ends and ends[-1] and ends[-1] < self.tracker.floor(newest):
                break
        read = {record_id(record) for record in records}
        missing = []
        vanished = [incident_id for incident_id in self.tracker.ongoing_ids() if incident_id not in read]
        if len(vanished) > VANISHED_READS_PER_POLL:
            LOGGER.info('%d incidents were ongoing and left the list: %d are read now, the others by the next polls',
                        len(vanished), VANISHED_READS_PER_POLL)
        for incident_id in vanished[:VANISHED_READS_PER_POLL]:
            # Ongoing at the last poll, not among the ongoing ones now, and no end above the floor: deleted, or
            # resolved with an end below it. One read tells.
            try:
                records.append(self.client.get('%s/incidents/%s' % (API_PREFIX, incident_id))['data'])
            except NotFound:
                missing.append(incident_id)
        return records, missing


def load_state(tracker, path):
    """Read a state file into ``tracker``; a missing, unreadable or foreign file means a fresh start."""
    if not path or not os.path.exists(path):
        return False
    try:
        with open(path, encoding='utf-8') as handle:
            state = json.load(handle)
    except (OSError, ValueError) as exc:
        LOGGER.warning('state_file %s cannot be read (%s): starting with a new baseline', path, exc.__class__.__name__)
        return False
    if not tracker.load_state(state):
        LOGGER.warning('state_file %s is not a state of %s: starting with a new baseline', path, tracker.base_url)
        return False
    return True


def save_state(tracker, path):
    """Write the state atomically (a reader never sees half a file)."""
    temporary = '%s.%d.tmp' % (path, os.getpid())
    try:
        with open(temporary, 'w', encoding='utf-8') as handle:
            json.dump(tracker.to_state(), handle)
        os.replace(temporary, path)
    except OSError as exc:
        raise SourceError('state_file %s cannot be written: %s' % (path, exc)) from None


async def main(queue, args):
    """Poll the service forever and put one event per transition on ``queue``.

    Returns only by raising SourceError (bad arguments, a refused key, no API access).
    """
    settings = parse_args(args)
    poller = Poller(settings)
    for warning in poller.client.transport_warnings:
        LOGGER.warning(warning)
    interval = settings['interval']
    if load_state(poller.tracker, settings['state_file']):
        LOGGER.info('carrying on from %s', settings['state_file'])
    LOGGER.info('polling %s every %ss for %s', settings['base_url'], interval, ' and '.join(settings['watch']))
    failures = 0
    while True:
        try:
            events = await asyncio.to_thread(poller.poll)
        except TransientError as exc:
            if exc.retry_after is not None:
                # Refused before any work, not a failure of the service: no longer pause than it asks.
                delay = exc.retry_after
                LOGGER.warning('%s; polling again in %.0fs as the service asks', exc, delay)
            else:
                failures += 1
                delay = backoff(interval, failures)
                LOGGER.warning('%s; polling again in %.1fs (attempt %d failed, nothing is lost: the next poll that '
                               'succeeds reports what happened meanwhile)', exc, delay, failures)
            await _sleep(delay)
            continue
        except SourceError as exc:
            LOGGER.error('uptime.monitoring.events stops: %s', exc)
            raise
        except Exception as exc:  # pylint: disable=broad-exception-caught
            # A record this source cannot read, or a defect: stopping would lose every later transition.
            failures += 1
            delay = backoff(interval, failures)
            LOGGER.warning('a poll failed unexpectedly (%s: %s); polling again in %.1fs',
                           exc.__class__.__name__, poller.client.redact(exc), delay)
            await _sleep(delay)
            continue
        if failures:
            LOGGER.warning('polling %s works again after %d failed attempt(s)', settings['base_url'], failures)
        failures = 0
        for event in events:
            await queue.put(event)
        if settings['state_file']:
            # After the events are handed over: a crash in between sends them again, with the same uuids.
            save_state(poller.tracker, settings['state_file'])
        await _sleep(interval)


def backoff(interval, failures):
    """The pause after ``failures`` failed polls in a row: doubling from the interval, with jitter, capped."""
    ceiling = min(interval * (2 ** (failures - 1)), max(MAX_BACKOFF, interval))
    return random.uniform(ceiling * 0.8, ceiling)


if __name__ == '__main__':
    class _PrintQueue:
        async def put(self, event):
            print(event)

    logging.basicConfig(level=logging.INFO)
    asyncio.run(main(_PrintQueue(), {}))
