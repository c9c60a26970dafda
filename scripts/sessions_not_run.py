"""After a failed run of ./scripts/test.sh: the sessions it was to run that nox did not run (it stops starting them at
the first failure, and its summary names only those it ran), with the command that runs them.

Usage: sessions_not_run.py LOG NOX-ARGUMENTS... (LOG: what nox printed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys


def main(log, arguments):
    options = arguments[:arguments.index('--')] if '--' in arguments else arguments
    listing = subprocess.run([os.path.join('.venv-nox', 'bin', 'nox'), '--list', '--json'] + options,
                             capture_output=True, text=True, check=False)
    try:
        selected = [session['session'] for session in json.loads(listing.stdout)]
    except ValueError:
        return  # not a run of sessions (a usage error, --version): nothing to name
    with open(log, encoding='utf-8', errors='replace') as handle:
        ran = set(re.findall(r'^nox > \* (\S+?): ', handle.read(), re.MULTILINE))
    missing = [name for name in selected if name not in ran]
    if missing:
        print('nox > Not run (nox stops starting sessions at the first failure): %s' % ', '.join(missing))
        print('nox > Run them with: ./scripts/test.sh -s %s' % ' '.join(missing))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2:])
