# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Wiring of the monitors module: arguments in, exit_json/fail_json out, against the emulator."""

from __future__ import annotations

import pytest
from module_runner import run_module

from ansible_collections.uptime.monitoring.plugins.modules import monitors


SHOP = dict(name='shop', url='https://shop.example.com/', interval=60)


# A 500 is the service's own answer, which a read settles; a gateway's 503 may leave the create running behind it.
@pytest.mark.parametrize('status, written', [(500, 'nothing was written'), (503, 'no write is known to be applied')])
def test_partial_failure_fails_the_task_with_the_changes(emulator, connection, status, written):
    emulator.fault('status', status=status, method='POST')
    result = run_module(monitors.main, dict(connection, config=[SHOP], workers=1)).result
    assert result['failed'] is True
    assert result['msg'].startswith('1 of 1 writes failed; %s\ncreate \'shop\'' % written), result['msg']
    assert result['changes'][0]['status'] == 'failed'


def test_a_create_whose_pause_fails_is_counted_and_shown_as_created(emulator, connection):
    emulator.fault('status', status=500, method='PUT')
    result = run_module(monitors.main, dict(connection, config=[dict(SHOP, paused=True)], workers=1, retries=0)).result
    assert result['failed'] is True
    assert result['changed'] is True
    assert result['summary']['created'] == 1
    assert result['summary']['failed'] == 1
    assert [view['name'] for view in result['after']] == ['shop']
    assert result['changes'][0]['status'] == 'failed'
    assert result['changes'][0]['id'] is not None
    assert "written: created 'shop'" in result['msg']
    assert 'the monitor was created before this failure' in result['msg']
