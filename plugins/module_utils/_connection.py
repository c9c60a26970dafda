# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The connection to the service, described once: its options, their environment variables, their checks, the
client they make, and the account they reach.

Every client of the collection reads its connection here: the modules (their
argument spec is built from :data:`CONNECTION_OPTIONS` in ``_module.py``), the
inventory plugin and the event source (through :func:`connection_settings`).
Nothing here imports Ansible, so that the event source can use it under
ansible-rulebook.
"""

from __future__ import annotations

import hashlib
import os
import re
from urllib.parse import urlsplit

from ._client import UptimeApiError, UptimeClient, ca_path_problem, normalise_base_url
from ._schema import AccountZone, ValidationError, mask_spans, to_bool, url_authority, url_secret_spans


def address_secret_spans(text):
    """Where the service's address holds credentials: all before its last ``@``, after its scheme (a base address
    needs no ``@``, so whatever one ends is taken for a user name or password, however malformed the rest); else the
    secret values of its query, also when it lacks its scheme."""
    text = str(text)
    at = text.rfind('@')
    if at != -1:
        scheme = text.find('://')
        return [(scheme + 3 if -1 < scheme < at else 0, at)]
    prefix = '' if url_authority(text) is not None else 'http://'
    return [(start - len(prefix), end - len(prefix)) for start, end in url_secret_spans(prefix + text)]


# Each option: its type (as Ansible's argument spec names it), its default, the environment variable it falls
# back to, and whether its value is secret. The doc fragments connection.py and times.py document them (sanity's
# validate-modules compares them with the modules' argument spec).
CONNECTION_OPTIONS = dict(
    # An address may hold credentials (refused, but shown masked where the option is echoed).
    api_url=dict(type='str', env='UPTIME_API_URL', secret_spans=address_secret_spans),
    api_key=dict(type='str', env='UPTIME_API_KEY', secret=True),
    validate_certs=dict(type='bool', default=True, env='UPTIME_VALIDATE_CERTS'),
    ca_path=dict(type='path'),
    timeout=dict(type='float', default=30),
    retries=dict(type='int', default=5),
    account_timezone=dict(type='str', env='UPTIME_ACCOUNT_TIMEZONE'),
)
# What every plugin that reads the service takes (the inventory, the lookups); account_timezone only where a plugin
# sends or compares times.
PLUGIN_CONNECTION_NAMES = ('api_url', 'api_key', 'validate_certs', 'ca_path', 'timeout', 'retries')
CONNECTION_ENV = {name: option['env'] for name, option in CONNECTION_OPTIONS.items() if option.get('env')}
ACCOUNT_PATH = '/api/v1/account'
# An API key is one token: white space or a control character inside it is a copy or file-reading slip.
KEY_FORBIDDEN = re.compile(r'[\s\x00-\x1f\x7f]')


def _typed(name, value):
    kind = CONNECTION_OPTIONS[name]['type']
    if kind == 'bool':
        return to_bool(value, name)
    if kind in ('int', 'float'):
        try:
            number = float(value) if kind == 'float' else int(str(value).strip())
        except (TypeError, ValueError):
            raise ValidationError(name, 'expected a number, got %r' % (value,))
        return number
    if kind == 'path':
        return os.path.expanduser(str(value))
    return str(value)


def connection_settings(get, names=None, environ=None):
    """The connection options read with ``get(name)`` (a module's parameter, a plugin's option, a rulebook argument),
    checked.

    An option that ``get`` leaves unset falls back to its environment variable,
    then to its default. Raises ValidationError naming the option, before any request.
    """
    environ = os.environ if environ is None else environ
    settings = {}
    for name in names or CONNECTION_OPTIONS:
        option = CONNECTION_OPTIONS[name]
        value = get(name)
        if value in (None, '') and option.get('env'):
            value = environ.get(option['env']) or None
        if value in (None, ''):
            value = option.get('default')
        settings[name] = _typed(name, value) if value is not None else None
    return checked(settings)


def shown_address(text):
    """An address as a message shows it: its credentials masked."""
    return mask_spans(text, address_secret_spans(text))


def checked(settings):
    """The connection options with the API key trimmed, refused with the option named when they cannot work."""
    settings = dict(settings)
    for name in ('api_url', 'api_key'):
        if name in settings and not (settings[name] or '').strip():
            raise ValidationError(name, 'is required: set the %s option or the %s environment variable'
                                  % (name, CONNECTION_ENV[name]))
    if 'api_key' in settings:
        # A key read from a file often ends in a line break; a line break in a header is refused unsent.
        settings['api_key'] = settings['api_key'].strip()
        if KEY_FORBIDDEN.search(settings['api_key']):
            raise ValidationError('api_key', 'contains white space or a control character, which no API key has: '
                                             'was it read with more than the key?')
    if 'api_url' in settings:
        text = str(settings['api_url']).strip()
        shown = shown_address(text)
        if '@' in text:
            # requests would send them as Basic authentication in place of the key: every request then fails with 401.
            raise ValidationError('api_url', 'holds a user name or password before its host (%s): the service takes '
                                             'only the API key (api_key); give the address without them' % (shown,))
        try:
            parts = urlsplit(text)
        except ValueError:  # an unclosed IPv6 bracket
            parts = None
        if parts is None or parts.scheme.lower() not in ('http', 'https') or not parts.netloc:
            raise ValidationError('api_url', 'must be an http:// or https:// address such as '
                                             'https://uptime.example.com, got %r' % (shown,))
    if settings.get('timeout') is not None and not settings['timeout'] > 0:
        raise ValidationError('timeout', 'must be a positive number of seconds, got %g' % settings['timeout'])
    if settings.get('retries') is not None and settings['retries'] < 0:
        raise ValidationError('retries', 'must be 0 or more, got %s' % settings['retries'])
    problem = ca_path_problem(settings.get('ca_path'))
    if problem:
        raise ValidationError('ca_path', problem[len('ca_path: '):])
    return settings


def connect(settings, **overrides):
    """A client on checked connection options; ``overrides`` are further arguments of the client."""
    arguments = dict(api_url=settings['api_url'], api_key=settings['api_key'],
                     validate_certs=settings.get('validate_certs', True), ca_path=settings.get('ca_path'),
                     timeout=settings.get('timeout', CONNECTION_OPTIONS['timeout']['default']),
                     retries=settings.get('retries', CONNECTION_OPTIONS['retries']['default']))
    arguments.update(overrides)
    return UptimeClient(**arguments)


def account_fingerprint(settings):
    """Who the options reach, as caches and state files may keep it: a slow hash of the address and the key.

    Never the key itself: one-way, salted by the address, and slow enough that a
    short key cannot be found by trying.
    """
    base_url = normalise_base_url(settings['api_url'])
    digest = hashlib.pbkdf2_hmac('sha256', settings['api_key'].encode('utf-8'),
                                 ('uptime.monitoring account %s' % base_url).encode('utf-8'), 20000)
    return digest.hex()[:24]


def account_zone(client, name=None):
    """The zone the service reads sent times in: ``name`` when given, else the account's, read when first needed."""
    def read_account():
        try:
            return client.get(ACCOUNT_PATH)
        except UptimeApiError as exc:
            if exc.status != 404:
                raise
            # No such route: a service that does not tell the zone, or (the client says) a wrong address.
            exc.message += (': if api_url is right, this service does not tell the account\'s time zone; set '
                            'account_timezone (or %s) to it' % CONNECTION_ENV['account_timezone'])
            raise
    return AccountZone(name, read_account)
