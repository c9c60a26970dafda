"""The mechanical mutation measure: mutmut's mutants of the functions in SCOPE, against the laws and the unit tests that
run in this process. Run by the nox session ``mutmut`` (``./scripts/test.sh -s mutmut``; not in the default run: see
CONTRIBUTING.md); ``-- NAME_PATTERN...`` runs only the mutants whose names match.

mutmut copies the code it mutates to ``mutants/`` and calls each function through a trampoline that knows the
function by its module's name. The tests import the collection as ``ansible_collections.uptime.monitoring``, so the
collection is staged under ``build/mutmut/ansible_collections/uptime/monitoring`` and mutmut runs from
``build/mutmut`` with source paths under ``ansible_collections/``: the module names of the mutants are those the tests
import (from the work tree, through tests/conftest.py's link, every mutant would survive). The event source is loaded
with ``runpy`` by its tests, which mutmut cannot reach: its defects stay hand-written patches (tests/mutants/*.patch).

The score per file (killed of the mutants that some test reaches) is printed and written to
tests/output/mutmut/report.md, with the surviving mutants' names; ``mutmut show NAME`` in build/mutmut shows one.
"""

from __future__ import annotations

import collections
import fnmatch
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, 'build', 'mutmut')
COLLECTION = 'ansible_collections/uptime/monitoring'
REPORT = os.path.join(ROOT, 'tests', 'output', 'mutmut', 'report.md')
# The functions in scope, by file: the worker and check mode, masking, the URL, the cache key. Names as mutmut gives
# them: x_FUNCTION, or xǁCLASSǁMETHOD.
SCOPE = {
    'plugins/plugin_utils/_in_worker.py': ['*'],
    'plugins/module_utils/_module.py': ['x_shown_arguments', 'x_secrets_as_given', 'x_check_as_given', 'xǁ_MaskingModuleǁ*'],
    'plugins/module_utils/_schema.py': ['x_is_sensitive_name', 'x_mask_sensitive_header', 'x_url_authority', 'x_unencoded_user_info', 'x_host_problem',
                                        'x_url_secret_spans', 'x_mask_spans', 'x_mask_url', 'xǁFieldǁmask',
                                        'xǁFieldǁ_masked_item', 'xǁFieldǁmasked_group', 'xǁFieldǁis_masked_item',
                                        'xǁFieldǁholds_mask', 'xǁFieldǁsecret_values'],
    'plugins/inventory/monitors.py': ['xǁInventoryModuleǁ_cache_key', 'xǁInventoryModuleǁ_filters'],
}
TESTS = ['tests/laws', 'tests/unit/plugins/action', 'tests/unit/plugins/inventory',
         'tests/unit/plugins/module_utils/test_secrets.py', 'tests/unit/plugins/module_utils/test_monitor_validation.py']


def module_name(path):
    return '%s.%s' % (COLLECTION.replace('/', '.'), path[:-len('.py')].replace('/', '.'))


def patterns():
    return ['%s.%s__mutmut_*' % (module_name(path), function) for path, functions in SCOPE.items() for function in functions]


def configure():
    """Stage the collection and write mutmut's configuration beside it."""
    # mutmut copies the files it finds into mutants/ and never removes one: a file gone from the tree would stay.
    subprocess.run(['rm', '-rf', os.path.join(WORK, 'ansible_collections'), os.path.join(WORK, 'mutants')], check=True)
    subprocess.run([os.path.join(ROOT, 'scripts', 'stage-collection.sh'), WORK], check=True, stdout=subprocess.DEVNULL)
    lines = ['[mutmut]', 'source_paths =']
    lines += ['    %s/%s' % (COLLECTION, path) for path in SCOPE]
    lines += ['also_copy =', '    ansible_collections/', 'pytest_add_cli_args = -p no:cacheprovider -q',
              'pytest_add_cli_args_test_selection =']
    lines += ['    %s/%s' % (COLLECTION, path) for path in TESTS]
    with open(os.path.join(WORK, 'setup.cfg'), 'w', encoding='utf-8') as handle:
        handle.write('\n'.join(lines) + '\n')


def results():
    """{file: Counter of verdicts}, and the survivors' names."""
    listing = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'mutmut'), 'results', '--all', 'true'],
                             cwd=WORK, capture_output=True, text=True, check=True).stdout
    by_file, survivors = collections.defaultdict(collections.Counter), []
    for line in listing.splitlines():
        name, dummy, verdict = line.strip().rpartition(': ')
        path = next((path for path in SCOPE if name.startswith(module_name(path) + '.')), None)
        if path is None or not any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns()):
            continue
        by_file[path][verdict] += 1
        if verdict == 'survived':
            survivors.append(name)
    return by_file, survivors


def main(names):
    os.makedirs(WORK, exist_ok=True)
    configure()
    environment = dict(os.environ, HYPOTHESIS_PROFILE=os.environ.get('HYPOTHESIS_PROFILE', 'mutants'))
    run = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'mutmut'), 'run'] + (names or patterns()),
                         cwd=WORK, env=environment, stdout=subprocess.DEVNULL, check=False)
    by_file, survivors = results()
    rows = ['| File | Mutants | Killed | Survived | Other | Score |', '|---|---:|---:|---:|---:|---:|']
    for path in SCOPE:
        counts = by_file.get(path, collections.Counter())
        total, killed, survived = sum(counts.values()), counts['killed'], counts['survived']
        reached = killed + survived
        score = '%.0f %%' % (100.0 * killed / reached) if reached else '-'
        rows.append('| `%s` | %d | %d | %d | %d | %s |' % (path, total, killed, survived, total - reached, score))
    text = '\n'.join(rows + ['', 'Survivors (`mutmut show NAME` in build/mutmut):', ''] + ['- `%s`' % name for name in survivors])
    print(text)
    os.makedirs(os.path.dirname(REPORT), exist_ok=True)
    with open(REPORT, 'w', encoding='utf-8') as handle:
        handle.write(text + '\n')
    return run.returncode


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
