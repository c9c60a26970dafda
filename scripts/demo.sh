#!/usr/bin/env bash
# THE main job: set up .venv-demo (ansible-core and requests only), build and
# install the collection, start the phpUptime service emulator and run
# playbooks/demo.yml against it (tests/emulator/demo.py does all but the first).
#
#   ./scripts/demo.sh                   # run the demo
#   ./scripts/demo.sh -v --check        # extra arguments go to ansible-playbook
#   ./scripts/demo.sh --serve [--port N]
#                                       # keep the emulator running on
#                                       # 127.0.0.1:8765 (two accounts) until
#                                       # Ctrl-C, and print the shell lines that
#                                       # point ansible-playbook, ansible-doc and
#                                       # ansible-inventory at it
#
# The emulator keeps its data in memory and is always stopped on exit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

printf '==> bootstrap .venv-demo\n'
"$ROOT/scripts/bootstrap.sh" demo
exec "$ROOT/.venv-demo/bin/python" "$ROOT/tests/emulator/demo.py" "$@"
