# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The law of what was renamed before the first release, read from the table the modules read (``_renamed.RENAMED``):
an old spelling, in a task otherwise right, fails before any request, in one line that names where it was written,
the new spelling and the value given; the new spelling takes that value."""

from __future__ import annotations

from hypothesis import given, strategies as st

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from laws import MODULES, budget, fresh, holds, run
import strategies as gen

from ansible_collections.uptime.monitoring.plugins.module_utils._bulk import MONITORS_ARGSPEC
from ansible_collections.uptime.monitoring.plugins.module_utils._module import CONNECTION_ARGSPEC
from ansible_collections.uptime.monitoring.plugins.module_utils._renamed import RENAMED

SPECS = {'monitors': MONITORS_ARGSPEC}
# A task of each module that is right but for the old spelling put into it.
RIGHT_TASKS = {
    'monitor': gen.monitors(name='shop'),
    'monitors': st.lists(gen.monitors(), min_size=1, max_size=3, unique_by=lambda entry: entry['name']).map(
        lambda config: {'state': 'merged', 'config': config}),
    'incident': st.just({'monitor': 'shop'}),
}


def spec_of(module):
    return dict(CONNECTION_ARGSPEC, **SPECS.get(module, getattr(MODULES[module], 'ARGUMENT_SPEC', {})))


def values_of(option):
    """The values an option takes: its choices, else any of its type."""
    if option.get('choices'):
        return st.sampled_from(option['choices'])
    return {'bool': st.booleans(), 'int': st.integers(1, 10 ** 6)}.get(option['type'], st.text(min_size=1, max_size=20))


@budget(20)
@given(module=st.sampled_from(sorted(RENAMED)), data=st.data())
def test_an_old_spelling_fails_naming_the_new_one(emulator, connection, module, data):
    old, new = data.draw(st.sampled_from(sorted(RENAMED[module].items())), label='renamed')
    *path, name = old.split('.')
    spec = spec_of(module)
    args = data.draw(RIGHT_TASKS[module], label='task')
    place, where, option = args, '', spec
    for part in path:  # into one entry of a list option
        entries = place[part[:-2]]
        index = data.draw(st.integers(0, len(entries) - 1), label='entry')
        place, where, option = entries[index], '%s%s[%d].' % (where, part[:-2], index), option[part[:-2]]['options']
    place.pop(new, None)
    value = data.draw(values_of(option[new]), label='value')
    place[name] = value
    fresh(emulator)
    out = run(connection, module, args)
    holds(out.failed and out.crash is None, 'the task fails', result=out.result, crash=out.crash)
    msg = out.result.get('msg', '')
    shown = str(value).lower() if isinstance(value, bool) else str(value)
    holds('\n' not in msg and msg.startswith(where + name + ':') and new in msg and shown in msg,
          'one line names where the old spelling is, the new one and the value', msg=msg, old=old, new=new, value=value)
    holds(emulator.log() == [], 'nothing is sent', sent=emulator.log())
    del place[name]
    place[new] = value
    validation = ArgumentSpecValidator(spec).validate(dict(connection, **args))
    holds(not validation.errors.errors, 'the new spelling takes the value', errors=validation.errors.messages, args=args)
