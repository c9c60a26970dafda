# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fake AWX / Automation Controller: the API calls that ansible-rulebook 1.3.2 makes for ``run_job_template``
with ``--controller-url URL --controller-token TOKEN``, as read in its ansible_rulebook/job_template_runner.py,
shared_job_monitor.py, action/run_job_template.py, app.py (validate_controller_params) and cli.py.

It serves, under the legacy slugs (a controller URL without a path; one with a path, a gateway's, asks for
``v2/...`` under it instead), each with ``Authorization: Bearer TOKEN`` (401 otherwise):

* ``GET /api/v2/config/``: ``{"version": ...}``, read once at start-up when a rule has a controller action;
* ``GET /api/v2/unified_job_templates/?name=NAME``: the templates of that name, one page, each with ``type``,
  ``summary_fields.organization.name``, ``related.launch`` and the ``ask_*_on_launch`` flags;
* ``POST /api/v2/job_templates/ID/launch/``: the JSON posted is recorded in ``launches``; fields the template does
  not prompt for are left out of the job and returned in ``ignored_fields``, as AWX does (ansible-rulebook always
  posts ``limit``, the rule's hosts); the answer (201) holds the job's ``id`` and ``url``;
* ``GET /api/v2/jobs/?id__in=1,2&page_size=2``: the jobs' ``id``, ``status``, ``created`` and ``artifacts``.

Each launch runs the job in a thread of its own: ``on_launch(extra_vars)`` if given (the job template's playbook),
meanwhile the job is ``running``; then ``successful``, or ``failed`` if it raised (its ``result_traceback``). The templates are made with
``ask_labels_on_launch`` false, so ansible-rulebook asks nothing of labels or organizations (with it true, it would
look up the organization and get or create the label "Activated by Event-Driven Ansible"); it reads no job events.
Anything else gets a 404; every request is kept in ``requests`` as (method, path, query, status answered).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

API = '/api/v2/'
FINAL = ('successful', 'failed', 'error', 'canceled')
PROMPTS = {'extra_vars': 'ask_variables_on_launch', 'limit': 'ask_limit_on_launch',
           'inventory': 'ask_inventory_on_launch', 'labels': 'ask_labels_on_launch'}


class FakeController:
    """``with FakeController(token, on_launch=...) as controller:`` (or start()/stop()); ``controller.url``."""

    def __init__(self, token, templates=(('Acknowledge uptime incident', 'Default'),), on_launch=None):
        self.token, self.on_launch = token, on_launch
        self.templates = [{'id': index, 'type': 'job_template', 'name': name,
                           'summary_fields': {'organization': {'id': 1, 'name': organization}},
                           'related': {'launch': '%sjob_templates/%d/launch/' % (API, index)},
                           'ask_variables_on_launch': True, 'ask_limit_on_launch': False,
                           'ask_inventory_on_launch': False, 'ask_labels_on_launch': False}
                          for index, (name, organization) in enumerate(templates, 7)]
        self.requests, self.launches, self.jobs, self.threads = [], [], {}, []
        self.lock = threading.Lock()
        self.server = self.url = None

    def start(self):
        self.server = ThreadingHTTPServer(('127.0.0.1', 0), _handler(self))
        self.url = 'http://127.0.0.1:%d' % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, name='fake-controller', daemon=True).start()
        return self

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
        for thread in self.threads:
            thread.join(120)

    __enter__ = start

    def __exit__(self, *exc_info):
        self.stop()

    def wait_jobs(self, count, timeout=120):
        """The jobs, once ``count`` of them have ended and were polled with their final status."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                done = [dict(job) for job in self.jobs.values() if job.get('polled_final')]
            if len(done) >= count:
                return done
            assert time.monotonic() < deadline, 'expected %d jobs polled to an end, got %s; requests %s' % (
                count, self.jobs, self.requests)
            time.sleep(0.1)

    # Answers, as (status, body); called under self.lock.
    def config(self, query):
        return 200, {'version': '4.6.0-fake', 'license_info': {}, 'project_base_dir': '/var/lib/awx/projects'}

    def unified_job_templates(self, query):
        found = [template for template in self.templates if template['name'] in query.get('name', [])]
        return 200, {'count': len(found), 'next': None, 'previous': None, 'results': found}

    def launch(self, template, body):
        job_id = len(self.launches) + 1
        self.launches.append({'template': template['name'],
                              'organization': template['summary_fields']['organization']['name'], 'body': body})
        ignored = {key: value for key, value in body.items() if key in PROMPTS and not template[PROMPTS[key]]}
        extra_vars = body.get('extra_vars', {}) if 'extra_vars' not in ignored else {}
        job = {'id': job_id, 'type': 'job', 'url': '%sjobs/%d/' % (API, job_id), 'name': template['name'],
               'job_template': template['id'], 'status': 'pending', 'artifacts': {},
               'created': time.strftime('%Y-%m-%dT%H:%M:%S.000000Z', time.gmtime()),
               'extra_vars': json.dumps(extra_vars)}
        self.jobs[job_id] = job
        thread = threading.Thread(target=self._run, args=(job, extra_vars), name='fake-job-%d' % job_id, daemon=True)
        self.threads.append(thread)
        thread.start()
        return 201, dict(job, job=job_id, ignored_fields=ignored)

    def _run(self, job, extra_vars):
        with self.lock:
            job['status'] = 'running'
        status, traceback = 'successful', ''
        try:
            if self.on_launch:
                self.on_launch(extra_vars)
        except Exception as exc:  # pylint: disable=broad-except
            status, traceback = 'failed', repr(exc)
        with self.lock:  # no 'error' key: ansible-rulebook takes one for a failure to reach the controller
            job.update(status=status, result_traceback=traceback, finished=time.strftime('%Y-%m-%dT%H:%M:%S.000000Z', time.gmtime()))

    def poll_jobs(self, query):
        ids = [int(part) for part in ','.join(query.get('id__in', [''])).split(',') if part]
        found = [self.jobs[job_id] for job_id in ids if job_id in self.jobs]
        for job in found:
            job['polled_final'] = job.get('polled_final') or job['status'] in FINAL
        return 200, {'count': len(found), 'next': None, 'previous': None,
                     'results': [{key: value for key, value in job.items() if key != 'polled_final'} for job in found]}

    def answer(self, method, path, query, body):
        """Route one request (the token already checked)."""
        if method == 'GET' and path == API + 'config/':
            return self.config(query)
        if method == 'GET' and path == API + 'unified_job_templates/':
            return self.unified_job_templates(query)
        if method == 'GET' and path == API + 'jobs/':
            return self.poll_jobs(query)
        for template in self.templates:
            if method == 'POST' and path == template['related']['launch']:
                return self.launch(template, body)
        return 404, {'detail': 'Not found.'}


def _handler(controller):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def _serve(self):
            split = urlsplit(self.path)
            length = int(self.headers.get('Content-Length') or 0)
            raw = self.rfile.read(length) if length else b''
            with controller.lock:
                if self.headers.get('Authorization') != 'Bearer %s' % controller.token:
                    status, body = 401, {'detail': 'Authentication credentials were not provided.'}
                else:
                    try:
                        status, body = controller.answer(self.command, split.path, parse_qs(split.query),
                                                         json.loads(raw or b'{}'))
                    except ValueError:
                        status, body = 400, {'detail': 'JSON parse error.'}
                controller.requests.append((self.command, split.path, split.query, status))
            data = json.dumps(body).encode('utf-8')
            self.send_response(status)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _serve

        def log_message(self, *args):  # pylint: disable=arguments-differ
            pass

    return Handler
