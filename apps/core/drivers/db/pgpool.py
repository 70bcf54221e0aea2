"""The ASGI build's PostgreSQL connections: a small pool of asyncpg connections behind the gate.

Why not asyncpg's own ``Pool``: measured on the 2-core dev machine (20 tasks, one row read by
primary key each, uvloop), a query on a held asyncpg connection cost 25-27 us of client CPU and
the same query through ``Pool.acquire()``/``release()`` 69-72 us. The pool's per-checkout work
(a proxy object, a future per checkout, an inactivity timer re-armed on every release, its
``wait_for``/``shield`` layers) cost more than the query. Waiting for a connection is already
done in front of the pool, first come first served (:class:`apps.core.drivers.db.gate.Gate`), so what is
left for a pool is small: hand out an idle connection or open one, take it back, and retire
connections that are closed, too old or idle too long. That is this module; a checkout costs
a ``deque`` pop and push.

Rules (the settings are read by the caller, :class:`apps.core.drivers.db.postgres.PgAsync`):

* at most ``max_size`` connections exist: every connection is opened or held under one of the
  gate's ``max_size`` slots (callers wait there, in arrival order, for ``timeout`` seconds);
* the last connection given back is the next handed out (warm caches, and the rest go idle);
* a connection found closed at checkout (PostgreSQL restarted, the network cut) is dropped and
  the next one tried, so a restart costs no request its answer;
* a connection given back closed, inside a transaction or older than ``max_lifetime`` seconds
  is closed at once, never reused (one whose statement was cancelled is reused: asyncpg makes
  its next statement wait until the server has cancelled the last one);
* idle connections unused for ``max_idle`` seconds are closed, down to ``min_size``; after the
  first checkout the pool opens connections in the background up to ``min_size``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from apps.core.drivers.db.gate import Gate

log = logging.getLogger("apps.core.drivers.db")


class ConnectionPool:
    """asyncpg connections for one event loop (see the module docstring).

    ``connect()`` opens one connection (an ``asyncpg.Connection``, ready for use) or raises what
    asyncpg raised; ``min_size``/``max_size`` count connections; ``max_waiting`` callers may
    wait for one (0: any number); ``max_idle`` and ``max_lifetime`` are seconds."""

    def __init__(self, connect: Callable[[], Awaitable[Any]], *, min_size: int, max_size: int, max_waiting: int,
                 max_idle: float, max_lifetime: float):
        self._connect = connect
        self.gate = Gate(max_size, max_waiting)
        self.min_size, self.max_size = min(min_size, max_size), max_size
        self.max_idle, self.max_lifetime = max_idle, max_lifetime
        self._idle: deque[Any] = deque()  # (connection, monotonic time it was given back)
        self._born: dict[str, Any] = {}  # every open connection -> monotonic time it was opened
        self._closed = False
        self._timer: asyncio.TimerHandle | None = None
        self._filling: asyncio.Task[Any] | None = None

    @property
    def size(self) -> int:
        """Connections open now (idle and in use)."""
        return len(self._born)

    @property
    def idle(self) -> int:
        return len(self._idle)

    async def acquire(self, timeout: float) -> Any:
        """A connection for the caller alone until :meth:`release`, after waiting at most
        ``timeout`` seconds for a slot. Raises :class:`~apps.core.drivers.db.faults.PoolTimeout` or
        :class:`~apps.core.drivers.db.faults.PoolQueueFull` (:class:`Gate`; both 503), or what connecting
        raised (the caller maps it to 503)."""
        await self.gate.acquire(timeout)
        try:
            idle = self._idle
            while idle:
                conn, _ = idle.pop()
                if not conn.is_closed():
                    return conn
                self._forget(conn)
            conn = await self._open()
        except BaseException:
            self.gate.release()
            raise
        if self._timer is None and not self._closed:
            self._schedule()
        return conn

    def release(self, conn: Any) -> None:
        """Take ``conn`` back (idle for the next caller, or closed: see the module docstring)
        and free the caller's slot."""
        born = self._born.get(conn)
        if born is not None:
            if (self._closed or conn.is_closed() or conn.is_in_transaction()
                    or time.monotonic() - born > self.max_lifetime):
                self._retire(conn)
            else:
                self._idle.append((conn, time.monotonic()))
        self.gate.release()

    def retire(self, conn: Any) -> None:
        """Close ``conn`` at once (without a goodbye to the server) and forget it."""
        if conn in self._born:
            self._retire(conn)

    async def close(self) -> None:
        """Close the idle connections politely (a terminate after 5 s) and every other one as it
        is given back; the pool hands out nothing afterwards."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._filling is not None:
            self._filling.cancel()
        idle, self._idle = list(self._idle), deque()
        for conn, _ in idle:
            self._born.pop(conn, None)
            try:
                await conn.close(timeout=5)
            except Exception:  # noqa: BLE001 - shutting down: whatever cannot close cleanly is cut
                conn.terminate()

    # --- internals -----------------------------------------------------------------------------
    async def _open(self) -> Any:
        if self._closed:
            raise ConnectionError("the connection pool is closed")
        conn = await self._connect()
        self._born[conn] = time.monotonic()
        return conn

    def _forget(self, conn: Any) -> None:
        self._born.pop(conn, None)

    def _retire(self, conn: Any) -> None:
        self._forget(conn)
        if not conn.is_closed():
            conn.terminate()

    def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(max(1.0, min(self.max_idle / 2, 30.0)), self._maintain)
        self._fill()

    def _maintain(self) -> None:
        """Close connections idle longer than ``max_idle`` (oldest first, keeping ``min_size``),
        then top the pool up to ``min_size``; runs every ``max_idle / 2`` seconds (1-30)."""
        self._timer = None
        if self._closed:
            return
        cutoff = time.monotonic() - self.max_idle
        idle = self._idle
        while idle and idle[0][1] < cutoff and len(self._born) > self.min_size:
            conn, _ = idle.popleft()
            self._retire(conn)
        self._schedule()

    def _fill(self) -> None:
        if self._filling is None and len(self._born) < self.min_size and not self._closed:
            self._filling = asyncio.get_running_loop().create_task(self._fill_to_min())

    async def _fill_to_min(self) -> None:
        try:
            # Each connection is opened under a free slot of the gate (never one a caller waits
            # for), so the pool stays within max_size.
            while len(self._born) < self.min_size and not self._closed and self.gate.try_acquire():
                try:
                    conn = await self._open()
                    if self._closed:
                        self._retire(conn)
                        return
                    self._idle.appendleft((conn, time.monotonic()))
                finally:
                    self.gate.release()
        except Exception as exc:  # noqa: BLE001 - the next request connects for itself (or answers 503)
            log.warning("could not open the pool's minimum of %d connections: %s", self.min_size, exc)
        finally:
            self._filling = None
