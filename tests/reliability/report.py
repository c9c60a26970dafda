#!/usr/bin/env python
"""Turn the results of a reliability run into docs/reliability.md.

    python tests/reliability/report.py [--check] [--results DIR] [--output FILE]

The tests of tests/reliability/ write one JSON row per result to
tests/output/reliability/results/<group>.jsonl; this script renders them, with the
defects listed in known_issues.py, as Markdown. Everything above the line MEASURED_MARKER
is a verdict that only changes when the behaviour of the collection changes; below it
are the figures of the last run (timings, request counts, messages), which vary.

``--check`` writes the file, then fails when the verdict part differs from what the file
held before: the committed copy must match what the run produces (commit the
regenerated file). Nothing is written when the results are incomplete.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS_DIR = os.path.join(REPO_ROOT, 'tests', 'output', 'reliability', 'results')
OUTPUT = os.path.join(REPO_ROOT, 'docs', 'reliability.md')
GROUPS = ('fault_matrix', 'transport', 'lost_answers', 'bad_input', 'secrets', 'concurrency', 'rate_limit')
MEASURED_MARKER = '<!-- Below this line: figures of the last run, which vary from run to run (not compared). -->'

sys.path.insert(0, HERE)
import known_issues  # noqa: E402  pylint: disable=wrong-import-position
from matrix_settings import RETRIES, SLOW_SECONDS, TIMEOUT  # noqa: E402  pylint: disable=wrong-import-position

VARIANTS = (
    ('as sent', 'The fault answers instead of the service (nothing was processed; a slow answer is processed '
                'after the client gave up).'),
    ('answer lost', 'Writes only: the service did the work, then the fault replaced its answer.'),
    ('fault persists', 'The fault answers every attempt (1 + %d retries).' % RETRIES),
)
GOOD_OUTCOMES = ('recovered', 'failed', 'failed, may be applied', 'failed, write reported')


def load(results_dir):
    """``{group: [rows]}``, the last row of each key, in the order of the tests that recorded them (then of
    recording: rows of one test, or rows without an order)."""
    groups = {}
    for group in GROUPS:
        path = os.path.join(results_dir, '%s.jsonl' % group)
        if not os.path.exists(path):
            continue
        rows = collections.OrderedDict()
        with open(path, encoding='utf-8') as handle:
            for line in handle:
                if line.strip():
                    row = json.loads(line)
                    rows[row['key']] = row
        groups[group] = sorted(rows.values(), key=lambda row: row.get('order', 0))
    return groups


def table(header, rows):
    lines = ['| %s |' % ' | '.join(header), '|%s|' % '|'.join('---' for dummy in header)]
    lines.extend('| %s |' % ' | '.join(str(cell).replace('|', '\\|').replace('\n', ' ') for cell in row)
                 for row in rows)
    return '\n'.join(lines)


def code(text):
    return '`%s`' % str(text).replace('`', "'")


def issue_note(row):
    return ' (%s)' % row['known_issue'] if row.get('known_issue') else ''


# -- the fault matrix ---------------------------------------------------------------------------

def matrix_cell(row):
    if row is None:
        return 'n/a'
    outcome = row['outcome']
    if outcome in GOOD_OUTCOMES and not row.get('problems'):
        return outcome
    return '**%s**%s' % (outcome, issue_note(row))


def matrix_sections(rows):
    faults = list(dict.fromkeys(row['fault'] for row in rows))
    out = []
    for variant, meaning in VARIANTS:
        cells = {(row['module'], row['operation'], row['fault']): row for row in rows if row['variant'] == variant}
        if not cells:
            continue
        operations = list(dict.fromkeys((module, operation) for module, operation, dummy in cells))
        body = [['%s %s' % (module, operation)] + [matrix_cell(cells.get((module, operation, fault)))
                                                   for fault in faults]
                for module, operation in operations]
        out.append('### %s\n\n%s\n\n%s' % (variant.capitalize(), meaning, table(['module, operation'] + faults, body)))
    return '\n\n'.join(out)


def matrix_counts(rows):
    counts = collections.Counter(row['outcome'] if not row.get('problems') or row['outcome'] not in GOOD_OUTCOMES
                                 else 'problem' for row in rows)
    return counts


# -- the document ---------------------------------------------------------------------------------

def counted(counter):
    return ', '.join('%d %s' % (number, kind) for kind, number in sorted(counter.items()))


def headline(groups):
    """Rows of the headline table."""
    matrix = groups['fault_matrix']
    counts = matrix_counts(matrix)
    bad = [row for row in matrix if row['outcome'] not in GOOD_OUTCOMES or row.get('problems')]
    bad_input = groups['bad_input']
    rejected = [row for row in bad_input if not row['problems']]
    secrets = groups['secrets']
    leaking = sorted({issue for row in secrets for issue in row.get('known_issues', [])})
    concurrency = {row['key']: row for row in groups['concurrency']}
    playbook = concurrency.get('playbook', {})
    races = [key for key in concurrency if key.startswith('race|')]
    rate = groups['rate_limit'][0] if groups['rate_limit'] else {}
    lost = groups['lost_answers']
    lost_posts = lost_post_cells(matrix)
    transport = groups['transport']
    return [
        ['Fault matrix', '%d cells: %d recovered, %d failed with a clear message and no change, %d failed saying '
                         'the write may have been applied, %d failed after a write they report, %d with a defect%s' % (
                             len(matrix), counts.get('recovered', 0), counts.get('failed', 0),
                             counts.get('failed, may be applied', 0), counts.get('failed, write reported', 0), len(bad),
                             ' (%s)' % counted(collections.Counter('%s%s' % (row['outcome'], issue_note(row))
                                                                   for row in bad)) if bad else '')],
        ['Transport security', '%d clients, %d cases, %d pairs against the HTTPS emulator: %d as required, '
                               '%d with a defect' % (
                                   len({row['client'] for row in transport}), len({row['case'] for row in transport}),
                                   len(transport), len([row for row in transport if not row['problems']]),
                                   len([row for row in transport if row['problems']]))],
        ['Lost POST answers', '%d scenarios, %d without a duplicate; and %d lost POST answers in the fault matrix, '
                              '%d without a duplicate' % (
                                  len(lost), len([row for row in lost if row.get('duplicate') is False]),
                                  len(lost_posts), len([row for row in lost_posts if not row.get('problems')]))],
        ['Bad input', '%d invalid inputs across five modules: %d rejected with a message naming the field and no '
                      'request it could avoid%s' % (
                          len(bad_input), len(rejected),
                          '; %s' % counted(collections.Counter('not yet%s' % issue_note(row) for row in bad_input
                                                               if row['problems'])) if bad_input != rejected else '')],
        ['Secrets at `-vvv --diff`', '%d integration targets; secrets found outside known issues: %s%s' % (
            len(secrets), sum(row['hits'] for row in secrets if not row.get('known_issues')),
            '; known issues with leaks: %s' % ', '.join(leaking) if leaking else '')],
        ['Concurrency', '%s hosts, `forks: %s`, %s tasks: %s failed; %s monitors and %s incident afterwards; %d '
                        'forced races ended in one record and a success' % (
                            playbook.get('hosts'), playbook.get('forks'), playbook.get('tasks'),
                            playbook.get('failed_tasks'), playbook.get('monitors'), playbook.get('incidents'),
                            len(races))],
        ['Rate limit', '%s monitor changes at %s requests a minute: %s failed' % (
            rate.get('changes'), rate.get('per_minute'), rate.get('failed_tasks'))],
    ]


def lost_post_cells(matrix):
    """The cells of the fault matrix whose POST was processed and its answer lost."""
    return [row for row in matrix if row['variant'] == 'answer lost' and row['operation'] == 'create']


def transport_section(rows):
    clients = list(dict.fromkeys(row['client'] for row in rows))
    cases = list(dict.fromkeys(row['case'] for row in rows))
    cells = {(row['client'], row['case']): row for row in rows}

    def cell(row):
        if row is None:
            return 'n/a'
        return row['outcome'] if not row['problems'] else '**%s**: %s' % (row['outcome'], '; '.join(row['problems']))
    return '''## Transport security

Every client of the service (`tests/reliability/transport_clients.py`: each module in-process, and a
module run by `ansible-playbook`, whose own warning and failure lines are read) against the emulator
serving HTTPS with a certificate of a test CA made at run time (`tests/reliability/test_transport.py`):

* **ok**: the task succeeded and showed no transport warning; **ok, warned**: it succeeded and warned
  that the certificate is not checked (`validate_certs: false`) or that the API key travels unencrypted
  (`http://` to an address that is not the loopback);
* **failed in one line**: the task failed with one line naming the certificate or handshake problem and
  the option that solves it (`ca_path`, `validate_certs`), or the redirect; no traceback.

In every case the API key appears in no output. For the certificate and handshake failures no request
reached the service (no request body was sent). The environment bundles (`REQUESTS_CA_BUNDLE`,
`CURL_CA_BUNDLE`, `SSL_CERT_FILE`) name an unrelated CA: they must not override `ca_path` or
`validate_certs: false`. The redirects (302 from the service) point to a second local server that records
what it receives: it received nothing, so the `Authorization` header never went there.

The module run by `ansible-playbook` adds to the same module run in-process only how Ansible shows its
result, which is the same whatever the case: it runs one case of each kind (a success, a success with a
warning, a failure), **n/a** in the other rows.

''' + table(['case'] + clients, [[case] + [cell(cells.get((client, case))) for client in clients] for case in cases])


def verdict_part(groups):
    matrix = groups['fault_matrix']
    lost = groups['lost_answers']
    bad_input = groups['bad_input']
    secrets = groups['secrets']
    concurrency = {row['key']: row for row in groups['concurrency']}
    playbook = concurrency.get('playbook', {})
    races = [row for key, row in concurrency.items() if key.startswith('race|')]
    rate = groups['rate_limit'][0] if groups['rate_limit'] else {}
    seen_issues = collections.defaultdict(list)
    for row in matrix:
        if row.get('known_issue'):
            seen_issues[row['known_issue']].append('fault matrix: %s' % row['key'].replace('|', ', '))
    for row in bad_input:
        if row.get('known_issue'):
            seen_issues[row['known_issue']].append('bad input: %s' % row['key'])
    for row in secrets:
        for issue in row.get('known_issues', []):
            seen_issues[issue].append('secrets: output of target %s' % row['target'])

    parts = ['''# Reliability and security

What the collection does when the service or the user misbehaves, shown by the tests of
`tests/reliability/` (issue #7). This file is **generated** by `tests/reliability/report.py` from the
results of `./scripts/test.sh -s reliability`; do not edit it by hand. The run regenerates it and fails
when the part above the "figures of the last run" differs from the committed copy: commit the
regenerated file with the change that caused the difference. Defects that are reported and not yet
fixed are listed in `tests/reliability/known_issues.py`; their tests run as strict expected failures
(they turn the run red the moment the defect is fixed, so that the entry gets removed).''']
    parts.append('## Headline\n\n' + table(['What', 'Result'], headline(groups)) + '\n\n'
                 'Defect kinds are named in [Open defects](#open-defects).')

    parts.append('''## Fault matrix

Each cell runs one module in-process against the emulator (`timeout: %(timeout)g`, `retries: %(retries)d`) with
one fault queued on the request that carries the operation: the search, the POST, the PUT, the DELETE, or the
second page of a list. The outcome is one of:

* **recovered**: the task succeeded and the service holds exactly what was asked, no duplicate;
* **failed**: the task failed with one line naming the method, the path, the status and the service's
  message (when there was an answer), and the service is unchanged;
* **failed, may be applied**: the task failed, the write did reach the service, and the message says so;
* **failed, write reported**: the task failed after a write the service accepted (a create whose pause
  then failed): it reports `changed`, and its message names what it wrote.

Anything else is a defect: a traceback, a success that did not reach the asked state, an unclear
message, or a **hidden change** (the task failed, the service changed, and the message does not say
so). After every cell the same task runs again without a fault: it must succeed, reach the asked state
and never send a second POST for a record the first run created. The slow answer is %(slow)g s against a
%(timeout)g s timeout; the HTML page comes with status 200, and the proxy's 404 is an HTML page too; the client's
own backoff is divided by 10 to keep the matrix quick (waits the service asks for, `Retry-After`, are
kept).

A write that recovered must say `changed`, and the run after a cell that recovered must change nothing.
A POST whose answer was lost must be sent once: the module reads the record back instead of posting again.

The last three columns run against the emulator serving HTTPS with a test CA (`ca_path` set to it):
the connection that would carry the operation has its handshake refused with a TLS alert, or meets an
expired certificate, or a certificate for another host name. The handshake comes before the request,
so nothing reaches the service: these are never retried (a cell fails when the operation reaches the
service after the failed handshake), and the message names the problem and the option that solves it.
A fault that persists would meet that single attempt again, so these columns run as sent only.

''' % {'timeout': TIMEOUT, 'retries': RETRIES, 'slow': SLOW_SECONDS} + matrix_sections(matrix))

    parts.append(transport_section(groups['transport']))

    parts.append('## Lost POST answers\n\nThe service stored the record, the answer never arrived. The module '
                 'reads the record back by its natural key (a monitor by name, an incident by monitor and start '
                 'time) instead of posting again, and the next run posts nothing. One lost answer to the POST of '
                 'each module, whatever replaced it, is a cell of the fault matrix\'s "answer lost" row (%d cells: %s); '
                 'here are the cases it has no cell for.\n\n' % (
                     len(lost_post_cells(matrix)), ', '.join(sorted({row['module'] for row in lost_post_cells(matrix)})))
                 + table(
                     ['module', 'lost answer', 'outcome'],
                     [[row['module'], row['answer'], row['outcome']] for row in lost]))

    parts.append('## Bad input\n\nEvery invalid task must fail with one line naming the field. Where the module '
                 'can judge the input alone it must send no request at all; where only the service\'s records '
                 'can tell (a name that does not exist, an incident that would overlap the last one, a write-once '
                 'time already set) it may read but never write.\n\n' + table(
                     ['module', 'invalid input', 'field named', 'requests', 'verdict'],
                     [[row['module'], row['case'], code(row['field']),
                       ('reads only' if row['needs_service'] else 'none') if not row['writes'] and (
                           row['needs_service'] or not row['requests']) else '**%d**' % row['requests'],
                       'ok' if not row['problems'] else '**%s**%s' % ('; '.join(row['problems']), issue_note(row))]
                      for row in bad_input]))

    parts.append('''## Secrets

Every integration target runs at `-vvv --diff` (`ansible-test integration -vvv`, with diff always on),
each against an emulator of its own, and all of its output is searched for every secret the targets
use: the three API keys (given through `module_defaults` and task arguments), Basic-auth passwords, and the values of
sensitive request headers (`Authorization`, `Cookie`, `X-Auth-Token`, `X-Api-Key`, ...). The target
`reliability_secrets` goes through every path where a secret could surface: results, diffs, check mode,
exports, the monitor nested in an incident, the bulk module, and failures whose arguments carry secrets
(refused by the argument spec, by the collection, by the service, unreachable service, wrong key).
Every URL the emulator received is searched too (its request lines, written with `--verbose`): a secret
must never travel in a URL. Left out of the search is only the output of the harness tasks that print
the emulator's own record of the requests (role `setup_emulator`, `uri` calls to `/_emulator`): that
record is what the service received, Authorization header included.

For playbook authors: Ansible itself prints every loop item in the result of each iteration (at `-v`
and more; `loop_control.label` only shortens the header line). Keep secrets out of loop items (pass
them as variables) or set `no_log: true` on such a task; the collection cannot censor what the
controller prints.

Secrets found outside known issues: **%s**.%s''' % (
        sum(row['hits'] for row in secrets if not row.get('known_issues')) if secrets else 'not run',
        '\n\n' + table(['target', 'known issue'], [[row['target'], ', '.join(row['known_issues'])]
                                                   for row in secrets if row.get('known_issues')])
        if any(row.get('known_issues') for row in secrets) else ''))

    parts.append('''## Concurrency

A playbook with %(hosts)s inventory hosts and `forks: %(forks)s`: every host ensures the same 5 monitors
and the same incident with `delegate_to: localhost`. The emulator holds every POST %(latency)s s before
storing it, as a real service takes a moment, so that forks searching meanwhile find nothing, post too
and are refused ("name taken", "already an ongoing incident"): real races, on purpose.

| | |
|---|---|
| tasks | %(tasks)s |
| failed tasks | %(failed_tasks)s |
| monitors afterwards | %(monitors)s |
| incidents afterwards | %(incidents)s |

Races forced in-process (another client creates the record between the module's lookup and its POST):

''' % dict(hosts=playbook.get('hosts'), forks=playbook.get('forks'), latency=playbook.get('write_latency'),
           tasks=playbook.get('tasks'), failed_tasks=playbook.get('failed_tasks'), monitors=playbook.get('monitors'),
           incidents=playbook.get('incidents')) + table(['case', 'outcome'], [[row['case'], row['outcome']] for row in races]))

    parts.append('''## Rate limit

An emulator with the service's limit, %(per_minute)s requests a minute per account, and 200 monitors.
One playbook makes %(changes)s changes with the `monitors` module: 100 updates and 100 creates in one
task, 100 deletes in the next. Failed tasks: **%(failed)s**. The run passes only when it ends with exactly
the asked monitors, at most 10%% of the requests were refused with 429, and the client was idle for at
least half of the minimum time the limit imposes (it waited for `Retry-After` instead of hammering).
The figures of the last run are below.''' % dict(
        per_minute=rate.get('per_minute'), changes=rate.get('changes'), failed=rate.get('failed_tasks')))

    issue_lines = []
    for issue_id, issue in known_issues.ISSUES.items():
        seen = seen_issues.get(issue_id, [])
        issue_lines.append('### %s: %s\n\n* where: %s\n* suggested fix: %s\n* shown by: %s' % (
            issue_id, issue['title'], issue['where'], issue['fix'],
            '; '.join(seen) if seen else 'nothing in this run (fixed? then remove it from known_issues.py)'))
    parts.append('## Open defects\n\nReported, not fixed yet (`tests/reliability/known_issues.py`).\n\n'
                 + '\n\n'.join(issue_lines))
    return '\n\n'.join(parts) + '\n'


def measured_part(groups):
    matrix = groups['fault_matrix']
    parts = [MEASURED_MARKER, '## Figures of the last run']
    messages = collections.OrderedDict()
    for row in matrix:
        if row['msg']:
            messages.setdefault((row['fault'], row['msg']), []).append('%s %s (%s)' % (
                row['module'], row['operation'], row['variant']))
    parts.append('### Failure messages of the fault matrix\n\n' + table(
        ['fault', 'message', 'cells'],
        [[fault, code(msg), len(cells)] for (fault, msg), cells in messages.items()]))
    parts.append('Fault matrix: %d cells, %.0f s in the modules; attempts on the faulted request: %s.' % (
        len(matrix), sum(row['seconds'] for row in matrix),
        ', '.join('%s: %d' % item for item in sorted(collections.Counter(row['attempts'] for row in matrix).items()))))
    parts.append('### Messages of the transport cases\n\n' + table(
        ['case', 'message or warning (first client)'],
        [[row['case'], code(row['msg'] or '; '.join(row['warnings']) or '-')]
         for row in groups['transport'] if row['client'] == groups['transport'][0]['client']]))
    parts.append('### Requests of the lost answers\n\n' + table(
        ['module', 'lost answer', 'requests in order'],
        [[row['module'], row['answer'], ', '.join(row['requests'])] for row in groups['lost_answers']]))
    parts.append('### Messages of the bad inputs\n\n' + table(
        ['module', 'invalid input', 'message'],
        [[row['module'], row['case'], code(row['msg'])] for row in groups['bad_input']]))
    secrets = groups['secrets']
    parts.append('### Secrets\n\n%s\n\nSecrets searched for: %s.' % (table(
        ['target', 'bytes searched', 'harness tasks left out', 'URLs searched', 'hits'],
        [[row['target'], row['bytes_scanned'],
          row['harness_tasks_excluded'], row['urls_scanned'], row['hits']] for row in secrets]),
        secrets[0]['secrets'] if secrets else 0))
    concurrency = {row['key']: row for row in groups['concurrency']}
    playbook = concurrency.get('playbook', {})
    parts.append('### Concurrency\n\nThe playbook took %s s and sent %s requests: %s monitor POSTs (%s refused as '
                 'races, each read back and ended in success), %s incident POSTs (%s refused).' % (
                     playbook.get('seconds'), playbook.get('requests'), playbook.get('monitor_posts'),
                     playbook.get('monitor_posts_refused'), playbook.get('incident_posts'),
                     playbook.get('incident_posts_refused')))
    rate = groups['rate_limit'][0] if groups['rate_limit'] else {}
    windows = rate.get('windows') or []
    parts.append('### Rate limit\n\nThe playbook took **%s s** (the limit allows no less than %s s for %s requests). '
                 'It sent %s requests: %s accepted, %s refused with 429. Accepted per minute: %s. The client sat '
                 'idle %s s in all, in gaps of %s s: it waited as long as `Retry-After` said, then went on.' % (
                     rate.get('seconds'), rate.get('minimum_seconds'), rate.get('accepted'), rate.get('requests'),
                     rate.get('accepted'), rate.get('refused_429'),
                     ', '.join('%d (+%d refused)' % (w['accepted'], w['refused']) for w in windows),
                     rate.get('idle_seconds'), ', '.join(str(gap) for gap in rate.get('idle_gaps', []))))
    return '\n\n'.join(parts) + '\n'


def run_part(results_dir):
    """Timings of the whole section, when tests/reliability/run.py wrote them."""
    path = os.path.join(results_dir, 'run.json')
    if not os.path.exists(path):
        return ''
    with open(path, encoding='utf-8') as handle:
        run = json.load(handle)
    secrets = ' The secrets test searched the output of the integration run of ansible-core 2.19 (nox -s integration-2.19).'
    return ('\n### The run\n\n%s s in all, on %s CPU(s): %s s for the tests of one pytest run and, beside them, '
            '%s s for the rate-limit test. Counts: %s.%s\n' % (run['seconds'], run['cpus'], run['foreground_seconds'],
                                                               run['background_seconds'], run['counts'], secrets))


def render(groups, results_dir=RESULTS_DIR):
    return verdict_part(groups) + '\n' + measured_part(groups) + run_part(results_dir)


def compared(text):
    return text.split(MEASURED_MARKER)[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description='Render docs/reliability.md from the results of a reliability run.')
    parser.add_argument('--results', default=RESULTS_DIR, help='directory of the *.jsonl results')
    parser.add_argument('--output', default=OUTPUT, help='file to write (default docs/reliability.md)')
    parser.add_argument('--check', action='store_true',
                        help='fail when the verdict part differs from what the file held before')
    args = parser.parse_args(argv)

    groups = load(args.results)
    missing = [group for group in GROUPS if not groups.get(group)]
    shown = os.path.relpath(args.output, REPO_ROOT)
    if missing:
        print('report: incomplete results (no %s): %s not regenerated' % (', '.join(missing), shown))
        return 1
    previous = None
    if os.path.exists(args.output):
        with open(args.output, encoding='utf-8') as handle:
            previous = handle.read()
    text = render(groups, args.results)
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, 'w', encoding='utf-8') as handle:
        handle.write(text)
    if args.check and (previous is None or compared(previous) != compared(text)):
        print('report: %s was out of date; the run regenerated it: review and commit it' % shown)
        return 1
    print('report: %s %s' % (shown, 'regenerated, verdicts unchanged' if previous is not None and
                             compared(previous) == compared(text) else 'written'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
