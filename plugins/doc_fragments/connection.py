# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:

    # The connection options every plugin of the collection takes; times.py and action_group.py hold what only some do.
    DOCUMENTATION = r'''
options:
  api_url:
    description:
      - Base address of the service, for example C(https://uptime.example.com); a trailing C(/api/v1) is ignored.
      - An address with a user name or password before its host (C(https://user:pass@host)) is refused before any
        request, as the API key is the only credential the service takes.
      - An C(http://) address of another host than this machine is used, with a warning that the key travels
        unencrypted.
      - If not set, the environment variable E(UPTIME_API_URL) is used.
    type: str
  api_key:
    description:
      - "API key of the account, sent as C(Authorization: Bearer <api_key>). Never printed."
      - If not set, the environment variable E(UPTIME_API_KEY) is used.
    type: str
  validate_certs:
    description:
      - Whether to verify the service's TLS certificate.
      - V(false) skips the check, with a warning; prefer O(ca_path).
      - If not set, the environment variable E(UPTIME_VALIDATE_CERTS) is used.
    type: bool
    default: true
  ca_path:
    description:
      - CA bundle (PEM) that signed the service's certificate, for a private CA. Checked before any request.
      - When set, it wins over the environment variables E(REQUESTS_CA_BUNDLE) and E(CURL_CA_BUNDLE); else they are
        used if present, else the bundle of the Python package C(certifi).
    type: path
  timeout:
    description:
      - Seconds to wait for the service to answer one request.
    type: float
    default: 30
  retries:
    description:
      - How many times a request is tried again after HTTP 429, 502, 503 or 504, a timeout or a dropped connection;
        waits grow exponentially with jitter and honour C(Retry-After).
      - An address that cannot be connected to is tried for at most 6 seconds from its first failure.
      - A TLS failure is not retried.
      - A create is sent again only after HTTP 429 or a connection that could not be opened; else the record is
        looked up by its natural key.
      - See L(docs/transport.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/transport.md).
    type: int
    default: 5
requirements:
  - requests
'''

    # For plugins other than modules, used together with DOCUMENTATION above: the options stay described once there,
    # this adds where a plugin reads them besides its configuration.
    PLUGINS = r'''
options:
  api_url:
    env:
      - name: UPTIME_API_URL
  api_key:
    env:
      - name: UPTIME_API_KEY
  validate_certs:
    env:
      - name: UPTIME_VALIDATE_CERTS
'''

    # For the lookups, with PLUGINS above: a task's variables name the account too (module_defaults never reaches a
    # lookup), a variable winning over the environment. The inventory plugin reads no task variables.
    LOOKUPS = r'''
options:
  api_url:
    vars:
      - name: uptime_api_url
  api_key:
    vars:
      - name: uptime_api_key
  validate_certs:
    vars:
      - name: uptime_validate_certs
  ca_path:
    vars:
      - name: uptime_ca_path
  timeout:
    vars:
      - name: uptime_timeout
  retries:
    vars:
      - name: uptime_retries
'''
