"""Generators of accepted input for the laws: names, secrets, monitors and times as users give them.

Accepted means what the modules' argument specs and the service's rules (../shared/spec/service-facts.md) take, in
every form a user may write it: unicode and case variants of names, numbers as strings, masked values, reordered
header and alert lists, empty lists against null, times at the edges of the account's zone.
"""

from __future__ import annotations

import datetime
import string
import urllib.parse

from hypothesis import strategies as st

MASK = '********'
ZONES = [None, 'America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'Pacific/Chatham']
# Local times at the edges of those zones: a daylight-saving gap and fold, the first and last years the service
# takes, a leap day; a window starts at one and ends hours later (so it stays later in every zone).
EDGE_TIMES = ['2030-03-10T02:30:00', '2030-11-03T01:30:00', '2030-03-31T02:30:00', '2030-10-27T02:30:00',
              '2030-04-07T01:45:00', '1000-01-02T00:00:00', '9999-12-30T00:00:00', '2028-02-29T23:59:59',
              '2030-01-01T00:00:00Z', '2030-07-01T12:00:00+05:45']
# A window that holds now in every zone: the monitor is in maintenance, which the service's checker leaves alone.
NOW_WINDOW = ('2020-01-01T00:00:00', '2099-01-01T00:00:00')
# Names that case, unicode and the service's search (LIKE, backslash) make hard; variants are made from them.
NAME_SEEDS = ['api', 'Web', 'straße', 'İstanbul', 'ǅemo', 'ﬁle', 'café', 'Ωmega', '%_x', 'a\\b', 'ＡＢＣ', 'shop 1']
NAME_CHARS = st.characters(whitelist_categories=('L', 'N', 'P', 'S'), whitelist_characters=' ')
SENSITIVE_HEADERS = ['Authorization', 'X-Api-Key', 'cookie', 'X-AUTH-TOKEN', 'Proxy-Authorization']
PLAIN_HEADERS = ['Accept', 'X-Trace', 'User-Agent']
URL_CHANNELS = ['webhook', 'slack', 'teams', 'discord', 'flock']
CHANNELS = ['email'] + URL_CHANNELS + ['telegram', 'sms']


def entry(name, interval=60):
    """The least a monitor needs: its name, an address of its own, an interval."""
    return {'name': name, 'url': 'https://%s.example.com/health' % name, 'interval': interval}


def variants(name):
    """Names a user may mean as ``name`` or write by mistake: other cases, unicode folds, spaces around."""
    return st.sampled_from([name, name.upper(), name.lower(), name.swapcase(), name.title(), name.casefold(),
                            ' %s ' % name])


@st.composite
def names(draw):
    base = draw(st.sampled_from(NAME_SEEDS) | st.text(NAME_CHARS, min_size=1, max_size=12).filter(str.strip))
    return draw(variants(base)).strip()[:128] if draw(st.booleans()) else base


# A secret: at least 6 characters, letters and digits (unicode ones too) with a digit and a letter, so that no
# timestamp, id or word of the output holds it by chance; or a number (given as a number where an option takes it).
ALNUM = st.characters(whitelist_categories=('Lu', 'Ll', 'Nd'), max_codepoint=0x2FFF)
TEXT_SECRETS = st.text(ALNUM, min_size=6, max_size=24).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s) and s.isalnum())
ASCII_SECRETS = st.text(string.ascii_letters + string.digits, min_size=6, max_size=24).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s))
SECRETS = TEXT_SECRETS | st.integers(10 ** 8, 10 ** 15)


def as_given(value):
    """A number or boolean as a user may write it: itself or a string of it."""
    return st.sampled_from([value, str(value)]) if not isinstance(value, bool) else st.sampled_from(
        [value, 'yes' if value else 'no', str(value).lower()])


# Every form a URL carries a credential in: the password of its user-info, a token as the user name (with an empty
# password or none), and the value of a query parameter named as a secret header is (sig, pwd and sas whole).
USERINFO_FORMS = {'password': 'admin:%s@', 'token': '%s@', 'empty password': '%s:@', 'password with a colon': 'admin:%s:2@'}
SECRET_QUERY_NAMES = ['api_key', 'sig', 'pwd', 'SAS', 'X-Amz-Signature', 'access_token']


