# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one description of the connection: options, environment fallbacks, checks, the client and the account."""

from __future__ import annotations

import pytest
from emulator.control import OTHER_KEY, PRIMARY_KEY

from ansible_collections.uptime.monitoring.plugins.module_utils._connection import (
    CONNECTION_ENV,
    CONNECTION_OPTIONS,
    account_fingerprint,
    connect,
    connection_settings,
)
from ansible_collections.uptime.monitoring.plugins.module_utils._module import CONNECTION_ARGSPEC
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import ValidationError

URL = 'https://uptime.example.com'


def settings(environ=None, **given):
    return connection_settings(given.get, environ=environ or {})


def test_an_option_wins_over_its_environment_variable_and_a_default_comes_last():
    environ = {CONNECTION_ENV['api_url']: 'https://env.example.com', CONNECTION_ENV['api_key']: 'env-key-1234'}
    assert settings(environ)['api_url'] == 'https://env.example.com'
    chosen = settings(environ, api_url=URL, api_key='given-1234')
    assert (chosen['api_url'], chosen['api_key']) == (URL, 'given-1234')
    assert (chosen['validate_certs'], chosen['timeout'], chosen['retries']) == (True, 30, 5)
    # A plugin may read only the options it has.
    assert set(connection_settings(dict(api_url=URL, api_key='k1234').get, names=('api_url', 'api_key'), environ={})) == {'api_url', 'api_key'}


@pytest.mark.parametrize('text, expected', [('y', True), ('t', True), ('yes', True), ('1', True),
                                            ('n', False), ('f', False), ('off', False), ('0', False)])
def test_validate_certs_from_the_environment_takes_what_ansible_takes(text, expected):
    environ = {CONNECTION_ENV['validate_certs']: text}
    assert settings(environ, api_url=URL, api_key='k1234')['validate_certs'] is expected


@pytest.mark.parametrize('given, words', [
    (dict(api_key='two\nlines'), 'api_key: contains white space or a control character'),
    (dict(api_key=None), 'api_key: is required: set the api_key option or the UPTIME_API_KEY environment variable'),
    (dict(api_url='uptime.example.com'), 'api_url: must be an http:// or https:// address'),
    (dict(api_url='https://'), 'api_url: must be an http:// or https:// address'),
    # requests would send user-info as Basic authentication in place of the key; the message shows it masked.
    (dict(api_url='http://bob:secret-key-1234@uptime.example.com'),
     'api_url: holds a user name or password before its host (http://********@uptime.example.com)'),
    (dict(api_url='https://secret-key-1234@uptime.example.com'), 'before its host (https://********@uptime.example.com)'),
    (dict(api_url='ftp://uptime.example.com/?token=secret-key-1234'), "got 'ftp://uptime.example.com/?token=********'"),
    (dict(api_url='bob:secret-key-1234@uptime.example.com'), 'before its host (********@uptime.example.com)'),  # no scheme
    (dict(api_url='https://bob:secret/key-1234@uptime.example.com'), 'before its host (https://********@uptime.example.com)'),
    (dict(api_url='uptime.example.com/?token=secret-key-1234'), "got 'uptime.example.com/?token=********'"),
    (dict(validate_certs='maybe'), "validate_certs: expected a boolean, got 'maybe'"),
    (dict(timeout='soon'), "timeout: expected a number, got 'soon'"),
    (dict(timeout=0), 'timeout: must be a positive number of seconds, got 0'),
    (dict(retries=-1), 'retries: must be 0 or more, got -1'),
    (dict(ca_path='/nonexistent/ca.pem'), 'ca_path: no such file or directory: /nonexistent/ca.pem'),
])
def test_bad_options_are_refused_naming_the_option(given, words):
    with pytest.raises(ValidationError) as caught:
        settings(**dict(dict(api_url=URL, api_key='secret-key-1234'), **given))
    assert words in str(caught.value)
    assert 'secret-key-1234' not in str(caught.value)
    assert 'two\nlines' not in str(caught.value)


def test_the_modules_argument_spec_is_the_description():
    assert set(CONNECTION_ARGSPEC) == set(CONNECTION_OPTIONS)
    for name, variable in CONNECTION_ENV.items():
        assert CONNECTION_ARGSPEC[name]['fallback'][1] == [variable]
    assert CONNECTION_ARGSPEC['api_key']['no_log'] is True
    assert CONNECTION_ARGSPEC['timeout']['type'] == 'float'


def test_the_account_fingerprint_tells_accounts_and_services_apart_and_hides_the_key():
    mine = account_fingerprint({'api_url': URL, 'api_key': PRIMARY_KEY})
    assert mine == account_fingerprint({'api_url': URL + '/api/v1/', 'api_key': PRIMARY_KEY})
    assert mine != account_fingerprint({'api_url': URL, 'api_key': OTHER_KEY})
    assert mine != account_fingerprint({'api_url': 'https://other.example.com', 'api_key': PRIMARY_KEY})
    assert PRIMARY_KEY not in mine
    assert PRIMARY_KEY[:8] not in mine


def test_a_key_read_with_its_line_break_is_trimmed_and_reaches_the_service(fake_connection):
    assert settings({CONNECTION_ENV['api_key']: ' k1234\r\n'}, api_url=URL)['api_key'] == 'k1234'
    client = connect(settings(api_url=fake_connection['api_url'], api_key=PRIMARY_KEY + '\n', retries=0))
    assert client.list('/api/v1/monitors') == []
