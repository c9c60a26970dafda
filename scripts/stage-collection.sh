#!/usr/bin/env bash
# Copy what git sees of the work tree (tracked files, and untracked ones that are not ignored) to
# COLLECTIONS_ROOT/ansible_collections/uptime/monitoring (default build/collections), anew; print that path.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DEST="${1:-$PWD/build/collections}/ansible_collections/uptime/monitoring"
rm -rf "$DEST" && mkdir -p "$DEST"
# git ls-files also lists tracked files deleted from the work tree: skip those.
git ls-files -z --cached --others --exclude-standard | sort -zu |
    while IFS= read -r -d '' path; do if [[ -e "$path" || -L "$path" ]]; then printf '%s\0' "$path"; fi; done |
    tar --null --no-recursion --files-from=- -cf - | tar -xf - -C "$DEST"
# Without a .git of its own, ansible-test would list files with the repository's git, which ignores build/.
git -c init.defaultBranch=main init --quiet "$DEST"
echo "$DEST"
