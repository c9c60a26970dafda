# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a lookup read, kept for the other hosts and forks of one run (the lookups' option ``cache_seconds``).

Ansible forks a worker per host and task, and the worker exits: memory keeps nothing between two lookups. What is kept
is a file per account and lookup in the run's private temporary directory (``local_tmp``: made 0700 by the
controller as a run starts, before it forks, and removed as it ends), under a lock, so that forks asking at once wait
for the one that reads. A write by the collection's modules forgets the account's entries: it raises the account's
generation, and an entry read in an earlier generation is no longer served (nor kept, when its read began before).
A failed read is kept too, so that the forks waiting behind it fail at once instead of each trying in turn. The
cache only ever saves requests: when its files cannot be used, the lookup reads the service.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time

from ansible import constants as C

GENERATION = 'generation'


def account_folder(account):
    """The folder of the entries of ``account`` (its fingerprint)."""
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'uptime-lookups', account)


@contextlib.contextmanager
def _locked(path):
    with open(path, 'a', encoding='utf-8') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _generation(folder):
    try:
        with open(os.path.join(folder, GENERATION), encoding='utf-8') as handle:
            return int(handle.read() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def _kept(path, generation, seconds):
    """The entry at ``path`` when it is of ``generation`` and younger than ``seconds``, else None."""
    try:
        with open(path, encoding='utf-8') as handle:
            entry = json.load(handle)
    except (FileNotFoundError, ValueError):
        return None
    fresh = isinstance(entry, dict) and entry.get('generation') == generation and time.time() - entry.get('read_at', 0) < seconds
    return entry if fresh else None


def kept_read(account, options, seconds, read):
    """What ``read()`` returns for the lookup of ``options`` (a JSON-able value naming it whole) on ``account``: kept
    for ``seconds`` since the read began, read again after that, after a write forgot it, or when ``seconds`` is not
    positive. ``read()`` returns JSON-able data (a failure it met too, as data its caller tells apart); it is called
    once, whatever becomes of the cache."""
    if not seconds or seconds <= 0:
        return read()
    folder = account_folder(account)
    path = os.path.join(folder, hashlib.sha256(json.dumps(options, sort_keys=True).encode('utf-8')).hexdigest() + '.json')
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        lock = open(path + '.lock', 'a', encoding='utf-8')  # pylint: disable=consider-using-with
    except OSError:  # the run's directory cannot be written: read without the cache
        return read()
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            generation = _generation(folder)
            entry = _kept(path, generation, seconds)
        except OSError:  # no lock on this file system
            generation = entry = None
        if entry is not None:
            return entry['value']
        started = time.time()
        value = read()
        if generation is not None:
            try:
                with _locked(os.path.join(folder, GENERATION + '.lock')):
                    if _generation(folder) == generation:  # else a write forgot the account while this read ran
                        with open(path + '.new', 'w', encoding='utf-8') as handle:
                            json.dump({'generation': generation, 'read_at': started, 'value': value}, handle)
                        os.replace(path + '.new', path)
            except (OSError, TypeError, ValueError):  # a full disk, a value JSON cannot hold: kept nowhere
                pass
        return value


def forget(account):
    """Forget what was kept for ``account``: a write changed it."""
    folder = account_folder(account)
    if not os.path.isdir(folder):
        return
    with _locked(os.path.join(folder, GENERATION + '.lock')):
        generation = _generation(folder) + 1
        with open(os.path.join(folder, GENERATION + '.new'), 'w', encoding='utf-8') as handle:
            handle.write(str(generation))
        os.replace(os.path.join(folder, GENERATION + '.new'), os.path.join(folder, GENERATION))
