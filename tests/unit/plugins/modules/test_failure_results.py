# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a module returns when it fails: the keys it has something to say in (what the message says of a wrong
``api_url``, a refused key or an unreachable address is the client's, proven once in test_client.py)."""

from __future__ import annotations

import datetime
import socket

import pytest
from module_runner import run_module

from ansible_collections.uptime.monitoring.plugins.modules import incident, incident_info, monitor, monitor_info


def closed_port():
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


# Two hours ago, sent as the local time of a zone 14 hours ahead of the account's (UTC): in the future to the service.
AHEAD = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)).strftime('%Y-%m-%dT%H:%M:%SZ')


@pytest.mark.parametrize('main, args, keys', [
    (monitor_info.main, dict(api_url='http://127.0.0.1:%d' % closed_port()), dict(request=dict(method='GET', path='/api/v1/monitors'))),  # no answer
    (monitor_info.main, dict(api_key='wrong-key-1234567'), dict(status_code=401, request=dict(method='GET', path='/api/v1/monitors'))),  # no fields named
    (incident.main, dict(monitor='shop', started_at=AHEAD, account_timezone='Pacific/Kiritimati'), dict(
        status_code=422, request=dict(method='POST', path='/api/v1/incidents'),
        field_errors={'started_at': ['The started at must be a date before or equal to now.']})),
])
def test_a_failure_returns_what_it_has_to_say_and_nothing_else(emulator, connection, main, args, keys):
    for name in ('shop', 'blog'):
        run_module(monitor.main, dict(connection, name=name, url='https://%s.example.com' % name, interval=60))
    result = run_module(main, dict(connection, retries=0, **args)).result
    assert result['failed'], result
    assert ({key: result.get(key) for key in ('status_code', 'request', 'field_errors')} == dict(
        dict.fromkeys(('status_code', 'request', 'field_errors')), **keys)), result
    # No key AnsibleModule reads as a file of the host (path, dest): a failure never gains a file's owner, mode or size.
    assert not {'path', 'dest', 'owner', 'mode', 'size'} & set(result), result


SHOP = dict(name='shop', url='https://shop.example.com', interval=60)


# That every invalid value fails in one line naming its option before any request, issue 35's cases among them, is
# the bad-input law's; here, the keys of such a result.
@pytest.mark.parametrize('main, args, field', [
    (monitor.main, dict(SHOP, maintenance_start_at='2031-01-10T06:00:00'), 'maintenance_end_at'),
    (monitor.main, dict(SHOP, interval=float('inf')), 'interval'),
    (incident_info.main, dict(limit=float('nan')), 'limit'),
])
def test_an_argument_refused_before_any_request_returns_its_field_only(emulator, connection, main, args, field):
    result = run_module(main, dict(connection, retries=0, **args)).result
    assert result['failed'], result
    assert result['field'] == field, result
    assert result['msg'].startswith(field + ': '), result
    assert not {'status_code', 'request', 'field_errors'} & set(result)
    assert emulator.log() == []
