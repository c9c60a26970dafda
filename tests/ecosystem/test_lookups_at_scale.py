"""The lookups as ansible-playbook runs them for many hosts: Ansible forks a worker per host and task, and the forks of
one run share what a lookup read (one read however many hosts ask); a lookup after a module's write in the worker
reads the write; and a play that names its account in the variables the lookups read, with ``module_defaults`` from
them, reads one account with both (a variable's template rendered, as a task's are), whatever account the environment
names."""

from __future__ import annotations

from ecosystem_support import OTHER_KEY, PRIMARY_KEY, create_monitor

WHEN_PLAY = '''
- hosts: all
  gather_facts: false
  tasks:
    - name: Only while the shop is watched
      ansible.builtin.debug:
        msg: watched
      when: query('uptime.monitoring.monitors', name='shop', fields=['status']) | length > 0
'''


def monitor_reads(emulator):
    return [entry for entry in emulator.log() if entry['method'] == 'GET' and entry['path'].startswith('/api/v1/monitors')]


def test_the_forks_of_a_run_share_one_read(ansible, emulator):
    create_monitor(emulator, 'shop')
    ansible.write('one', 'host01 ansible_connection=local\n')
    ansible.write('many', ''.join('host%02d ansible_connection=local\n' % number for number in range(1, 31)))
    playbook = ansible.write('when.yml', WHEN_PLAY)
    emulator.clear_log()
    ansible.playbook(playbook, inventory='one')
    once = len(monitor_reads(emulator))
    emulator.clear_log()
    # A bound no machine's speed reaches: the reads are counted, not the time they take.
    run = ansible.playbook(playbook, '--forks', '10', inventory='many', env={'UPTIME_LOOKUP_CACHE_SECONDS': '3600'})
    assert run.output.count('"msg": "watched"') == 30, run
    assert once >= 1 and len(monitor_reads(emulator)) <= once, (once, monitor_reads(emulator))


OWN_WRITE_PLAY = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Read the shop's interval
      ansible.builtin.set_fact:
        before: "{{ query('uptime.monitoring.monitors', name='shop', fields=['interval']) | map(attribute='interval') | first }}"
    - name: Change it
      uptime.monitoring.monitor:
        name: shop
        interval: 600
    - name: Read it again
      ansible.builtin.assert:
        that:
          - before | int == 300
          - query('uptime.monitoring.monitors', name='shop', fields=['interval']) | map(attribute='interval') | first == 600
'''


def test_a_lookup_after_a_write_reads_the_write(ansible, emulator):
    create_monitor(emulator, 'shop', interval=300)
    ansible.playbook(ansible.write('own.yml', OWN_WRITE_PLAY))


ONE_ACCOUNT_PLAY = '''
- hosts: localhost
  gather_facts: false
  vars:
    uptime_api_url: %(url)s
    uptime_api_key: "{{ key_from_the_vault }}"
    key_from_the_vault: %(key)s
  module_defaults:
    group/uptime.monitoring.all:
      api_url: "{{ uptime_api_url }}"
      api_key: "{{ uptime_api_key }}"
  tasks:
    - name: Read the monitors with the module
      uptime.monitoring.monitor_info:
        fields: [name]
      register: read
    - name: And with the lookup
      ansible.builtin.assert:
        that:
          - read.monitors | map(attribute='name') | list == ['mine']
          - query('uptime.monitoring.monitors', fields=['name']) | map(attribute='name') | list == ['mine']
'''


def test_a_play_naming_its_account_once_reads_it_with_modules_and_lookups(ansible, emulator):
    create_monitor(emulator, 'mine')
    create_monitor(emulator, 'theirs', api_key=OTHER_KEY)
    playbook = ansible.write('account.yml', ONE_ACCOUNT_PLAY % {'url': emulator.url, 'key': PRIMARY_KEY})
    ansible.playbook(playbook, api_key=OTHER_KEY)  # the environment names the other account
