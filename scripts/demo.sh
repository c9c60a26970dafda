#!/usr/bin/env bash
# The main job: playbooks/demo.yml against the bundled emulator, started and stopped for you, with the
# collection built and installed as users get it (tests/emulator/demo.py, in nox's session `demo`).
#   ./scripts/demo.sh                    # the demo; arguments go to ansible-playbook (-v, --check ...)
#   ./scripts/demo.sh --serve [--port N] # keep the emulator on 127.0.0.1:8765 until Ctrl-C, and print
#                                        # the lines that point ansible-playbook & co at it
exec "$(dirname "${BASH_SOURCE[0]}")/test.sh" -j 1 -s demo -- "$@"
