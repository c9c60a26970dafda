"""The AWX / Automation Controller credential type (extras/awx/credential_type.yml): its shape, what its
injectors give a job (rendered the way AWX renders them), that the modules work with that environment,
and that playbooks/awx_credential_type.yml hands the type to awx.awx unchanged (against stand-ins for the
awx.awx modules: AWX itself is not available here)."""

from __future__ import annotations

import json
import os
import re

import pytest
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ecosystem_support import OTHER_KEY, PRIMARY_KEY, REPO_ROOT, create_monitor

CREDENTIAL_TYPE = os.path.join(REPO_ROOT, 'extras', 'awx', 'credential_type.yml')
DOC_FRAGMENTS = os.path.join(REPO_ROOT, 'plugins', 'doc_fragments')

# A stand-in for an awx.awx module: records the arguments it was given (one JSON line each) in the file named by
# AWX_STUB_RECORD. Whether the real modules change anything on a second run is awx.awx's: the arguments are checked.
STUB_MODULE = '''#!/usr/bin/python
import json
import os
from ansible.module_utils.basic import AnsibleModule

module = AnsibleModule(argument_spec=%s)
with open(os.environ['AWX_STUB_RECORD'], 'a', encoding='utf-8') as handle:
    handle.write(json.dumps({'module': %r, 'params': module.params}) + '\\n')
module.exit_json(changed=True)
'''
STUB_SPECS = {
    'credential_type': dict(name=dict(type='str', required=True), description=dict(type='str'), kind=dict(type='str'),
                            inputs=dict(type='dict'), injectors=dict(type='dict'), state=dict(type='str')),
    'credential': dict(name=dict(type='str', required=True), organization=dict(type='str'),
                       credential_type=dict(type='str'), inputs=dict(type='dict', no_log=True), state=dict(type='str')),
}


