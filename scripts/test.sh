#!/usr/bin/env bash
# THE test command: runs every test suite of the collection, failing fast.
#
#   ./scripts/test.sh                      # all sections, in order
#   ./scripts/test.sh sanity unit          # only the named sections (in the
#                                          # default order, whatever the order given)
#   ./scripts/test.sh integration monitor  # extra words after "integration"
#                                          # are target names (see below)
#   ./scripts/test.sh --list               # list the sections
#
# Sections (default order): sanity unit integration build publish lint docs ecosystem molecule current secrets reliability benchmark eda
#
# sanity, unit and integration run ansible-test on the oldest supported
# ansible-core line (.venv, Python 3.11); current runs them on the newest line
# (.venv-current, Python 3.13), in a staged copy of its own. secrets is the
# reliability suite's secrets test (every integration target again at -vvv
# --diff). When current or secrets is run with other sections, the two run one
# after the other in the background, beside the sections before them (most of
# those keep one core busy at a time), and the foreground waits for them where
# they stand in the order, so that the timing-sensitive sections after them
# (reliability, benchmark, eda) run alone; their output is shown, and their
# result counted, there. See CONTRIBUTING.md.
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

SECTIONS=(sanity unit integration build publish lint docs ecosystem molecule current secrets reliability benchmark eda)
# Sections that run in the background, in this order, when other sections are run too.
BACKGROUND=(current secrets)

VENV="$ROOT/.venv"
PY="$VENV/bin/python"
# The newest ansible-core line (./scripts/bootstrap.sh current) and
# galaxy-importer (./scripts/bootstrap.sh publish) have virtualenvs of their own.
CURRENT_VENV="$ROOT/.venv-current"
CURRENT_PYTHON=3.13
PUBLISH_VENV="$ROOT/.venv-publish"
COLLECTIONS="$ROOT/build/collections"
STAGED="$COLLECTIONS/ansible_collections/uptime/monitoring"
# The newest line's ansible-test runs in a copy of its own, so that it can run beside the oldest line's.
CURRENT_COLLECTIONS="$ROOT/build/collections-current"
# Output of the background sections: build/<section>.log, and its status in build/<section>.log.rc.
BACKGROUND_LOGS="$ROOT/build"

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

# ansible-test needs the collection under ansible_collections/NS/NAME: it
# runs in the staged copy. --venv: each test gets a virtualenv that
# ansible-test makes itself (pip works offline: scripts/ansible-test-offline.sh).
ansible_test() {
    local bin="$1"
    shift
    (cd "$STAGED" && "$bin/ansible-test" "$@" --color no)
}

section_sanity() {
    # No ignore file: every test must pass.
    ansible_test "$VENV/bin" sanity --venv --python 3.11
}

section_unit() {
    # tests/unit with pytest, as ansible-test units runs it (tests/conftest.py
    # sets the import paths; tests/unit/requirements.txt names what the tests
    # need besides ansible-test's own). Quicker, from the work tree:
    # .venv/bin/python -m pytest tests/unit
    ansible_test "$VENV/bin" units --venv --requirements --python 3.11
}

section_integration() {
    # tests/integration/targets: each target starts its own emulator
    # (setup_emulator). Extra words after "integration" name targets.
    ansible_test "$VENV/bin" integration --venv --requirements --python 3.11 "${INTEGRATION_TARGETS[@]}"
}

section_current() {
    # The newest ansible-core line (tests/requirements-current.txt) on
    # Python 3.13: sanity, units and the integration targets, in its own
    # staged copy (ansible_test reads STAGED).
    "$ROOT/scripts/bootstrap.sh" current
    local STAGED
    STAGED="$("$ROOT/scripts/stage-collection.sh" "$CURRENT_COLLECTIONS")"
    local pyenv_bin PATH="$PATH"
    # ansible-test --venv --python 3.13 looks for python3.13 on PATH (for
    # this section only: PATH is local).
    for pyenv_bin in "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/"$CURRENT_PYTHON".*/bin; do
        [[ -x "$pyenv_bin/python$CURRENT_PYTHON" ]] && PATH="$PATH:$pyenv_bin"
    done
    local step start
    for step in sanity units integration; do
        start=$SECONDS
        echo "--- current: ansible-test $step ($("$CURRENT_VENV/bin/ansible" --version | head -1))"
        case "$step" in
            sanity) ansible_test "$CURRENT_VENV/bin" sanity --venv --python "$CURRENT_PYTHON" ;;
            *) ansible_test "$CURRENT_VENV/bin" "$step" --venv --requirements --python "$CURRENT_PYTHON" ;;
        esac
        echo "--- current: $step ok ($((SECONDS - start))s)"
    done
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

