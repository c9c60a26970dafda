# -*- coding: utf-8 -*-
# Copyright: (c) 2026, uptime.monitoring contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:

    DOCUMENTATION = r'''
options:
  api_url:
    description:
      - Base address of the uptime-monitoring service, for example C(https://uptime.example.com).
      - A trailing C(/api/v1) is accepted and ignored.
      - An address with a user name or password before its host (C(https://user:pass@host)) is refused before any
        request, since the API key is the only credential the service takes.
      - An C(http://) address of a host other than this machine (C(localhost), C(127.0.0.0/8), C(::1)) is used,
        with a warning that the API key travels unencrypted.
      - If not set, the environment variable E(UPTIME_API_URL) is used.
    type: str
  api_key:
    description:
      - "API key of the account, sent as C(Authorization: Bearer <api_key>)."
      - If not set, the environment variable E(UPTIME_API_KEY) is used.
      - Never printed in results, diffs or error messages.
    type: str
  validate_certs:
    description:
      - Whether to verify the service's TLS certificate.
      - V(false) skips the check, with a warning that the certificate is not checked; prefer O(ca_path).
      - If not set, the environment variable E(UPTIME_VALIDATE_CERTS) is used.
    type: bool
    default: true
  ca_path:
    description:
      - Path to a CA bundle (PEM) used to verify the service's TLS certificate, for a service whose
        certificate a private CA signed.
      - When set, it wins over the environment variables E(REQUESTS_CA_BUNDLE) and E(CURL_CA_BUNDLE); when not
        set, they are used if present, else the CA bundle of the Python package C(certifi).
      - Checked before any request.
    type: path
  timeout:
    description:
      - Seconds to wait for the service to answer one request.
    type: float
    default: 30
  retries:
    description:
      - How many times a request that failed with HTTP 429, 502, 503, 504, a timeout or a dropped connection is tried again.
      - Waits grow exponentially with jitter; a C(Retry-After) header from the service is honoured.
      - An address that cannot be connected to (connection refused, unknown host name, connect timeout) is
        tried for at most 6 seconds from its first failure, however many retries are left, so that a service
        restarting for a few seconds is ridden out and a wrong address fails soon. The message names the
        address and the number of attempts.
      - A TLS failure (untrusted, expired or misnamed certificate, refused handshake) is not retried.
      - Reads, updates and deletes are retried. A create (POST) is retried only when the service refused it
        with HTTP 429 or the connection could not be opened; otherwise the module looks the record up by
        its natural key instead of sending it again.
    type: int
    default: 5
  account_timezone:
    description:
      - The account's time zone, an IANA name such as V(UTC), V(Europe/Berlin) or V(America/New_York); the service
        reads the times it is sent in this zone and returns UTC ones.
      - If not set, the environment variable E(UPTIME_ACCOUNT_TIMEZONE) is used, else a task that sends or compares a
        timestamp reads the zone once from the service (one more request; an account that never set a zone is taken
        to be in UTC). Tasks without timestamps need no zone.
      - A timestamp that the service stored at another instant than the one intended (a wrong zone) fails the task,
        naming both instants and the zone; a time in the hour repeated when daylight saving time ends is refused.
      - See L(docs/timezones.md,https://github.com/uptime-monitoring/uptime.monitoring/blob/main/docs/timezones.md)
        for the details (the instance's default zone, what the check costs, the repeated hour).
    type: str
requirements:
  - requests
notes:
  - "Timestamps: a time with an offset (V(2031-01-10T06:00:00Z), V(2031-01-10T07:00:00+01:00)) is an instant. A time without
    one (V(2031-01-10T06:00:00)) is the account's local time, as the service and its web interface read it. Returned
    timestamps are UTC instants, C(Y-m-dTH:i:sZ), so they can be given back as they are, also to an account in another
    zone. Values are compared as instants."
  - All modules of this collection belong to the action group C(uptime.monitoring.all), so the connection
    options can be set once with C(module_defaults).
'''

    # For plugins other than modules (the inventory plugin), used together with DOCUMENTATION above:
    # the options stay described once there, this adds where a plugin reads them besides its configuration.
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
  account_timezone:
    env:
      - name: UPTIME_ACCOUNT_TIMEZONE
'''
