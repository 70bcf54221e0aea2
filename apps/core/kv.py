"""Key-value access (Redis, or process memory on the embedded default) with one async interface.

* ``RedisAsync`` (ASGI): ``redis.asyncio`` over one process-wide ``BlockingConnectionPool``
  created inside the server's loop (django-asgi-facts §3: the non-blocking pool raises
  ``MaxConnectionsError`` under load instead of waiting).
* ``RedisSync`` (WSGI): the sync client over a ``BlockingConnectionPool``; coroutines never
  suspend, so :func:`apps.core.runtime.run_sync` drives them.
* ``Memory``: a dict with expiry times, for the embedded default (one process).

Every method raises :class:`KVUnavailable` when the store cannot be reached, so callers can
decide fail-open or fail-closed.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings


class KVUnavailable(Exception):
    """The key-value store could not be reached."""


class KV:
    """Async key-value interface. ``ttl`` values are seconds."""

    async def ping(self) -> bool:  # pragma: no cover
        raise NotImplementedError

    async def get(self, key: str) -> bytes | None:  # pragma: no cover
        raise NotImplementedError

    async def set(self, key: str, value: bytes | str, ttl: int | None = None) -> None:  # pragma: no cover
        raise NotImplementedError

    async def delete(self, *keys: str) -> None:  # pragma: no cover
        raise NotImplementedError

    async def incr_window(self, key: str, ttl: int) -> tuple[int, int]:  # pragma: no cover
        """Atomically add 1 to ``key`` (created with ``ttl`` seconds if new).

        Returns ``(count, seconds until the key expires)``.
        """
        raise NotImplementedError

    async def close(self) -> None:
        """Release pooled connections."""


class Memory(KV):
    def __init__(self):
        self._data: dict[str, tuple[bytes, float | None]] = {}
        self._lock = threading.Lock()

    def _live(self, key: str, now: float):
        item = self._data.get(key)
        if item is not None and item[1] is not None and item[1] <= now:
            del self._data[key]
            return None
        return item

    async def ping(self):
        return True

    async def get(self, key):
        with self._lock:
            item = self._live(key, time.monotonic())
            return None if item is None else item[0]

    async def set(self, key, value, ttl=None):
        data = value.encode() if isinstance(value, str) else value
        with self._lock:
            self._data[key] = (data, None if ttl is None else time.monotonic() + ttl)

    async def delete(self, *keys):
        with self._lock:
            for key in keys:
                self._data.pop(key, None)

    async def incr_window(self, key, ttl):
        now = time.monotonic()
        with self._lock:
            item = self._live(key, now)
            if item is None:
                count, expires = 1, now + ttl
            else:
                count, expires = int(item[0]) + 1, item[1]
            self._data[key] = (str(count).encode(), expires)
            return count, max(1, int(round(expires - now)))


_INCR_WINDOW = """
local c = redis.call('INCR', KEYS[1])
local t = redis.call('TTL', KEYS[1])
if t < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]); t = tonumber(ARGV[1]) end
return {c, t}
"""


class RedisAsync(KV):
    def __init__(self, url: str):
        import redis.asyncio as aredis

        self._pool = aredis.BlockingConnectionPool.from_url(
            url,
            max_connections=settings.REDIS_POOL_MAX_SIZE,
            timeout=settings.REDIS_TIMEOUT,
            socket_connect_timeout=settings.REDIS_TIMEOUT,
            socket_timeout=settings.REDIS_TIMEOUT,
        )
        self._client = aredis.Redis(connection_pool=self._pool)
        self._incr = self._client.register_script(_INCR_WINDOW)

    async def _call(self, coro):
        import redis

        try:
            return await coro
        except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
            raise KVUnavailable(str(exc)) from None

    async def ping(self):
        return bool(await self._call(self._client.ping()))

    async def get(self, key):
        return await self._call(self._client.get(key))

    async def set(self, key, value, ttl=None):
        await self._call(self._client.set(key, value, ex=ttl))

    async def delete(self, *keys):
        if keys:
            await self._call(self._client.delete(*keys))

    async def incr_window(self, key, ttl):
        count, left = await self._call(self._incr(keys=[key], args=[ttl]))
        return int(count), int(left)

    async def close(self):
        await self._client.aclose()
        await self._pool.disconnect()


class RedisSync(KV):
    def __init__(self, url: str):
        import redis

        self._pool = redis.BlockingConnectionPool.from_url(
            url,
            max_connections=settings.REDIS_POOL_MAX_SIZE,
            timeout=settings.REDIS_TIMEOUT,
            socket_connect_timeout=settings.REDIS_TIMEOUT,
            socket_timeout=settings.REDIS_TIMEOUT,
        )
        self._client = redis.Redis(connection_pool=self._pool)
        self._incr = self._client.register_script(_INCR_WINDOW)

    def _call(self, fn, *args, **kwargs):
        import redis

        try:
            return fn(*args, **kwargs)
        except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
            raise KVUnavailable(str(exc)) from None

    async def ping(self):
        return bool(self._call(self._client.ping))

    async def get(self, key):
        return self._call(self._client.get, key)

    async def set(self, key, value, ttl=None):
        self._call(self._client.set, key, value, ex=ttl)

    async def delete(self, *keys):
        if keys:
            self._call(self._client.delete, *keys)

    async def incr_window(self, key, ttl):
        count, left = self._call(self._incr, keys=[key], args=[ttl])
        return int(count), int(left)

    async def close(self):
        self._pool.disconnect()


_kv: dict[str, KV] = {}
_memory: Memory | None = None


def get_kv(mode: str) -> KV:
    """The process-wide store for ``mode`` (``"async"`` or ``"sync"``), created on first use.

    Without ``REDIS_URL`` both modes share one in-memory store.
    """
    global _memory
    if not settings.REDIS_URL:
        if _memory is None:
            _memory = Memory()
        return _memory
    if mode not in _kv:
        _kv[mode] = RedisAsync(settings.REDIS_URL) if mode == "async" else RedisSync(settings.REDIS_URL)
    return _kv[mode]


async def close_kv() -> None:
    """Close the async client (called on ASGI lifespan shutdown)."""
    kv = _kv.pop("async", None)
    if kv is not None:
        await kv.close()
