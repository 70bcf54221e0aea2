"""One process's fan-out of realtime events to its sockets, fed by a Redis stream.

Why a stream: Redis pub/sub keeps nothing, so every event published while a process was
reconnecting to Redis (a restart, a failover, a network blip) was lost for its sockets. Writers
now ``XADD`` each event to one stream per deployment (:func:`stream_key`, inside the configured
Redis database, trimmed to about ``REALTIME_STREAM_MAXLEN`` entries). Each ASGI process runs one
reader task (:class:`Hub`, started by the first socket, then kept for the life of the event
loop: an idle reader costs one ``XREAD`` per ``BLOCK_MS``) that ``XREAD BLOCK``s from the last entry ID it handled and hands every
entry to the sockets of that project in this process. After a lost connection it reconnects and
reads on from that same ID, so what was added meanwhile is delivered late but in order, and
nothing twice (entry IDs only grow). Entries older than ``REALTIME_REPLAY_SECONDS`` (by Redis's
clock) when the reader comes back are skipped and logged: a socket should not receive a burst of
stale events after a long outage (the Appwrite SDKs re-fetch on reconnect anyway). Entries trimmed
away before the reader came back (more than ``REALTIME_STREAM_MAXLEN`` events during the outage,
or a Redis restart without persistence) are lost; the reader logs that it may have missed some.

An event can be on the stream twice (the outbox relay re-sent an entry whose first ``XADD``
reply was lost, see ``apps.realtime.outbox``): each message carries an event ``id`` and the
reader drops an ID it handled among the last ``REALTIME_STREAM_MAXLEN`` it dispatched, so a
socket receives each event once.

Without ``REDIS_URL`` there is one process: :func:`deliver_local` hands events straight to the
hub of the running event loop.

A member is any object with ``deliver(message) -> None`` (``consumer.Connection``); ``deliver``
must not await (it queues), so one slow socket never delays the others.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
import weakref

import orjson
from django.conf import settings

log = logging.getLogger("apps.realtime")

BLOCK_MS = 5000  # one XREAD waits at most this long for new entries
READ_COUNT = 1000  # entries per XREAD
_hubs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> Hub


def stream_key() -> str:
    """The Redis key of the deployment's event stream (a key, so it lives in ``REDIS_URL``'s
    database, unlike a pub/sub channel)."""
    return f"{settings.REDIS_PREFIX}rt:events"


def encode(project_uid: str, message: dict) -> tuple[bytes, bytes]:
    """The ``(p, m)`` fields of one stream entry: project ID and the JSON message."""
    return project_uid.encode(), orjson.dumps(message)


def get_hub() -> Hub:
    """The hub of the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = Hub()
    return hub


def deliver_local(project_uid: str, messages: list[dict]) -> None:
    """Without Redis: hand ``messages`` to this loop's sockets of ``project_uid``."""
    hub = get_hub()
    for message in messages:
        hub.dispatch(project_uid, message)


def _ms(entry_id: bytes | str) -> int:
    return int((entry_id.decode() if isinstance(entry_id, bytes) else entry_id).split("-", 1)[0])


def _after(a: str, b: str) -> bool:
    """True when stream entry ID ``a`` is later than ``b``."""
    (am, _, aseq), (bm, _, bseq) = a.partition("-"), b.partition("-")
    return (int(am), int(aseq or 0)) > (int(bm), int(bseq or 0))


