# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a lookup read, kept for the other hosts and forks of one run (the lookups' option ``cache_seconds``).

Ansible forks a worker per host and task, and the worker exits: memory keeps nothing between two lookups. What is kept
is a file per account and lookup in the run's private temporary directory (``local_tmp``: made 0700 by the
controller as a run starts, before it forks, and removed as it ends), under a lock, so that forks asking at once wait
for the one that reads. A write by the collection's modules in the worker forgets the account's entries.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time

from ansible import constants as C

# A file in the account's folder, touched when its entries are forgotten: a read that began before then is not kept.
FORGOTTEN = 'forgotten'


def account_folder(account):
    """The folder of the entries of ``account`` (its fingerprint)."""
    return os.path.join(C.DEFAULT_LOCAL_TMP, 'uptime-lookups', account)


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except FileNotFoundError:
        return None


def kept_read(account, options, seconds, read):
    """What ``read()`` returns for the lookup of ``options`` (a JSON-able value naming it whole) on ``account``: kept
    for ``seconds`` since it was read, read again after that or when ``seconds`` is not positive."""
    if not seconds or seconds <= 0:
        return read()
    folder = account_folder(account)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, hashlib.sha256(json.dumps(options, sort_keys=True).encode('utf-8')).hexdigest() + '.json')
    with open(path + '.lock', 'a', encoding='utf-8') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        written, forgotten = _mtime(path), _mtime(os.path.join(folder, FORGOTTEN))
        if written is not None and time.time() - written < seconds and (forgotten is None or written > forgotten):
            with open(path, encoding='utf-8') as handle:
                return json.load(handle)
        started = time.time()
        value = read()
        forgotten = _mtime(os.path.join(folder, FORGOTTEN))
        if forgotten is None or forgotten < started:
            with open(path + '.new', 'w', encoding='utf-8') as handle:
                json.dump(value, handle)
            os.replace(path + '.new', path)
        return value


def forget(account):
    """Forget what was kept for ``account``: a write changed it."""
    folder = account_folder(account)
    if not os.path.isdir(folder):
        return
    with open(os.path.join(folder, FORGOTTEN), 'w', encoding='utf-8'):
        pass
    for name in os.listdir(folder):
        if name.endswith('.json'):
            try:
                os.remove(os.path.join(folder, name))
            except FileNotFoundError:
                pass
