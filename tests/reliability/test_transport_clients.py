# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the transport tests read the output of Ansible's command lines (transport_clients.read_ansible_output)."""

from __future__ import annotations

import os
import subprocess

import pytest

from reliability_support import ansible_playbook, playbook_env
from transport_clients import EventSourceClient, read_ansible_output

FAILING_PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  connection: local
  tasks:
    - ansible.builtin.debug:
        msg: before
    - ansible.builtin.fail:
        msg: the one line of the failure
"""


def test_a_failed_task_gives_its_msg(tmp_path):
    playbook = tmp_path / 'playbook.yml'
    playbook.write_text(FAILING_PLAYBOOK)
    done = subprocess.run([ansible_playbook(), '-i', 'localhost,', str(playbook)],
                          env=playbook_env({'COLUMNS': '1000'}), capture_output=True, text=True, check=False,
                          timeout=120)
    outcome = read_ansible_output(done.returncode, done.stdout + done.stderr)
    assert outcome.failed and outcome.msg == 'the one line of the failure' and outcome.crash is None


def test_an_inventory_source_that_fails_gives_the_plugins_message(tmp_path):
    """What ansible-inventory prints when a plugin raises: its message, not a warning."""
    source = tmp_path / 'hosts.generator.yml'
    source.write_text('plugin: ansible.builtin.generator\nhosts:\n  name: "{{ nope }}"\nlayers: 3\n')
    env = playbook_env({'COLUMNS': '1000', 'ANSIBLE_INVENTORY_UNPARSED_FAILED': '1',
                        'ANSIBLE_INVENTORY_ENABLED': 'ansible.builtin.generator'})
    command = os.path.join(os.path.dirname(ansible_playbook()), 'ansible-inventory')
    done = subprocess.run([command, '-i', str(source), '--list'], env=env, capture_output=True, text=True,
                          check=False, timeout=120)
    outcome = read_ansible_output(done.returncode, done.stdout + done.stderr)
    # layers must be a list of dicts: the plugin's own error, not ansible-inventory's closing one.
    assert outcome.failed and outcome.msg and 'No inventory was parsed' not in outcome.msg
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
