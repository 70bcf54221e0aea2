"""gunicorn settings of the WSGI build, read from ``backend.settings`` at gunicorn's start
(``gunicorn --config python:backend.gunicorn_conf``; the launcher and the test servers pass it).

* ``worker_class``: gunicorn's sync worker answering its own refusals as JSON
  (:mod:`apps.core.http.serving.gunicorn_worker`);
* request-head limits (README "Request limits and timeouts"): gunicorn's bounded parser refuses
  a request line over ``MAX_REQUEST_LINE`` bytes (414), more than ``MAX_HEADER_COUNT`` fields or
  one field line over ``MAX_HEADER_BYTES`` (431); the total of ``MAX_HEADER_BYTES`` over all
  fields, which gunicorn has no setting for, is checked by the app
  (:func:`apps.core.http.serving.limits.wsgi_limits`). gunicorn buffers at most fields x field size
  bytes of head, so memory stays bounded.

Sync workers have no read timeout of their own: a client that stalls holds a worker until
gunicorn's ``--timeout`` restarts it. The deployment puts nginx (the ``lb`` template) in front,
which buffers whole requests; see README "Request limits and timeouts".
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")

from django.conf import settings  # noqa: E402

worker_class = "apps.core.http.serving.gunicorn_worker.JsonErrorSyncWorker"
# gunicorn takes at most 8190 bytes of request line; above that it reads any length (0) and the
# app checks MAX_REQUEST_LINE (apps.core.http.serving.limits.wsgi_limits). In a deployment nginx's
# header buffers bound what reaches gunicorn.
limit_request_line = settings.MAX_REQUEST_LINE if settings.MAX_REQUEST_LINE <= 8190 else 0
limit_request_fields = settings.MAX_HEADER_COUNT
# One field line is "name: value\r\n": the cap on names plus values, plus its separators.
limit_request_field_size = settings.MAX_HEADER_BYTES + 4
# gunicorn would believe X-Forwarded-Proto (and set wsgi.url_scheme) from 127.0.0.1 by default;
# the app decides whom to believe (TRUSTED_PROXIES, apps.core.http.clientip), so gunicorn
# believes no one and reports the connection's own scheme.
forwarded_allow_ips = ""
secure_scheme_headers: dict[str, str] = {}