@st.composite
def urls(draw, secret=None):
    """A monitor URL, with ``secret`` (when given) in one of the credential forms."""
    host = draw(st.sampled_from(['intranet.example.org', 'localhost', '[2001:db8::1]', 'shop.example.com.']))
    form = draw(st.sampled_from(sorted(USERINFO_FORMS) + ['query'])) if secret is not None else None
    user = USERINFO_FORMS[form] % secret if form in USERINFO_FORMS else ''
    query = draw(st.sampled_from(['?%s=%s&page=2', '?page=2&%s=%s'])) % (draw(st.sampled_from(SECRET_QUERY_NAMES)), secret) if form == 'query' \
        else draw(st.sampled_from(['', '?q=1', '?design=2']))
    return 'https://%s%s/%s%s%s' % (user, host, draw(st.sampled_from(['', 'health', 'a/b'])), query, draw(st.sampled_from(['', '', '#top'])))


@st.composite
def headers(draw, secret=None):
    """Request headers: none, an empty list, or a few, a sensitive one holding ``secret`` when given."""
    items = [{'key': draw(st.sampled_from(PLAIN_HEADERS)), 'value': draw(st.sampled_from(['1', 'text/html', MASK]))}
             for dummy in range(draw(st.integers(0, 2)))]
    if secret is not None:
        items.append({'key': draw(st.sampled_from(SENSITIVE_HEADERS)), 'value': 'Bearer %s' % secret})
    return draw(st.permutations(items)) if items else draw(st.sampled_from([None, []]))


@st.composite
def alerts(draw, secret=None):
    """Alerts of every channel; webhook-style and telegram values hold ``secret`` when given."""
    items = draw(st.lists(st.sampled_from([{'key': 'email', 'value': 'ops@example.org'}, {'key': 'sms', 'value': '+4912345'},
                                           {'key': 'email', 'value': 'ops@localhost'}]), max_size=2, unique_by=str))
    if draw(st.integers(0, 4)) == 0:  # a masked value as a read shows it: "keep the stored one"
        items.append({'key': 'slack', 'value': 'https://hooks.slack.com/%s' % MASK})
    if secret is not None:
        channel = draw(st.sampled_from(URL_CHANNELS + ['telegram']))
        value = '%s -100%d' % (secret, draw(st.integers(1, 99))) if channel == 'telegram' else \
            'https://hooks.%s.example.com/services/%s' % (channel, secret)
        items.append({'key': channel, 'value': value})
    return draw(st.permutations(items)) if items else draw(st.sampled_from([None, []]))


@st.composite
def monitors(draw, name=None, secret=None, full=True):
    """Options of the ``monitor`` module (and entries of ``monitors``) that the service accepts.

    ``name`` is a name or a strategy of names. ``secret`` goes where the drawn form puts it: the URL, a header, the password or an alert.
    """
    where = draw(st.sampled_from(['url', 'header', 'password', 'alert'])) if secret is not None else None
    if where == 'url' and not str(secret).isascii():
        where = 'password'  # a URL holds ASCII (anything else is percent-encoded, shown otherwise than given)
    name = names() if name is None else name
    args = {'name': draw(name) if isinstance(name, st.SearchStrategy) else name,
            'url': draw(urls(secret if where == 'url' else None)),
            'interval': draw(as_given(draw(st.sampled_from([60, 300, 3600]))))}
    if not full:
        return args
    if draw(st.booleans()):
        args['alert_condition'] = draw(st.sampled_from(['url_text', 'url_no_text']))
        args['alert_text_lookup'] = draw(st.sampled_from([MASK, 'OK', 'ünïcode ok']))
    for option, values in (('request_method', ['GET', 'HEAD', 'POST']), ('ssl_alert_days', [0, 7, 60]),
                           ('domain_alert_days', [0, 30, 90, 180]), ('cache_buster', [True, False])):
        if draw(st.booleans()):
            args[option] = draw(as_given(draw(st.sampled_from(values))))
    if where == 'password' or draw(st.booleans()):
        args['request_auth_username'] = 'user'
        args['request_auth_password'] = secret if where == 'password' else draw(st.sampled_from(['plain-pass1', MASK]))
    if draw(st.booleans()) or where == 'header':
        args['request_headers'] = draw(headers(secret if where == 'header' else None))
    if draw(st.booleans()) or where == 'alert':
        args['alerts'] = draw(alerts(secret if where == 'alert' else None))
    if draw(st.booleans()):
        start = draw(st.sampled_from(EDGE_TIMES + [NOW_WINDOW[0]]))
        args['maintenance_start_at'] = start
        year = int(start[:4])
        args['maintenance_end_at'] = NOW_WINDOW[1] if start == NOW_WINDOW[0] else '9999-12-31T12:00:00' if year == 9999 \
            else '%04d%s28T00:00:00' % (year + 1, start[4:8])
    if draw(st.booleans()):
        args['paused'] = draw(as_given(draw(st.booleans())))
    return args


