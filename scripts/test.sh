#!/usr/bin/env bash
# The test command: every session of noxfile.py but the demo (nox --list names them), three at a time; arguments go to
# nox as they are (-s lint units-2.21, or -t 2.21 for one ansible-core line). Needs python3 >= 3.11; installs nox and uv.
# Every session runs, whatever another's result; the end names each session with its result and the command that runs
# again those that failed. The exit status is nox's: non-zero when one failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! .venv-nox/bin/python -c 'import nox' 2>/dev/null || [[ tests/requirements-nox.txt -nt .venv-nox/bin/nox ]]; then
    python3 -m venv --clear .venv-nox
    .venv-nox/bin/python -m pip install -q --disable-pip-version-check -r tests/requirements-nox.txt
fi
report=$(mktemp)
trap 'rm -f "$report"' EXIT
status=0
PYTHONUNBUFFERED=1 .venv-nox/bin/nox --report "$report" "$@" || status=$?
.venv-nox/bin/python scripts/session_summary.py "$report" "$@" || true
exit "$status"
