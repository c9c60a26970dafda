# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets: no API key, password, sensitive header value or webhook URL in any output, at any verbosity.

Every integration target (tests/integration/targets, ``reliability_secrets`` among them)
is run with ``ansible-playbook -vvv --diff``, each against an emulator of its own, and
all of its output is searched for every secret the targets use: the API keys, the
Basic-auth passwords, the values of sensitive request headers, the URLs of webhook
alert channels (and what follows their host). Every URL the emulator
received (its request lines, path and query) is searched too: a secret must never
travel in a URL.

The only output left out of the search is that of the harness tasks that print the
emulator's own record of the requests (role ``setup_emulator``, and ``uri`` calls to
``/_emulator``): that record is what the service received, Authorization header and
password fields included, and showing it is the harness's purpose.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
from urllib.parse import urlsplit
import sys
import threading
import time

import pytest
import yaml

import known_issues
from reliability_support import OUTPUT_DIR, REPO_ROOT, ansible_playbook, record

from emulator.control import Emulator as EmulatorControl
from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import URL_CHANNELS
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import is_sensitive_name

GROUP = 'secrets'
TARGETS_DIR = os.path.join(REPO_ROOT, 'tests', 'integration', 'targets')
OWN_TARGET = 'reliability_secrets'
PARALLEL = 3
SECRET_OPTIONS = ('request_auth_password', 'password', 'api_key')
MIN_SECRET_LENGTH = 6
# What follows the host of a webhook URL is searched alone when it is this long: a short path (/hook) would also
# match paths of the collection's own files.
MIN_URL_SECRET_LENGTH = 12


