"""Defects the reliability tests found that are reported and not fixed yet.

Every test that shows one of them is an expected failure, strictly: while the defect
is there the test is counted as ``xfailed``; once it is fixed the test passes, pytest
reports ``XPASS(strict)`` and the run fails until the entry is removed from here (and
docs/reliability.md is regenerated). docs/reliability.md lists every entry.
"""

from __future__ import annotations

ISSUES = {
    'R1': {
        'title': 'A write the service applied, whose answer was lost or slow, fails without saying that it may '
                 'have been applied',
        'where': 'plugins/module_utils/_client.py: UptimeClient.request() marks an error ambiguous only for POST, '
                 '_read_response() only for a 5xx to a POST, and UptimeApiError.__str__ never mentions it; '
                 '_monitor.py/_incident.py _post() read back once, at once, while a slow POST is still being '
                 'processed',
        'fix': 'Mark every failed write (POST, PUT, PATCH, DELETE) ambiguous when the request was sent and no '
               'definite answer came back (timeout, dropped, truncated or unreadable answer, any 5xx), and have '
               'the message say "the service may have applied this change; run the task again". Better still for '
               'PUT and DELETE: after an ambiguous failure read the record and succeed when it already has the asked '
               'values (or is gone).',
    },
    'R2': {
        'title': 'At -vvv, the values of sensitive request headers are printed when the arguments fail the '
                 'argument spec',
        'where': 'plugins/module_utils/_module.py: AnsibleModule validates (and fails with invocation.module_args) '
                 'inside its constructor, before UptimeModule can call hide(); header values are not no_log options',
        'fix': 'Subclass AnsibleModule in _module.py and override _load_params(): call the parent, then add the '
               'values of sensitive headers (is_sensitive_name(key)) of request_headers and config[].request_headers, '
               'read defensively from the raw parameters, to self.no_log_values. It runs after no_log_values exists '
               'and before validation.',
    },
    'R3': {
        'title': 'monitors: a failure before the plan prints the secrets of config entries at -vvv',
        'where': 'plugins/module_utils/_bulk.py: MonitorSync.run() reads the account before plan() calls hide(), '
                 'and plan() hides entry by entry, stopping at the first invalid one',
        'fix': 'In MonitorSync.run(), hide MONITOR.secret_values() of every raw config entry before anything else '
               '(as the monitor module now does with its parameters); the R2 fix covers it too.',
    },
    'R4': {
        'title': 'monitors: the whole account is read before the config is validated',
        'where': 'plugins/module_utils/_bulk.py: MonitorSync.run() calls read_all() before plan(), which is where '
                 'duplicate names, state=replaced without url/interval and invalid values are found',
        'fix': 'Validate every entry (duplicate names, desired_state()) before read_all(), e.g. a validate_config() '
               'step split out of plan().',
    },
    'A1': {
        'title': 'ansible-core: a list item that is not a dict is refused without naming the option',
        'where': 'ansible-core 2.19 ArgumentSpecValidator: the no_log pre-scan (_list_no_log_values) converts list '
                 'items with check_type_dict and reports its bare "dictionary requested, could not parse JSON or '
                 'key=value" before the type check that would name the option',
        'fix': 'Not in this collection; reported for the record.',
    },
    'T1': {
        'title': 'Integration targets incident and incident_info put passwords in loop items, which Ansible prints '
                 'at -vvv',
        'where': 'tests/integration/targets/incident/tasks/main.yml and incident_info/tasks/seed.yml: the item '
                 '(with its password) is part of every loop result; loop_control.label only shortens the header',
        'fix': 'Keep the password out of the item, e.g. request_auth_password: "{{ (item.name == \'shop\') | '
               'ternary(shop_password, omit) }}" with shop_password a variable.',
    },
}

# Cells of the fault matrix (test_fault_matrix.py ids).
MATRIX = {
    'monitor create|as sent|slower than timeout': 'R1',
    'monitor create|fault persists|slower than timeout': 'R1',
    'monitor update|answer lost|500': 'R1',
    'monitor update|fault persists|slower than timeout': 'R1',
    'monitor delete|answer lost|500': 'R1',
    'monitor delete|fault persists|slower than timeout': 'R1',
    'incident create|as sent|slower than timeout': 'R1',
    'incident create|fault persists|slower than timeout': 'R1',
    'incident update|answer lost|500': 'R1',
    'incident delete|answer lost|500': 'R1',
    'monitors create|as sent|slower than timeout': 'R1',
    'monitors update|answer lost|500': 'R1',
    'monitors delete|answer lost|500': 'R1',
}

# Cases of test_bad_input.py (test ids).
BAD_INPUT = {
    'monitor: alerts not a list of dicts': 'A1',
    'monitors: the same name twice': 'R4',
    'monitors: replaced without url': 'R4',
    'monitors: invalid alert in the second entry': 'R4',
    'monitors: maintenance window backwards in an entry': 'R4',
}

# Output of test_secrets.py: (target, task name) -> issue.
SECRETS = {
    ('reliability_secrets', 'Invalid interval (refused by the argument spec), sensitive headers given'): 'R2',
    ('reliability_secrets', 'The bulk module cannot reach the service, secrets in its config'): 'R3',
    ('reliability_secrets', 'The bulk module with an invalid entry before an entry with secrets'): 'R3',
    ('incident', 'Three monitors, one with Basic authentication to see it masked'): 'T1',
    ('incident_info', 'Two monitors, one with a password to see it masked in the nested monitor'): 'T1',
}


def mark(pytest, table, key):
    """The strict xfail mark of a known issue, or no mark."""
    issue = table.get(key)
    if issue is None:
        return []
    return [pytest.mark.xfail(strict=True, reason='known issue %s: %s' % (issue, ISSUES[issue]['title']))]
