"""Defects the reliability tests found that are reported and not fixed yet.

Every test that shows one of them is an expected failure, strictly: while the defect
is there the test is counted as ``xfailed``; once it is fixed the test passes, pytest
reports ``XPASS(strict)`` and the run fails until the entry is removed from here (and
docs/reliability.md is regenerated). docs/reliability.md lists every entry.
"""

from __future__ import annotations

ISSUES = {
    'A1': {
        'title': 'ansible-core: a list item that is not a dict is refused without naming the option',
        'where': 'ansible-core 2.19 ArgumentSpecValidator: the no_log pre-scan (_list_no_log_values) converts list '
                 'items with check_type_dict and reports its bare "dictionary requested, could not parse JSON or '
                 'key=value" before the type check that would name the option',
        'fix': 'Not in this collection; reported for the record.',
    },
}

# Cells of the fault matrix (test_fault_matrix.py ids).
MATRIX = {
}

# Cases of test_bad_input.py (test ids).
BAD_INPUT = {
    'monitor: alerts not a list of dicts': 'A1',
}

# Output of test_secrets.py: (target, task name) -> issue.
SECRETS = {
}


def mark(pytest, table, key):
    """The strict xfail mark of a known issue, or no mark."""
    issue = table.get(key)
    if issue is None:
        return []
    return [pytest.mark.xfail(strict=True, reason='known issue %s: %s' % (issue, ISSUES[issue]['title']))]
