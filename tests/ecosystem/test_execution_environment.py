"""The execution environment files: the collection's meta/execution-environment.yml, read from the built
collection the way ansible-builder reads it inside an image build, and the example EE definition in
extras/execution-environment/, turned into a build context by ``ansible-builder create`` (no container
engine needed)."""

from __future__ import annotations

import os
import re
import subprocess

import yaml

from ecosystem_support import BIN, REPO_ROOT

EE_DEFINITION = os.path.join(REPO_ROOT, 'extras', 'execution-environment', 'execution-environment.yml')


def run(command, cwd=REPO_ROOT):
    # Without the harness's ANSIBLE_COLLECTIONS_PATH: ansible-galaxy would find the staged collection there and
    # install nothing ("already installed").
    env = {key: value for key, value in os.environ.items() if key not in ('ANSIBLE_COLLECTIONS_PATH', 'ANSIBLE_COLLECTIONS_PATHS')}
    result = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=300, check=False)
    assert result.returncode == 0, '%s\n%s' % (' '.join(command), result.stdout)
    return result.stdout


def requirement_lines(path):
    with open(path, encoding='utf-8') as handle:
        return [line.split('#', 1)[0].strip() for line in handle if line.split('#', 1)[0].strip()]


def test_builder_finds_the_python_requirements_in_the_built_collection(tmp_path, collection_tarball):
    """Install the built tarball (the session's, built from the staged copy) and introspect it as the builder stage of
    an image build does: the paths meta/execution-environment.yml gives, relative to the collection, are found."""
    collections = tmp_path / 'collections'
    run([os.path.join(BIN, 'ansible-galaxy'), 'collection', 'install', '--offline', '--force', '-p', str(collections),
         collection_tarball])
    assert os.path.isfile(collections / 'ansible_collections' / 'uptime' / 'monitoring' / 'meta' / 'execution-environment.yml')

    output = run([os.path.join(BIN, 'ansible-builder'), 'introspect', str(collections)])
    found = yaml.safe_load(output[output.index('---'):])
    assert found['system'] == []
    python = [re.sub(r'\s*#.*', '', line) for line in found['python']]
    assert python == requirement_lines(os.path.join(REPO_ROOT, 'requirements.txt'))
    assert all(line.endswith('# from collection uptime.monitoring') for line in found['python'])


def test_ee_definition_makes_a_build_context(tmp_path):
    context = tmp_path / 'context'
    run([os.path.join(BIN, 'ansible-builder'), 'create', '--file', EE_DEFINITION, '--context', str(context),
         '--output-filename', 'Containerfile'])
    with open(context / 'Containerfile', encoding='utf-8') as handle:
        containerfile = handle.read()
    assert 'ansible-galaxy collection install' in containerfile
    assert 'introspect' in containerfile
    with open(context / '_build' / 'requirements.yml', encoding='utf-8') as handle:
        galaxy = yaml.safe_load(handle)
    assert [collection['name'] for collection in galaxy['collections']] == ['uptime.monitoring']


def test_ee_definition_and_the_demo_pin_the_tested_ansible_core():
    with open(EE_DEFINITION, encoding='utf-8') as handle:
        definition = yaml.safe_load(handle)
    tested = [line for line in requirement_lines(os.path.join(REPO_ROOT, 'requirements-dev.txt')) if line.startswith('ansible-core')]
    assert [definition['dependencies']['ansible_core']['package_pip']] == tested
    # The main job (.nox/demo) runs on the same line.
    demo = [line for line in requirement_lines(os.path.join(REPO_ROOT, 'tests', 'requirements-demo.txt')) if line.startswith('ansible-core')]
    assert demo == tested
