# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The client settings of the fault matrix, for its tests and for report.py (which runs without ansible-core).

Small values keep the matrix quick: a response slower than TIMEOUT is given up, and RETRIES retries are enough to
ride out one fault. TIMEOUT leaves room for an answer delayed by a machine busy with other test sessions.
"""

TIMEOUT = 2
RETRIES = 2
SLOW_SECONDS = 3.2
