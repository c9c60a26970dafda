# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the transport tests read the output of Ansible's command lines (transport_clients.read_ansible_output),
and drive an event source."""

from __future__ import annotations

import pytest

from transport_clients import EventSourceClient, read_ansible_output

# What ansible-core 2.19 prints (COLUMNS=1000, no colour) for a playbook whose task fails, and for an
# inventory source whose plugin raises. The real commands run in test_transport.py (the ansible-playbook and
# ansible-inventory clients), whose failure cases read the same lines from a live run.
FAILED_PLAYBOOK_OUTPUT = """
PLAY [localhost] ***************************************************************

TASK [ansible.builtin.debug] ***************************************************
ok: [localhost] => {
    "msg": "before"
}

TASK [ansible.builtin.fail] ****************************************************
[ERROR]: Task failed: Action failed: the one line of the failure
Origin: /tmp/playbook.yml:7:7

5     - ansible.builtin.debug:
6         msg: before
7     - ansible.builtin.fail:
        ^ column 7

fatal: [localhost]: FAILED! => {"changed": false, "msg": "the one line of the failure"}

PLAY RECAP *********************************************************************
localhost                  : ok=1    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0
"""

FAILED_INVENTORY_OUTPUT = """[WARNING]: Failed to parse inventory with 'ansible_collections.ansible.builtin.plugins.inventory.generator' \
plugin: '_AnsibleTaggedInt' object has no attribute 'values'

Failed to parse inventory with 'ansible_collections.ansible.builtin.plugins.inventory.generator' plugin.

<<< caused by >>>

'_AnsibleTaggedInt' object has no attribute 'values'
Origin: <inventory plugin 'ansible_collections.ansible.builtin.plugins.inventory.generator' with source \
'/tmp/hosts.generator.yml'>

[WARNING]: Unable to parse /tmp/hosts.generator.yml as an inventory source
[ERROR]: No inventory was parsed, please check your configuration and options.
"""  # a line that ends in a backslash goes on in the next one, as Ansible printed it


def test_a_failed_task_gives_its_msg():
    outcome = read_ansible_output(2, FAILED_PLAYBOOK_OUTPUT)
    assert outcome.failed and outcome.msg == 'the one line of the failure' and outcome.crash is None


def test_an_inventory_source_that_fails_gives_the_plugins_message():
    """What ansible-inventory prints when a plugin raises: its message, not a warning."""
    outcome = read_ansible_output(1, FAILED_INVENTORY_OUTPUT)
    # The plugin's own error, not ansible-inventory's closing one.
    assert outcome.failed and outcome.msg == "'_AnsibleTaggedInt' object has no attribute 'values'"
    assert not [warning for warning in outcome.warnings if 'Failed to parse' in warning]


FAKE_SOURCE = '''
import asyncio
import logging

async def main(queue, args):
    if args["api_url"].startswith("http://"):
        logging.getLogger("fake_source").warning("unencrypted %s", args["api_url"])
    if args.get("fail"):
        raise RuntimeError("GET /api/v1/monitors failed: one clear line")
    if args.get("defect"):
        return args["missing"]
    await queue.put({"monitor": 1})
    await asyncio.sleep(3600)
'''


@pytest.mark.parametrize('extra, failed, msg, crash', [
    ({}, False, '', False),
    ({'fail': True}, True, 'GET /api/v1/monitors failed: one clear line', False),
    ({'defect': True}, True, "'missing'", True),
])
def test_an_event_source_is_driven_as_ansible_rulebook_drives_it(tmp_path, extra, failed, msg, crash):
    source = tmp_path / 'fake_source.py'
    source.write_text(FAKE_SOURCE)
    client = EventSourceClient('fake source', str(source), extra, timeout=10)
    outcome = client.run({'api_url': 'http://uptime.example.com', 'api_key': 'k'}, {})
    assert outcome.failed is failed and outcome.msg == msg and bool(outcome.crash) is crash
    assert outcome.warnings == ['unencrypted http://uptime.example.com']
