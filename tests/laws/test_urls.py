# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The law of how a URL is read, with the service's own reading for oracle (the emulator's model of its ``url`` rule,
RFC 3986: the authority ends at the first ``/``, ``?`` or ``#``, its user-info at its last ``@``): over URLs with ports,
IPv6 hosts, and ``@``, ``:``, ``?``, ``#`` and ``/`` raw or encoded in the user-info, the query and the fragment, the
collection refuses what the service refuses; of a URL it accepts, the host a result shows and the inventory's host
are the host the service checks, and its user-info's password or token is shown masked; of one it refuses, what may
be a password as written is shown nowhere, in the message or the masked URL."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from hypothesis import example, given, strategies as st

from emulator.store import URL_AUTHORITY_PATTERN, valid_url
from laws import budget, holds

from ansible_collections.uptime.monitoring.plugins.inventory.monitors import url_host
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA, url_problem
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK

URL_FIELD = MONITOR_SCHEMA.by_name['url']
PARTS = st.lists(st.sampled_from(list('aZ09.-') + ['@', ':', '?', '#', '/', '=', '&', '%40', '%3F', '%2F']), max_size=5).map(''.join)
HOSTS = st.sampled_from(['shop.example.com', 'Web.Example.ORG.', 'localhost', '127.0.0.1', '[2001:db8::1]', 'example.com',
                         # and hosts the service refuses: an empty label, an IPv6 address unclosed, wrong or followed by
                         # other than a port
                         'a..b.example.', '.shop.example.com', '[2001:db8::1', '[2001:db8::zz]', '[2001:db8::1]x'])


@st.composite
def urls(draw):
    """(a URL, its user-info's password as written or None)."""
    user = draw(st.none() | PARTS.filter(bool))
    password = draw(st.none() | PARTS) if user is not None else None
    user_info = '' if user is None else user + ('' if password is None else ':' + password) + '@'
    port = draw(st.sampled_from(['', ':8443', ':80', ':', ':x1']))
    query = draw(st.sampled_from(['', '?']) | PARTS.map(lambda text: '?notify=' + text) | PARTS.map(lambda text: '?token=' + text))
    fragment = draw(st.sampled_from(['', '#']) | PARTS.map(lambda text: '#' + text))
    url = 'https://%s%s%s%s%s%s' % (user_info, draw(HOSTS), port, draw(st.sampled_from(['', '/', '/health', '/a@b'])), query, fragment)
    return url, password


def service_host(url):
    """The host the service checks (and its port), as the emulator reads it."""
    return URL_AUTHORITY_PATTERN.match(url).group(1).rpartition('@')[2]


def same_host(host):
    """A host as two readings of it compare: without brackets, port, case or a final dot."""
    host = host[1:].partition(']')[0] if host.startswith('[') else host.partition(':')[0]
    host = host.lower().rstrip('.')
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


@budget(20)
@given(drawn=urls())
@example(drawn=('https://shop.example.com:8443?notify=ops@example.com', None)).via('issue 55 item 3: a port and an @ in the query')
@example(drawn=('https://shop.example.com:8443?notify=ops@', None)).via('issue 55 item 3: a query ending in @')
@example(drawn=('https://admin:p?w#d@host.example.com/', 'p?w#d')).via('a password with a raw ? and #: refused, masked')
@example(drawn=('https://admin:p/w@host.example.com/', 'p/w')).via('a password with a raw /: refused, masked')
@example(drawn=('https://ghp_Secr3tT0ken@status.example.com:/search?q=author:me@example.com', None)).via(
    'a token before a host with an empty port and an @ in the query: refused, the token masked')
def test_the_collection_reads_a_url_as_the_service_does_and_shows_no_credential(drawn):
    url, password = drawn
    accepted, problem = valid_url(url, 2048), url_problem(url, 2048)
    holds(accepted == (problem is None), 'the collection refuses what the service refuses, and only that', url=url, problem=problem)
    shown = URL_FIELD.mask(url)
    if not accepted:  # what may be a password or a token, as written, is shown nowhere
        user_info = URL_AUTHORITY_PATTERN.match(url).group(1).rpartition('@')[0]
        if user_info and ':' not in user_info:
            holds('%s@' % user_info not in shown, 'no token of a refused URL is shown', url=url, shown=shown)
        if password:
            holds(':%s@' % password not in shown, 'no password of a refused URL is shown', url=url, shown=shown)
            # A password of fewer than three letters or digits may be a word of the message (the host, the advice).
            holds(sum(char.isalnum() for char in password) < 3 or password not in problem or password in url.split('@')[-1],
                  'a refusal shows no password', url=url, problem=problem)
        return
    expected = service_host(url)
    holds(same_host(urlsplit(shown).netloc.rpartition('@')[2]) == same_host(expected), 'a result shows the host the service checks',
          url=url, shown=shown, expected=expected)
    holds(url_host(shown) == url_host('https://%s/' % expected), 'the inventory makes a host of the host the service checks',
          url=url, shown=shown, host=url_host(shown), expected=expected)
    user_info = URL_AUTHORITY_PATTERN.match(url).group(1).rpartition('@')[0]
    if user_info:
        parts = urlsplit(shown)
        credential = parts.password if ':' in user_info and user_info.partition(':')[2] else parts.username
        holds(credential == MASK, 'a user-info\'s password, or its token, is shown masked', url=url, shown=shown)