def load_credential_type():
    with open(CREDENTIAL_TYPE, encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def awx_inject(credential_type, credential_inputs):
    """The environment AWX gives a job for a credential, following AWX's rules: empty inputs are left out,
    a boolean field that was never set is false, and each injector is a sandboxed Jinja2 template."""
    namespace = {key: value for key, value in credential_inputs.items() if isinstance(value, bool) or value}
    for field in credential_type['inputs']['fields']:
        if field['type'] == 'boolean' and field['id'] not in credential_inputs:
            namespace[field['id']] = False
    sandbox = ImmutableSandboxedEnvironment()
    return {name: sandbox.from_string(template).render(**namespace)
            for name, template in credential_type['injectors']['env'].items()}


def test_credential_type_shape_and_injected_environment():
    """The type as AWX accepts it; its injectors are the variables the connection options fall back to, and the other
    way round; what they give a job for the inputs of a credential."""
    credential_type = load_credential_type()
    assert credential_type['kind'] in ('cloud', 'net')  # the kinds AWX allows for custom types
    fields = {field['id']: field for field in credential_type['inputs']['fields']}
    assert set(fields) == {'url', 'api_key', 'skip_tls_verify', 'account_timezone'}
    assert (fields['api_key'].get('secret'), fields['url'].get('secret', False), fields['skip_tls_verify']['type']) == (True, False, 'boolean')
    assert sorted(credential_type['inputs']['required']) == ['api_key', 'url']
    assert all(field['type'] in ('string', 'boolean') and field['label'] and field['help_text'] for field in fields.values())
    assert set(credential_type['injectors']) == {'env'}
    documented = set()
    for name in (name for name in os.listdir(DOC_FRAGMENTS) if name.endswith('.py')):
        with open(os.path.join(DOC_FRAGMENTS, name), encoding='utf-8') as handle:
            documented |= set(re.findall(r'E\((UPTIME_[A-Z_]+)\)', handle.read()))
    assert documented == {'UPTIME_API_URL', 'UPTIME_API_KEY', 'UPTIME_VALIDATE_CERTS', 'UPTIME_ACCOUNT_TIMEZONE'}
    assert set(credential_type['injectors']['env']) == documented
    for inputs, validate_certs, timezone in [
            ({}, 'true', ''), ({'skip_tls_verify': False}, 'true', ''),  # the box never ticked, or unticked
            ({'skip_tls_verify': True}, 'false', ''), ({'account_timezone': 'Asia/Kolkata'}, 'true', 'Asia/Kolkata')]:
        env = awx_inject(credential_type, dict(inputs, url='https://uptime.example.com', api_key='k'))
        assert env == {'UPTIME_API_URL': 'https://uptime.example.com', 'UPTIME_API_KEY': 'k',
                       'UPTIME_VALIDATE_CERTS': validate_certs, 'UPTIME_ACCOUNT_TIMEZONE': timezone}, inputs


JOB = '''\
- name: A job template's playbook, with no connection options at all
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Read the account
      uptime.monitoring.monitor_info:
      register: job_monitors
    - name: Check what was read
      ansible.builtin.assert:
        that: job_monitors.monitors | map(attribute='name') | list == ['shop']
'''


@pytest.mark.parametrize('inputs', [{'skip_tls_verify': False}, {'skip_tls_verify': True, 'account_timezone': 'Asia/Kolkata'}])
def test_a_job_and_an_inventory_source_with_the_injected_environment(ansible, emulator, inputs):
    """A job with only the credential's environment reads the account (as a Controller job would); so does an inventory
    source "Sourced from a Project", whose configuration file names the plugin only: AWX imports what
    ``ansible-inventory --list --export`` prints. The injected variables replace the harness's UPTIME_*."""
    create_monitor(emulator, 'shop', url='https://shop.example.com/health', request_auth_username='uptime',
                   request_auth_password='hunter2-basic-secret')
    create_monitor(emulator, 'other-account', url='https://other.example.com/', api_key=OTHER_KEY)
    emulator.clear_log()
    env = awx_inject(load_credential_type(), dict(inputs, url=emulator.url, api_key=PRIMARY_KEY))
    ansible.playbook(ansible.write('job.yml', JOB), env=env, api_key='not-the-credential-key')
    source = ansible.write(os.path.join('project', 'inventories', 'production.uptime.yml'), '---\nplugin: uptime.monitoring.monitors\n')
    result = ansible.inventory(source, '--list', '--export', env=env, api_key='not-the-credential-key')
    inventory = json.loads(result.stdout)
    assert list(inventory['_meta']['hostvars']) == ['shop.example.com']
    assert 'shop.example.com' in inventory['uptime_pending']['hosts']
    assert PRIMARY_KEY not in result.stdout
    assert 'hunter2-basic-secret' not in result.stdout
    assert {entry['api_key'] for entry in emulator.log()} == {PRIMARY_KEY}


def test_registration_playbook_passes_the_type_unchanged(ansible):
    stubs = os.path.join(ansible.workdir, 'stubs')
    for name, spec in STUB_SPECS.items():
        ansible.write(os.path.join('stubs', 'ansible_collections', 'awx', 'awx', 'plugins', 'modules', name + '.py'),
                      STUB_MODULE % (repr(spec), name))

    def register(record, *arguments):
        run = ansible.playbook('uptime.monitoring.awx_credential_type', *arguments, collections=[stubs],
                               env={'AWX_STUB_RECORD': os.path.join(ansible.workdir, record)})
        with open(os.path.join(ansible.workdir, record), encoding='utf-8') as handle:
            return run, [json.loads(line) for line in handle]

    arguments = ('-e', 'uptime_credential_name=phpUptime production', '-e', 'uptime_credential_url=https://uptime.example.com',
                 '-e', 'uptime_credential_api_key=s3cr3t')
    first, calls = register('awx-calls.jsonl', *arguments)
    assert first.changed() == 2, first
    assert [call['module'] for call in calls] == ['credential_type', 'credential']
    credential_type = load_credential_type()
    registered = calls[0]['params']
    assert (registered['name'], registered['kind'], registered['state'], registered['inputs']) == (
        credential_type['name'], credential_type['kind'], 'present', credential_type['inputs'])
    # The AWX templates arrive as templates, not rendered by Ansible.
    assert registered['injectors'] == credential_type['injectors']
    assert registered['injectors']['env']['UPTIME_API_URL'] == '{{ url }}'
    credential = calls[1]['params']
    assert (credential['credential_type'], credential['organization']) == (credential_type['name'], 'Default')
    assert credential['inputs'] == {'url': 'https://uptime.example.com', 'api_key': 's3cr3t', 'skip_tls_verify': False}

    # Without a credential's name, the type alone is registered.
    calls = register('type-only.jsonl', '-e', 'uptime_credential_type_name=Uptime')[1]
    assert [(call['module'], call['params']['name']) for call in calls] == [('credential_type', 'Uptime')]
