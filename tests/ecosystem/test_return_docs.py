"""Every key the modules return is documented in their RETURN block (nested keys too, where RETURN lists
what a dict or list element ``contains``), and every key documented as ``returned: always`` is returned.

The modules run against the emulator in one playbook that covers each module's kinds of result (create,
update, check mode, removal, info, export, bulk sync, gathered); their registered results are compared
with RETURN."""

from __future__ import annotations

import ast
import json
import os

import yaml

from ecosystem_support import REPO_ROOT

MODULES_DIR = os.path.join(REPO_ROOT, 'plugins', 'modules')
# Keys Ansible adds to every result, or that modules return by convention without documenting them.
COMMON_KEYS = {'changed', 'failed', 'diff', 'invocation', 'msg', 'warnings', 'deprecations', 'skipped', 'skip_reason'}

PLAYBOOK = '''\
- name: Results of every module
  hosts: localhost
  gather_facts: false
  tasks:
    - name: monitor, create
      uptime.monitoring.monitor:
        name: shop
        url: https://shop.example.com/health
        interval: 60
        alert_condition: url_no_text
        alert_text_lookup: OK
        request_headers: [{key: X-Api-Token, value: secret-token}]
        request_auth_username: uptime
        request_auth_password: secret-password
        maintenance_start_at: "2030-01-01T01:00:00"
        maintenance_end_at: "2030-01-01T02:00:00"
        alerts: [{key: email, value: oncall@example.com}]
      register: monitor_create

    - name: monitor, update
      uptime.monitoring.monitor:
        name: shop
        paused: true
      register: monitor_update

    - name: monitor, create in check mode
      uptime.monitoring.monitor:
        name: blog
        url: https://blog.example.com/
        interval: 300
      check_mode: true
      register: monitor_check

    - name: monitor_info, all
      uptime.monitoring.monitor_info:
      register: monitor_info_all

    - name: monitor_info, export
      uptime.monitoring.monitor_info:
        export: true
      register: monitor_info_export

    - name: monitors, merged
      uptime.monitoring.monitors:
        config:
          - {name: shop, url: https://shop.example.com/health, interval: 180}
          - {name: api, url: https://api.example.com/, interval: 60}
      register: monitors_merged

    - name: monitors, overridden in check mode
      uptime.monitoring.monitors:
        state: overridden
        config:
          - {name: api, url: https://api.example.com/, interval: 60}
      check_mode: true
      register: monitors_check

    - name: monitors, gathered
      uptime.monitoring.monitors:
        state: gathered
      register: monitors_gathered

    - name: incident, open
      uptime.monitoring.incident:
        monitor: api
        started_at: "2026-01-01T08:00:00"
        cause: Timeouts
      register: incident_open

    - name: incident, acknowledge in check mode
      uptime.monitoring.incident:
        monitor: api
        state: acknowledged
      check_mode: true
      register: incident_check

    - name: incident, resolve
      uptime.monitoring.incident:
        monitor: api
        state: resolved
        comment: Fixed
      register: incident_resolve

    - name: incident_info, all
      uptime.monitoring.incident_info:
      register: incident_info_all

    - name: incident, delete
      uptime.monitoring.incident:
        id: "{{ incident_open.incident.id }}"
        state: absent
      register: incident_absent

    - name: monitor, delete
      uptime.monitoring.monitor:
        name: shop
        state: absent
      register: monitor_absent

    - name: Save the results
      ansible.builtin.copy:
        dest: "{{ lookup('ansible.builtin.env', 'PWD') }}/results.json"
        mode: "0600"
        content: >-
          {{ {'monitor': [monitor_create, monitor_update, monitor_check, monitor_absent],
              'monitor_info': [monitor_info_all, monitor_info_export],
              'monitors': [monitors_merged, monitors_check, monitors_gathered],
              'incident': [incident_open, incident_check, incident_resolve, incident_absent],
              'incident_info': [incident_info_all]} | to_json }}
'''


def return_doc(module):
    with open(os.path.join(MODULES_DIR, module + '.py'), encoding='utf-8') as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, 'id', None) == 'RETURN' for target in node.targets):
            return yaml.safe_load(ast.literal_eval(node.value)) or {}
    raise AssertionError('%s has no RETURN' % module)


def undocumented(value, doc, path):
    """Paths of keys in ``value`` that ``doc`` (a RETURN entry) does not list, where it lists what it contains."""
    contains = doc.get('contains')
    if not contains:
        return []
    found = []
    items = [value] if isinstance(value, dict) else [item for item in value or [] if isinstance(item, dict)]
    for item in items:
        for key, nested in item.items():
            if key not in contains:
                found.append('%s.%s' % (path, key))
            elif isinstance(nested, (dict, list)):
                found += undocumented(nested, contains[key], '%s.%s' % (path, key))
    return sorted(set(found))


def test_every_returned_key_is_documented(ansible):
    ansible.playbook(ansible.write('results.yml', PLAYBOOK), '--diff')
    with open(os.path.join(ansible.workdir, 'results.json'), encoding='utf-8') as handle:
        results = json.load(handle)

    modules = sorted(name[:-3] for name in os.listdir(MODULES_DIR) if name.endswith('.py') and not name.startswith('_'))
    assert sorted(results) == modules, 'cover every module in PLAYBOOK'

    problems = []
    for module, module_results in results.items():
        doc = return_doc(module)
        always = {key for key, entry in doc.items() if entry.get('returned') == 'always'}
        for number, result in enumerate(module_results):
            where = '%s result %d' % (module, number)
            extra = set(result) - set(doc) - COMMON_KEYS
            if extra:
                problems.append('%s: %s not in RETURN' % (where, sorted(extra)))
            missing = always - set(result)
            if missing:
                problems.append('%s: %s documented as returned always, not returned' % (where, sorted(missing)))
            for key in set(result) & set(doc):
                for path in undocumented(result[key], doc[key], key):
                    problems.append('%s: %s not in RETURN' % (where, path))
    assert not problems, '\n'.join(problems)
