#!/usr/bin/env python
"""Run the reliability tests (issue #7) and regenerate docs/reliability.md from their results.

    python tests/reliability/run.py      # nox -s reliability runs it

The tests that run ansible-playbook use the collection staged where UPTIME_COLLECTIONS says
(default build/collections: scripts/stage-collection.sh). The rate-limit
test spends two minutes waiting for the service's limit, so it runs in a second
pytest process beside the others, which run in two workers (most of their time is
spent waiting for answers slower than the client's timeout). Then tests/reliability/report.py writes
docs/reliability.md and fails when its verdicts differ from the committed copy.
The last line gives the counts of both pytest runs and the state of the report.

The secrets test (test_secrets.py) searches the output of an integration run: the nox session
integration-2.19 runs it after ansible-test, and writes its rows where SECRETS_ROWS says; the
report takes them from there, and fails without them.
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
SECRETS_ROWS = os.path.join(REPO_ROOT, 'tests', 'output', 'integration', '2.19', 'secrets.jsonl')
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


def main(argv=None):
    parser = argparse.ArgumentParser(description='Run the reliability tests and regenerate docs/reliability.md.')
    parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    start = time.monotonic()
    if not os.path.exists(SECRETS_ROWS):
        print('reliability: %s is missing: run the integration first (nox -s integration-2.19); FAILED'
              % os.path.relpath(SECRETS_ROWS, REPO_ROOT))
        return 1
    clear_output()
    shutil.copy(SECRETS_ROWS, os.path.join(OUTPUT_DIR, 'results', 'secrets.jsonl'))

    background_log = os.path.join(OUTPUT_DIR, 'pytest-rate-limit.log')
    with open(background_log, 'wb') as log:
        background = subprocess.Popen(pytest_command(os.path.join(HERE, BACKGROUND)), cwd=REPO_ROOT,  # pylint: disable=consider-using-with
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        print('rate-limit test started beside the others (output: %s)' % os.path.relpath(background_log, REPO_ROOT))
        tests_start = time.monotonic()
        ignored = [BACKGROUND, SECRETS]
        foreground = subprocess.run(pytest_command(HERE, *['--ignore=%s' % os.path.join(HERE, name) for name in ignored],
                                                   '-rfEX', '-n', '2'),
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
    for found in (counts(foreground.stdout.decode('utf-8', 'replace')), counts(background_text)):
        for word, number in found.items():
            total[word] = total.get(word, 0) + number
    summary = ', '.join('%d %s' % (total[word], word) for word in COUNT_WORDS[:-1] if total.get(word)) or 'no tests ran'
    os.makedirs(os.path.join(OUTPUT_DIR, 'results'), exist_ok=True)
    figures = {'seconds': round(time.monotonic() - start), 'cpus': os.cpu_count(), 'counts': summary,
               'foreground_seconds': round(foreground_seconds), 'background_seconds': round(background_seconds)}
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
