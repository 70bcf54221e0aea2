"""The request log (``REQUEST_LOG``, off by default): one row per /v1 request, written in batches.

**On the request path**, :func:`record` appends one tuple to this process's buffer (a
``deque``: appends are atomic under threads too) and nothing else: no I/O, no lock. The
pipeline's ``handle`` is chosen once at start (:mod:`apps.core.http.pipeline`): with the log
off it is the plain pipeline, which pays nothing for this module.

**Off the request path**, a flusher takes everything buffered about once a second
(:data:`FLUSH_SECONDS`) and writes it with one ``INSERT`` (PostgreSQL: one statement over
``unnest`` arrays, the same text whatever the batch size, so it is prepared once; SQLite: rows in
chunks of :data:`SQLITE_CHUNK`):

* ASGI: an asyncio task on the server's loop, started by the first logged request, writing
  through the process's async driver (asyncpg pool or SQLite); lifespan shutdown writes what is
  left (:func:`stop`);
* WSGI (gunicorn): a daemon thread per worker process, started the same way, writing through
  Django's connection of that thread and giving it back after each batch; the process's exit
  writes what is left.

It never fails or slows a request: past :data:`MAX_BUFFERED` waiting entries the oldest are
dropped and counted (:data:`stats`, logged once per batch), and a batch the database refuses
is logged and dropped. Entries older than ``REQUEST_LOG_DAYS`` are deleted by the worker's
periodic job (:func:`delete_expired`, registered in ``apps.core.apps``).
"""

from __future__ import annotations

import asyncio
import atexit
import datetime as dt
import logging
import os
import threading
import time
from collections import deque
from typing import Any

from django.conf import settings

from apps.core.drivers.db import UTC, Database, DjangoSync, get_database
from apps.core.drivers.runtime import run_sync
from apps.core.http.context import RequestContext, Response

log = logging.getLogger("apps.core.requestlog")

ENABLED: bool = bool(getattr(settings, "REQUEST_LOG", False))
MAX_BUFFERED = 10_000  # entries waiting for the flusher; more drop the oldest
FLUSH_SECONDS = 1.0
SQLITE_CHUNK = 50  # rows per INSERT on SQLite (11 parameters a row, under its 999 limit)
PATH_MAX = 255
AGENT_MAX = 255
DELETE_BATCH = 10_000  # rows per DELETE of the retention job
DELETE_BATCHES = 10  # DELETEs per run of the job

# (time, project, method, route, path, status, duration_ms, ip, actor, request_id, user_agent)
Entry = tuple[float, str, str, str, str, int, float, str, str, str, str]
_buffer: deque[Entry] = deque(maxlen=MAX_BUFFERED)
stats = {"dropped": 0, "written": 0, "failed": 0}
_COLUMNS = "time, project, method, route, path, status, duration_ms, ip, actor, request_id, user_agent"
_PG_INSERT = (f"INSERT INTO core_requestlog ({_COLUMNS}) SELECT * FROM unnest(%s::timestamptz[], %s::text[], "
              "%s::text[], %s::text[], %s::text[], %s::int[], %s::float8[], %s::text[], %s::text[], %s::text[], "
              "%s::text[])")


def _actor(ctx: RequestContext) -> str:
    auth = ctx.auth
    user = auth.actor  # while impersonating: the impersonator
    if user is not None:
        return "user:" + str(user.get("uid", ""))
    if auth.key is not None:
        return "key:" + str(auth.key.get("uid", ""))
    return auth.kind


def record(ctx: RequestContext, response: Response, started: float) -> None:
    """Buffer one finished request (``started``: ``time.perf_counter()`` at its start)."""
    duration = (time.perf_counter() - started) * 1000.0
    if len(_buffer) >= MAX_BUFFERED:
        stats["dropped"] += 1  # the deque drops its oldest entry on this append
    endpoint = ctx.endpoint
    _buffer.append((time.time(), ctx.project["uid"] if ctx.project else "", ctx.method,
                    endpoint.path if endpoint is not None else "", ctx.path, response.status, duration,
                    ctx.client_ip or ctx.peer_ip, _actor(ctx), ctx.request_id,
                    ctx.headers.get("user-agent", "")))
    if not _flusher.running:
        _flusher.start(ctx.mode)


def _drain() -> list[Entry]:
    """Take every buffered entry, oldest first (safe against concurrent appends)."""
    batch = []
    pop = _buffer.popleft
    try:
        while True:
            batch.append(pop())
    except IndexError:
        return batch


