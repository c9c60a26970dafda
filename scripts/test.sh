#!/usr/bin/env bash
# THE test command: runs every test suite of the collection, failing fast.
#
#   ./scripts/test.sh                      # all sections, in order
#   ./scripts/test.sh sanity unit          # only the named sections
#   ./scripts/test.sh integration monitor  # extra words after "integration"
#                                          # are target names (see below)
#   ./scripts/test.sh --list               # list the sections
#
# Sections (default order): sanity unit integration build lint docs ecosystem molecule reliability benchmark eda
#
# bootstrap (create .venv, install requirements) and stage (copy the work
# tree to build/collections/ansible_collections/uptime/monitoring) always run
# first.
#
# To add a section: write a function named section_<name> and append <name>
# to SECTIONS below.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SECTIONS=(sanity unit integration build lint docs ecosystem molecule reliability benchmark eda)

VENV="$ROOT/.venv"
PY="$VENV/bin/python"
COLLECTIONS="$ROOT/build/collections"
STAGED="$COLLECTIONS/ansible_collections/uptime/monitoring"

header() {
    printf '\n==================== %s ====================\n' "$*"
}

section_bootstrap() {
    "$ROOT/scripts/bootstrap.sh"
}

section_stage() {
    "$ROOT/scripts/stage-collection.sh" >/dev/null
    echo "staged collection at ${STAGED#"$ROOT"/}"
}

section_sanity() {
    # ansible-test needs the collection under ansible_collections/NS/NAME:
    # run it in the staged copy. No ignore file: every test must pass.
    (cd "$STAGED" && ansible-test sanity --venv --python 3.11 --color no)
}

section_unit() {
    # tests/unit/conftest.py makes ansible_collections.uptime.monitoring
    # importable from the work tree.
    local rc=0
    "$PY" -m pytest tests/unit -p no:cacheprovider || rc=$?
    if [[ $rc -eq 5 ]]; then
        echo "unit: pytest collected no tests: failing" >&2
    fi
    return "$rc"
}

section_integration() {
    "$PY" tests/integration/run.py --no-stage "${INTEGRATION_TARGETS[@]}"
}

section_build() {
    # Build from the staged copy, so that the tarball holds exactly the files
    # git sees (tracked + untracked-not-ignored) minus galaxy.yml's build_ignore.
    local out="$ROOT/build/dist" tarball
    rm -rf "$out"
    mkdir -p "$out"
    ansible-galaxy collection build --force --output-path "$out" "$STAGED"
    tarball="$(ls "$out"/uptime-monitoring-*.tar.gz)"
    if tar tzf "$tarball" | grep -E '^(\./)?tests(/|$)'; then
        echo "build: $tarball contains tests/ entries (see above)" >&2
        return 1
    fi
    echo "build: $(tar tzf "$tarball" | wc -l) entries in ${tarball#"$ROOT"/}, no tests/"
}

section_lint() {
    # ansible-lint with the production profile (.ansible-lint: offline, no
    # skip list): the playbooks, the Molecule scenarios, the integration
    # targets, the collection metadata and extras/ (the EE definition is
    # checked against its schema).
    NO_COLOR=1 ansible-lint playbooks extensions tests/integration/targets galaxy.yml meta extras
}

section_docs() {
    # docs/reference/ and CHANGELOG.rst match what antsibull-docs and
    # antsibull-changelog generate now (./scripts/docs.sh regenerates them),
    # and the module docs and changelog fragments lint clean.
    "$ROOT/scripts/docs.sh" --check
}

section_ecosystem() {
    # tests/ecosystem: the playbooks of playbooks/, the EXAMPLES of every
    # module, the AWX credential type and the execution environment files,
    # run against the emulator.
    local rc=0
    "$PY" -m pytest tests/ecosystem -p no:cacheprovider || rc=$?
    if [[ $rc -eq 5 ]]; then
        echo "ecosystem: pytest collected no tests: failing" >&2
    fi
    return "$rc"
}

section_molecule() {
    # The Molecule scenarios of extensions/molecule/: default driver on
    # localhost, against an emulator each scenario starts and stops itself.
    NO_COLOR=1 molecule test --all
}

section_reliability() {
    # tests/reliability (issue #7): the fault matrix, lost answers, bad input,
    # secrets at -vvv --diff, concurrency and the rate limit. Regenerates
    # docs/reliability.md from the results and fails when its verdicts differ
    # from the committed copy (commit the regenerated file).
    "$PY" tests/reliability/run.py --no-stage
}

section_benchmark() {
    # A small run of tests/benchmark (issue #8): the three ways of syncing
    # monitors, side by side. It fails when the monitors module's request
    # counts are off; the times are printed, never asserted. The full run
    # (N = 200 and 1000) is the README's benchmark command.
    "$PY" tests/benchmark/run.py --n 10 --collections-path "$COLLECTIONS"
}

section_eda() {
    # tests/eda (issue #15): the event source uptime.monitoring.events under the
    # real ansible-rulebook (installed into .venv from requirements-dev.txt; it
    # needs Java 17, java on PATH), against the emulator: one rule action per
    # transition, nothing lost to faults or a restart, persistence dropping
    # what a restart sends again, and the shipped rulebook acknowledging an
    # incident. Prints the latency from each transition to its action and the
    # requests per poll (never asserted); tests/output/eda/figures.json keeps them.
    if ! command -v java >/dev/null 2>&1; then
        echo "eda: ansible-rulebook needs Java 17 (java on PATH)" >&2
        return 1
    fi
    local rc=0
    "$PY" -m pytest tests/eda -p no:cacheprovider -s || rc=$?
    if [[ $rc -eq 5 ]]; then
        echo "eda: pytest collected no tests: failing" >&2
    fi
    return "$rc"
}

usage() {
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
}

selected=()
INTEGRATION_TARGETS=()
in_integration=0
for arg in "$@"; do
    case "$arg" in
        -h | --help) usage; exit 0 ;;
        --list) printf '%s\n' "${SECTIONS[@]}"; exit 0 ;;
    esac
    if [[ " ${SECTIONS[*]} " == *" $arg "* ]]; then
        selected+=("$arg")
        in_integration=$([[ "$arg" == integration ]] && echo 1 || echo 0)
    elif [[ $in_integration -eq 1 ]]; then
        INTEGRATION_TARGETS+=("$arg")
    else
        echo "unknown section: $arg (sections: ${SECTIONS[*]})" >&2
        exit 2
    fi
done
[[ ${#selected[@]} -gt 0 ]] || selected=("${SECTIONS[@]}")

export PATH="$VENV/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$COLLECTIONS"
export ANSIBLE_NOCOLOR=1

declare -A took=()
run_section() {
    local name="$1" start rc=0
    header "$name"
    start=$SECONDS
    "section_$name" || rc=$?
    took[$name]=$((SECONDS - start))
    if [[ $rc -ne 0 ]]; then
        header "FAILED: $name (exit $rc, ${took[$name]}s)"
        exit "$rc"
    fi
    echo "--- $name ok (${took[$name]}s)"
}

for name in bootstrap stage "${selected[@]}"; do
    run_section "$name"
done

header "summary"
for name in bootstrap stage "${selected[@]}"; do
    printf '  %-12s ok  %4ss\n' "$name" "${took[$name]}"
done
