# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The secrets of a monitor: what a masked value may stand for (that a read hides every secret and applies back without
loss is the round-trip and no-secret laws of tests/laws)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import MONITOR_SCHEMA
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import MASK, UnresolvedMaskError

# A secret: at least 6 characters, unicode included, as the service stores it (trimmed, no white space).
SECRET = st.text(st.characters(blacklist_categories=('Cs', 'Cc', 'Z'), blacklist_characters='*&#?/@:%+=[]'),
                 min_size=4, max_size=20).map(lambda text: 'S~%s~' % text)  # never a word of the result's own


def apply(options, stored):
    """What a task does with options as given against a stored monitor: normalise, then keep what masks stand for."""
    return MONITOR_SCHEMA.unmasked(MONITOR_SCHEMA.desired(options), stored, "monitor 'shop'")


@given(SECRET, SECRET, st.integers(2, 4))
def test_masked_items_more_or_fewer_than_those_stored_are_a_guess_and_refused(first, second, copies):
    hooks = [{'key': 'slack', 'value': 'https://hooks.slack.com/%s%d' % (first, index)} for index in range(copies)]
    stored = MONITOR_SCHEMA.current({'name': 'shop', 'url': 'https://a.example.org/', 'alerts': hooks})
    masked = {'key': 'slack', 'value': 'https://hooks.slack.com/' + MASK}
    for given_count in (copies - 1, copies + 1):
        with pytest.raises(UnresolvedMaskError) as caught:
            apply({'alerts': [masked] * given_count}, stored)
        assert [field for field, dummy in caught.value.problems] == ['alerts[%d]' % index for index in range(given_count)]
        assert "monitor 'shop' holds %s%d alerts 'slack'" % ("only " if given_count > copies else "", copies) in str(caught.value)
    # A stored item given plainly is the input's own: the masked ones share the others.
    plain = dict(hooks[0])
    assert MONITOR_SCHEMA.differences(apply({'alerts': [plain] + [masked] * (copies - 1)}, stored), stored) == {}
    assert second not in str(caught.value)
    assert first not in str(caught.value)


@pytest.mark.parametrize('option, given, shown', [
    ('url', 'https://admin:%s@h.example.org/x?token=%s' % (MASK, MASK), 'https://admin:%s@h.example.org/x?token=%s'),
    ('request_auth_password', MASK, MASK),
])
def test_a_masked_value_that_is_not_the_stored_ones_form_is_refused(option, given, shown):
    stored = MONITOR_SCHEMA.current({'name': 'shop', 'url': 'https://admin:pw123456@h.example.org/y?token=t0k3n5',
                                     'request_auth_username': None, 'request_auth_password': None})
    with pytest.raises(UnresolvedMaskError) as caught:
        apply({option: given}, stored)
    assert caught.value.field == option
    assert 'pw123456' not in str(caught.value)
    assert 't0k3n5' not in str(caught.value)


@given(st.sampled_from(['********', 'https://hooks.slack.com/********', 'a ******** b']))
def test_a_mask_in_a_field_that_is_not_secret_is_taken_literally(value):
    stored = MONITOR_SCHEMA.current({'name': 'shop', 'url': 'https://a.example.org/', 'alert_text_lookup': 'x',
                                     'alerts': [{'key': 'email', 'value': 'ops@example.com'}]})
    assert apply({'alert_text_lookup': value}, stored)['alert_text_lookup'] == value
    header = [{'key': 'Accept', 'value': value}]
    assert apply({'request_headers': header}, stored)['request_headers'] == header


def test_a_changed_secret_inside_a_masked_part_shows_as_changed():
    before = MONITOR_SCHEMA.current({'url': 'https://admin:old-pass@h.example.org/?api_key=k1', 'request_auth_password': 'a'})
    after = dict(before, url='https://admin:new-pass@h.example.org/?api_key=k1', request_auth_password='b')
    shown_before, shown_after = MONITOR_SCHEMA.diff(before, after, ['url', 'request_auth_password'])
    assert shown_before['url'] == 'https://admin:%s@h.example.org/?api_key=%s' % (MASK, MASK)
    assert shown_after == {'url': shown_before['url'] + ' (changed)', 'request_auth_password': MASK + ' (changed)'}


def test_a_header_whose_name_changed_case_shows_the_name_change_not_a_changed_secret():
    before = {'request_headers': [{'key': 'X-Api-Key', 'value': 'k3y-1'}, {'key': 'Cookie', 'value': 'c-1'}]}
    after = {'request_headers': [{'key': 'x-api-key', 'value': 'k3y-1'}, {'key': 'Cookie', 'value': 'c-2'}]}
    shown_before, shown_after = MONITOR_SCHEMA.diff(before, after, ['request_headers'])
    assert shown_before['request_headers'] == [{'key': 'X-Api-Key', 'value': MASK}, {'key': 'Cookie', 'value': MASK}]
    assert shown_after['request_headers'] == [{'key': 'x-api-key', 'value': MASK}, {'key': 'Cookie', 'value': MASK + ' (changed)'}]


@pytest.mark.parametrize('url', ['https://admin:Sup3r#S3cret@intranet.example.org/health',
                                 'https://admin:Sup3r?S3cret@intranet.example.org/health?token=S3cret2',
                                 'https://admin:Sup3rS3cret@[2001:db8::1]:8443/x?Session=S3cret2#top'])
def test_a_password_that_holds_a_delimiter_is_masked_whole(url):
    shown = MONITOR_SCHEMA.by_name['url'].mask(url)
    assert 'S3cret' not in shown
    assert shown.startswith('https://admin:%s@' % MASK)
    assert MONITOR_SCHEMA.by_name['url'].secret_values(url)[0].endswith('S3cret')


@pytest.mark.parametrize('option, stored, shown', [
    # Without a password (or with an empty one) the user name is the credential: a token.
    ('url', 'https://ghp_abc123@api.github.com/', 'https://%s@api.github.com/' % MASK),
    ('url', 'https://sk_live_x:@api.stripe.com/v1/balance', 'https://%s@api.stripe.com/v1/balance' % MASK),
    # sig, pwd and sas are secret as whole names only: design holds sig.
    ('url', 'https://h.example.org/b?SIG=a1&sas=b2&Pwd=c3&design=1&pwds=2',
     'https://h.example.org/b?SIG=%s&sas=%s&Pwd=%s&design=1&pwds=2' % (MASK, MASK, MASK)),
    ('request_headers', [{'key': 'Sig', 'value': 'a1'}, {'key': 'X-Design-Version', 'value': '2'}],
     [{'key': 'Sig', 'value': MASK}, {'key': 'X-Design-Version', 'value': '2'}]),
])
def test_what_a_secret_shows_and_that_given_back_it_keeps_the_stored_one(option, stored, shown):
    field = MONITOR_SCHEMA.by_name[option]
    assert field.mask(stored) == shown
    assert field.unmask(shown, stored, "monitor 'shop'") == (stored, [])