class Hub:
    """Sockets of this process by project, and the stream reader that feeds them."""

    def __init__(self):
        self.members: dict[str, set] = {}
        self.last_id: str | None = None  # the last stream entry handled
        self.reconnects = 0
        self.skipped = 0  # entries not replayed: older than REALTIME_REPLAY_SECONDS
        self.duplicates = 0  # entries dropped: their event ID was handled already
        self._seen: set[str] = set()  # event IDs dispatched lately, oldest first in _seen_order
        self._seen_order: collections.deque[str] = collections.deque()
        self._task: asyncio.Task | None = None
        self._positioned = asyncio.Event()
        self._failure: BaseException | None = None

    # --- membership ------------------------------------------------------------------------------

    async def join(self, project_uid: str, member) -> None:
        """Add ``member``; with Redis, wait (at most ``REDIS_TIMEOUT`` seconds, else
        ``TimeoutError``) until the reader knows its position, so every event added from now
        on reaches ``member``."""
        self.members.setdefault(project_uid, set()).add(member)
        if not settings.REDIS_URL:
            return
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="realtime-stream-reader")
        if not self._positioned.is_set():
            try:
                await asyncio.wait_for(self._positioned.wait(), settings.REDIS_TIMEOUT)
            except TimeoutError:
                self.leave(project_uid, member)
                raise TimeoutError(f"realtime: no Redis stream position within {settings.REDIS_TIMEOUT} s "
                                   f"({self._failure})") from None

    def leave(self, project_uid: str, member) -> None:
        group = self.members.get(project_uid)
        if group is not None:
            group.discard(member)
            if not group:
                del self.members[project_uid]

    def dispatch(self, project_uid: str, message: dict) -> None:
        for member in tuple(self.members.get(project_uid, ())):
            member.deliver(message)

    # --- the stream reader -----------------------------------------------------------------------

    async def _run(self) -> None:
        import redis.asyncio as aioredis

        delay = 0.05
        down_since = None  # monotonic time of the first failure of the current outage
        while True:
            client = aioredis.Redis.from_url(
                settings.REDIS_URL, socket_connect_timeout=settings.REDIS_TIMEOUT,
                socket_timeout=BLOCK_MS / 1000 + settings.REDIS_TIMEOUT, socket_keepalive=True)
            try:
                await self._position(client)
                if down_since is not None:
                    log.warning("realtime: stream reader back after %.1f s", time.monotonic() - down_since)
                    down_since = None
                delay = 0.05
                await self._read(client)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis lost: reconnect and read on from last_id
                self._failure = exc
                self.reconnects += 1
                if down_since is None:  # one line per outage, not one per retry
                    down_since = time.monotonic()
                    log.warning("realtime: stream reader lost Redis (%s); reading on from %s when it is back",
                                exc, self.last_id)
            finally:
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def _position(self, client) -> None:
        """Set where to read from: the stream's newest entry the first time; after a reconnect,
        ``last_id`` or, if that is older than the replay window, the window's start."""
        key = stream_key()
        if self.last_id is None:  # first start: from the newest entry on
            newest = await client.xrevrange(key, count=1)
            self.last_id = newest[0][0].decode() if newest else "0-0"
            self._positioned.set()
            return
        await self._check_trimmed(client, key)
        seconds, micros = await client.time()
        start = f"{int(seconds) * 1000 + int(micros) // 1000 - int(settings.REALTIME_REPLAY_SECONDS * 1000)}-0"
        if _after(start, self.last_id):
            stale = await client.xrange(key, min=f"({self.last_id}", max=f"({start}")
            if stale:
                self.skipped += len(stale)
                log.warning("realtime: %d event(s) older than %g s (REALTIME_REPLAY_SECONDS) not replayed",
                            len(stale), settings.REALTIME_REPLAY_SECONDS)
            self.last_id = start

    async def _check_trimmed(self, client, key: str) -> None:
        """Warn when the entry after ``last_id`` may be gone (trimmed, or Redis restarted
        without persistence): the stream's oldest entry is later than ``last_id``."""
        if self.last_id in (None, "0-0"):  # nothing was ever read: nothing can have been missed
            return
        oldest = await client.xrange(key, count=1)
        if oldest and _after(oldest[0][0].decode(), self.last_id):
            log.warning("realtime: the event stream no longer holds entry %s: events trimmed "
                        "(REALTIME_STREAM_MAXLEN) or lost in a Redis restart may not have been delivered",
                        self.last_id)

    async def _read(self, client) -> None:
        key = stream_key()
        while True:
            reply = await client.xread({key: self.last_id}, count=READ_COUNT, block=BLOCK_MS)
            # Let what is already runnable go first: when this process wrote the event, the
            # request that wrote it finishes (its XADD reply came with this one) before hundreds
            # of socket writers are woken ahead of it.
            await asyncio.sleep(0)
            for _, entries in reply or ():
                for entry_id, fields in entries:
                    self.last_id = entry_id.decode()
                    project = fields.get(b"p", b"").decode()
                    if project in self.members:
                        try:
                            message = orjson.loads(fields[b"m"])
                        except (KeyError, orjson.JSONDecodeError):
                            log.warning("realtime: undecodable stream entry %s skipped", self.last_id)
                            continue
                        if self.first_time(message.get("id")):
                            self.dispatch(project, message)

    def first_time(self, event_id: str | None) -> bool:
        """False when ``event_id`` was dispatched already (remembers the last
        ``REALTIME_STREAM_MAXLEN`` IDs); messages without an ID are always new."""
        if event_id is None:
            return True
        if event_id in self._seen:
            self.duplicates += 1
            return False
        self._seen.add(event_id)
        self._seen_order.append(event_id)
        if len(self._seen_order) > settings.REALTIME_STREAM_MAXLEN:
            self._seen.discard(self._seen_order.popleft())
        return True
