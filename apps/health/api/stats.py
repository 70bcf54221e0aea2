"""``/v1/health/stats``: file storage usage and cache (Redis) statistics, in Appwrite's shape."""

from __future__ import annotations

import os
import shutil

from django.conf import settings

from apps.core.drivers.runtime import run_blocking
from apps.core.http.context import json_response


def _human(size: int) -> str:
    """Bytes as Appwrite's ``Bytes::human`` writes them (``1.5MB``)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.2f}{unit}"
        value /= 1024
    return f"{value:.2f}TB"  # pragma: no cover


def _storage() -> dict:
    root = settings.STORAGE_ROOT if settings.STORAGE_BACKEND == "local" else settings.STORAGE_UPLOAD_DIR
    os.makedirs(root, exist_ok=True)
    used = 0
    for folder, _, names in os.walk(root):
        for name in names:
            try:
                used += os.stat(os.path.join(folder, name), follow_symlinks=False).st_size
            except OSError:  # removed while walking
                pass
    usage = shutil.disk_usage(root)
    return {"used": _human(used), "partitionTotal": _human(usage.total), "partitionFree": _human(usage.free)}


def _cache_info() -> dict:
    if not settings.REDIS_URL:
        return {}
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=settings.REDIS_TIMEOUT,
                                  socket_connect_timeout=settings.REDIS_TIMEOUT)
    try:
        return client.info()
    except redis.RedisError:
        return {}
    finally:
        client.close()


def _stats() -> dict:
    info = _cache_info()
    return {
        "storage": _storage(),
        "cache": {
            "uptime": info.get("uptime_in_seconds", 0),
            "clients": info.get("connected_clients", 0),
            "hits": info.get("keyspace_hits", 0),
            "misses": info.get("keyspace_misses", 0),
            "memory_used": info.get("used_memory", 0),
            "memory_used_human": info.get("used_memory_human", 0),
            "memory_used_peak": info.get("used_memory_peak", 0),
            "memory_used_peak_human": info.get("used_memory_peak_human", 0),
        },
    }


async def health_stats(ctx):
    """Walks the local file tree: meant for an operator's occasional look, not for polling."""
    return json_response(await run_blocking(ctx.mode, _stats))
