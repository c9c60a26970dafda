"""Import paths shared by every pytest suite under tests/.

``import ansible_collections.uptime.monitoring...`` works from a plain checkout: when the repository
does not already live at ``.../ansible_collections/uptime/monitoring`` a symlink tree is made under
``build/pytest_collections`` and put on ``sys.path``. ``tests/`` goes on ``sys.path`` too, for
``from emulator.control import Emulator``.
"""

from __future__ import annotations

import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _collections_path():
    """Return a directory that contains ``ansible_collections/uptime/monitoring`` pointing at this repository."""
    namespace_dir = os.path.dirname(REPO_ROOT)
    if os.path.basename(os.path.dirname(namespace_dir)) == 'ansible_collections':
        return os.path.dirname(os.path.dirname(namespace_dir))
    base = os.path.join(REPO_ROOT, 'build', 'pytest_collections')
    link = os.path.join(base, 'ansible_collections', 'uptime', 'monitoring')
    if os.path.realpath(link) != os.path.realpath(REPO_ROOT):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        if os.path.islink(link):
            os.unlink(link)
        try:
            os.symlink(REPO_ROOT, link)
        except FileExistsError:  # a parallel run made it first
            pass
    return base


for _path in (os.path.join(REPO_ROOT, 'tests'), _collections_path()):
    if _path not in sys.path:
        sys.path.insert(0, _path)
