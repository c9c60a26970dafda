#!/usr/bin/env bash
# Create (or repair) a development virtualenv and install its requirements.
# Safe to run repeatedly: when the requirement files have not changed since
# the last install, nothing is reinstalled.
#
#   ./scripts/bootstrap.sh            # .venv: Python 3.11, requirements-dev.txt
#                                     # (the oldest supported ansible-core line
#                                     # and every development tool)
#   ./scripts/bootstrap.sh current    # .venv-current: Python 3.13,
#                                     # tests/requirements-current.txt (the
#                                     # newest ansible-core line, for
#                                     # ansible-test only)
#   ./scripts/bootstrap.sh publish    # .venv-publish: Python 3.11,
#                                     # tests/publish/requirements.txt
#                                     # (galaxy-importer and its own pins)
#   ./scripts/bootstrap.sh demo       # .venv-demo: Python 3.11,
#                                     # tests/requirements-demo.txt (the
#                                     # main job: ansible-core, requests)
#
# For dev and current, also lets ansible-test run without internet access (see
# scripts/ansible-test-offline.sh).
#
# Environment:
#   PYTHON   interpreter used to create the venv (default: python3.11, or
#            python3.13 for "current"; pyenv's versions are found too)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

MODE="${1:-dev}"
case "$MODE" in
    dev)
        VENV="$ROOT/.venv"
        PY_VERSION=3.11
        REQUIREMENTS=(requirements-dev.txt requirements.txt)
        IMPORTS='import ansible, ansible_test, pytest, requests'
        ;;
    current)
        VENV="$ROOT/.venv-current"
        PY_VERSION=3.13
        REQUIREMENTS=(tests/requirements-current.txt requirements.txt)
        IMPORTS='import ansible, ansible_test, requests'
        ;;
    publish)
        VENV="$ROOT/.venv-publish"
        PY_VERSION=3.11
        REQUIREMENTS=(tests/publish/requirements.txt)
        IMPORTS='import galaxy_importer'
        ;;
    demo)
        VENV="$ROOT/.venv-demo"
        PY_VERSION=3.11
        REQUIREMENTS=(tests/requirements-demo.txt requirements.txt)
        IMPORTS='import ansible, requests'
        ;;
    *)
        echo "usage: $0 [dev|current|publish|demo]" >&2
        exit 2
        ;;
esac
STAMP="$VENV/.requirements.sha256"

log() { printf 'bootstrap: %s\n' "$*" >&2; }

is_wanted_python() {
    "$1" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$PY_VERSION'.split('.'))))" 2>/dev/null
}

find_python() {
    local candidate pyenv_root
    pyenv_root="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"
    for candidate in "${PYTHON:-}" "python$PY_VERSION" "$pyenv_root"/versions/"$PY_VERSION".*/bin/"python$PY_VERSION" python3; do
        [[ -n "$candidate" ]] || continue
        command -v "$candidate" >/dev/null 2>&1 || continue
        if is_wanted_python "$candidate"; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

venv_ok() {
    [[ -x "$VENV/bin/python" ]] && is_wanted_python "$VENV/bin/python" &&
        "$VENV/bin/python" -m pip --version >/dev/null 2>&1
}

if ! venv_ok; then
    PY="$(find_python)" || { log "Python $PY_VERSION is required (set PYTHON=/path/to/python$PY_VERSION)"; exit 1; }
    log "creating $VENV with $PY"
    rm -rf "$VENV"
    "$PY" -m venv "$VENV"
fi

req_hash="$(cat "${REQUIREMENTS[@]}" | "$VENV/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$req_hash" ]] &&
    "$VENV/bin/python" -c "$IMPORTS" 2>/dev/null; then
    log "requirements of ${VENV#"$ROOT"/} up to date"
else
    log "installing ${REQUIREMENTS[0]} into ${VENV#"$ROOT"/}"
    rm -f "$STAMP"
    pip_log="$VENV/pip-install.log"
    # pip's Collecting/Installing lines as they come (a fresh install takes a while); all of its output in the log.
    if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -r "${REQUIREMENTS[0]}" 2>&1 | tee "$pip_log" |
        awk '/^(Collecting|Installing|Successfully) / { print "  " $0; fflush() }' >&2; then
        cat "$pip_log" >&2
        log "pip install failed (output above, also in ${pip_log#"$ROOT"/})"
        exit 1
    fi
    echo "$req_hash" >"$STAMP"
fi

if [[ "$MODE" == dev || "$MODE" == current ]]; then
    "$ROOT/scripts/ansible-test-offline.sh" "$VENV/bin/python"
fi
