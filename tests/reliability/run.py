#!/usr/bin/env python
"""Run the reliability tests (issue #7) and regenerate docs/reliability.md from their results.

    .venv/bin/python tests/reliability/run.py [--no-stage] [--secrets-only | --secrets-done]

The collection must be staged in build/collections (scripts/stage-collection.sh;
./scripts/test.sh does it) for the tests that run ansible-playbook. The rate-limit
test spends two minutes waiting for the service's limit, so it runs in a second
pytest process beside the others. Then tests/reliability/report.py writes
docs/reliability.md and fails when its verdicts differ from the committed copy.
The last line gives the counts of both pytest runs and the state of the report.

The secrets test (test_secrets.py) runs every integration target again at -vvv
--diff, which takes minutes and needs no quiet machine, unlike the fault matrix.
``--secrets-only`` runs it alone and keeps its results; a later ``--secrets-done``
runs the rest and reports with them. ./scripts/test.sh runs the first in the
background beside other sections (section ``secrets``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
OUTPUT_DIR = os.path.join(REPO_ROOT, 'tests', 'output', 'reliability')
BACKGROUND = 'test_rate_limit.py'
SECRETS = 'test_secrets.py'
# What a secrets-only run writes (relative to OUTPUT_DIR), kept by the run that reports with it.
SECRETS_RESULTS = os.path.join('results', 'secrets.jsonl')
SECRETS_RUN = os.path.join('results', 'secrets_run.json')
SECRETS_OUTPUT = (SECRETS_RESULTS, SECRETS_RUN, 'secrets')
COUNT_WORDS = ('passed', 'failed', 'xfailed', 'xpassed', 'skipped', 'errors', 'error')


def pytest_command(*args):
    return [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-o', 'console_output_style=classic'] + list(args)


def counts(text):
    """The counts of pytest's summary line (the last line with 'N passed', 'N failed', ...)."""
    found = {}
    for line in text.splitlines()[::-1]:
        pairs = re.findall(r'(\d+) (%s)\b' % '|'.join(COUNT_WORDS), line)
        if pairs and (' in ' in line):
            for number, word in pairs:
                key = 'errors' if word == 'error' else word
                found[key] = found.get(key, 0) + int(number)
            break
    return found


def clear_output(kept=()):
    """Empty the output directory, except the paths (relative to it) in ``kept``."""
    kept = {os.path.join(OUTPUT_DIR, path) for path in kept}
    for directory, subdirectories, files in os.walk(OUTPUT_DIR, topdown=False):
        for name in files:
            path = os.path.join(directory, name)
            if not any(path == keep or path.startswith(keep + os.sep) for keep in kept):
                os.remove(path)
        for name in subdirectories:
            path = os.path.join(directory, name)
            if not os.listdir(path):
                os.rmdir(path)
    os.makedirs(os.path.join(OUTPUT_DIR, 'results'), exist_ok=True)


def run_secrets_only(start):
    for path in SECRETS_OUTPUT:
        path = os.path.join(OUTPUT_DIR, path)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
    os.makedirs(os.path.join(OUTPUT_DIR, 'results'), exist_ok=True)
    result = subprocess.run(pytest_command(os.path.join(HERE, SECRETS), '-rfEX'), cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors='replace', check=False)
    seconds = time.monotonic() - start
    with open(os.path.join(OUTPUT_DIR, SECRETS_RUN), 'w', encoding='utf-8') as handle:
        json.dump({'seconds': round(seconds), 'returncode': result.returncode, 'counts': counts(result.stdout)}, handle)
    sys.stdout.write(result.stdout)
    print('secrets: %s in %.0fs; its results are kept for the reliability section'
          % ('ok' if result.returncode == 0 else 'FAILED', seconds))
    return result.returncode


