"""Support of test_docs_examples.py: the fenced code blocks of the documentation, which test claims each, the
placeholders a runnable example may hold, and a local Galaxy server for the install commands."""

from __future__ import annotations

import collections
import glob
import hashlib
import http.server
import json
import os
import re
import threading

from ecosystem_support import PRIMARY_KEY, REPO_ROOT

# The documents whose examples are tested (docs/reference/ is generated reStructuredText, not examples).
DOCUMENTS = ('README.md', 'CONTRIBUTING.md', 'docs/*.md')

FENCE = re.compile(r'^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<info>[^`]*)$')

# The only changes made to an example before it runs. Each is a value the docs cannot know: the service's
# address, its API key. Anything else in an example runs as written.
PLACEHOLDERS = (
    # (as written in the docs, what the test puts in its place)
    ('https://uptime.example.com', lambda emulator: emulator.url),
)
# Files an example reads that a user keeps (under HOME, which is the test's temporary directory), with the line
# break an editor leaves at the end.
HOME_FILES = {'.config/uptime/api-key': PRIMARY_KEY + '\n'}
# Variables an example refers to that a user keeps elsewhere (a vault): given with -e.
EXTRA_VARS = {'vault_uptime_api_key': PRIMARY_KEY}


def substitute(text, emulator):
    """The example with the placeholders of PLACEHOLDERS replaced."""
    for written, value in PLACEHOLDERS:
        text = text.replace(written, value(emulator))
    return text


def extra_var_arguments():
    return [argument for name, value in sorted(EXTRA_VARS.items()) for argument in ('-e', '%s=%s' % (name, value))]


class Block(collections.namedtuple('Block', 'document line info text')):
    """One fenced code block: its document (relative to the repository), its line, info string and text."""

    @property
    def first_line(self):
        return self.text.split('\n', 1)[0]

    def __repr__(self):
        return '%s:%d (```%s, first line %r)' % (self.document, self.line, self.info, self.first_line)


def documents():
    return [os.path.relpath(path, REPO_ROOT) for pattern in DOCUMENTS for path in sorted(glob.glob(os.path.join(REPO_ROOT, pattern)))]


def fenced_blocks(document):
    """The fenced code blocks of a Markdown document, their indentation removed."""
    with open(os.path.join(REPO_ROOT, document), encoding='utf-8') as handle:
        lines = handle.read().split('\n')
    blocks, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, indent = opening['fence'], len(opening['indent'])
        end = index + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        assert end < len(lines), '%s:%d: a code block is never closed' % (document, index + 1)
        body = [line[indent:] if line[:indent].strip() == '' else line for line in lines[index + 1:end]]
        blocks.append(Block(document, index + 1, opening['info'].strip(), '\n'.join(body) + '\n'))
        index = end + 1
    return blocks


def all_blocks():
    return [block for document in documents() for block in fenced_blocks(document)]


class Claim(collections.namedtuple('Claim', 'document head handler')):
    """A test's claim on one block of a document: the block whose text begins with ``head`` (the start of its first
    line, or of its first lines). When the heads of several claims fit a block, the longest wins."""

    @property
    def name(self):
        return '%s: %s' % (self.document, self.head.strip().split('\n')[-1][:80])

    def fits(self, block):
        return block.document == self.document and block.text.startswith(self.head)


def resolve_claims(claims, blocks):
    """Which claim wins each block: ({claim name: block}, [problems]). A problem is a block no claim wins, two
    claims that tie for one, or a claim that wins no block or several."""
    problems, won = [], {claim.name: [] for claim in claims}
    for block in blocks:
        fitting = sorted((claim for claim in claims if claim.fits(block)), key=lambda claim: -len(claim.head))
        if not fitting:
            problems.append(
                'no test claims the example at %r. Every fenced block of the docs is run, or checked against real '
                'output: add a Claim(%r, %r, handler) to CLAIMS in tests/ecosystem/test_docs_examples.py, with a '
                'handler that runs the example (run_playbook_block, run_task_block, run_shell_block, ...) or checks '
                'it as an output sample' % (block, block.document, block.first_line))
            continue
        if len(fitting) > 1 and len(fitting[0].head) == len(fitting[1].head):
            problems.append('claims %r and %r both fit %r: make their heads tell the blocks apart'
                            % (fitting[0].name, fitting[1].name, block))
        won[fitting[0].name].append(block)
    for name, blocks_won in won.items():
        if len(blocks_won) != 1:
            problems.append('claim %r wins %d blocks (%s): it must name exactly one (was the example changed or '
                            'removed? change the claim\'s head, or give the new block a claim of its own)'
                            % (name, len(blocks_won), ', '.join(map(repr, blocks_won)) or 'none'))
    return {name: blocks_won[0] for name, blocks_won in won.items() if len(blocks_won) == 1}, problems


def commands(block):
    """The commands of a shell block: continuation lines joined, blank lines and a leading ``$ `` prompt dropped."""
    joined = block.text.replace('\\\n', ' ')
    return [re.sub(r'^\$ ', '', line.strip()) for line in joined.split('\n') if line.strip()]


class GalaxyServer:
    """The parts of the Galaxy v3 API that ``ansible-galaxy collection install`` uses, serving one collection
    tarball (made by ``ansible-galaxy collection build``): ``/api/``, the collection, its versions, the version's
    download URL and sha256, and the download. ``requests`` lists the paths asked for."""

    def __init__(self, namespace, name, version, tarball):
        with open(tarball, 'rb') as handle:
            artifact = handle.read()
        base = '/api/v3/collections/%s/%s/' % (namespace, name)
        version_href = '%sversions/%s/' % (base, version)
        download = '/download/%s' % os.path.basename(tarball)
        self.routes = {
            '/api/': {'available_versions': {'v3': 'v3/'}},
            base: {'namespace': namespace, 'name': name, 'href': base,
                   'highest_version': {'version': version, 'href': version_href},
                   'created_at': '2026-01-01T00:00:00Z', 'updated_at': '2026-01-01T00:00:00Z'},
            base + 'versions/': {'meta': {'count': 1}, 'links': {'first': None, 'previous': None, 'next': None, 'last': None},
                                 'data': [{'version': version, 'href': version_href}]},
            version_href: {'version': version, 'href': version_href, 'namespace': {'name': namespace},
                           'collection': {'name': name}, 'download_url': download,
                           'artifact': {'filename': os.path.basename(tarball), 'size': len(artifact),
                                        'sha256': hashlib.sha256(artifact).hexdigest()},
                           'metadata': {'dependencies': {}}, 'signatures': []},
            download: artifact,
        }
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # pylint: disable=invalid-name
                path = self.path.split('?', 1)[0]
                server.requests.append(path)
                answer = server.routes.get(path, server.routes.get(path + '/'))  # ansible-galaxy asks for /api
                binary = isinstance(answer, bytes)
                body = answer if binary else json.dumps(answer or {'detail': 'Not found.'}).encode('utf-8')
                self.send_response(404 if answer is None else 200)
                self.send_header('Content-Type', 'application/octet-stream' if binary else 'application/json')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format, *args):  # pylint: disable=redefined-builtin
                pass

        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.url = 'http://127.0.0.1:%d/' % self.httpd.server_address[1]
        self.download_path = download
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