def _columns(batch: list[Entry], db: Database) -> list[list[Any]]:
    """The batch as one list per column, in :data:`_COLUMNS` order, cut to the columns' sizes."""
    out: list[list[Any]] = [[] for _ in range(11)]
    for at, project, method, route, path, status, duration, ip, actor, request_id, agent in batch:
        row = (db.dt(dt.datetime.fromtimestamp(at, UTC)), project[:36], method[:10],
               ("/v1" + (route or path))[:255], ("/v1" + path)[:PATH_MAX], status, round(duration, 3), ip[:64],
               actor[:64], request_id[:32], agent[:AGENT_MAX])
        for column, value in zip(out, row, strict=True):
            column.append(value)
    return out


async def write(db: Database, batch: list[Entry]) -> None:
    """Insert ``batch`` (raises what the database raises)."""
    columns = _columns(batch, db)
    if db.vendor == "postgresql":
        await db.execute(_PG_INSERT, columns)
        return
    rows = list(zip(*columns, strict=True))
    for i in range(0, len(rows), SQLITE_CHUNK):
        chunk = rows[i:i + SQLITE_CHUNK]
        values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(chunk))
        await db.execute(f"INSERT INTO core_requestlog ({_COLUMNS}) VALUES {values}",
                         [value for row in chunk for value in row])


async def flush(db: Database) -> int:
    """Write everything buffered now; a database error is logged and the batch dropped. How many
    entries were written."""
    dropped, stats["dropped"] = stats["dropped"], 0
    if dropped:
        log.warning("request log: %d entries dropped (more than %d waiting to be written)", dropped, MAX_BUFFERED)
    batch = _drain()
    if not batch:
        return 0
    try:
        await write(db, batch)
    except Exception:  # noqa: BLE001 - the log never takes the server down
        stats["failed"] += len(batch)
        log.exception("request log: %d entries could not be written and are dropped", len(batch))
        return 0
    stats["written"] += len(batch)
    return len(batch)


class _Flusher:
    """This process's flusher: an asyncio task (``async`` mode) or a daemon thread (``sync``)."""

    def __init__(self) -> None:
        self.running = False
        self.task: asyncio.Task[None] | None = None
        self.thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self, mode: str) -> None:
        with self._lock:
            if self.running:
                return
            self.running = True
            if mode == "sync":
                self.thread = threading.Thread(target=self._thread_loop, name="request-log", daemon=True)
                self.thread.start()
                atexit.register(self._flush_sync)
            else:
                self.task = asyncio.get_running_loop().create_task(self._task_loop(), name="request-log")

    async def _task_loop(self) -> None:
        try:
            while True:
                await asyncio.sleep(FLUSH_SECONDS)
                await flush(get_database("async"))
        finally:
            self.running = False

    def _thread_loop(self) -> None:
        while True:
            time.sleep(FLUSH_SECONDS)
            try:
                self._flush_sync()
            except Exception:  # noqa: BLE001 - the thread outlives any one batch
                log.exception("request log: flush failed")

    def _flush_sync(self) -> None:
        from django.db import connection

        try:
            run_sync(flush(DjangoSync()))
        finally:
            try:
                connection.close()  # back to Django's pool until the next batch
            except Exception:  # noqa: BLE001 - a broken connection is discarded either way
                pass

    async def stop(self) -> None:
        """Lifespan shutdown of an ASGI process: stop the task and write what is left."""
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        self.running = False
        if _buffer:
            await flush(get_database("async"))

    def forked(self) -> None:
        """In a new child process: no flusher runs here yet (gunicorn forks its workers)."""
        self.running, self.task, self.thread = False, None, None
        self._lock = threading.Lock()


_flusher = _Flusher()
os.register_at_fork(after_in_child=_flusher.forked)


def start() -> None:
    """Lifespan startup (``serve_in_background``): nothing; the first logged request starts the
    flusher on the loop it runs on."""


async def stop() -> None:
    """Lifespan shutdown: write what is buffered."""
    await _flusher.stop()


def delete_expired(now: dt.datetime | None = None) -> int:
    """Delete the entries older than ``REQUEST_LOG_DAYS`` days, :data:`DELETE_BATCH` rows per
    statement and at most :data:`DELETE_BATCHES` statements (the rest at the next heartbeat, so
    the job stays short); how many (blocking, Django's connection). Runs whether the log is on
    or off, so entries of a log since turned off go too."""
    from apps.core.models import RequestLog

    cutoff = (now or dt.datetime.now(UTC)) - dt.timedelta(days=settings.REQUEST_LOG_DAYS)
    total = 0
    for _ in range(DELETE_BATCHES):
        ids = list(RequestLog.objects.filter(time__lt=cutoff).order_by().values_list("id", flat=True)[:DELETE_BATCH])
        if not ids:
            return total
        total += RequestLog.objects.filter(id__in=ids).delete()[0]
        if len(ids) < DELETE_BATCH:
            return total
    return total
