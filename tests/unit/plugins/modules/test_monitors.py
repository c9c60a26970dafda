# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Wiring of the monitors module: arguments in, exit_json/fail_json out, against the emulator."""

from __future__ import annotations

import pytest
import yaml

from module_runner import run_module

from ansible_collections.uptime.monitoring.plugins.modules import monitors
from ansible_collections.uptime.monitoring.plugins.module_utils._bulk import MONITORS_ARGSPEC


def shop(**values):
    item = dict(name='shop', url='https://shop.example.com/', interval=60)
    item.update(values)
    return item


def doc_option_matches(doc, spec, path):
    """The documented option says what the argument spec says (as validate-modules checks)."""
    for key, default in (('type', 'str'), ('elements', None), ('required', False), ('choices', None), ('aliases', None)):
        assert doc.get(key, default) == spec.get(key, default), '%s.%s' % (path, key)
    assert set(doc.get('suboptions', {})) == set(spec.get('options', {})), path
    for name, sub_spec in spec.get('options', {}).items():
        doc_option_matches(doc['suboptions'][name], sub_spec, '%s.%s' % (path, name))


def test_documentation_matches_the_argument_spec():
    documented = yaml.safe_load(monitors.DOCUMENTATION)['options']
    assert set(documented) == set(MONITORS_ARGSPEC)
    for name, spec in MONITORS_ARGSPEC.items():
        doc_option_matches(documented[name], spec, name)
        assert documented[name].get('default') == spec.get('default'), name


# A 500 is the service's own answer, which a read settles; a gateway's 503 may leave the create running behind it.
@pytest.mark.parametrize('status, written', [(500, 'nothing was written'), (503, 'no write is known to be applied')])
def test_partial_failure_fails_the_task_with_the_changes(emulator, connection, status, written):
    emulator.fault('status', status=status, method='POST')
    result = run_module(monitors.main, dict(connection, config=[shop()], workers=1)).result
    assert result['failed'] is True
    assert result['msg'].startswith('1 of 1 writes failed; %s\ncreate \'shop\'' % written), result['msg']
    assert result['changes'][0]['status'] == 'failed'


def test_a_create_whose_pause_fails_is_counted_and_shown_as_created(emulator, connection):
    emulator.fault('status', status=500, method='PUT')
    result = run_module(monitors.main, dict(connection, config=[shop(paused=True)], workers=1, retries=0)).result
    assert result['failed'] is True and result['changed'] is True
    assert result['summary']['created'] == 1 and result['summary']['failed'] == 1
    assert [view['name'] for view in result['after']] == ['shop']
    assert result['changes'][0]['status'] == 'failed' and result['changes'][0]['id'] is not None
    assert "written: created 'shop'" in result['msg'] and 'the monitor was created before this failure' in result['msg']
