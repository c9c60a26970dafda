#!/usr/bin/env bash
# Create (or repair) the development virtualenv in .venv and install the
# development requirements into it. Safe to run repeatedly: when the
# requirement files have not changed since the last install, nothing is
# reinstalled.
#
# Also lets ansible-test run without internet access (see
# scripts/ansible-test-offline.sh).
#
# Environment:
#   PYTHON   interpreter used to create the venv (default: python3.11)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VENV="$ROOT/.venv"
REQUIREMENTS=(requirements-dev.txt requirements.txt)
STAMP="$VENV/.requirements.sha256"

log() { printf 'bootstrap: %s\n' "$*" >&2; }

find_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3.11 python3; do
        [[ -n "$candidate" ]] || continue
        command -v "$candidate" >/dev/null 2>&1 || continue
        if "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

venv_ok() {
    [[ -x "$VENV/bin/python" ]] &&
        "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null &&
        "$VENV/bin/python" -m pip --version >/dev/null 2>&1
}

if ! venv_ok; then
    PY="$(find_python)" || { log "Python 3.11 is required (set PYTHON=/path/to/python3.11)"; exit 1; }
    log "creating $VENV with $PY"
    rm -rf "$VENV"
    "$PY" -m venv "$VENV"
fi

req_hash="$(cat "${REQUIREMENTS[@]}" | "$VENV/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$req_hash" ]] &&
    "$VENV/bin/python" -c 'import ansible, ansible_test, pytest, requests' 2>/dev/null; then
    log "requirements up to date"
else
    log "installing requirements-dev.txt into .venv"
    rm -f "$STAMP"
    pip_log="$VENV/pip-install.log"
    if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -r requirements-dev.txt >"$pip_log" 2>&1; then
        cat "$pip_log" >&2
        log "pip install failed (output above, also in ${pip_log#"$ROOT"/})"
        exit 1
    fi
    echo "$req_hash" >"$STAMP"
fi

"$ROOT/scripts/ansible-test-offline.sh"