section_publish() {
    # galaxy-importer, what Galaxy and Automation Hub run on every upload,
    # on the built tarball: metadata, ansible-doc, ansible-lint, the
    # changelog, required tags and flake8 (tests/publish/galaxy-importer.cfg).
    # Any ERROR or WARNING line fails the section.
    "$ROOT/scripts/bootstrap.sh" publish
    local out="$ROOT/build/publish" tarball log rc=0
    rm -rf "$out"
    mkdir -p "$out"
    ansible-galaxy collection build --force --output-path "$out" "$STAGED" >/dev/null
    tarball="$(ls "$out"/uptime-monitoring-*.tar.gz)"
    log="$out/galaxy-importer.log"
    # Its own tools first on PATH (flake8, ansible-doc, ansible-lint); no
    # collections path, so that it sees the tarball's content alone.
    (cd "$out" && env -u ANSIBLE_COLLECTIONS_PATH PATH="$PUBLISH_VENV/bin:$PATH" \
        GALAXY_IMPORTER_CONFIG="$ROOT/tests/publish/galaxy-importer.cfg" \
        "$PUBLISH_VENV/bin/python" -m galaxy_importer.main "$tarball") >"$log" 2>&1 || rc=$?
    grep -v -e '^Loading ' -e '^Linting .* via flake8\.\.\.$' -e '^$' "$log" || true
    if [[ $rc -ne 0 ]]; then
        echo "publish: galaxy-importer exited with $rc (full output in ${log#"$ROOT"/})" >&2
        return 1
    fi
    if grep -E '^(ERROR|WARNING)' "$log" >/dev/null; then
        echo "publish: galaxy-importer reported the ERROR/WARNING lines above (full output in ${log#"$ROOT"/})" >&2
        return 1
    fi
    echo "publish: galaxy-importer accepted ${tarball#"$ROOT"/} with no warning"
    # The README is the collection's page on Galaxy: a relative link must
    # name a file the tarball holds (else use an absolute repository URL).
    "$PY" - "$tarball" <<'PY'
import re
import sys
import tarfile

with tarfile.open(sys.argv[1]) as tar:
    names = set(tar.getnames())
    readme = tar.extractfile('README.md').read().decode('utf-8')
links = re.findall(r'\]\(([^)#\s]+)(?:#[^)]*)?\)', readme)
missing = sorted({link for link in links if '://' not in link and not link.startswith('mailto:')
                  and link.rstrip('/') not in names})
if missing:
    sys.exit('publish: README.md links to files the tarball lacks: %s' % ', '.join(missing))
print('publish: the %d relative links of README.md name files of the tarball' % len([l for l in links if '://' not in l]))
PY
}

section_lint() {
    # ansible-lint with the production profile (.ansible-lint: offline, no
    # skip list), from the collection root with no paths, as galaxy-importer
    # and users run it: every file git sees.
    NO_COLOR=1 ansible-lint
}

section_docs() {
    # docs/reference/ and CHANGELOG.rst match what antsibull-docs and
    # antsibull-changelog generate now (./scripts/docs.sh regenerates them),
    # and the module docs and changelog fragments lint clean.
    "$ROOT/scripts/docs.sh" --check
}

section_ecosystem() {
    # tests/ecosystem: the playbooks of playbooks/, the EXAMPLES of every
    # module, every example of README.md, CONTRIBUTING.md and docs/
    # (test_docs_examples.py), the AWX credential type and the execution
    # environment files, run against the emulator, and the main job's
    # virtualenv (.venv-demo) and playground. Each test waits mostly on its
    # own ansible-playbook, so two workers (an emulator each) halve the section.
    local rc=0
    "$PY" -m pytest tests/ecosystem -p no:cacheprovider -n 2 || rc=$?
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

section_secrets() {
    # tests/reliability/test_secrets.py: every integration target at -vvv
    # --diff, its output and the URLs the emulator received searched for every
    # secret. Its results are kept for the reliability section's report.
    "$PY" tests/reliability/run.py --no-stage --secrets-only
}

section_reliability() {
    # tests/reliability (issue #7): the fault matrix, lost answers, bad input,
    # secrets at -vvv --diff, concurrency and the rate limit. Regenerates
    # docs/reliability.md from the results and fails when its verdicts differ
    # from the committed copy (commit the regenerated file). With the secrets
    # section in the same run, it reports that section's results instead of
    # running the secrets test again.
    if is_in secrets "${selected[@]}"; then
        "$PY" tests/reliability/run.py --no-stage --secrets-done
    else
        "$PY" tests/reliability/run.py --no-stage
    fi
}

section_benchmark() {
    # A small run of tests/benchmark (issue #8): the three ways of syncing
    # monitors, side by side. It fails when the monitors module's request
    # counts are off; the times are printed, never asserted. The full run
    # (N = 200 and 1000) is CONTRIBUTING.md's benchmark command.
    "$PY" tests/benchmark/run.py --n 10 --collections-path "$COLLECTIONS"
    # The event source under ansible-rulebook, 100 monitors, time 60 times faster
    # (issue #24): fails when an event never comes or a request is refused. The
    # full run is docs/performance.md's.
    "$PY" tests/benchmark/events.py --sizes 100 --scale 60 --no-busy
}

section_eda() {
    # tests/eda (issue #15): the event source uptime.monitoring.events as users
    # get it (the collection built and installed with ansible-galaxy; the
    # installed source must use the module_utils beside it, whatever else is on
    # sys.path), under the real ansible-rulebook (installed into .venv from
    # requirements-dev.txt; it needs Java 17, java on PATH), against the
    # emulator: one rule action per
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

# is_in WORD LIST...: whether WORD is one of the LIST.
is_in() {
    local word="$1"
    shift
    [[ " $* " == *" $word "* ]]
}

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

selected=()
INTEGRATION_TARGETS=()
in_integration=0
for arg in "$@"; do
    case "$arg" in
        -h | --help) usage; exit 0 ;;
        --list) printf '%s\n' "${SECTIONS[@]}"; exit 0 ;;
    esac
    if is_in "$arg" "${SECTIONS[@]}"; then
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
# In the default order, whatever order they were named in: reliability must come after secrets.
ordered=()
for name in "${SECTIONS[@]}"; do
    if is_in "$name" "${selected[@]}"; then ordered+=("$name"); fi