def earlier_secrets_run():
    """The figures of a passed --secrets-only run whose results are there, or None (said why)."""
    shown = os.path.relpath(os.path.join(OUTPUT_DIR, SECRETS_RUN), REPO_ROOT)
    try:
        with open(os.path.join(OUTPUT_DIR, SECRETS_RUN), encoding='utf-8') as handle:
            secrets_run = json.load(handle)
    except (OSError, ValueError):
        secrets_run = None
    if secrets_run is None or not os.path.exists(os.path.join(OUTPUT_DIR, SECRETS_RESULTS)):
        print('reliability: no results of the secrets test (%s): run it first with --secrets-only; FAILED' % shown)
        return None
    if secrets_run.get('returncode') != 0:
        print('reliability: the secrets test failed in its run (%s): nothing to report with; FAILED' % shown)
        return None
    return secrets_run


def main(argv=None):
    parser = argparse.ArgumentParser(description='Run the reliability tests and regenerate docs/reliability.md.')
    parser.add_argument('--no-stage', action='store_true', help='the collection is staged already')
    split = parser.add_mutually_exclusive_group()
    split.add_argument('--secrets-only', action='store_true', help='run only the secrets test, and keep its results')
    split.add_argument('--secrets-done', action='store_true',
                       help='run the other tests and report with the results of an earlier --secrets-only run')
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    start = time.monotonic()

    if not args.no_stage:
        subprocess.run([os.path.join(REPO_ROOT, 'scripts', 'stage-collection.sh')], cwd=REPO_ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    if args.secrets_only:
        return run_secrets_only(start)
    secrets_run = None
    if args.secrets_done:
        secrets_run = earlier_secrets_run()
        if secrets_run is None:
            return 1
    clear_output(SECRETS_OUTPUT if args.secrets_done else ())

    background_log = os.path.join(OUTPUT_DIR, 'pytest-rate-limit.log')
    with open(background_log, 'wb') as log:
        background = subprocess.Popen(pytest_command(os.path.join(HERE, BACKGROUND)), cwd=REPO_ROOT,  # pylint: disable=consider-using-with
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        print('rate-limit test started beside the others (output: %s)' % os.path.relpath(background_log, REPO_ROOT))
        tests_start = time.monotonic()
        ignored = [BACKGROUND] + ([SECRETS] if args.secrets_done else [])
        foreground = subprocess.run(pytest_command(HERE, *['--ignore=%s' % os.path.join(HERE, name) for name in ignored],
                                                   '-rfEX'),
                                    cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, check=False)
        foreground_seconds = time.monotonic() - tests_start
        sys.stdout.write(foreground.stdout.decode('utf-8', 'replace'))
        print('waiting for the rate-limit test ...')
        background.wait()
    with open(background_log, encoding='utf-8', errors='replace') as handle:
        background_text = handle.read()
    took = re.findall(r' in ([0-9.]+)s', background_text)
    background_seconds = float(took[-1]) if took else time.monotonic() - tests_start
    print('\n----- %s -----' % BACKGROUND)
    sys.stdout.write(background_text)

    total = {}
    for found in (counts(foreground.stdout.decode('utf-8', 'replace')), counts(background_text),
                  secrets_run['counts'] if secrets_run else {}):
        for word, number in found.items():
            total[word] = total.get(word, 0) + number
    summary = ', '.join('%d %s' % (total[word], word) for word in COUNT_WORDS[:-1] if total.get(word)) or 'no tests ran'
    os.makedirs(os.path.join(OUTPUT_DIR, 'results'), exist_ok=True)
    figures = {'seconds': round(time.monotonic() - start), 'cpus': os.cpu_count(), 'counts': summary,
               'foreground_seconds': round(foreground_seconds), 'background_seconds': round(background_seconds)}
    if secrets_run:
        figures['secrets_seconds'] = secrets_run['seconds']
    with open(os.path.join(OUTPUT_DIR, 'results', 'run.json'), 'w', encoding='utf-8') as handle:
        json.dump(figures, handle)

    report = subprocess.run([sys.executable, os.path.join(HERE, 'report.py'), '--check'], cwd=REPO_ROOT, check=False,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(report.stdout.decode('utf-8', 'replace').strip())

    ok = foreground.returncode == 0 and background.returncode == 0 and report.returncode == 0
    print('reliability: %s in %.0fs; report %s; %s' % (
        summary, time.monotonic() - start, 'up to date' if report.returncode == 0 else 'OUT OF DATE or incomplete',
        'ok' if ok else 'FAILED'))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
