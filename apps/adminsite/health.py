"""The server's health as the admin's home page shows it: the same checks as ``GET /v1/health``,
``/v1/health/db``, ``/v1/health/cache`` and ``/v1/health/pubsub`` (``apps.health.api.status``),
run in the admin's own process on its synchronous drivers, so no API key is needed; plus the
background worker's liveness and the queues' depth (:mod:`apps.adminsite.background`)."""

from __future__ import annotations

from types import SimpleNamespace

import orjson
from django.conf import settings

from apps.adminsite import background
from apps.core.drivers.db import get_database
from apps.core.drivers.kv import get_kv
from apps.core.drivers.runtime import run_sync
from apps.core.errors import AppwriteError
from apps.core.http.serving import path as serving_path
from apps.health.api import status

CHECKS = (("http", "/v1/health", status.health), ("database", "/v1/health/db", status.health_db),
          ("cache", "/v1/health/cache", status.health_cache), ("pubsub", "/v1/health/pubsub", status.health_pubsub))


def snapshot() -> dict:
    """``{"version": str, "checks": [{"name", "route", "status", "ping", "message"}], "serving": dict |
    None}``: ``status`` is ``"pass"`` or ``"fail"``, ``ping`` milliseconds (``None`` on failure), ``message`` the
    error's message on failure (``""`` otherwise); ``serving`` the server, protocol and adapter of
    this process (``apps.core.http.serving.path.PATH``; ``None`` without an ASGI lifespan, e.g. under
    gunicorn); ``background`` is :func:`apps.adminsite.background.snapshot` (``None`` with the
    message in ``background_error`` when the database cannot be read). Never raises for a failing
    dependency."""
    ctx = SimpleNamespace(db=get_database("sync"), kv=get_kv("sync"))
    checks = []
    for name, route, handler in CHECKS:
        try:
            body = orjson.loads(run_sync(handler(ctx)).body)
        except AppwriteError as exc:
            checks.append({"name": name, "route": route, "status": "fail", "ping": None, "message": exc.message})
            continue
        entry = body["statuses"][0] if "statuses" in body else body
        checks.append({"name": name, "route": route, "status": entry["status"], "ping": entry["ping"], "message": ""})
    try:
        jobs, jobs_error = background.snapshot(), ""
    except Exception as exc:  # the database is down: the "database" check above says so too
        jobs, jobs_error = None, f"{type(exc).__name__}: {exc}"[:300]
    return {"version": settings.APPWRITE_VERSION, "checks": checks, "serving": serving_path.PATH,
            "background": jobs, "background_error": jobs_error}
