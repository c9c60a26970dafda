"""The README's test command (``./scripts/test.sh``) as a newcomer meets it: one failed session hides nothing.

The sessions here are stand-ins declared beside the project's own noxfile.py, which the stand-in noxfile runs first, so
that nox runs them with the project's options (three at a time, whatever another session's result).
"""

from __future__ import annotations

import os
import subprocess

from ecosystem_support import REPO_ROOT

TEST_COMMAND = os.path.join(REPO_ROOT, 'scripts', 'test.sh')
# The first fails at once; with a stop at the first failure, the last two (started only as the first three end) would
# never run.
STAND_INS = '''
import runpy
import time

import nox

runpy.run_path({noxfile!r})


@nox.session(venv_backend='none')
def stand_in_fails(session):
    session.run('false', external=True)


@nox.session(venv_backend='none')
def stand_in_slow(session):
    time.sleep(1)


@nox.session(venv_backend='none')
def stand_in_slower(session):
    time.sleep(2)


@nox.session(venv_backend='none')
def stand_in_later(session):
    session.log('ran')


@nox.session(venv_backend='none')
def stand_in_last(session):
    session.error('failed too')
'''
SESSIONS = ['stand_in_fails', 'stand_in_slow', 'stand_in_slower', 'stand_in_later', 'stand_in_last']


def test_a_failed_session_leaves_the_others_run_and_named(tmp_path):
    noxfile = tmp_path / 'noxfile.py'
    noxfile.write_text(STAND_INS.format(noxfile=os.path.join(REPO_ROOT, 'noxfile.py')), encoding='utf-8')
    run = subprocess.run([TEST_COMMAND, '-f', str(noxfile), '-s'] + SESSIONS + ['--', 'an argument'],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                         stdin=subprocess.DEVNULL, check=False)
    output = run.stdout
    assert run.returncode != 0, output
    summary = output[output.rindex('Sessions:'):].splitlines()
    results = {line.split()[0]: line.split()[1] for line in summary[1:] if line.startswith('  ')}
    assert results == {'stand_in_fails': 'FAILED', 'stand_in_slow': 'success', 'stand_in_slower': 'success',
                       'stand_in_later': 'success', 'stand_in_last': 'ABORTED'}, output
    assert summary[-1] == ("Run again what failed or did not run: %s -f %s -s stand_in_fails stand_in_last -- "
                           "'an argument'" % ('./scripts/test.sh', noxfile)), output
