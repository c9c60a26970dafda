#!/usr/bin/env bash
# THE main job: set up the venv, build and install the collection, start the
# phpUptime service emulator and run playbooks/demo.yml against it.
#
#   ./scripts/demo.sh            # run the demo
#   ./scripts/demo.sh -v --check # extra arguments go to ansible-playbook
#
# The emulator keeps its data in memory and is always stopped on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VENV="$ROOT/.venv"
PY="$VENV/bin/python"
DEMO="$ROOT/build/demo"
API_KEY=demo-key
PLAYBOOK=playbooks/demo.yml

step() { printf '\n==> %s\n' "$*"; }

step "bootstrap"
"$ROOT/scripts/bootstrap.sh"
export PATH="$VENV/bin:$PATH"

step "build and install the collection"
staged="$("$ROOT/scripts/stage-collection.sh")"
rm -rf "$DEMO"
mkdir -p "$DEMO/dist" "$DEMO/collections"
export ANSIBLE_COLLECTIONS_PATH="$DEMO/collections"
ansible-galaxy collection build --force --output-path "$DEMO/dist" "$staged" >/dev/null
ansible-galaxy collection install --force --offline -p "$DEMO/collections" "$DEMO"/dist/uptime-monitoring-*.tar.gz >/dev/null
echo "installed $(basename "$DEMO"/dist/uptime-monitoring-*.tar.gz) into ${DEMO#"$ROOT"/}/collections"

step "start the emulator"
emulator_log="$DEMO/emulator.log"
"$PY" tests/emulator/server.py --host 127.0.0.1 --port 0 --db :memory: --api-key "$API_KEY" \
    </dev/null >"$emulator_log" 2>&1 &
emulator_pid=$!

stop_emulator() {
    if kill -0 "$emulator_pid" 2>/dev/null; then
        kill "$emulator_pid" 2>/dev/null || true
        wait "$emulator_pid" 2>/dev/null || true
    fi
}
trap stop_emulator EXIT

url=""
for _ in $(seq 1 300); do
    url="$(sed -n 's/^READY \(http[^ ]*\).*/\1/p' "$emulator_log" | head -n 1)"
    [[ -n "$url" ]] && break
    if ! kill -0 "$emulator_pid" 2>/dev/null; then
        break
    fi
    sleep 0.1
done
if [[ -z "$url" ]]; then
    echo "demo: the emulator did not report READY; its output:" >&2
    sed 's/^/  | /' "$emulator_log" >&2
    exit 1
fi
echo "emulator at $url (log: ${emulator_log#"$ROOT"/})"

export UPTIME_API_URL="$url"
export UPTIME_API_KEY="$API_KEY"
export ANSIBLE_RETRY_FILES_ENABLED=0

# Explicit localhost that runs modules with the venv's Python (which has requests).
printf 'localhost ansible_connection=local ansible_python_interpreter=%s\n' "$PY" >"$DEMO/inventory.ini"

step "ansible-playbook $PLAYBOOK --diff"
ansible-playbook -i "$DEMO/inventory.ini" "$PLAYBOOK" --diff "$@"
