#!/usr/bin/env bash
# ansible-test bootstraps pip into each virtualenv it creates with a "get-pip"
# script that it downloads from the internet, which is not reachable from
# every machine. Before downloading it looks for a cached copy in
# ~/.ansible/test/cache/get_pip_<pip version>.py. This writes a small
# stand-in there that uses the interpreter's own ensurepip and then installs
# the requested packages with pip from the configured package index.
#
# An existing cache file that is not our stand-in (a real get-pip script) is
# left alone.
#
#   scripts/ansible-test-offline.sh [PYTHON]
#
# PYTHON is the interpreter of a virtualenv holding ansible-core (default:
# .venv/bin/python); each ansible-core line may bootstrap its own pip version,
# so scripts/bootstrap.sh runs this once per virtualenv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV_PYTHON="${1:-$ROOT/.venv/bin/python}"

"$VENV_PYTHON" - <<'PY'
import os
import re
import sys

import ansible_test

source = os.path.join(os.path.dirname(ansible_test.__file__), '_internal', 'python_requirements.py')
with open(source, encoding='utf-8') as handle:
    match = re.search(r"default_packages\s*=\s*dict\(\s*pip='([^']+)'", handle.read())
if not match:
    sys.exit('ansible-test-offline: cannot find the pip version ansible-test bootstraps in %s' % source)

pip_version = match.group(1)
marker = '# uptime.monitoring offline get-pip stand-in'
stand_in = '''%s
"""Bootstrap pip without downloading get-pip.py: ensurepip, then pip install."""
import subprocess
import sys

args = sys.argv[1:]
skip = {'--no-setuptools', '--no-wheel'}
subprocess.check_call([sys.executable, '-m', 'ensurepip', '--upgrade'],
                      stdout=subprocess.DEVNULL)
subprocess.check_call([sys.executable, '-m', 'pip', 'install'] + [a for a in args if a not in skip])
# get-pip.py would not have installed setuptools when asked not to.
if '--no-setuptools' in args:
    subprocess.call([sys.executable, '-m', 'pip', 'uninstall', '--yes', '--quiet', 'setuptools'],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
''' % marker

cache = os.path.expanduser('~/.ansible/test/cache/get_pip_%s.py' % pip_version.replace('.', '_'))
if os.path.exists(cache):
    with open(cache, encoding='utf-8', errors='replace') as handle:
        current = handle.read()
    if not current.startswith(marker) or current == stand_in:
        sys.exit(0)

os.makedirs(os.path.dirname(cache), exist_ok=True)
with open(cache, 'w', encoding='utf-8') as handle:
    handle.write(stand_in)
print('ansible-test-offline: wrote pip %s bootstrap stand-in to %s' % (pip_version, cache), file=sys.stderr)
PY
