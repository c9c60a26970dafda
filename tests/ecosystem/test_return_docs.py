"""Every key the modules return is documented in their RETURN block (nested keys too, where RETURN lists what a dict
or list element ``contains``), and every key documented as ``returned: always`` is returned. One playbook covers each
module's kinds of result (create, update, check mode, removal, info, export, bulk sync, gathered); that the documented
values are right is checked by the integration targets."""

from __future__ import annotations

import json
import os

import yaml

from ecosystem_support import documentation, module_names

# Keys Ansible adds to every result, or that modules return by convention without documenting them.
COMMON_KEYS = {'changed', 'failed', 'diff', 'invocation', 'msg', 'warnings', 'deprecations', 'skipped', 'skip_reason'}
# (module, its arguments, check mode), in order; the results are kept per module.
TASKS = [
    ('monitor', dict(name='shop', url='https://shop.example.com/health', interval=60, alert_condition='url_no_text',
                     alert_text_lookup='OK', request_headers=[{'key': 'X-Api-Token', 'value': 'secret-token'}],
                     request_auth_username='uptime', request_auth_password='secret-password',
                     maintenance_start_at='2030-01-01T01:00:00', maintenance_end_at='2030-01-01T02:00:00',
                     alerts=[{'key': 'email', 'value': 'oncall@example.com'}]), False),
    ('monitor', dict(name='shop', paused=True), False),
    ('monitor', dict(name='blog', url='https://blog.example.com/', interval=300), True),
    ('monitor_info', {}, False),
    ('monitor_info', dict(export=True), False),
    ('monitors', dict(config=[dict(name='shop', url='https://shop.example.com/health', interval=180),
                              dict(name='api', url='https://api.example.com/', interval=60)]), False),
    ('monitors', dict(state='overridden', config=[dict(name='api', url='https://api.example.com/', interval=60)]), True),
    ('monitors', dict(state='gathered'), False),
    ('incident', dict(monitor='api', started_at='2026-01-01T08:00:00', cause='Timeouts'), False),
    ('incident', dict(monitor='api', state='acknowledged'), True),
    ('incident', dict(monitor='api', state='resolved', comment='Fixed'), False),
    ('incident_info', {}, False),
    ('incident', dict(id='{{ result_8.incident.id }}', state='absent'), False),
    ('monitor', dict(name='shop', state='absent'), False),
]


def undocumented(value, doc, path):
    """Paths of keys in ``value`` that ``doc`` (a RETURN entry) does not list, where it lists what it contains."""
    contains, found = doc.get('contains'), []
    if not contains:
        return found
    for item in [value] if isinstance(value, dict) else [item for item in value or [] if isinstance(item, dict)]:
        for key, nested in item.items():
            if key not in contains:
                found.append('%s.%s' % (path, key))
            elif isinstance(nested, (dict, list)):
                found += undocumented(nested, contains[key], '%s.%s' % (path, key))
    return sorted(set(found))


def test_every_returned_key_is_documented(ansible):
    tasks = [{'name': 'Task %d' % number, 'uptime.monitoring.' + module: arguments, 'check_mode': check,
              'register': 'result_%d' % number} for number, (module, arguments, check) in enumerate(TASKS)]
    tasks.append({'name': 'Save the results', 'ansible.builtin.copy': {
        'dest': "{{ lookup('ansible.builtin.env', 'PWD') }}/results.json", 'mode': '0600',
        'content': '{{ [%s] | to_json }}' % ', '.join('result_%d' % number for number in range(len(TASKS)))}})
    play = [{'name': 'Results of every module', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]
    ansible.playbook(ansible.write('results.yml', yaml.safe_dump(play)), '--diff')
    with open(os.path.join(ansible.workdir, 'results.json'), encoding='utf-8') as handle:
        results = json.load(handle)
    assert sorted({task[0] for task in TASKS}) == module_names(), 'cover every module in TASKS'

    problems = []
    for number, (task, result) in enumerate(zip(TASKS, results)):
        doc, where = yaml.safe_load(documentation(task[0], 'RETURN')), 'task %d (%s)' % (number, task[0])
        extra = set(result) - set(doc) - COMMON_KEYS
        missing = {key for key, entry in doc.items() if entry.get('returned') == 'always'} - set(result)
        problems += ['%s: %s not in RETURN' % (where, sorted(extra))] if extra else []
        problems += ['%s: %s documented as returned always, not returned' % (where, sorted(missing))] if missing else []
        problems += ['%s: %s not in RETURN' % (where, path) for key in set(result) & set(doc)
                     for path in undocumented(result[key], doc[key], key)]
    assert not problems, '\n'.join(problems)
