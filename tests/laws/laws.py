"""What every law needs: a fresh account in a drawn mode, the modules run in-process, the stored records and the
writes sent, and an assertion that says which promise broke and shows the input."""

from __future__ import annotations

import datetime
import json
import re
import shutil
import tempfile
import zoneinfo

from hypothesis import HealthCheck, settings

from ansible import constants as C

from emulator.control import PRIMARY_KEY
from module_runner import run_module

from ansible_collections.uptime.monitoring.plugins.modules import incident, incident_info, monitor, monitor_info, monitors

MODULES = {'monitor': monitor, 'monitors': monitors, 'incident': incident, 'monitor_info': monitor_info,
           'incident_info': incident_info}
# The examples a law runs in CI (the 'ci' profile, derandomized): the laws session keeps within about 3 minutes on
# two busy cores. The 'deep' profile runs 1000 of each.
LAW = dict(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def budget(ci_examples, **more):
    """The settings of a law: ``ci_examples`` examples unless a profile with more (deep) is loaded."""
    deep = settings.default.max_examples
    return settings(max_examples=deep if deep > 100 else ci_examples, **dict(LAW, **more))


def new_run():
    """The temporary directory of a new run of Ansible (``local_tmp``, where the lookups keep what they read), the
    last one removed: what a lookup kept is of an account that is no more."""
    last, C.DEFAULT_LOCAL_TMP = C.DEFAULT_LOCAL_TMP, tempfile.mkdtemp(prefix='uptime-run-')
    if getattr(new_run, 'made', None) == last:
        shutil.rmtree(last, ignore_errors=True)
    new_run.made = C.DEFAULT_LOCAL_TMP


def fresh(emulator, zone=None, ignore_case=False, clock=0, stored=(), incidents=()):
    """An account of ``zone`` holding ``stored`` monitors (service fields) and ``incidents``, nothing logged, in a
    new run of Ansible."""
    new_run()
    emulator.wait_idle()
    emulator.reset()
    if zone:
        emulator.timezone(zone)
    if ignore_case:
        emulator.names(True)
    if clock:
        emulator.clock(clock)
    ids = emulator.records(monitors=list(stored), incidents=list(incidents))['monitors'] if stored else []
    emulator.clear_log()
    return ids


def ago(minutes):
    """The service's form of the UTC time ``minutes`` ago."""
    return (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=minutes)).strftime('%Y-%m-%dT%H:%M:%S')


def run(connection, module, args, check_mode=False, diff=True):
    return run_module(MODULES[module].main, dict(connection, **args), check_mode=check_mode, diff=diff)


def stored(emulator):
    """Every monitor and incident of the account as the service holds it, secrets in clear."""
    found = {}
    for kind in ('monitors', 'incidents'):
        answer = emulator.api('GET', '/api/v1/%s' % kind, api_key=PRIMARY_KEY, params={'per_page': 100}).json
        found[kind] = sorted(answer['data'], key=lambda item: item['id'])
    return found


def writes(emulator):
    """The writes sent since the log was last cleared; the log is cleared again."""
    sent = ['%s %s' % (entry['method'], entry['path']) for entry in emulator.writes()]
    emulator.clear_log()
    return sent


def holds(condition, promise, **shown):
    """Assert a law: when it breaks, say which promise and show the input and what came out."""
    assert condition, '%s broke for:\n%s' % (promise, json.dumps(shown, indent=1, default=repr, ensure_ascii=False)[:6000])


def quiet(result, *times):
    """A result or diff without the times the task chose (now, as the service's clock or this one saw it)."""
    if isinstance(result, dict):
        return {key: quiet(value, *times) for key, value in result.items()
                if key not in times + ('created_at', 'updated_at', 'invocation', 'msg', 'duration', 'after_header')}
    if isinstance(result, list):
        return [quiet(value, *times) for value in result]
    return result


# Comparing two runs of one task (as a module, and in Ansible's worker): a time the service or the task chose at the
# moment of a run, and what of a logged request both runs must share.
TIME = re.compile(r'\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:Z|[+-]\d\d:?\d\d)?')
# How far a time may be from a run's start to be one the service chose then: the account's clock may run 40 s behind.
NEAR = datetime.timedelta(seconds=60)
LOGGED = ('method', 'path', 'query', 'form', 'status', 'fault')


def instants(text, zone=None):
    """The instants a time may stand for: itself with an offset; without one, in UTC or in the account's ``zone``
    (the collection sends the service local times)."""
    try:
        moment = datetime.datetime.fromisoformat(text.replace('Z', '+00:00').replace(' ', 'T'))
    except ValueError:
        return []
    if moment.tzinfo:
        return [moment]
    zones = [datetime.timezone.utc] + ([zoneinfo.ZoneInfo(zone)] if zone else [])
    return [moment.replace(tzinfo=each) for each in zones]


def settled(value, began, zone=None):
    """``value`` with each time within NEAR of ``began`` written NOW: the times a run's clock chose."""
    if isinstance(value, dict):
        return {key: settled(item, began, zone) for key, item in value.items()}
    if isinstance(value, list):
        return [settled(item, began, zone) for item in value]
    if isinstance(value, str):
        def now_or_kept(match):
            near = any(abs(moment - began) <= NEAR for moment in instants(match.group(0), zone))
            return 'NOW' if near else match.group(0)
        return TIME.sub(now_or_kept, value)
    return value


def requests_sent(emulator, began, zone=None):
    """Every request the service logged, as two runs of one task must both send it (see :func:`settled`)."""
    emulator.wait_idle()
    return settled([{key: entry.get(key) for key in LOGGED} for entry in emulator.log()], began, zone)
