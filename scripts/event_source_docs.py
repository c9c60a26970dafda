"""docs/reference page of the event source, from its DOCUMENTATION and EXAMPLES (antsibull-docs knows no event sources).

Usage: python scripts/event_source_docs.py COLLECTION_DIR REFERENCE_DIR (the docs session of noxfile.py runs it).
The page has the shape of antsibull-docs' module pages, and index.rst gets a section that links it.
"""

from __future__ import annotations

import ast
import re
import sys

import yaml
from antsibull_docs.rst_labels import get_option_ref, get_plugin_ref
from antsibull_docs_parser import dom
from antsibull_docs_parser.parser import Context, parse
from antsibull_docs_parser.rst import to_rst

FQCN, TYPE = 'uptime.monitoring.events', 'event_source'
PLUGIN = dom.PluginIdentifier(fqcn=FQCN, type=TYPE)
BACKSLASH = '\\'
TYPES = {'str': 'string', 'bool': 'boolean', 'int': 'integer', 'dict': 'dictionary'}


def rst(texts, first, indent):
    """Each text of ``texts`` (Ansible markup) as an RST paragraph starting with ``first``, its other lines indented."""
    paragraphs = (own_options(to_rst(parse(text, Context(current_plugin=PLUGIN)), current_plugin=PLUGIN)) for text in texts)
    return '\n\n'.join(first + paragraph.replace('\n', '\n' + indent) for paragraph in paragraphs)


def own_options(text):
    """sphinx_antsibull_ext's :ansopt: knows no event sources: this source's options link to their rows."""
    def link(match):
        return f':ref:`{match[1]} <{get_option_ref(FQCN, TYPE, None, [match[1].replace(BACKSLASH, "")])}>`'
    return re.sub(r':ansopt:`uptime\.monitoring\.events#event\\_source:([^`]+)`', link, text)


def section(title, body):
    return f'{title}\n{"-" * len(title)}\n\n{body}\n\n'


def page(source, version):
    strings = {node.targets[0].id: node.value.value for node in ast.parse(source).body
               if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', '') in ('DOCUMENTATION', 'EXAMPLES')}
    doc = yaml.safe_load(strings['DOCUMENTATION'])
    title = f'{FQCN} event source -- {doc["short_description"].rstrip(".")}'
    rows = ['  * - Parameter\n    - Comments']
    for name, option in sorted(doc['options'].items()):
        kind = TYPES.get(option['type'], option['type'])
        if 'elements' in option:
            kind += f' / elements={TYPES.get(option["elements"], option["elements"])}'
        facts = list(option['description'])
        if 'choices' in option:
            facts.append('Choices: ' + ', '.join(f'V({choice})' for choice in option['choices']) + '.')
        if 'default' in option:
            default = option['default']
            values = default if isinstance(default, list) else [str(default).lower() if isinstance(default, bool) else default]
            facts.append('Default: ' + ', '.join(f'V({value})' for value in values) + '.')
        rows.append(f'  * - .. _{get_option_ref(FQCN, TYPE, None, [name])}:\n\n      **{name}**\n\n      *{kind}*\n\n'
                    f'    - {rst(facts, " " * 6, " " * 6).lstrip()}')
    note = (f'.. note::\n    This event source is part of the uptime.monitoring collection (version {version}).\n\n'
            f'    To use it in a rulebook, specify: :code:`{FQCN}` under :code:`sources`.\n\n')
    table = '.. list-table::\n  :width: 100%\n  :widths: auto\n  :header-rows: 1\n\n' + '\n\n'.join(rows)
    examples = '.. code-block:: yaml+jinja\n\n' + ''.join(f'    {line}'.rstrip() + '\n' for line in strings['EXAMPLES'].strip('\n').split('\n'))
    return (f':orphan:\n\n.. _{get_plugin_ref(FQCN, TYPE)}:\n\n{title}\n{"+" * len(title)}\n\n{note}'
            '.. contents::\n   :local:\n   :depth: 1\n\n'
            + section('Synopsis', rst(doc['description'], '- ', '  '))
            + section('Requirements', 'The below requirements are needed on the host that runs ansible-rulebook.\n\n'
                      + '\n'.join(f'- {requirement}' for requirement in doc.get('requirements', [])))
            + section('Parameters', table) + section('Notes', rst(doc.get('notes', []), '- ', '  '))
            + section('Examples', examples.rstrip('\n'))).rstrip('\n') + '\n', doc['short_description'].rstrip('.')


def main(collection, reference):
    version = yaml.safe_load(open(f'{collection}/galaxy.yml', encoding='utf-8'))['version']
    text, summary = page(open(f'{collection}/extensions/eda/plugins/event_source/events.py', encoding='utf-8').read(), version)
    with open(f'{reference}/events_event_source.rst', 'w', encoding='utf-8') as handle:
        handle.write(text)
    section_text = (f'.. _event_source_plugins_in_uptime.monitoring:\n\nEvent Sources\n~~~~~~~~~~~~~\n\n'
                    f'* :ref:`events event source <{get_plugin_ref(FQCN, TYPE)}>` -- {summary}\n\n'
                    '.. toctree::\n    :maxdepth: 1\n    :hidden:\n\n    events_event_source\n\n')
    with open(f'{reference}/index.rst', encoding='utf-8') as handle:
        index = handle.read()
    # A plugin type of the Plugin Index: before the Role Index when there is one, else at the end.
    anchor = index.find('.. _role_plugins_in_uptime.monitoring:')
    index = index[:anchor] + section_text + index[anchor:] if anchor >= 0 else index.rstrip('\n') + '\n\n' + section_text
    with open(f'{reference}/index.rst', 'w', encoding='utf-8') as handle:
        handle.write(index.rstrip('\n') + '\n')


if __name__ == '__main__':
    main(*sys.argv[1:])
