"""Health, ping and the OpenAPI document (contract §12)."""

from __future__ import annotations

import time

from django.conf import settings

from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, text_response
from apps.core.kv import KVUnavailable


async def ping(ctx):
    return text_response("Pong!")


async def health_version(ctx):
    return json_response({"version": settings.APPWRITE_VERSION})


async def health(ctx):
    return json_response({"name": "http", "status": "pass", "ping": 0})


async def health_db(ctx):
    started = time.perf_counter()
    try:
        await ctx.db.fetchval("SELECT 1 AS ok")
    except AppwriteError:
        raise
    except Exception:
        raise AppwriteError("general_service_unavailable", "The database is not reachable.") from None
    ms = int((time.perf_counter() - started) * 1000)
    return json_response({"total": 1, "statuses": [{"name": "database", "ping": ms, "status": "pass"}]})


async def health_cache(ctx):
    started = time.perf_counter()
    try:
        await ctx.kv.ping()
    except KVUnavailable:
        raise AppwriteError("general_service_unavailable", "The cache is not reachable.") from None
    ms = int((time.perf_counter() - started) * 1000)
    return json_response({"total": 1, "statuses": [{"name": "cache", "ping": ms, "status": "pass"}]})


async def openapi(ctx):
    from apps.core.openapi import document

    return json_response(document())
