# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The weight of the test suite against the product, as CONTRIBUTING.md counts it: a promise is tested as a law over
generated input, once, at one level; a suite that grows faster than the product has started proving things twice."""

from __future__ import annotations

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEST_SUFFIXES = ('.py', '.yml', '.yaml', '.sh', '.j2', '.ini', '.cfg')
# Twice the product, and room for the laws of every surface (issue 45): netbox.netbox's suite weighs 2.16.
MOST = 2.2


def lines(paths, suffixes):
    files = subprocess.run(['git', 'ls-files', '-z', *paths], cwd=ROOT, check=True, capture_output=True).stdout.decode().split('\0')
    total = 0
    for name in files:
        if name.endswith(suffixes) and os.path.isfile(os.path.join(ROOT, name)):
            with open(os.path.join(ROOT, name), 'rb') as handle:
                total += handle.read().count(b'\n')
    return total


def test_tests_weigh_at_most_2_2_times_the_product():
    product = lines(['plugins', 'extensions'], ('.py',))
    tests = lines(['tests'], TEST_SUFFIXES)
    print('tests/: %d lines; product: %d lines; ratio %.2f' % (tests, product, tests / product))
    assert product > 1000, 'the product count found almost nothing: the paths above no longer hold it'
    assert tests <= MOST * product, 'tests/ holds %d lines, %.2f times the product (%d): at most %.1f' % (
        tests, tests / product, product, MOST)