def integration_runner():
    """tests/integration/run.py as a module (its emulator process wrapper and environment)."""
    spec = importlib.util.spec_from_file_location('integration_run', os.path.join(REPO_ROOT, 'tests', 'integration',
                                                                                  'run.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the secrets -----------------------------------------------------------------------------

def _literal(value):
    return isinstance(value, str) and '{{' not in value and len(value) >= MIN_SECRET_LENGTH


def _with_token(value):
    """The value, and its last word when it has several (``Bearer TOKEN``, ``session=TOKEN``)."""
    found = {value}
    token = re.split(r'[\s=;:]+', value.strip())[-1]
    if len(token) >= MIN_SECRET_LENGTH:
        found.add(token)
    return found


def _is_webhook(value):
    """A literal URL with a scheme and a host: a webhook, where a value refused as no URL at all is no credential."""
    if not _literal(value):
        return False
    parts = urlsplit(value)
    return bool(parts.scheme and parts.netloc)


def _with_url_secret(value):
    """A webhook URL, and what follows its host (the part the collection masks) when that is long enough."""
    found = {value}
    parts = urlsplit(value)
    secret_part = value[value.find(parts.netloc) + len(parts.netloc):] if parts.netloc else ''
    if len(secret_part) >= MIN_URL_SECRET_LENGTH:
        found.add(secret_part)
    return found


def secrets_in(node, found):
    """Collect literal secrets from the YAML of a target: secret options, sensitive header values, webhook URLs."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in SECRET_OPTIONS and _literal(value):
                found |= _with_token(value)
            if key == 'request_headers' and isinstance(value, list):
                for item in value:
                    if isinstance(item, dict) and is_sensitive_name(item.get('key')) and _literal(item.get('value')):
                        found |= _with_token(item['value'])
            if key == 'alerts' and isinstance(value, list):
                for item in value:
                    if isinstance(item, dict) and item.get('key') in URL_CHANNELS and _is_webhook(item.get('value')):
                        found |= _with_url_secret(item['value'])
            secrets_in(value, found)
    elif isinstance(node, list):
        for item in node:
            secrets_in(item, found)
    return found


def all_secrets(runner):
    found = {runner.API_KEY, runner.OTHER_API_KEY, runner.NOPLAN_API_KEY}
    for directory, dummy, files in os.walk(TARGETS_DIR):
        for name in files:
            if name.endswith(('.yml', '.yaml')):
                with open(os.path.join(directory, name), encoding='utf-8') as handle:
                    secrets_in(yaml.safe_load(handle), found)
    with open(os.path.join(TARGETS_DIR, OWN_TARGET, 'vars', 'main.yml'), encoding='utf-8') as handle:
        own = yaml.safe_load(handle)
    for key, value in own.items():
        if key.startswith('secret_webhook_'):
            found |= _with_url_secret(value)
        elif key.startswith('secret_') and key != 'secret_pattern':
            found.add(value)
    return sorted(found)


# -- which output is the harness's --------------------------------------------------------------

_TASK_LINES = {}


def _tasks_by_line(path):
    """``{line: task mapping}`` of a task file (1-based line of the task's first key)."""
    if path not in _TASK_LINES:
        found = {}
        try:
            with open(path, encoding='utf-8') as handle:
                text = handle.read()
            root = yaml.compose(text)
            tasks = yaml.safe_load(text)
        except (OSError, yaml.YAMLError):
            root, tasks = None, None
        if root is not None and isinstance(tasks, list):
            for node, task in zip(root.value, tasks):
                found[node.start_mark.line + 1] = task
        _TASK_LINES[path] = found
    return _TASK_LINES[path]


def is_harness_task(path, line):
    if os.sep + 'setup_emulator' + os.sep in path:
        return True
    task = _tasks_by_line(path).get(line) or {}
    uri = task.get('ansible.builtin.uri') or task.get('uri')
    return isinstance(uri, dict) and '/_emulator' in str(uri.get('url', ''))


def split_tasks(output):
    """``[(task name, task path, line, text)]``: the output cut at every TASK header (None before the first)."""
    blocks, current, name, path, line = [], [], None, None, None
    for text_line in output.splitlines(keepends=True):
        if text_line.startswith(('TASK [', 'PLAY [', 'PLAY RECAP')):
            blocks.append((name, path, line, ''.join(current)))
            current, name, path, line = [], None, None, None
            header = re.match(r'TASK \[(?:[^\]]*? : )?(.*)\] \**\s*$', text_line)
            name = header.group(1) if header else None
        match = re.match(r'task path: (.+):(\d+)\s*$', text_line)
        if match and path is None:
            path, line = match.group(1), int(match.group(2))
        current.append(text_line)
    blocks.append((name, path, line, ''.join(current)))
    return blocks


# -- running the targets ------------------------------------------------------------------------

def settled_stderr(emulator, timeout=5.0):
    """The emulator's stderr once the thread that reads it has caught up with the stopped process."""
    deadline, text = time.monotonic() + timeout, emulator.stderr()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        latest = emulator.stderr()
        if latest == text:
            return latest
        text = latest
    return text


def run_target(runner, name, out_dir, results):
    log_dir = os.path.join(out_dir, name)
    os.makedirs(log_dir, exist_ok=True)
    # --verbose: the emulator writes the request line (method, path and query) of every request to
    # stderr, also of those a target later clears from its request log.
    emulator = EmulatorControl.start(api_keys=(runner.API_KEY, runner.OTHER_API_KEY),
                                     no_api_keys=(runner.NOPLAN_API_KEY,), extra_args=['--verbose'])
    try:
        inventory = os.path.join(log_dir, 'inventory.ini')
        with open(inventory, 'w', encoding='utf-8') as handle:
            handle.write('localhost ansible_connection=local ansible_python_interpreter=%s\n' % sys.executable)
        playbook = os.path.join(log_dir, 'playbook.yml')
        with open(playbook, 'w', encoding='utf-8') as handle:
            handle.write('- hosts: localhost\n  gather_facts: false\n  roles: [%s]\n' % name)
        command = [ansible_playbook(), '-i', inventory, '-vvv', '--diff', playbook]
        start = time.monotonic()
        completed = subprocess.run(command, cwd=REPO_ROOT, env=runner.target_environment(emulator.url),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=runner.TARGET_TIMEOUT, check=False)
        seconds = time.monotonic() - start
        emulator.wait_idle()
    finally:
        emulator.stop()
    request_lines = re.findall(r'"([A-Z]+ \S+) HTTP/1\.[01]"', settled_stderr(emulator))
    with open(os.path.join(log_dir, 'output.log'), 'wb') as handle:
        handle.write(completed.stdout)
    with open(os.path.join(log_dir, 'requests.log'), 'w', encoding='utf-8') as handle:
        handle.write('\n'.join(request_lines) + '\n')
    results[name] = dict(returncode=completed.returncode, seconds=seconds,
                         output=completed.stdout.decode('utf-8', 'replace'),
                         urls=[line for line in request_lines if ' /_emulator' not in line])


def run_all(runner, names, out_dir):
    results, pending, running = {}, list(names), []
    while pending or running:
        running = [thread for thread in running if thread.is_alive()]
        while pending and len(running) < PARALLEL:
            thread = threading.Thread(target=run_target, args=(runner, pending.pop(0), out_dir, results))
            thread.start()
            running.append(thread)
        time.sleep(0.2)
    return results


def masked(text, secret):
    return text.replace(secret, '<%s>' % ('*' * len(secret)))


def test_no_secret_in_vvv_diff_output_or_urls():
    runner = integration_runner()
    runnable, dummy = runner.discover_targets()
    assert OWN_TARGET in runnable
    secrets = all_secrets(runner)
    out_dir = os.path.join(OUTPUT_DIR, 'secrets')
    results = run_all(runner, runnable, out_dir)

    unknown, known = [], {}
    for name in runnable:
        result = results.get(name)
        assert result is not None, 'target %s did not run' % name
        scanned = excluded = 0
        target_hits = []
        for task, path, line, text in split_tasks(result['output']):
            if path is not None and is_harness_task(path, line):
                excluded += 1
                continue
            scanned += len(text.encode('utf-8'))
            issue = known_issues.SECRETS.get((name, task))
            for secret in secrets:
                for match in re.finditer(re.escape(secret), text):
                    context = masked(text[max(0, match.start() - 80):match.end() + 40], secret).replace('\n', ' ')
                    hit = '%s: task %r (%s:%s)%s: ...%s...' % (name, task, os.path.relpath(path or '?', REPO_ROOT),
                                                               line, ' [known issue %s]' % issue if issue else '',
                                                               re.sub(r'\s+', ' ', context))
                    target_hits.append(hit)
                    if issue:
                        known.setdefault((name, task), []).append(hit)
                    else:
                        unknown.append(hit)
        urls = result['urls']
        assert urls, 'no request line of target %s was captured' % name
        for url in urls:
            for secret in secrets:
                if secret in url:
                    hit = '%s: the emulator received a URL with a secret: %s' % (name, masked(url, secret))
                    target_hits.append(hit)
                    unknown.append(hit)
        record(GROUP, name, target=name, passed=result['returncode'] == 0, seconds=round(result['seconds'], 1),
               bytes_scanned=scanned, harness_tasks_excluded=excluded, urls_scanned=len(urls),
               secrets=len(secrets), hits=len(target_hits), hit_samples=target_hits[:6],
               known_issues=sorted({known_issues.SECRETS[key] for key in known if key[0] == name}))

    assert results[OWN_TARGET]['returncode'] == 0, results[OWN_TARGET]['output'][-4000:]
    assert not unknown, '%d secret(s) found:\n%s' % (len(unknown), '\n'.join(unknown[:40]))
    gone = sorted(key for key in known_issues.SECRETS if key[0] in runnable and key not in known)
    assert not gone, 'known leaks no longer seen (fixed? remove them from known_issues.SECRETS): %s' % gone
    if known:
        pytest.xfail('known leaks: %s' % ', '.join(sorted('%s (%s: %s)' % (known_issues.SECRETS[key], key[0], key[1])
                                                          for key in known)))
