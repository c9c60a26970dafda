#!/usr/bin/env bash
# The test command: every session of noxfile.py but the demo (nox --list names them), three at a time; arguments go to
# nox as they are (-s lint units-2.21, or -t 2.21 for one ansible-core line). Needs python3 >= 3.11; installs nox and uv.
# nox stops starting sessions at the first failure and names only those it ran: the sessions it did not run are named
# after its summary, with the command that runs them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! .venv-nox/bin/python -c 'import nox' 2>/dev/null || [[ tests/requirements-nox.txt -nt .venv-nox/bin/nox ]]; then
    python3 -m venv --clear .venv-nox
    .venv-nox/bin/python -m pip install -q --disable-pip-version-check -r tests/requirements-nox.txt
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
PYTHONUNBUFFERED=1 .venv-nox/bin/nox "$@" 2>&1 | tee "$log" || status=$?
if ((status)); then
    .venv-nox/bin/python scripts/sessions_not_run.py "$log" "$@" || true
fi
exit "$status"