done
selected=("${ordered[@]}")

export PATH="$VENV/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$COLLECTIONS"
export ANSIBLE_NOCOLOR=1

declare -A took=()
# A section runs in a subshell with errexit in force, its status left in section_status. Called as
# "f || rc=$?", bash ignores set -e in f and in every subshell it starts, so a failed step followed by another
# command would pass unseen: call this as a plain command.
section_status=0
run_in_subshell() {
    set +e
    (set -e; "section_$1")
    section_status=$?
    set -e
}

finish_section() {
    local name="$1" rc="$2"
    if [[ $rc -ne 0 ]]; then
        header "FAILED: $name (exit $rc, ${took[$name]}s)"
        exit "$rc"
    fi
    echo "--- $name ok (${took[$name]}s)"
}

run_section() {
    local name="$1" start
    header "$name"
    start=$SECONDS
    run_in_subshell "$name"
    took[$name]=$((SECONDS - start))
    finish_section "$name" "$section_status"
}

background_pid=
background=()
kill_tree() {
    local child
    for child in $(pgrep -P "$1" || true); do
        kill_tree "$child"
    done
    kill "$1" 2>/dev/null || true
}

start_background() {
    local name
    for name in "${background[@]}"; do
        rm -f "$BACKGROUND_LOGS/$name.log" "$BACKGROUND_LOGS/$name.log.rc"
    done
    (
        for name in "${background[@]}"; do
            start=$SECONDS
            run_in_subshell "$name" >"$BACKGROUND_LOGS/$name.log" 2>&1
            # Written whole, then renamed: the foreground reads the file as soon as it exists.
            echo "$section_status $((SECONDS - start))" >"$BACKGROUND_LOGS/$name.log.rc.new"
            mv "$BACKGROUND_LOGS/$name.log.rc.new" "$BACKGROUND_LOGS/$name.log.rc"
        done
    ) &
    background_pid=$!
}

# Waits until the background section has ended (the ones before it in the background ended earlier).
wait_for_background() {
    local name="$1" rc seconds
    header "$name (ran in the background; its output follows)"
    while [[ ! -f "$BACKGROUND_LOGS/$name.log.rc" ]] && kill -0 "$background_pid" 2>/dev/null; do
        sleep 2
    done
    cat "$BACKGROUND_LOGS/$name.log" 2>/dev/null || true
    read -r rc seconds <"$BACKGROUND_LOGS/$name.log.rc" || { rc=1 seconds=0; }
    took[$name]=$seconds
    finish_section "$name" "$rc"
}

for name in bootstrap stage; do
    run_section "$name"
done
if [[ ${#selected[@]} -gt 1 ]]; then
    for name in "${BACKGROUND[@]}"; do
        if is_in "$name" "${selected[@]}"; then background+=("$name"); fi
    done
fi
if [[ ${#background[@]} -gt 0 ]]; then
    start_background
    # If a section fails, the background run is stopped with the script.
    trap '[[ -z "$background_pid" ]] || kill_tree "$background_pid"' EXIT
fi
for name in "${selected[@]}"; do
    if is_in "$name" "${background[@]}"; then
        wait_for_background "$name"
    else
        run_section "$name"
    fi
done
background_pid=

header "summary"
for name in bootstrap stage "${selected[@]}"; do
    printf '  %-12s ok  %4ss\n' "$name" "${took[$name]}"
done
