"""The end of a run of ./scripts/test.sh: each session it was to run with its result, and the command that runs again
those that failed or did not run. nox's own summary lists only the sessions it ran.

Usage: session_summary.py REPORT NOX-ARGUMENTS... (REPORT: nox's --report file; NOX-ARGUMENTS: those given to
./scripts/test.sh, to find the sessions selected and the arguments after -- to give again).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys


def selected_sessions(options):
    listing = subprocess.run([os.path.join('.venv-nox', 'bin', 'nox'), '--list', '--json'] + options,
                             capture_output=True, text=True, check=False)
    try:
        return [session['session'] for session in json.loads(listing.stdout)]
    except ValueError:
        return None  # not a run of sessions (a usage error, --version): nothing to name


# nox's options that select sessions, each followed by its values: the command to run again names sessions instead.
SELECTING = ('-s', '--session', '--sessions', '-e', '-t', '--tags', '-k', '--keywords')


def without_selection(options):
    kept, skipping = [], False
    for option in options:
        if option.split('=', 1)[0] in SELECTING:
            skipping = '=' not in option
        elif skipping and not option.startswith('-'):
            continue
        else:
            skipping = False
            kept.append(option)
    return kept


def summary(report, arguments):
    """The lines to print, or [] when the arguments ran no session."""
    options = arguments[:arguments.index('--')] if '--' in arguments else arguments
    posargs = arguments[arguments.index('--'):] if '--' in arguments else []
    try:
        with open(report, encoding='utf-8') as handle:
            results = {entry['name']: entry for entry in json.load(handle)['sessions']}
    except (OSError, ValueError, KeyError):
        results = {}
    selected = selected_sessions(options)
    if not selected:
        return []
    width = max(len(name) for name in selected)
    lines, again = ['', 'Sessions:'], []
    for name in selected:
        entry = results.get(name)
        if entry is None:
            result, took = 'NOT RUN', ''
        else:
            result = entry['result'] if entry['result'] in ('success', 'skipped') else entry['result'].upper()
            took = ' %4.0f s' % entry['duration'] if entry.get('duration') is not None else ''
        lines.append('  %-*s  %-8s%s' % (width, name, result, took))
        if result not in ('success', 'skipped'):
            again.append(name)
    if again:
        lines.append('Run again what failed or did not run: %s' % shlex.join(['./scripts/test.sh'] + without_selection(options) + ['-s'] + again + posargs))
    else:
        lines.append('All %d sessions passed.' % len(selected) if len(selected) > 1 else 'The session passed.')
    return lines


if __name__ == '__main__':
    LINES = summary(sys.argv[1], sys.argv[2:])
    if LINES:
        print('\n'.join(LINES))
