# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The law of what a lookup keeps within a run (``cache_seconds``): over a drawn sequence of lookups (drawn options),
writes by the collection's modules in Ansible's worker, and writes by another client, in one run:

- every lookup returns what its info module returns at that moment, but after another client's write, which it may
  miss until the bound (``cache_seconds``) has passed;
- a lookup asked again with the same options within the bound sends no request, and one never asked does;
- with ``cache_seconds: 0`` each lookup reads.

That forks of one run share what was read is a law of ansible-playbook (tests/ecosystem/test_lookups_at_scale.py)."""

from __future__ import annotations

from hypothesis import example, given, strategies as st

from laws import budget, fresh, holds, run
from module_runner import run_action, run_lookup
import strategies as gen

OPTIONS = [{}, {'name': 'shop'}, {'status': 'paused'}, {'fields': ['name', 'interval']}, {'search': 'o'}]
STEPS = st.lists(st.one_of(
    st.tuples(st.just('lookup'), st.sampled_from(range(len(OPTIONS)))),
    st.tuples(st.just('write in the worker'), st.sampled_from([60, 300, 600])),
    st.tuples(st.just('write by another client'), st.sampled_from([180, 900]))), min_size=1, max_size=8)


@budget(30)
@given(steps=STEPS, seconds=st.sampled_from([0, 3600]))
@example(steps=[('lookup', 0), ('write in the worker', 300), ('lookup', 0)], seconds=3600).via('issue 55: a lookup reads its write')
@example(steps=[('lookup', 1), ('lookup', 1), ('lookup', 2)], seconds=3600).via('issue 55: one read for a lookup asked again')
def test_a_lookup_reads_once_a_run_and_sees_the_collection_s_writes(emulator, connection, steps, seconds):
    ids = fresh(emulator, stored=[gen.record({'name': 'shop', 'url': 'https://shop.example.com/', 'interval': 60}),
                                  gen.record({'name': 'blog', 'url': 'https://blog.example.com/', 'interval': 300})])
    asked, missed = set(), False  # options asked since the last write of the collection; another client's write since
    for step, value in steps:
        if step == 'write in the worker':
            written = run_action('monitor', dict(connection, name='shop', url='https://shop.example.com/', interval=value))
            holds(not written.failed, 'the write succeeds', result=written.result)
            if written.changed:
                asked, missed = set(), False
            continue
        if step == 'write by another client':  # as a module run as a module: nothing in the worker sees it
            written = run(connection, 'monitor', {'id': ids[1], 'interval': value})
            holds(not written.failed, 'the write succeeds', result=written.result)
            missed = missed or bool(written.changed)
            continue
        options = OPTIONS[value]
        emulator.clear_log()
        looked_up = run_lookup('monitors', dict(connection, cache_seconds=seconds, **options))
        sent = emulator.log()
        holds(not looked_up.failed, 'the lookup succeeds', result=looked_up.result)
        module = run(connection, 'monitor_info', options)
        if not missed or seconds == 0:
            holds(looked_up['records'] == module['monitors'], 'what the info module returns', options=options, steps=steps,
                  lookup=looked_up['records'], module=module['monitors'])
        kept = seconds > 0 and value in asked
        holds(bool(sent) != kept, 'a lookup asked again within the bound sends no request, any other does', options=options,
              steps=steps, sent=[entry['path'] for entry in sent], seconds=seconds)
        asked.add(value)
