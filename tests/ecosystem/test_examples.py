"""The EXAMPLES of every module are real: each module's EXAMPLES block, taken from its source, runs as the tasks of
one playbook against the emulator seeded with the records they refer to, ids included; what they did to the account
is checked (those that only read, ``writes=False``, change and write nothing), and every key a task returns is in its
RETURN block (nested keys too, where RETURN lists what an element ``contains``), every key ``returned: always`` returned.
That a second run changes nothing is the idempotence law of tests/laws/; the values returned, the integration targets'.
A new module needs an entry in SPECS (the test that compares SPECS with plugins/modules/ says so)."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from ecosystem_support import (
    assert_changed_nothing,
    create_incident,
    create_monitor,
    documentation,
    incident_of,
    module_names,
    monitors_by_name,
    records,
    update_monitor,
)


# Keys Ansible adds to every result, or that modules return by convention without documenting them.
COMMON_KEYS = {'changed', 'failed', 'diff', 'invocation', 'msg', 'warnings', 'deprecations', 'skipped', 'skip_reason'}


def undocumented(value, doc, path):
    """Paths of keys in ``value`` that ``doc`` (a RETURN entry) does not list, where it lists what it contains."""
    contains, found = doc.get('contains'), []
    for item in ([value] if isinstance(value, dict) else [item for item in value or [] if isinstance(item, dict)]) if contains else []:
        for key, nested in item.items():
            if key not in contains:
                found.append('%s.%s' % (path, key))
            elif isinstance(nested, (dict, list)):
                found += undocumented(nested, contains[key], '%s.%s' % (path, key))
    return sorted(set(found))


def return_problems(name, result):
    """What the result of a task of the module ``name`` holds that its RETURN leaves out, or lacks of what it promises."""
    doc = yaml.safe_load(documentation(name, 'RETURN'))
    extra = set(result) - set(doc) - COMMON_KEYS
    missing = {key for key, entry in doc.items() if entry.get('returned') == 'always'} - set(result)
    return ((['%s not in RETURN' % sorted(extra)] if extra else []) + (['%s returned always, not returned' % sorted(missing)] if missing else [])
            + [path + ' not in RETURN' for key in set(result) & set(doc) for path in undocumented(result[key], doc[key], key)])


def seed_monitors_up_to(emulator, monitor_id, named):
    """Create monitors until the one with ``monitor_id`` exists; ``named`` maps ids to names (others are fillers)."""
    created = {}
    for number in range(1, monitor_id + 1):
        record = create_monitor(emulator, named.get(number, 'filler-%02d' % number))
        assert int(record['id']) == number, 'the emulator numbers monitors from 1 after a reset'
        created[record['name']] = record
    return created


# Per module: seed(emulator) makes what the examples refer to, vars are the play's variables the examples use, asserts
# are checked (in the same play) on what the examples registered, check(emulator, workdir) looks at the account
# afterwards, and writes tells whether the examples change the account (examples that read change and write nothing,
# re-applying monitor_info's export included).

def seed_monitor(emulator):
    # The maintenance examples address blog and staging (staging has a window to close), "Rename a monitor by id"
    # renames monitor 42 and "Remove a monitor" removes old-shop.
    created = seed_monitors_up_to(emulator, 42, {1: 'blog', 2: 'staging', 3: 'old-shop', 42: 'shop-old'})
    update_monitor(emulator, created['staging']['id'], maintenance_start_at='2026-10-01T01:00:00',
                   maintenance_end_at='2026-10-01T02:00:00')


def check_monitor(emulator, workdir):  # pylint: disable=unused-argument
    monitors = monitors_by_name(emulator)
    shop = monitors['shop']
    assert shop['status'] != 'paused'
    # The account's time zone is UTC: the local times are stored as they are.
    assert (shop['maintenance_start_at'][:19], shop['maintenance_end_at'][:19]) == ('2026-12-01T22:00:00', '2026-12-01T23:30:00')
    assert sorted(alert['key'] for alert in shop['alerts']) == ['email', 'slack']
    blog = monitors['blog']
    assert (blog['maintenance_start_at'][:19], blog['maintenance_end_at'][:19]) == ('2026-12-02T03:00:00', '2026-12-02T04:30:00')
    staging = monitors['staging']
    assert staging['status'] == 'paused'
    assert (staging['maintenance_start_at'], staging['maintenance_end_at']) == (None, None)
    assert int(monitors['shop-eu']['id']) == 42
    assert 'shop-old' not in monitors
    assert 'old-shop' not in monitors


def seed_monitor_info(emulator):
    create_monitor(emulator, 'shop', url='https://shop.example.com/health', interval=60,
                   alerts=[{'key': 'email', 'value': 'oncall@example.com'}])
    emulator.check(create_monitor(emulator, 'blog', url='https://blog.example.com/')['id'], 'offline')
    create_monitor(emulator, 'admin', url='https://admin.example.org/', request_auth_username='uptime',
                   request_auth_password='not-exported')


def check_monitors(emulator, workdir):
    assert sorted(monitors_by_name(emulator)) == ['blog', 'shop']
    with open(os.path.join(workdir, 'monitors.yml'), encoding='utf-8') as handle:
        saved = yaml.safe_load(handle)
    assert [entry['name'] for entry in saved] == ['blog', 'shop']


def seed_incident(emulator):
    # "Record a past incident ... by monitor id" uses monitor 7, which is not the shop; "Delete an incident by id"
    # deletes incident 3, one of the blog's past incidents.
    created = seed_monitors_up_to(emulator, 7, {1: 'shop', 2: 'payments', 3: 'blog', 7: 'api'})
    for day in (1, 2, 3):
        incident = create_incident(emulator, created['blog']['id'], '2026-10-%02dT08:00:00' % day,
                                   ended_at='2026-10-%02dT08:30:00' % day, cause='Timeout')
        assert int(incident['id']) == day, 'the emulator numbers incidents from 1 after a reset'


def check_incident(emulator, workdir):  # pylint: disable=unused-argument
    assert [(incident['monitor']['id'], incident['started_at'][:19], incident['status'], incident['duration'])
            for incident in incident_of(emulator, 'api')] == [(7, '2026-11-19T22:10:00', 'resolved', 1800)]
    # The shop's incident was opened, acknowledged and resolved once, the comments of both kept.
    assert [(incident['started_at'][:19], incident['cause'], incident['status']) for incident in incident_of(emulator, 'shop')] == [
        ('2026-11-20T08:15:00', 'Database connection pool exhausted', 'resolved')]
    # Incident 3 was deleted, the blog's others are left and its recurrence is recorded; the payments monitor has one
    # incident, started now.
    assert sorted((incident['started_at'][:19], incident['status']) for incident in incident_of(emulator, 'blog')) == [
        ('2026-10-01T08:00:00', 'resolved'), ('2026-10-02T08:00:00', 'resolved'), ('2026-11-02T08:00:00', 'unresolved')]
    assert [(incident['cause'], incident['status']) for incident in incident_of(emulator, 'payments')] == [('Payment provider unreachable', 'unresolved')]
    assert len(records(emulator, '/api/v1/incidents')) == 6


def seed_incident_info(emulator):
    shop = create_monitor(emulator, 'shop')
    api = create_monitor(emulator, 'api')
    causes = ['Timeout'] * 10 + ['Certificate expired']
    for day, cause in enumerate(causes, start=1):
        create_incident(emulator, shop['id'], '2026-01-%02dT08:00:00' % day, ended_at='2026-01-%02dT08:30:00' % day, cause=cause)
    ongoing = create_incident(emulator, api['id'], '2026-02-01T08:00:00', cause='Upstream outage')
    assert int(ongoing['id']) == 12, '"One incident by id" reads incident 12'


SPECS = {
    'monitor': dict(seed=seed_monitor, check=check_monitor, writes=True, vars={}, asserts=[]),
    'monitor_info': dict(seed=seed_monitor_info, check=None, writes=False, vars={}, asserts=[
        "all_monitors.monitors | map(attribute='name') | sort == ['admin', 'blog', 'shop']",
        "example_monitors.monitors | map(attribute='name') | list == ['blog', 'shop']",
        "shop.monitors | map(attribute='name') | list == ['shop']",
        "down.monitors | map(attribute='name') | list == ['blog']",
        "exported.export | length == 3",
        "exported.export_masked.admin | sort == ['request_auth_password', 'request_auth_username']",
    ]),
    'monitors': dict(seed=lambda emulator: [create_monitor(emulator, name) for name in ('legacy', 'old-shop', 'old-blog')],
                     check=check_monitors, writes=True, vars={
        # The monitors the first example made, as an inventory would list them: the sync keeps them as they are.
        'monitors_from_inventory': [
            {'name': 'shop', 'url': 'https://shop.example.com/health', 'interval': 60,
             'alerts': [{'key': 'email', 'value': 'oncall@example.com'}]},
            {'name': 'blog', 'url': 'https://blog.example.com/', 'interval': 300},
        ],
    }, asserts=[
        "not plan.changed",
        "plan.summary.unchanged == 2",
        "wipe.summary.deleted == 2",
        "account.gathered | map(attribute='name') | list == ['blog', 'shop']",
    ]),
    'incident': dict(seed=seed_incident, check=check_incident, writes=True, vars={}, asserts=[
        "resolved.incident.status == 'resolved'",
        "resolved.incident.monitor_name == 'shop'",
        "resolved.incident.comment is match('On it\\n\\[[0-9T:-]+Z\\] Pool size raised, connections back to normal$')",
    ]),
    'incident_info': dict(seed=seed_incident_info, check=None, writes=False, vars={}, asserts=[
        "all_incidents.incidents | length == 12",
        "to_acknowledge.incidents | map(attribute='id') | list == [12]",
        "shop_incidents.incidents | length == 11",
        "shop_incidents.incidents | map(attribute='started_at') | list == shop_incidents.incidents | map(attribute='started_at') | sort",
        "certificate_incidents.incidents | map(attribute='cause') | list == ['Certificate expired']",
        "one.incidents | map(attribute='id') | list == [12]",
        "ongoing.incidents | map(attribute='id') | list == [12]",
        "resolved_last_day.incidents == []",
        "january.incidents | length == 11",
        "january.incidents | map(attribute='cause') | list | last == 'Certificate expired'",
    ]),
}


def test_every_module_has_a_spec():
    assert sorted(SPECS) == module_names()


@pytest.mark.parametrize('module', sorted(SPECS))
def test_examples(ansible, emulator, module):
    spec = SPECS[module]
    tasks = yaml.safe_load(documentation(module, 'EXAMPLES'))
    assert isinstance(tasks, list), 'EXAMPLES of %s is not a list of tasks' % module
    assert tasks, 'EXAMPLES of %s is not a list of tasks' % module
    names = [task['name'] for task in tasks]
    assert all(names), 'every example needs a name of its own'
    assert len(set(names)) == len(names), 'every example needs a name of its own'

    spec['seed'](emulator)
    emulator.clear_log()

    play = {'name': 'EXAMPLES of uptime.monitoring.%s' % module, 'hosts': 'localhost', 'gather_facts': False,
            'vars': spec['vars'], 'tasks': list(tasks)}
    registered = []  # (module, variable) of each task of a module of the collection, its result checked against RETURN
    for number, task in enumerate(tasks):
        for key in [key for key in task if key.startswith('uptime.monitoring.')]:
            registered.append((key.split('.')[-1], task.setdefault('register', 'result_%d' % number)))
    if spec['asserts']:
        play['tasks'].append({'name': 'Check what the examples registered',
                              'ansible.builtin.assert': {'that': spec['asserts'], 'quiet': True}})
    play['tasks'].append({'name': 'Keep the results', 'changed_when': False, 'ansible.builtin.copy': {
        'dest': "{{ lookup('ansible.builtin.env', 'PWD') }}/results.json", 'mode': '0600',
        'content': '{{ [%s] | to_json }}' % ', '.join(variable for dummy, variable in registered)}})
    playbook = ansible.write('examples.yml', yaml.safe_dump([play], sort_keys=False))

    run = ansible.playbook(playbook, '--diff')

    for name in names:  # every example ran (none was skipped or left out)
        assert 'TASK [%s]' % name in run.output, run
    assert 'skipping:' not in run.output, run
    with open(os.path.join(ansible.workdir, 'results.json'), encoding='utf-8') as handle:
        results = json.load(handle)
    problems = ['%s (%s): %s' % (variable, name, problem) for (name, variable), result in zip(registered, results)
                for problem in return_problems(name, result)]
    assert not problems, '\n'.join(problems)
    if spec['check']:
        spec['check'](emulator, ansible.workdir)
    if not spec['writes']:
        assert_changed_nothing(run)
        assert emulator.writes() == [], run


LOOKUPS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'plugins', 'lookup')
LOOKUP_SECRETS = ('lookup-pass-4471', 'Bearer lookup-token-8812')
# What each lookup must refuse in one line naming the option, before any request.
LOOKUP_REFUSALS = [('monitors', "status='down'", 'status'), ('monitors', "fields=['name', 'cause']", 'fields'),
                   ('incidents', "status='ongoing', id=3", 'id'), ('incidents', "started_since='soon'", 'started_since'),
                   ('monitors', "per_page=20", 'per_page')]


def test_lookup_examples_run_masked_and_bad_input_fails_before_any_request(ansible, emulator):
    """The lookups' EXAMPLES, in one playbook with a full query of each (their results checked for secrets) and a bad
    option of each (refused naming it): one ansible-playbook run."""
    create_monitor(emulator, 'shop', request_auth_username='robot', request_auth_password=LOOKUP_SECRETS[0],
                   request_headers=[{'key': 'Authorization', 'value': LOOKUP_SECRETS[1]}])
    api = create_monitor(emulator, 'api')
    emulator.check(api['id'], 'offline', cause='HTTP 503')
    emulator.clear_log()
    tasks = []
    for name in ('monitors', 'incidents'):
        tasks += yaml.safe_load(documentation(os.path.join(LOOKUPS_DIR, name + '.py'), 'EXAMPLES'))
    tasks.append({'name': 'Keep what the lookups return', 'changed_when': False, 'ansible.builtin.copy': {
        'dest': "{{ lookup('ansible.builtin.env', 'PWD') }}/lookups.json", 'mode': '0600',
        'content': "{{ {'monitors': query('uptime.monitoring.monitors'), 'incidents': query('uptime.monitoring.incidents'),"
                   " 'down': query('uptime.monitoring.monitors', status='offline', fields=['name', 'status'])} | to_json }}"}})
    for number, (name, options, dummy) in enumerate(LOOKUP_REFUSALS):
        tasks.append({'name': 'Refused %d' % number, 'ignore_errors': True, 'register': 'refused_%d' % number,
                      'ansible.builtin.debug': {'msg': "{{ query('uptime.monitoring.%s', %s) }}" % (name, options)}})
    tasks.append({'name': 'Keep the refusals', 'changed_when': False, 'ansible.builtin.copy': {
        'dest': "{{ lookup('ansible.builtin.env', 'PWD') }}/refusals.json", 'mode': '0600',
        'content': '{{ [%s] | map(attribute="msg") | to_json }}' % ', '.join('refused_%d' % n for n in range(len(LOOKUP_REFUSALS)))}})
    play = {'name': 'EXAMPLES of the lookups', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}
    run = ansible.playbook(ansible.write('lookups.yml', yaml.safe_dump([play], sort_keys=False)))

    assert 'skipping:' not in run.output, run
    assert 'msg": "api"' in run.output, run  # what is down, said by the first example
    assert 'api since ' in run.output, run
    for secret in LOOKUP_SECRETS:
        assert secret not in run.output, secret
    with open(os.path.join(ansible.workdir, 'lookups.json'), encoding='utf-8') as handle:
        text = handle.read()
    for secret in LOOKUP_SECRETS:
        assert secret not in text, secret
    found = json.loads(text)
    assert [monitor['name'] for monitor in found['monitors']] == ['api', 'shop']
    assert found['monitors'][1]['request_auth_password'] == '********'
    assert [(incident['monitor_name'], incident['cause']) for incident in found['incidents']] == [('api', 'HTTP 503')]
    assert found['down'] == [{'name': 'api', 'status': 'offline'}]
    with open(os.path.join(ansible.workdir, 'refusals.json'), encoding='utf-8') as handle:
        refusals = json.load(handle)
    for (name, options, option), message in zip(LOOKUP_REFUSALS, refusals):
        assert message.count('\n') == 0, message
        assert 'uptime.monitoring.%s' % name in message, message
        assert option in message, (options, message)
    assert emulator.writes() == [], run
