"""The durable outbox between committed writes and the Redis event stream.

Why: a write answered 201 while Redis was down used to lose its event (the publish failed and
nothing kept it). Now an event is on the stream or in the ``realtime_outbox`` table
(:class:`~apps.realtime.models.OutboxEvent`) before the write is answered:

* A write with a transaction records its events in it (:func:`record`, via
  ``apps.core.domain.events.record``): one ``INSERT`` of its outbox rows, committed with the write or
  not at all. After the commit the publisher adds them to the stream and hands their row IDs
  to this process's :class:`Relay`, which deletes them in batches (WSGI: at once).
* A write without a transaction (one autocommitted statement) adds its events to the stream
  after the commit; only if Redis fails does it insert them into the outbox, still before the
  response. (A crash between that commit and the publish loses the event, as it would lose an
  outbox insert made after the commit: the same guarantee without an extra statement per write.)
* While Redis is down (a publish failed), writes of this process stop trying it and leave their
  events in the outbox; the relay retries every ``REALTIME_PUBLISH_RETRY_SECONDS`` at most
  and, once Redis answers, moves the rows to the stream in ``id`` order, then writes publish
  directly again.
* Every ASGI process runs a relay (started at lifespan startup). Besides its own backlog it
  picks up, every ``REALTIME_OUTBOX_POLL_SECONDS``, rows older than that interval: events whose
  writer crashed after the commit or that a WSGI process stored during an outage. On PostgreSQL
  ``FOR UPDATE SKIP LOCKED`` keeps two relays from sending the same row at once; a row is
  deleted in the transaction that locked it, after Redis accepted it. A row names its stream
  (``hub.stream_key()``, so ``REDIS_PREFIX``): a relay takes only its own deployment's rows.
* An event may still reach the stream twice (a reply lost after Redis took the entry, a relay
  racing the writer): each message carries a random event ``id`` and every reader
  (:class:`~apps.realtime.hub.Hub`) drops an ID it has already handled, so a socket gets it once.
* Rows older than ``REALTIME_REPLAY_SECONDS`` when relayed are dropped and logged, as the
  reader skips stale stream entries: after a long outage clients re-fetch instead.

Without ``REDIS_URL`` nothing here runs: events go straight to the sockets of the one process.
Operator documentation: ``docs/reliability-realtime.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import secrets
import time
import weakref
from dataclasses import dataclass

import orjson
from django.conf import settings

from apps.core.domain.events import WriteEvent
from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_dt, get_database, now
from apps.core.drivers.kv import KVUnavailable, get_kv
from apps.realtime.delivery import message_for
from apps.realtime.hub import stream_key

log = logging.getLogger("apps.realtime")

TABLE = "realtime_outbox"
BATCH = 500  # rows per relay round (one SELECT, one XADD script call, one DELETE)
MIN_RETRY = 0.05  # seconds before the first retry of an outage; doubles up to the retry setting


@dataclass(slots=True)
class Entry:
    """One stream entry: ``project`` (public ID) and ``message`` (JSON with its event ``id``);
    ``row`` is its outbox row ID once stored."""

    project: str
    message: bytes
    row: int | None = None

    def fields(self) -> tuple[bytes, bytes]:
        return self.project.encode(), self.message


def project_uid(ctx, event: WriteEvent) -> str:
    # Writers should pass the public project ID; accept the internal primary key too.
    project = getattr(ctx, "project", None)
    if project and str(event.project_id) == str(project.get("id")) and project.get("uid"):
        return project["uid"]
    return str(event.project_id)


def entry_for(ctx, event: WriteEvent, timestamp: str) -> Entry | None:
    """The stream entry of ``event`` with a new event ID, or ``None`` when it is not published."""
    message = message_for(event, timestamp)
    if message is None:
        return None
    message["id"] = secrets.token_hex(8)  # what readers de-duplicate by
    return Entry(project_uid(ctx, event), orjson.dumps(message))


def entries_for(ctx, events: list[WriteEvent]) -> list[Entry]:
    """The stream entries of ``events``, in order: those recorded in the write's transaction as
    they were stored, the others built now (with one timestamp: committed together)."""
    out, timestamp = [], None
    for event in events:
        if isinstance(event.recorded, Entry):
            out.append(event.recorded)
            continue
        timestamp = timestamp or iso(now())
        entry = entry_for(ctx, event, timestamp)
        if entry is not None:
            out.append(entry)
    return out


async def store(db, entries: list[Entry]) -> None:
    """Insert ``entries`` into the outbox with one statement on ``db`` (a transaction or the
    pool) and set their ``row``."""
    ts, stream = db.dt(now()), stream_key()
    for i in range(0, len(entries), BATCH):  # 4 parameters a row: far below every driver's cap
        part = entries[i:i + BATCH]
        params: list = []
        for entry in part:
            params += [stream, entry.project, entry.message.decode(), ts]
        rows = await db.fetchall(f"INSERT INTO {TABLE} (stream, project, message, created_at) VALUES "
                                 + ", ".join(["(%s, %s, %s, %s)"] * len(part)) + " RETURNING id", params)
        # Only the set of a batch's row IDs matters (they are published and deleted together).
        for entry, row in zip(part, rows, strict=True):
            entry.row = row["id"]


async def record(ctx, tx, events: list[WriteEvent]) -> None:
    """The ``apps.core.domain.events`` recorder: store the published events of ``events`` in the
    outbox inside the write's transaction ``tx`` and keep each one's entry on the event."""
    if not settings.REDIS_URL:
        return
    timestamp, entries = iso(now()), []
    for event in events:
        if event.recorded is None:
            entry = entry_for(ctx, event, timestamp)
            if entry is not None:
                event.recorded = entry
                entries.append(entry)
    if entries:
        await store(tx, entries)


async def append(kv, entries: list[Entry]) -> None:
    """``XADD`` ``entries`` to the event stream in one round trip (raises ``KVUnavailable``)."""
    await kv.append_stream(stream_key(), settings.REALTIME_STREAM_MAXLEN, settings.REALTIME_REPLAY_SECONDS,
                           [entry.fields() for entry in entries])


async def delete(db, rows: list[int]) -> None:
    for i in range(0, len(rows), BATCH):
        part = rows[i:i + BATCH]
        await db.execute(f"DELETE FROM {TABLE} WHERE id IN ({', '.join(['%s'] * len(part))})", part)


async def publish(ctx, entries: list[Entry]) -> None:
    """After the commit: put ``entries`` on the stream, or leave them in the outbox for the
    relay when Redis fails or this process knows it is down. Raises nothing for an outage;
    database errors (storing the events) propagate."""
    mode = getattr(ctx, "mode", "async")
    state = get_relay() if mode == "async" else _sync_state
    if not state.paused():
        try:
            await append(getattr(ctx, "kv", None) or get_kv(mode), entries)
        except KVUnavailable as exc:
            state.failed(exc)
        else:
            done = [entry.row for entry in entries if entry.row is not None]
            if done:
                await state.done(ctx.db, done)
            return
    unstored = [entry for entry in entries if entry.row is None]
    if unstored:
        await store(ctx.db, unstored)
    state.stored()


class _SyncState:
    """A WSGI process's view of an outage: it has no relay, so after a failed publish its writes
    leave their events in the outbox for ``REALTIME_PUBLISH_RETRY_SECONDS`` (an ASGI
    process's relay sends them) instead of each waiting for Redis again."""

    def __init__(self):
        self.until = 0.0

    def paused(self) -> bool:
        return time.monotonic() < self.until

    def failed(self, exc: BaseException) -> None:
        if not self.paused():
            log.warning("realtime: publish failed (%s); events wait in the outbox", exc)
        self.until = time.monotonic() + max(0.0, settings.REALTIME_PUBLISH_RETRY_SECONDS)  # 0: no pause

    def stored(self) -> None:
        pass

    async def done(self, db, rows: list[int]) -> None:
        await delete(db, rows)


_sync_state = _SyncState()


def retry_seconds() -> float:
    return max(MIN_RETRY, settings.REALTIME_PUBLISH_RETRY_SECONDS)


_relays: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> Relay


def get_relay() -> Relay:
    """The relay of the running event loop (created on first use, its task started)."""
    loop = asyncio.get_running_loop()
    relay = _relays.get(loop)
    if relay is None:
        relay = _relays[loop] = Relay()
    relay.start()
    return relay


def start_relay() -> None:
    """Lifespan startup: run this process's relay (with ``REDIS_URL`` only)."""
    if settings.REDIS_URL:
        get_relay()


async def stop_relay() -> None:
    """Lifespan shutdown: stop the relay and delete the rows already on the stream."""
    relay = _relays.get(asyncio.get_running_loop())
    if relay is not None:
        await relay.stop()


class Relay:
    """Moves outbox rows to the stream for one ASGI process (see the module docstring).

    Writes of this process go straight to Redis only while nothing of theirs waits in the
    outbox (:meth:`paused` is false): from a failed publish (``backlog``) until the relay has
    sent every row they stored, later events queue behind the waiting ones, so the process's
    events reach the stream in commit order."""

    def __init__(self):
        self.backlog = False
        self.relayed = 0  # rows sent by the relay (not by the writers), for tests and logs
        self._done: list[int] = []  # rows on the stream, to delete
        self._wake = asyncio.Event()
        self._stored = 0  # stores by this process's writers so far ...
        self._covered = 0  # ... and how many of them a finished relay round included
        self._task: asyncio.Task | None = None
        self._down_since: float | None = None

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="realtime-outbox-relay")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        with contextlib.suppress(Exception):
            await self._flush(get_database("async"))

    # --- called by writers -----------------------------------------------------------------------

    def paused(self) -> bool:
        return self.backlog or self._covered < self._stored

    def failed(self, exc: BaseException) -> None:
        if not self.backlog:
            self.backlog = True
            self._down_since = time.monotonic()
            log.warning("realtime: publish failed (%s); events wait in the outbox until Redis is back", exc)

    def stored(self) -> None:
        """A writer committed outbox rows for the relay (after its store)."""
        self._stored += 1
        if not self.backlog:  # in an outage the relay retries on its own schedule
            self._wake.set()

    async def done(self, db, rows: list[int]) -> None:
        self._done.extend(rows)
        if len(self._done) >= BATCH:
            self._wake.set()

    # --- the task ----------------------------------------------------------------------------------

    async def _run(self) -> None:
        delay = MIN_RETRY
        while True:
            if self.backlog:
                await asyncio.sleep(delay)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), settings.REALTIME_OUTBOX_POLL_SECONDS)
            self._wake.clear()
            db = get_database("async")
            target = self._stored  # every store counted here committed before this round's SELECT
            try:
                await self._flush(db)
                await self.drain(db, 0.0 if self.paused() else settings.REALTIME_OUTBOX_POLL_SECONDS)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis or the database down: retry later
                if isinstance(exc, KVUnavailable):
                    self.failed(exc)
                else:
                    log.warning("realtime: outbox relay failed (%s); retrying", exc)
                delay = min(delay * 2, retry_seconds())
                if not self.backlog:
                    await asyncio.sleep(delay)
                    self._wake.set()
                continue
            delay = MIN_RETRY
            self._covered = target
            if self._covered < self._stored:  # more stored during the round: go again now
                self._wake.set()
            if self.backlog:
                self.backlog = False
                log.warning("realtime: Redis back after %.1f s; waiting events relayed",
                            time.monotonic() - (self._down_since or time.monotonic()))

    async def _flush(self, db) -> None:
        rows, self._done = self._done, []
        try:
            await delete(db, rows)
        except BaseException:
            self._done = rows + self._done
            raise

    async def drain(self, db, min_age: float) -> int:
        """Relay outbox rows older than ``min_age`` seconds, ``BATCH`` at a time in ``id``
        order, until none is left; returns how many were sent. Raises ``KVUnavailable``
        (those rows stay) and database errors."""
        sent = 0
        while True:
            count, full = await self._round(db, min_age)
            sent += count
            if not full:
                return sent

    async def _round(self, db, min_age: float) -> tuple[int, bool]:
        lock = " FOR UPDATE SKIP LOCKED" if db.vendor == "postgresql" else ""
        current = now()
        cutoff = db.dt(current - dt.timedelta(seconds=min_age))
        async with db.transaction() as tx:
            rows = await tx.fetchall(f"SELECT id, project, message, created_at FROM {TABLE} "
                                     f"WHERE stream = %s AND created_at <= %s ORDER BY id LIMIT %s{lock}",
                                     (stream_key(), cutoff, BATCH))
            if not rows:
                return 0, False
            oldest = current.timestamp() - settings.REALTIME_REPLAY_SECONDS
            fresh = [r for r in rows if as_dt(r["created_at"]).timestamp() >= oldest]
            if len(fresh) < len(rows):
                log.warning("realtime: %d outbox event(s) older than %g s (REALTIME_REPLAY_SECONDS) dropped",
                            len(rows) - len(fresh), settings.REALTIME_REPLAY_SECONDS)
            if fresh:
                entries = [Entry(r["project"], r["message"].encode()) for r in fresh]
                await append(get_kv("async"), entries)
            await delete(tx, [r["id"] for r in rows])
        self.relayed += len(fresh)
        return len(rows), len(rows) == BATCH