def paused(args):
    """Whether ``args`` (module options) ask for a paused monitor."""
    return str(args.get('paused')).lower() in ('true', 'yes')


# Monitors as operators' accounts hold them: besides paused (an option) and in maintenance (a window around now), what
# the service's checker last found of each, by position: not checked yet (pending), online, or offline (its incident
# open).
CHECKED = st.lists(st.sampled_from([None, 'online', 'offline']), max_size=3)


# What an operator changes in the same task as the masked values a read showed are given back.
EDITS = [None, 'user', 'password', 'header', 'alert']
# A plain alert moved to the other plain channel: its key changes beside the masked ones.
OTHER_CHANNEL = {'email': lambda index: {'key': 'sms', 'value': '+4900%d' % index},
                 'sms': lambda index: {'key': 'email', 'value': 'ops%d@example.org' % index}}


def edited(values, edit):
    """A monitor (a config entry, masked or not, or a stored record) with ``edit`` made: its user name or password
    changed, its header names in another case, its plain alerts moved to another channel; the rest as it is."""
    values = dict(values)
    if edit == 'user' and values.get('request_auth_username') is not None:
        values['request_auth_username'] = '%s-2' % values['request_auth_username']
    elif edit == 'password' and values.get('request_auth_password') is not None:
        values['request_auth_password'] = 'N3w-passw0rd'
    elif edit == 'header' and values.get('request_headers'):
        values['request_headers'] = [dict(item, key=item['key'].swapcase()) for item in values['request_headers']]
    elif edit == 'alert' and values.get('alerts'):
        values['alerts'] = [OTHER_CHANNEL[item['key']](index) if item['key'] in OTHER_CHANNEL else item
                            for index, item in enumerate(values['alerts'])]
    return values


def record(args):
    """What ``args`` (module options) are as the service's create takes them: to store a monitor directly."""
    fields = dict({'request_method': 'GET', 'alert_condition': 'url_unavailable'},
                  **{key: value for key, value in args.items() if value is not None and key not in ('paused', 'state')})
    fields['name'] = str(fields['name']).strip()
    for key in ('maintenance_start_at', 'maintenance_end_at'):
        if len(fields.get(key, 'x' * 19)) != 19:  # an instant: the service takes local times only
            fields.pop('maintenance_start_at'), fields.pop('maintenance_end_at')
    for key in ('cache_buster',):
        if key in fields:
            fields[key] = 1 if str(fields[key]).lower() in ('true', 'yes') else 0
    for key in ('request_headers', 'alerts'):
        if not fields.get(key):
            fields.pop(key, None)
    return fields


# Invalid input, for the law of bad input: values no option takes.

def text(alphabet='abcdefghijklmnopqrstuvwxyz -_.:/', **kwargs):
    return st.text(alphabet, **kwargs)


# Numbers that are no numbers: junk strings, fractions, infinities.
JUNK_NUMBER = st.one_of(st.sampled_from(['often', '1a', '1.5', 'inf', '-inf', 'nan', '.inf', '.nan', '0x1g', '1e400x', '']),
                        st.sampled_from([1.5, -0.5, float('inf'), float('-inf'), float('nan')]),
                        text(alphabet='abcxyz!?', min_size=1, max_size=8))
JUNK_BOOL = st.one_of(st.sampled_from(['maybe', 'perhaps', '2', 'yess', '-1', 'nope']), text(alphabet='xzq', min_size=1))


def choice(values):
    """Anything but one of ``values``: other words, and the values in another case."""
    other = text(alphabet='abcdefghijklmnopqrstuvwxyzABCXYZ_', min_size=1, max_size=12).filter(lambda v: v not in values)
    return st.one_of(other, st.sampled_from([v.swapcase() for v in values]))


def int_choice(values):
    """Anything but one of ``values`` (whole numbers): other numbers, junk, and a fraction beside a choice (60.5), which
    a cut would make one."""
    beside = st.sampled_from(values).flatmap(lambda value: st.sampled_from([value + 0.5, str(value + 0.5), '%s.9' % value]))
    return st.one_of(st.integers(-10 ** 6, 10 ** 6).map(lambda value: value if value not in values else -value - 1), JUNK_NUMBER, beside)


