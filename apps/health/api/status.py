"""Health of the HTTP server, database, cache, pub/sub, and the server version.

Appwrite's models: ``HealthStatus`` ``{name, ping, status}`` (ping in milliseconds) and
``HealthStatusList`` ``{total, statuses}``. A failing dependency answers 500
``general_server_error`` (Appwrite's Health module).
"""

from __future__ import annotations

import time

from django.conf import settings

from apps.core.drivers.kv import KVUnavailable
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


def status_list(name: str, ping: int) -> dict:
    return {"total": 1, "statuses": [{"name": name, "ping": ping, "status": "pass"}]}


async def health(ctx):
    return json_response({"name": "http", "ping": 0, "status": "pass"})


async def health_version(ctx):
    return json_response({"version": settings.APPWRITE_VERSION})


async def _sql_probe(ctx, sql: str, name: str, what: str):
    """The status ``name`` of one statement's round trip; 500 ``general_server_error`` naming
    ``what`` when it fails."""
    started = time.perf_counter()
    try:
        await ctx.db.fetchval(sql)
    except AppwriteError:
        raise
    except Exception:
        raise AppwriteError("general_server_error", f"{what} is not available.") from None
    return json_response(status_list(name, _ms(started)))


async def health_db(ctx):
    return await _sql_probe(ctx, "SELECT 1 AS ok", "database", "Database")


async def health_audits_db(ctx):
    """The store of the audit log (Appwrite 1.9's ``/health/audits-db``): here a table of the
    main database, so a read of it (the table exists, the database answers)."""
    return await _sql_probe(ctx, "SELECT count(*) FROM (SELECT 1 FROM audit_log LIMIT 1) AS probe", "audits",
                            "Audits database")


async def health_cache(ctx):
    started = time.perf_counter()
    try:
        await ctx.kv.ping()
    except KVUnavailable:
        raise AppwriteError("general_server_error", "Cache is not available.") from None
    return json_response(status_list("cache", _ms(started)))


async def health_pubsub(ctx):
    """A publish on the pub/sub that carries cache invalidation (Redis; the embedded build's
    in-process store always passes)."""
    started = time.perf_counter()
    try:
        await ctx.kv.publish(f"{settings.REDIS_PREFIX}health", b"ping")
    except KVUnavailable:
        raise AppwriteError("general_server_error", "Pubsub is not available.") from None
    return json_response(status_list("pubsub", _ms(started)))
