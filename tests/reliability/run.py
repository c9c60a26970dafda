#!/usr/bin/env python
"""Run the reliability tests (issue #7) and regenerate docs/reliability.md from their results.

    .venv/bin/python tests/reliability/run.py [--no-stage]

The collection must be staged in build/collections (scripts/stage-collection.sh;
./scripts/test.sh does it) for the tests that run ansible-playbook. The rate-limit
test spends two minutes waiting for the service's limit, so it runs in a second
pytest process beside the others. Then tests/reliability/report.py writes
docs/reliability.md and fails when its verdicts differ from the committed copy.
The last line gives the counts of both pytest runs and the state of the report.
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


def main(argv=None):
    parser = argparse.ArgumentParser(description='Run the reliability tests and regenerate docs/reliability.md.')
    parser.add_argument('--no-stage', action='store_true', help='the collection is staged already')
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    start = time.monotonic()

    if not args.no_stage:
        subprocess.run([os.path.join(REPO_ROOT, 'scripts', 'stage-collection.sh')], cwd=REPO_ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    shutil.rmtree(OUTPUT_DIR, ignore_errors=True)
    os.makedirs(OUTPUT_DIR)

    background_log = os.path.join(OUTPUT_DIR, 'pytest-rate-limit.log')
    with open(background_log, 'wb') as log:
        background = subprocess.Popen(pytest_command(os.path.join(HERE, BACKGROUND)), cwd=REPO_ROOT,  # pylint: disable=consider-using-with
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        print('rate-limit test started beside the others (output: %s)' % os.path.relpath(background_log, REPO_ROOT))
        tests_start = time.monotonic()
        foreground = subprocess.run(pytest_command(HERE, '--ignore', os.path.join(HERE, BACKGROUND), '-rfEX'),
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
    for text in (foreground.stdout.decode('utf-8', 'replace'), background_text):
        for word, number in counts(text).items():
            total[word] = total.get(word, 0) + number
    summary = ', '.join('%d %s' % (total[word], word) for word in COUNT_WORDS[:-1] if total.get(word)) or 'no tests ran'
    os.makedirs(os.path.join(OUTPUT_DIR, 'results'), exist_ok=True)
    with open(os.path.join(OUTPUT_DIR, 'results', 'run.json'), 'w', encoding='utf-8') as handle:
        json.dump({'seconds': round(time.monotonic() - start), 'cpus': os.cpu_count(), 'counts': summary,
                   'foreground_seconds': round(foreground_seconds), 'background_seconds': round(background_seconds)},
                  handle)

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
