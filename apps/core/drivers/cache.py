"""Process-local read caches with invalidation across processes.

Hot-path reads that change rarely (a session with its user, a table with its columns, an API key) are kept
in each server process for ``LOCAL_CACHE_TTL`` seconds. Every write that changes them calls
:func:`invalidate` after it commits: the entries carrying the written tags are dropped in this
process at once and, through one Redis ``PUBLISH`` on :func:`channel`, in every other process of the deployment.

Correctness rules:

* A process uses its caches only while its invalidation listener is subscribed (a daemon thread
  per process, started on first use, so after gunicorn's fork). When the subscription breaks,
  every cache is emptied and bypassed until it is back: a missed message can never leave a
  stale entry.
* Without ``REDIS_URL`` (the embedded default) there is no channel. The ASGI build's SQLite
  driver then registers a change check (:func:`watch_changes`): SQLite's ``PRAGMA
  data_version``, which changes when any other connection (another process, Django's own
  connection) commits to the file. Caches are emptied whenever it changed since the last
  look, which is taken on every cache read, so a commit made elsewhere is never answered from
  a cache. Without such a check (the WSGI build's gunicorn workers on one SQLite file, whose
  connections Django opens per request) caches are off.
* A read that raced with an invalidation is not stored: callers take a :func:`epoch` before
  their database read and pass it to :meth:`LocalCache.put`, which drops the value when any
  invalidation arrived in between.
* ``LOCAL_CACHE_TTL`` bounds the life of every entry even if a writer outside this code (an SQL
  console) changed the database.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed

log = logging.getLogger("apps.core.drivers.cache")



def channel() -> str:
    """The deployment's invalidation channel, ``<REDIS_PREFIX>cache.invalidate``: pub/sub
    channels are shared by every database of a Redis server, so the name carries the
    deployment's prefix (by default its database number)."""
    return f"{settings.REDIS_PREFIX}cache.invalidate"

_MAX_ENTRIES = 50_000  # per cache; the whole cache is dropped when full (simple and bounded)

_lock = threading.Lock()
_caches: list[LocalCache] = []
_epoch = 0


def epoch() -> int:
    """A counter of invalidations seen by this process; take it before a database read."""
    return _epoch


class LocalCache:
    """A bounded dict of ``key -> (value, expiry, tags)``; thread-safe.

    Values are shared between requests: callers must not mutate what :meth:`get` returns.
    """

    def __init__(self, name: str):
        self.name = name
        self._data: dict[Any, tuple[Any, float, tuple[str, ...]]] = {}
        self._by_tag: dict[str, set[Any]] = {}
        with _lock:
            _caches.append(self)

    def get(self, key: str) -> Any | None:
        """The cached value or ``None`` (missing, expired, or caches off)."""
        if not _active():
            return None
        hit = self._data.get(key)
        if hit is None:
            return None
        if hit[1] <= time.monotonic():
            with _lock:
                self._drop(key)
            return None
        return hit[0]

    def put(self, key: str, value: Any, tags: tuple[str, ...], seen_epoch: int) -> None:
        """Store ``value`` under ``key`` with invalidation ``tags``, unless an invalidation
        arrived since ``seen_epoch`` (the read may be stale) or caches are off."""
        ttl = settings.LOCAL_CACHE_TTL
        if not ttl or not _active():
            return
        with _lock:
            if _epoch != seen_epoch:
                return
            if len(self._data) >= _MAX_ENTRIES:
                self._data.clear()
                self._by_tag.clear()
            self._drop(key)
            self._data[key] = (value, time.monotonic() + ttl, tags)
            for tag in tags:
                self._by_tag.setdefault(tag, set()).add(key)

    async def fetch(self, key: str, load: Callable[[], Awaitable[Any]], tags_of: Callable[[Any], tuple[str, ...]]) -> Any:
        """The cached value of ``key``, else ``await load()`` stored under ``tags_of(value)``
        (a ``None`` result is not stored; a load that raced an invalidation is not stored)."""
        value = self.get(key)
        if value is None:
            seen = epoch()
            value = await load()
            if value is not None:
                self.put(key, value, tags_of(value), seen)
        return value

    def discard(self, key: str) -> None:
        """Drop ``key`` in this process only (no epoch change, no message to other processes)."""
        with _lock:
            self._drop(key)

    def _drop(self, key: str) -> None:  # under _lock
        old = self._data.pop(key, None)
        if old is not None:
            for tag in old[2]:
                keys = self._by_tag.get(tag)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._by_tag[tag]

    def _drop_tag(self, tag: str) -> None:  # under _lock
        for key in list(self._by_tag.get(tag, ())):
            self._drop(key)

    def _clear(self) -> None:  # under _lock
        self._data.clear()
        self._by_tag.clear()


def drop_local(tags: Any) -> None:
    """Drop the entries carrying any of ``tags`` in this process and advance the epoch."""
    global _epoch
    with _lock:
        _epoch += 1
        for cache in _caches:
            for tag in tags:
                cache._drop_tag(tag)


