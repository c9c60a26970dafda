# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The law of secrets on every failure path: a task that fails shows none of the secrets it was given, in either runner.

A monitor task holds a secret in every place the schema knows one (each field with secret spans or sensitive items,
read from the resource's schema: the URL's user-info, a sensitive header's value, an alert's webhook or token, the
Basic authentication password; the API key too, as an argument or from the environment, where no request is sent),
and fails on a drawn path: its own checks or ansible-core's validator (a wrong value
of any other option, drawn from the bad-input law's table, or an option no module takes), the service's refusal of the
write, or a defect met on a record the module cannot read (an unexpected error, its traceback asked for). Run as a
module and inside the worker, the whole result (the invocation, the message, the traceback) holds no secret, plain or
percent-encoded.
"""

from __future__ import annotations

import json
import os
import re
import string
import urllib.parse
from unittest import mock

import pytest
from hypothesis import assume, event, given, strategies as st

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.parameters import PASS_VARS
from laws import MODULES, budget, fresh, holds
from module_runner import run_in_worker, run_module
from test_bad_input import MONITOR as BAD_VALUES, with_wrong_kinds
import strategies as gen

from ansible_collections.uptime.monitoring.plugins.module_utils._connection import CONNECTION_ENV
from ansible_collections.uptime.monitoring.plugins.module_utils._module import CONNECTION_ARGSPEC, DISPLAY_SECRET_MIN_LENGTH
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA
from ansible_collections.uptime.monitoring.plugins.modules import monitor, monitors

RUNNERS = {'module': run_module, 'worker': run_in_worker}
# Letters and digits, ASCII (a URL holds it as given): no word, id or time of a result holds one by chance.
SECRETS = st.builds(lambda word, number: '%s%d' % (word, number), st.text(string.ascii_letters, min_size=4, max_size=12),
                    st.integers(10, 10 ** 6))
# The options that hold a secret, as the schema declares them: the day a field is declared secret, it is drawn here.
SECRET_OPTIONS = sorted(set(field.name for field in MONITOR_SCHEMA.fields if field.secret or field.sensitive_items or field.secret_spans)
                        | set(name for name, option in monitor.ARGUMENT_SPEC.items() if option.get('no_log') and name != 'api_key'))
PLACES = {'url': gen.urls, 'request_headers': gen.headers, 'alerts': gen.alerts, 'request_auth_password': st.just}
# Records the module cannot read (the service answering a list with one odd record): a defect's path.
ODD_RECORDS = [{'request_headers': 'x'}, {'alerts': {'bad': 1}}, {'interval': 'soon'}, {'maintenance_start_at': []},
               {'name': {'id': 'x'}}]


@st.composite
def secret_monitors(draw, name='shop', secrets=SECRETS):
    """(a monitor's arguments with a secret in every place the schema knows one, the secrets by option)."""
    missing = sorted(set(SECRET_OPTIONS) - set(PLACES))
    assert not missing, 'secret options with no place to draw a secret in: %s' % missing
    secrets = {option: draw(secrets) for option in SECRET_OPTIONS}
    args = draw(gen.monitors(name=name, full=True))
    args.pop('paused', None)
    for option in SECRET_OPTIONS:
        args[option] = draw(PLACES[option](secrets[option]))
    args['request_auth_username'] = 'bob'
    return args, secrets


@st.composite
def failing_tasks(draw):
    """(task arguments, the secrets in it, how it fails, what the account holds or the fault it meets)."""
    args, secrets = draw(secret_monitors())
    path = draw(st.sampled_from(['check', 'unknown option', 'service refusal', 'unreadable record']))
    if path == 'check':
        option = draw(st.sampled_from(sorted(set(BAD_VALUES) - set(SECRET_OPTIONS) - {'request_auth_username'})))
        values, extra = with_wrong_kinds('monitor', BAD_VALUES)[option]
        args.update(extra)
        args[option] = draw(values)
    elif path == 'unknown option':
        args['colour'] = 'red'
    key = None
    if path in ('check', 'unknown option'):  # refused before any request: any key, given or from the environment
        key = {'api_key': draw(SECRETS), 'by': draw(st.sampled_from(['argument', 'environment']))}
        secrets['api_key'] = key['api_key']
    return args, list(secrets.values()), path, draw(st.sampled_from(ODD_RECORDS)) if path == 'unreadable record' else None, key


def shown(text, secret):
    return secret in text or urllib.parse.quote(secret, safe='') in text


@budget(60)
@given(task=failing_tasks(), runner=st.sampled_from(sorted(RUNNERS)))
def test_a_failed_task_shows_no_secret_it_was_given(emulator, connection, task, runner):
    args, secrets, path, odd, key = task
    stored = fresh(emulator, stored=[gen.record(dict(name='shop', url='https://shop.example.com/', interval=60))]) \
        if path == 'unreadable record' else fresh(emulator)
    if path == 'service refusal':
        emulator.fault('status', count=10, status=500, method='POST', path='/api/v1/monitors')
    if path == 'unreadable record':
        emulator.fault('record', count=10, method='GET', record=stored[0], set=odd)
    task_args = dict(connection, _ansible_module_name='uptime.monitoring.monitor', _ansible_tracebacks_for=['error'], **args)
    environment = {}
    if key and key['by'] == 'argument':
        task_args['api_key'] = key['api_key']
    elif key:
        environment[CONNECTION_ENV['api_key']] = task_args.pop('api_key') and key['api_key']
    with mock.patch.dict(os.environ, environment):
        out = RUNNERS[runner](monitor.main, task_args, diff=True)
    emulator.clear_faults()
    holds(out.crash is None, 'the task ends with a result', crash=out.crash, path=path)
    holds(out.failed, 'the task fails', result=out.result, path=path)
    event('%s: %s' % (path, out.msg[:40]))
    if path == 'unreadable record':  # a defect: the traceback it was asked for comes with it
        holds('Traceback (most recent call last)' in out.result.get('exception', ''), 'a defect shows its traceback, asked for',
              result=out.result, runner=runner)
    text = json.dumps(out.result, ensure_ascii=False)
    leaked = [secret for secret in secrets if shown(text, secret)]
    holds(leaked == [], 'no secret given is shown', leaked=leaked, path=path, runner=runner, result=out.result)


def unmasked(displayed, validated, secrets, where='module_args'):
    """Where the arguments shown differ from the arguments as ansible-core validated them, other than by a secret
    masked in place: a secret shown, a value changed, a mask that hides more than its part or stands for nothing."""
    if isinstance(validated, dict) and isinstance(displayed, dict) and displayed.keys() == validated.keys():
        return [place for key in validated for place in unmasked(displayed[key], validated[key], secrets, '%s.%s' % (where, key))]
    if isinstance(validated, list) and isinstance(displayed, list) and len(displayed) == len(validated):
        return [place for index, (item, value) in enumerate(zip(displayed, validated))
                for place in unmasked(item, value, secrets, '%s[%d]' % (where, index))]
    text = json.dumps(displayed, ensure_ascii=False)
    if any(shown(text, secret) for secret in secrets):
        return [where]
    holds_secret = any(shown(json.dumps(validated, ensure_ascii=False), secret) for secret in secrets)
    return [] if displayed == validated and not holds_secret or holds_secret and stands_for(displayed, validated) else [where]


def stands_for(displayed, validated):
    """Whether ``displayed`` is ``validated`` with parts masked, each mask standing for some text within one part of a
    URL (a user-info; a query value or the rest of a path, no ``?``, ``#``, ``&`` or ``@`` in it) or of a text."""
    return masked_parts(displayed, validated) is not None


def masked_parts(displayed, validated):
    """The texts the masks of ``displayed`` stand for in ``validated`` (see :func:`stands_for`), or None."""
    if not isinstance(displayed, str) or MASK not in displayed:
        return None
    pieces = displayed.split(MASK)
    # A mask before the @ stands for a user-info, which may hold a raw ?, # or @ (a password not percent-encoded).
    pattern = re.escape(pieces[0]) + ''.join(('([^/]+)' if piece.startswith('@') else '([^#&?@]+)') + re.escape(piece)
                                             for piece in pieces[1:])
    found = re.fullmatch(pattern, str(validated))
    return None if found is None else list(found.groups())


@budget(20)
@given(module=st.sampled_from(['monitor', 'monitors']), entries=st.lists(secret_monitors(name='shop'), min_size=1, max_size=2),
       runner=st.sampled_from(sorted(RUNNERS)))
def test_the_invocation_shows_every_argument_as_validated_and_each_secret_masked(emulator, connection, module, entries, runner):
    fresh(emulator)
    secrets = [connection['api_key']] + [secret for dummy, by_option in entries for secret in by_option.values()]
    if module == 'monitor':
        args, spec = entries[0][0], monitor.ARGUMENT_SPEC
    else:
        for index, (entry, dummy) in enumerate(entries):
            entry['name'] = 'shop %d' % index
        args, spec = {'state': 'merged', 'config': [entry for entry, dummy in entries]}, monitors.MONITORS_ARGSPEC
    task_args = dict(connection, _ansible_module_name='uptime.monitoring.%s' % module, _ansible_inject_invocation=True, **args)
    if 'inject_invocation' not in PASS_VARS:  # 2.19 knows no such setting: its modules always return the invocation
        del task_args['_ansible_inject_invocation']
    out = RUNNERS[runner](MODULES[module].main, task_args)
    validation = ArgumentSpecValidator(dict(CONNECTION_ARGSPEC, **spec)).validate(dict(connection, **args))
    holds(out.crash is None, 'the task ends with a result', crash=out.crash)
    assume(not out.failed)  # a value masked as given keeps a stored one, and no monitor is stored yet
    wrong = unmasked(out.result['invocation']['module_args'], validation.validated_parameters, secrets)
    holds(wrong == [], 'the invocation shows every argument as validated, each secret masked', wrong=wrong, module=module,
          runner=runner, args=args, shown=out.result['invocation']['module_args'])


def hidden(text, registered):
    """``text`` as ansible-core's display shows it (2.22 and later): each registered text, wherever it appears, hidden."""
    for secret in sorted((each.strip() for each in registered if each.strip()), key=len, reverse=True):
        text = text.replace(secret, '$REDACTED$')
    return text


@budget(20)
@given(name=st.sampled_from(['staging web', 'shop api 2', 'prod-web eu']), data=st.data(), runner=st.sampled_from(sorted(RUNNERS)))
def test_the_display_hides_each_long_secret_and_no_true_text(emulator, connection, name, data, runner):
    """On an ansible-core whose display hides every text registered as a secret, wherever it appears (2.22 and later):
    a task registers each secret it holds that is long enough to be no true text, so that the display hides it in
    whatever shows it; and nothing of the collection's result, whose secrets the collection masks itself, is hidden
    (a short password, a word of the monitor's name, stays shown in the name)."""
    pytest.importorskip('ansible.module_utils.secrets')
    from ansible.module_utils._internal._secrets import SecretMasker  # pylint: disable=import-outside-toplevel
    secrets = st.one_of(gen.overlapping_secrets([name]), SECRETS)
    args, by_option = data.draw(secret_monitors(name=name, secrets=secrets), label='monitor')
    fresh(emulator)
    registered, register = [], SecretMasker.register_secret_texts

    def recording(masker, texts):
        texts = list(texts)
        registered.extend(texts)
        return register(masker, texts)
    task_args = dict(connection, _ansible_module_name='uptime.monitoring.monitor', _ansible_inject_invocation=True, **args)
    with mock.patch.object(SecretMasker, 'register_secret_texts', recording):
        out = RUNNERS[runner](monitor.main, task_args, diff=True)
    holds(out.crash is None, 'the task ends with a result', crash=out.crash)
    given_ = hidden(json.dumps(args, ensure_ascii=False), registered)
    shown_ = [secret for secret in by_option.values() if len(secret) >= DISPLAY_SECRET_MIN_LENGTH and shown(given_, secret)]
    holds(shown_ == [], 'the display hides each long secret a task holds', shown=shown_, registered=registered, args=args)
    result = json.dumps(out.result, ensure_ascii=False)
    holds(hidden(result, registered) == result, 'the display hides nothing of a result', registered=registered,
          result=out.result, runner=runner)


@budget(20)
@given(entry=secret_monitors(name='shop'), no_log=st.booleans(), bad=st.booleans())
def test_a_module_logs_its_invocation_with_no_secret(emulator, connection, entry, no_log, bad):
    """A task run as a module records its invocation in the system log once its arguments are validated, as an
    AnsibleModule does (none when the task is ``no_log``, none when validation refused them): every argument as the
    result's invocation shows it, each secret masked."""
    args, by_option = entry
    fresh(emulator)
    logged = []
    task_args = dict(connection, _ansible_module_name='uptime.monitoring.monitor', _ansible_no_log=no_log, **args)
    if 'inject_invocation' in PASS_VARS:
        task_args['_ansible_inject_invocation'] = True
    if bad:
        task_args['colour'] = 'red'
    with mock.patch('syslog.syslog', lambda *message: logged.append(message[-1])):
        out = run_module(monitor.main, task_args)
    holds(out.crash is None, 'the task ends with a result', crash=out.crash)
    expected = [] if no_log or bad else ['Invoked with %s' % ' '.join('%s=%s' % item for item in out.result['invocation']['module_args'].items())]
    holds(logged == expected, 'the system log records the invocation as shown',
          logged=logged, expected=expected)
    leaked = [secret for secret in [connection['api_key']] + list(by_option.values()) if shown(''.join(logged), secret)]
    holds(leaked == [], 'the system log shows no secret', leaked=leaked, logged=logged)


# Ways a URL may be written that the generator's URLs do not show: (what replaces https:// or is added at its end,
# the secrets it adds).
URL_VARIANTS = {
    'as drawn': ('', []),
    'an empty user-info': ('https://@', []),
    'a password with a raw ? and #': ('https://admin:p?w#d@', ['p?w#d']),
    'a password with a raw @': ('https://admin:p@ss@', ['p@ss']),
    'a fragment with # and ?': ('#top#2?sig=abc', []),  # a fragment is no query: nothing in it is masked
    'a query holding @': ('&notify=ops@example.org', []),  # added after the query or path: never a user-info
    'a path holding token=abc': ('x/token=abc', []),  # no query: nothing masked
    'an upper-case scheme': ('', []),
    'a base64 value': ('', []),
}


@pytest.mark.parametrize('variant', sorted(URL_VARIANTS))
@budget(40)
@given(secret=SECRETS | st.text(string.ascii_letters, min_size=1, max_size=3), data=st.data())
def test_a_url_shows_as_given_with_its_secret_masked_in_its_part(variant, secret, data):
    """The URL's own mask, over every credential form and place (user-info, a query value first or last, a fragment
    after it, an empty user-info), where the task law above draws a few; a password's user name stays shown."""
    url = data.draw(gen.urls(secret))
    secrets = [secret]
    if variant in ('an empty user-info', 'a password with a raw ? and #', 'a password with a raw @'):
        # The user-info of the variant, and the secret in the query: what is read as the user-info decides where the
        # query begins.
        path, name = data.draw(st.sampled_from(['', 'health'])), data.draw(st.sampled_from(gen.SECRET_QUERY_NAMES))
        more, fragment = data.draw(st.sampled_from(['', '&page=2'])), data.draw(st.sampled_from(['', '#top']))
        url = '%sintranet.example.org/%s?%s=%s%s%s' % (URL_VARIANTS[variant][0], path, name, secret, more, fragment)
        secrets += URL_VARIANTS[variant][1]
    elif variant == 'a base64 value' and url.count(secret) == 1 and '?' in url:
        url, secrets = url.replace(secret, secret + '==', 1), [secret + '==']
    elif variant != 'as drawn' and variant in URL_VARIANTS and not URL_VARIANTS[variant][0].startswith('https://'):
        url = url.replace('https://', 'HTTPS://', 1) if variant == 'an upper-case scheme' else url + URL_VARIANTS[variant][0]
    displayed = MONITOR_SCHEMA.by_name['url'].mask(url)
    parts = masked_parts(displayed, url) if displayed != url else []
    holds(all(len(each) < 4 or not shown(displayed, each) for each in secrets) and parts is not None and
          all(any(each in part for each in secrets) for part in parts),
          'the URL shows as given, each mask standing for a secret in its part', url=url, displayed=displayed, parts=parts)
    if url.startswith('https://admin:%s' % secret):
        holds(displayed.startswith('https://admin:%s' % MASK), 'the user name of a password stays shown', url=url, displayed=displayed)