BAD_URL = st.one_of(
    st.sampled_from(['http://[fe80::1', 'https://[2001:db8::1/hook', 'https://.bad.example.org', 'https://a..b.org/',
                     'ftp://web.example.com/', 'web example com', 'https://', 'http:///x',
                     'https://[::1]x/', 'https://[zz::1]/', '//web.example.com/', 'https://a b.org/']),
    st.builds(lambda scheme, host: '%s://%s/' % (scheme, host), st.sampled_from(['ftp', 'file', 'gopher', 'ws']),
              st.sampled_from(['web.example.com', 'localhost', '[2001:db8::1]', '10.0.0.1'])),
    st.builds(lambda path: 'https://web.example.com/' + path, text(alphabet='abc', min_size=2048, max_size=2100)))


def bad_date():
    """Not a date the service reads (Y-m-d\\TH:i:s), or a year outside 1000-9999 as given or once in UTC."""
    return st.one_of(
        st.sampled_from(['yesterday', '31/01/2026 10:00', '2026-13-01T00:00:00', '2026-02-30T00:00:00', '2026-01-01T25:00:00',
                         '0001-01-01T00:00:00', '0999-12-31T23:59:59', '10000-01-01T00:00:00',
                         '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00', '1000-01-01T00:30:00+01:00', ' ']),
        st.builds(lambda year: '%04d-06-01T12:00:00' % year, st.integers(0, 999)),
        st.builds(lambda day: 'T'.join(['2026-01-%s' % day, '10:00:00']), text(alphabet='0123456789x', min_size=3, max_size=4)),
        text(alphabet='0123456789-:T ', min_size=1, max_size=18).filter(lambda v: not _is_date(v)))


def _is_date(value):
    """A timestamp the modules take: ISO 8601 (seconds may be left out, an offset or Z added), its year of four digits
    as given and in UTC."""
    text = value.strip()
    try:
        moment = datetime.datetime.fromisoformat(text[:-1] + '+00:00' if text.endswith(('Z', 'z')) else text)
        in_utc = moment.astimezone(datetime.timezone.utc) if moment.tzinfo else moment
    except (ValueError, OverflowError):
        return False
    return 1000 <= moment.year <= 9999 and 1000 <= in_utc.year <= 9999


def alert_value(channel):
    """A value the channel refuses."""
    bad_urls = st.one_of(BAD_URL, st.just(''), st.just('https://hooks.example.com/' + 'a' * 256))
    return {'email': st.sampled_from(['oncall-at-example', '', '@', 'a@', 'a b@example.com']),
            'sms': st.one_of(st.sampled_from(['call me', '+' + '1' * 16, '']), text(alphabet='abc', min_size=1)),
            'telegram': st.sampled_from(['t' * 129, '', 'no-white-space-here'])}.get(channel, bad_urls)


def alert(channel):
    return st.builds(lambda value: [{'key': channel, 'value': value}], alert_value(channel))


LENGTHS = {'name': 128, 'alert_text_lookup': 255, 'cause': 255, 'comment': 1024}


def too_long(option):
    return st.integers(LENGTHS[option] + 1, LENGTHS[option] + 40).map(lambda n: 'x' * n)


# For the law of the event source: names, and secrets beginning with a sign no name has (found in an event, it can
# only be the secret), the URL of issue 35, item 10, among them.
ISSUE_35_URL = 'https://admin:Sup3rS3cret@intranet.example.org/health?api_key=K3Y'
EVENT_NAMES = st.text(st.characters(categories=('L', 'N'), exclude_characters='\u00a7'), min_size=1, max_size=10)
MARKED_SECRETS = st.text(st.characters(categories=('L', 'N')), min_size=5, max_size=10).map('\u00a7'.__add__)
SECRET_URLS = st.just((ISSUE_35_URL, ('Sup3rS3cret', 'K3Y'))) | st.builds(
    lambda user, query, form, name: ('https://%sintranet.example.org/health?%s=%s' % (
        USERINFO_FORMS[form] % urllib.parse.quote(user, safe=''), name, urllib.parse.quote(query, safe='')), (user, query)),
    MARKED_SECRETS, MARKED_SECRETS, st.sampled_from(sorted(USERINFO_FORMS)), st.sampled_from(SECRET_QUERY_NAMES))


# Secrets no text of a result may be censored by: short ones (a digit is in every time stamp), and words of the
# monitor's own name and URL.
SHORT_SECRETS = st.sampled_from(['2', '0', 'T', 'Z', ':', '-', 'a', 'e', 'web', 'https', 'example', 'GET', 'true'])


@st.composite
def overlapping_secrets(draw, texts):
    """A secret that is short or a part of one of ``texts``."""
    text = draw(st.sampled_from([each for each in texts if each.strip()]))
    start = draw(st.integers(0, len(text) - 1))
    part = text[start:start + draw(st.integers(1, 6))].strip()
    return draw(SHORT_SECRETS) if not part or draw(st.booleans()) else part
