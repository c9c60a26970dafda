# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets: no API key, password, sensitive header value, webhook URL or URL credential in any output, at any verbosity.

Run by the ``integration-<line>`` sessions on their output (``ansible-test integration -vvv``, ``--diff`` always on):
every target's output, and every URL its emulator received (a secret never travels in a URL), is searched for every
secret the targets' YAML holds (API keys, passwords, sensitive header values, webhook URLs and what follows their host,
the ``secret_*`` values of ``reliability_secrets``). UPTIME_INTEGRATION_OUTPUT names the run's directory (default
tests/output/integration/2.19); UPTIME_INTEGRATION_PARTIAL=1 says it ran some targets only. Left out: the harness tasks
that print the emulator's own record of the requests (``setup_emulator``, ``uri`` to ``/_emulator``).
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

import pytest
import yaml

from reliability_support import REPO_ROOT

from ansible_collections.uptime.monitoring.plugins.module_utils._monitor import URL_CHANNELS
from ansible_collections.uptime.monitoring.plugins.module_utils._schema import is_sensitive_name

TARGETS_DIR = os.path.join(REPO_ROOT, 'tests', 'integration', 'targets')
OWN_TARGET = 'reliability_secrets'
INTEGRATION_OUTPUT = (os.environ.get('UPTIME_INTEGRATION_OUTPUT')
                      or os.path.join(REPO_ROOT, 'tests', 'output', 'integration', '2.19'))
SECRET_OPTIONS = ('request_auth_password', 'password', 'api_key')
MIN_SECRET_LENGTH = 6
# What follows the host of a webhook URL is searched alone when it is this long: a short path (/hook) would also
# match paths of the collection's own files.
MIN_URL_SECRET_LENGTH = 12


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


def all_secrets():
    with open(os.path.join(TARGETS_DIR, 'setup_emulator', 'defaults', 'main.yml'), encoding='utf-8') as handle:
        found = set(yaml.safe_load(handle)['setup_emulator_keys'].values())
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


_TASK_LINES = {}


def _tasks_by_line(path):
    """``{line: task mapping}`` of a task file, tasks in blocks included (1-based line of the task's first key)."""
    if path not in _TASK_LINES:
        found = {}
        try:
            with open(path, encoding='utf-8') as handle:
                text = handle.read()
            root = yaml.compose(text)
            tasks = yaml.safe_load(text)
        except (OSError, yaml.YAMLError):
            root, tasks = None, None

        def index(nodes, tasks):
            for node, task in zip(nodes, tasks):
                found[node.start_mark.line + 1] = task
                for key, value in node.value if isinstance(task, dict) else ():
                    if key.value in ('block', 'rescue', 'always') and isinstance(task.get(key.value), list):
                        index(value.value, task[key.value])

        if root is not None and isinstance(tasks, list):
            index(root.value, tasks)
        _TASK_LINES[path] = found
    return _TASK_LINES[path]


def is_harness_task(path, line):
    """Whether the task at ``path:line`` of a target's copy that ansible-test ran prints the emulator's record."""
    path = os.path.join(TARGETS_DIR, path.rsplit(os.sep + os.path.join('integration', 'targets') + os.sep, 1)[-1])
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


def targets():
    """The targets ansible-test runs: every directory of tests/integration/targets not marked hidden."""
    names = []
    for name in sorted(os.listdir(TARGETS_DIR)):
        with open(os.path.join(TARGETS_DIR, name, 'aliases'), encoding='utf-8') as handle:
            if 'hidden' not in handle.read().split():
                names.append(name)
    return names


def integration_run():
    """``{target: (its output, the request lines its emulator logged)}`` of the run in INTEGRATION_OUTPUT."""
    log = os.path.join(INTEGRATION_OUTPUT, 'ansible-test.log')
    if not os.path.exists(log):
        pytest.fail('%s does not exist: run the integration first (nox -s integration-2.19)' % log)
    with open(log, encoding='utf-8', errors='replace') as handle:
        parts = re.split(r'^Running (\S+) integration test role\n', handle.read(), flags=re.M)
    run = {}
    for name, output in zip(parts[1::2], parts[2::2]):
        with open(os.path.join(INTEGRATION_OUTPUT, 'emulator', '%s.log' % name), encoding='utf-8',
                  errors='replace') as handle:
            run[name] = (output, re.findall(r'"([A-Z]+ \S+) HTTP/1\.[01]"', handle.read()))
    return run


def masked(text, secret):
    return text.replace(secret, '<%s>' % ('*' * len(secret)))


def test_no_secret_in_vvv_diff_output_or_urls(record_property):
    runnable = targets()
    assert OWN_TARGET in runnable
    secrets = all_secrets()
    results = integration_run()
    assert any('--- before' in output for output, dummy in results.values()), 'the run was not at --diff'

    unknown, scanned, excluded, urls_scanned = [], 0, 0, 0
    # UPTIME_INTEGRATION_PARTIAL: the session ran only the targets it was given.
    for name in [name for name in runnable if name in results or not os.environ.get('UPTIME_INTEGRATION_PARTIAL')]:
        result = results.get(name)
        assert result is not None, 'target %s did not run' % name
        output, urls = result
        assert 'task path: ' in output, 'the output of target %s is not at -vvv' % name
        for task, path, line, text in split_tasks(output):
            if path is not None and is_harness_task(path, line):
                excluded += 1
                continue
            scanned += len(text.encode('utf-8'))
            for secret in secrets:
                for match in re.finditer(re.escape(secret), text):
                    context = masked(text[max(0, match.start() - 80):match.end() + 40], secret).replace('\n', ' ')
                    where = '%s:%s' % (os.path.relpath(path or '?', REPO_ROOT), line)
                    unknown.append('%s: task %r (%s): ...%s...' % (name, task, where, re.sub(r'\s+', ' ', context)))
        urls = [url for url in urls if ' /_emulator' not in url]
        assert urls, 'no request line of target %s was captured' % name
        urls_scanned += len(urls)
        unknown.extend('%s: the emulator received a URL with a secret: %s' % (name, masked(url, secret))
                       for url in urls for secret in secrets if secret in url)
    record_property('scanned', '%d bytes, %d URLs, %d secrets; %d harness tasks left out' % (
        scanned, urls_scanned, len(secrets), excluded))
    assert not unknown, '%d secret(s) found:\n%s' % (len(unknown), '\n'.join(unknown[:40]))