async def invalidate(ctx: Any, *tags: str) -> None:
    """After a committed write: drop ``tags`` here and tell every other process.

    Never raises: when Redis cannot be reached the other processes' listeners are cut off too,
    so they have already emptied and bypassed their caches.
    """
    drop_local(tags)
    if not settings.REDIS_URL or not tags:
        return
    try:
        await ctx.kv.publish(channel(), "\n".join(tags).encode())
    except Exception as exc:  # KVUnavailable, or a driver error
        log.warning("cache invalidation of %s not published: %s", tags, exc)


def invalidate_sync(*tags: str) -> None:
    """:func:`invalidate` for code without an event loop (ORM signal handlers, the admin),
    through the process's synchronous store (``get_kv("sync")``). Never raises."""
    from types import SimpleNamespace

    from apps.core.drivers.kv import get_kv
    from apps.core.drivers.runtime import run_sync

    run_sync(invalidate(SimpleNamespace(kv=get_kv("sync")), *tags))


# --- the listener -------------------------------------------------------------------------------
_listener_pid = 0
_live = False


# Without Redis: a function returning a token that changes whenever another connection committed
# to the embedded database (see the module docstring), and the last token seen.
_changes = None
_changes_seen: object = None


def watch_changes(token: Any) -> None:
    """Serve caches without Redis, with ``token()`` (no arguments; returns a value that differs
    from the last one when someone else wrote to the database) checked before every cache read.
    ``None`` stops it. Set by the ASGI build's SQLite driver (``apps.core.drivers.db.sqlite``)."""
    global _changes, _changes_seen
    with _lock:
        _changes, _changes_seen = token, (token() if token is not None else None)
        _clear_all()


def _unchanged() -> bool:
    """False (caches off) without a change check; else empties every cache when the database
    changed since the last look, and True."""
    global _changes_seen
    check = _changes
    if check is None:
        return False
    token = check()
    if token != _changes_seen:
        with _lock:
            _changes_seen = token
            _clear_all()
    return True


def _clear_all() -> None:  # under _lock
    global _epoch
    _epoch += 1
    for cache in _caches:
        cache._clear()


# (LOCAL_CACHE_TTL, REDIS_URL), read from settings on first use and again after a test changes
# either (Django's setting_changed): _active() runs on every cache read, several per request.
_conf: tuple[Any, ...] | None = None


def _settings_changed(setting: Any, **kwargs: Any) -> None:
    global _conf
    if setting in ("LOCAL_CACHE_TTL", "REDIS_URL"):
        _conf = None


setting_changed.connect(_settings_changed)


def _active() -> bool:
    global _conf
    conf = _conf
    if conf is None:
        conf = _conf = (settings.LOCAL_CACHE_TTL, settings.REDIS_URL)
    if not conf[0]:
        return False
    if not conf[1]:
        return _unchanged()
    if not _listener_pid:
        _start_listener()
    return _live


def _forked() -> None:
    """In a child process (gunicorn forks its workers after --preload): the parent's listener
    thread is not there, so caches are off until the child's own listener is subscribed."""
    global _listener_pid, _live, _lock
    _lock = threading.Lock()  # a thread of the parent may have held it at the fork
    _listener_pid, _live = 0, False
    _clear_all()


os.register_at_fork(after_in_child=_forked)


def _start_listener() -> None:
    global _listener_pid, _live
    with _lock:
        if _listener_pid:
            return
        _listener_pid = os.getpid()
        _live = False
    threading.Thread(target=_listen, name="cache-invalidation", daemon=True).start()


def _set_live(value: bool) -> None:
    global _live
    with _lock:
        _live = value
        _clear_all()


def _listen() -> None:
    """Subscribe to :func:`channel` and apply every message; reconnect after a failure (caches
    stay off meanwhile)."""
    import redis

    delay = 0.5
    while True:
        client = None
        try:
            client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=settings.REDIS_TIMEOUT,
                                          socket_keepalive=True)
            pubsub = client.pubsub(ignore_subscribe_messages=False)
            pubsub.subscribe(channel())
            # A blocking read never notices a Redis that stalls (SIGSTOP, a partition): ping it
            # every REDIS_TIMEOUT seconds of silence, and give up (caches off) when two of those
            # pass with no answer, so a write this process cannot hear about is not served
            # from its cache for long.
            probe = settings.REDIS_TIMEOUT
            heard = time.monotonic()
            while True:
                message = pubsub.get_message(timeout=probe)
                if message is None:
                    if time.monotonic() - heard > 2 * probe:
                        raise TimeoutError(f"no answer to PING within {2 * probe:g} s")
                    pubsub.ping()
                    continue
                heard = time.monotonic()
                kind = message.get("type")
                if kind == "subscribe":
                    _set_live(True)
                    delay = 0.5
                elif kind == "message":
                    drop_local(message["data"].decode().split("\n"))
        except Exception as exc:  # noqa: BLE001 - any failure: caches off, retry
            log.warning("cache invalidation listener lost Redis (%s); caches off until it is back", exc)
        finally:
            _set_live(False)
            if client is not None:
                try:
                    client.close()
                except Exception:  # noqa: BLE001
                    pass
        time.sleep(delay)
        delay = min(delay * 2, 10)
