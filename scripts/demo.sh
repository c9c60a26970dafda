#!/usr/bin/env bash
# The main job: playbooks/demo.yml against the bundled emulator, started and stopped for you, with the
# collection built and installed as users get it (tests/emulator/demo.py, in the virtualenv of nox's session demo).
#   ./scripts/demo.sh                    # the demo; arguments go to ansible-playbook (-v, --check ...)
#   ./scripts/demo.sh --serve [--port N] # keep the emulator on 127.0.0.1:8765 until Ctrl-C, with lines to paste
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/test.sh -j 1 -s demo --install-only
# Run by exec, not by nox: Ctrl-C and SIGTERM reach the driver, which stops the emulator and ends with 0.
exec .nox/demo/bin/python tests/emulator/demo.py "$@"
