"""Key-value access (Redis, or process memory on the embedded default) with one async interface.

* ``RedisAsync`` (ASGI): one pipelined connection per process (:mod:`apps.core.drivers.resp`), opened
  inside the server's loop on first use; concurrent calls share it, so there is no pool to wait
  for (a pool that every request waits on cannot run dry under load).
* ``RedisSync`` (WSGI): the sync client over a ``BlockingConnectionPool``; coroutines never
  suspend, so :func:`apps.core.drivers.runtime.run_sync` drives them.
* ``Memory``: a dict with expiry times, for the embedded default (one process).

Every method raises :class:`KVUnavailable` when the store cannot be reached, so callers can
decide fail-open or fail-closed.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apps.core.drivers.resp import Script

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

    async def hit_windows(self, keys: list[str], window: int, add: int = 1) -> list[tuple[int, int]]:  # pragma: no cover
        """Fixed-window counters, atomically, in one round trip: add ``add`` to each key (``0`` =
        only read), starting a ``window``-second expiry on a key that has none. A negative ``add``
        gives back hits counted earlier (a reservation that turned out not to count); it never
        creates a key, so a give-back after the window ended changes nothing.

        Returns one ``(count, milliseconds until the window ends)`` per key; a missing key read
        with ``add=0`` is ``(0, window * 1000)``.
        """
        raise NotImplementedError

    async def publish(self, channel: str, data: bytes) -> None:
        """Redis ``PUBLISH``; a no-op without Redis (one process: nobody else to tell)."""

    async def publish_many(self, messages: list[tuple[str, bytes]]) -> None:
        """``PUBLISH`` each ``(channel, data)`` in order, in one round trip (one Lua call)."""
        for channel, data in messages:
            await self.publish(channel, data)

    async def append_stream(self, key: str, maxlen: int, max_age: float,
                            entries: list[tuple[bytes | str, bytes]]) -> None:
        """``XADD`` one ``{p: <first>, m: <second>}`` entry per pair of ``entries`` to the stream
        ``key``, in order, in one round trip; then trim it to about ``maxlen`` entries
        (``MAXLEN ~``) and to those of the last ``max_age`` seconds (``MINID ~``), and let it
        expire after ``max_age`` seconds without writes.
        Raises :class:`KVUnavailable` when Redis fails; without Redis there is no stream
        (``NotImplementedError``: the caller delivers in-process)."""
        raise NotImplementedError

    async def close(self) -> None:
        """Release pooled connections."""


class Memory(KV):
    # Expired keys are dropped when read, and by a sweep every SWEEP_EVERY writes, so keys
    # written once (e.g. one counter per client IP) do not pile up.
    SWEEP_EVERY = 4096

    def __init__(self) -> None:
        self._data: dict[str, tuple[bytes, float | None]] = {}
        self._lock = threading.Lock()
        self._writes = 0

    def _wrote(self, now: float) -> None:
        self._writes += 1
        if self._writes >= self.SWEEP_EVERY:
            self._writes = 0
            dead = [k for k, (_, exp) in self._data.items() if exp is not None and exp <= now]
            for k in dead:
                del self._data[k]

    def _live(self, key: str, now: float) -> tuple[bytes, float | None] | None:
        item = self._data.get(key)
        if item is not None and item[1] is not None and item[1] <= now:
            del self._data[key]
            return None
        return item

    async def ping(self) -> bool:
        return True

    async def get(self, key: str) -> bytes | None:
        with self._lock:
            item = self._live(key, time.monotonic())
            return None if item is None else item[0]

    async def set(self, key: str, value: bytes | str, ttl: int | None = None) -> None:
        data = value.encode() if isinstance(value, str) else value
        now = time.monotonic()
        with self._lock:
            self._data[key] = (data, None if ttl is None else now + ttl)
            self._wrote(now)

    async def delete(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self._data.pop(key, None)

    async def hit_windows(self, keys: list[str], window: int, add: int = 1) -> list[tuple[int, int]]:
        now = time.monotonic()
        out = []
        with self._lock:
            for key in keys:
                item = self._live(key, now)
                count, expires = (0, now + window) if item is None else (int(item[0]), item[1])
                if expires is None:
                    expires = now + window
                if add > 0 or (add < 0 and item is not None):
                    count += add
                    self._data[key] = (str(count).encode(), expires)
                    self._wrote(now)
                left = window * 1000 if item is None else max(0, int((expires - now) * 1000))
                out.append((count, left))
        return out


# KEYS: the counters; ARGV[1]: amount to add (0 = read only; negative = give back, only to a key
# that exists); ARGV[2]: window in ms.
# INCRBY and PEXPIRE run in one script, so no key is ever left without a TTL and concurrent hits
# are serialised by Redis (never GET-then-SET).
_HIT_WINDOWS = """
local add = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local out = {}
for i, key in ipairs(KEYS) do
  local count
  if add > 0 or (add < 0 and redis.call('EXISTS', key) == 1) then
    count = redis.call('INCRBY', key, add)
  else
    count = tonumber(redis.call('GET', key) or '0')
  end
  local left = redis.call('PTTL', key)
  if left == -1 then
    redis.call('PEXPIRE', key, window)
    left = window
  elseif left < 0 then
    left = window
  end
  out[#out + 1] = count
  out[#out + 1] = left
end
return out
"""


# PUBLISH every (channel, message) pair of ARGV, in order: one command and one reply for a bulk
# write's events (a pipeline of 100 PUBLISHes still parsed 100 replies: 11 % of a bulk insert).
_PUBLISH_ALL = """
for i = 1, #ARGV, 2 do
  redis.call('PUBLISH', ARGV[i], ARGV[i + 1])
end
return #ARGV / 2
"""


# KEYS[1]: a stream; ARGV[1]: its approximate length bound; ARGV[2]: the age in ms past which
# entries are trimmed (by Redis's clock) and after which an idle stream expires; then (p, m)
# pairs, one entry each. Trimming by age too keeps a burst of large events from holding
# MAXLEN x their size in memory.
_XADD_ALL = """
for i = 3, #ARGV, 2 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'p', ARGV[i], 'm', ARGV[i + 1])
end
local now = redis.call('TIME')
local oldest = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - tonumber(ARGV[2])
redis.call('XTRIM', KEYS[1], 'MINID', '~', string.format('%.0f', oldest) .. '-0')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return (#ARGV - 2) / 2
"""


def _scripts() -> tuple[Script, Script, Script]:
    from apps.core.drivers.resp import Script

    return Script(_HIT_WINDOWS), Script(_PUBLISH_ALL), Script(_XADD_ALL)


_HIT_WINDOWS_SCRIPT, _PUBLISH_ALL_SCRIPT, _XADD_ALL_SCRIPT = _scripts()


def _xadd_args(maxlen: int, max_age: float, entries: Any) -> list[Any]:
    return [maxlen, int(max_age * 1000), *[part for entry in entries for part in entry]]


def _pairs(flat: Any) -> list[tuple[int, int]]:
    return [(int(flat[i]), int(flat[i + 1])) for i in range(0, len(flat), 2)]


class RedisAsync(KV):
    """The ASGI store: :class:`apps.core.drivers.resp.PipelinedRedis`, one pipelined connection per
    process, each call bounded by ``REDIS_TIMEOUT`` seconds."""

    def __init__(self, url: str):
        from apps.core.drivers.resp import PipelinedRedis

        self._timeout = settings.REDIS_TIMEOUT
        self._client = PipelinedRedis(url, timeout=self._timeout)

    async def _guard(self, call: Any) -> Any:
        """Await ``call`` (a client coroutine), mapping every Redis failure to KVUnavailable."""
        from apps.core.drivers.resp import RedisReplyError

        try:
            return await call
        except TimeoutError:
            raise KVUnavailable(f"no answer from Redis within {self._timeout} s") from None
        except (ConnectionError, OSError, RedisReplyError) as exc:
            raise KVUnavailable(str(exc)) from None

    async def _call(self, *args: Any) -> Any:
        return await self._guard(self._client.execute(*args))

    async def _script(self, script: Any, keys: list[str], args: Any) -> Any:
        return await self._guard(self._client.run_script(script, keys, args))

    async def ping(self) -> bool:
        return bool(await self._call("PING") == b"PONG")

    async def get(self, key: str) -> bytes | None:
        value: bytes | None = await self._call("GET", key)
        return value

    async def set(self, key: str, value: bytes | str, ttl: int | None = None) -> None:
        await (self._call("SET", key, value) if ttl is None else self._call("SET", key, value, "EX", int(ttl)))

    async def delete(self, *keys: str) -> None:
        if keys:
            await self._call("DEL", *keys)

    async def hit_windows(self, keys: list[str], window: int, add: int = 1) -> list[tuple[int, int]]:
        return _pairs(await self._script(_HIT_WINDOWS_SCRIPT, list(keys), [add, window * 1000]))

    async def publish(self, channel: str, data: bytes) -> None:
        await self._call("PUBLISH", channel, data)

    async def publish_many(self, messages: list[tuple[str, bytes]]) -> None:
        if len(messages) <= 1:
            return await self.publish(*messages[0]) if messages else None
        await self._script(_PUBLISH_ALL_SCRIPT, [], [part for message in messages for part in message])

    async def append_stream(self, key: str, maxlen: int, max_age: float, entries: list[tuple[bytes | str, bytes]]) -> None:
        if entries:
            await self._script(_XADD_ALL_SCRIPT, [key], _xadd_args(maxlen, max_age, entries))

    async def close(self) -> None:
        await self._client.close()


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
        self._hits = self._client.register_script(_HIT_WINDOWS)
        self._publish_all = self._client.register_script(_PUBLISH_ALL)
        self._xadd_all = self._client.register_script(_XADD_ALL)

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import redis

        try:
            return fn(*args, **kwargs)
        except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
            raise KVUnavailable(str(exc)) from None

    async def ping(self) -> bool:
        return bool(self._call(self._client.ping))

    async def get(self, key: str) -> bytes | None:
        value: bytes | None = self._call(self._client.get, key)
        return value

    async def set(self, key: str, value: bytes | str, ttl: int | None = None) -> None:
        self._call(self._client.set, key, value, ex=ttl)

    async def delete(self, *keys: str) -> None:
        if keys:
            self._call(self._client.delete, *keys)

    async def hit_windows(self, keys: list[str], window: int, add: int = 1) -> list[tuple[int, int]]:
        return _pairs(self._call(self._hits, keys=list(keys), args=[add, window * 1000]))

    async def publish(self, channel: str, data: bytes) -> None:
        self._call(self._client.publish, channel, data)

    async def publish_many(self, messages: list[tuple[str, bytes]]) -> None:
        if messages:
            self._call(self._publish_all, args=[part for message in messages for part in message])

    async def append_stream(self, key: str, maxlen: int, max_age: float, entries: list[tuple[bytes | str, bytes]]) -> None:
        if entries:
            self._call(self._xadd_all, keys=[key], args=_xadd_args(maxlen, max_age, entries))

    async def close(self) -> None:
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
