"""The mutation check: each defect of tests/mutants/*.patch, put into a copy of the work tree, must make the laws of its
promise fail. Run by the nox session ``mutants`` (``./scripts/test.sh -s mutants``, ``-- NAME...`` for some of them).

A patch begins with its own header, which ``git apply`` passes over:

    Promise: what it breaks
    Laws: the tests (files or node ids, under tests/) that must fail with it
    Defect: the defect in one line

Each defect runs its laws (the ``mutants`` profile: the CI's examples, no shrinking) in a staged copy with the patch
applied; pytest must end with failed tests (exit 1). A defect the laws pass is a gap in a generator or a model: fix
that, not the patch. The table of results goes to the output and to tests/output/mutants/report.md.
"""

from __future__ import annotations

import concurrent.futures
import glob
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATCHES = os.path.join(ROOT, 'tests', 'mutants')
REPORT = os.path.join(ROOT, 'tests', 'output', 'mutants', 'report.md')
WORKERS = 2
TIMEOUT = 900


def header(path):
    fields = {}
    with open(path, encoding='utf-8') as handle:
        for line in handle:
            if not line.strip():
                break
            key, dummy, value = line.partition(':')
            fields[key.strip().lower()] = value.strip()
    return fields


def check(path):
    """``(name, verdict, seconds, tail of the output)``: caught (the laws failed), missed (they passed) or broken."""
    name = os.path.basename(path)[:-len('.patch')]
    fields = header(path)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix='mutant-') as scratch:
        copy = subprocess.run([os.path.join(ROOT, 'scripts', 'stage-collection.sh'), scratch], check=True,
                              capture_output=True, text=True).stdout.strip().splitlines()[-1]
        applied = subprocess.run(['git', 'apply', path], cwd=copy, capture_output=True, text=True, check=False)
        if applied.returncode:
            return name, 'broken: the patch does not apply', 0.0, applied.stderr
        environment = dict(os.environ, HYPOTHESIS_PROFILE='mutants', UPTIME_COLLECTIONS=scratch)
        run = subprocess.run([sys.executable, '-m', 'pytest', '-x', '-q', '-p', 'no:cacheprovider', *fields['laws'].split()],
                             cwd=copy, env=environment, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    seconds = time.monotonic() - started
    verdict = {1: 'caught', 0: 'MISSED'}.get(run.returncode, 'broken: pytest ended with %d' % run.returncode)
    return name, verdict, seconds, '\n'.join((run.stdout + run.stderr).splitlines()[-15:])


def main(names):
    paths = sorted(glob.glob(os.path.join(PATCHES, '*.patch')))
    if names:
        paths = [path for path in paths if any(os.path.basename(path).startswith(name) for name in names)]
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(check, paths))
    rows = ['| Defect | Promise | Laws | Verdict | Seconds |', '|---|---|---|---|---:|']
    for path, (name, verdict, seconds, tail) in zip(paths, results):
        fields = header(path)
        row = (name, fields['defect'], fields['promise'], fields['laws'], verdict, seconds)
        rows.append('| %s: %s | %s | %s | %s | %.0f |' % row)
        if verdict != 'caught':
            print('== %s: %s\n%s\n' % (name, verdict, tail))
    table = '\n'.join(rows)
    print(table)
    os.makedirs(os.path.dirname(REPORT), exist_ok=True)
    with open(REPORT, 'w', encoding='utf-8') as handle:
        handle.write(table + '\n')
    missed = [name for name, verdict, dummy, dummy in results if verdict != 'caught']
    if missed:
        sys.exit('the laws did not catch: %s' % ', '.join(missed))
    print('every one of the %d defects was caught' % len(results))


if __name__ == '__main__':
    main(sys.argv[1:])
