#!/usr/bin/env bash
# Copy the working tree (tracked files plus untracked files that are not
# ignored) into build/collections/ansible_collections/uptime/monitoring, the
# layout ansible-test and ANSIBLE_COLLECTIONS_PATH expect. The destination is
# recreated on every run. Prints the staged path.
#
#   scripts/stage-collection.sh [COLLECTIONS_ROOT]   # default: build/collections
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

DEST="${1:-$ROOT/build/collections}/ansible_collections/uptime/monitoring"

rm -rf "$DEST"
mkdir -p "$DEST"

# git ls-files also lists tracked files deleted from the work tree: skip those.
git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' path; do
        if [[ -e "$path" || -L "$path" ]]; then
            printf '%s\0' "$path"
        fi
    done |
    sort -zu |
    tar --null --no-recursion --files-from=- -cf - |
    tar -xf - -C "$DEST"

# ansible-test lists content with git when it finds a .git directory in or
# above the collection root. Without one here it would find the repository's
# own .git, in which build/ is ignored, and see no files at all. An empty
# repository makes it list the staged files (git ls-files --others).
git -c init.defaultBranch=main init --quiet "$DEST"

echo "$DEST"
