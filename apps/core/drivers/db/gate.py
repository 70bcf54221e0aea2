"""A first-come, first-served gate in front of the async connection pool.

Under load most requests wait for a pooled connection (500 clients, 20 connections). psycopg_pool
queues each waiter as a ``WaitingClient``: an ``asyncio.Condition`` (and its lock), the pool's
lock and an ``asyncio.timeout`` block per wait, about 7 % of a row read's CPU in a py-spy profile
of the ``read`` load test. This gate holds one slot per pooled connection and queues a waiter as
one future plus one timer, so the pool itself is only asked when a connection is free and never
queues anyone.

A wait longer than the timeout raises :class:`apps.core.drivers.db.faults.PoolTimeout`, more than
``max_waiting`` waiters (0 = no limit) raise :class:`apps.core.drivers.db.faults.PoolQueueFull`: the
project's own 503 ``general_service_unavailable`` with ``Retry-After``, the answers psycopg_pool's
``PoolTimeout`` and ``TooManyRequests`` got when a psycopg pool stood here.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from apps.core.drivers.db.faults import PoolQueueFull, PoolTimeout


class Gate:
    """``size`` slots, handed out in arrival order.

    ``acquire(timeout)`` returns once the caller holds a slot (raises ``PoolTimeout`` after
    ``timeout`` seconds, ``PoolQueueFull`` if ``max_waiting`` callers already wait);
    ``release()`` gives it to the oldest waiter, else back to the free count. A caller cancelled
    while it waits holds nothing afterwards."""

    __slots__ = ("_free", "_max_waiting", "_waiters", "_waiting")

    def __init__(self, size: int, max_waiting: int = 0):
        self._free = size
        self._max_waiting = max_waiting
        self._waiters: deque[asyncio.Future[Any]] = deque()
        self._waiting = 0  # futures in _waiters not yet done

    @property
    def waiting(self) -> int:
        return self._waiting

    def try_acquire(self) -> bool:
        """Take a free slot if there is one (never one a waiter is owed); True if taken."""
        if self._free > 0:
            self._free -= 1
            return True
        return False

    async def acquire(self, timeout: float) -> None:
        if self._free > 0:  # a free slot means nobody is queued (release serves them first)
            self._free -= 1
            return
        if self._max_waiting and self._waiting >= self._max_waiting:
            raise PoolQueueFull(self._waiting)
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiters.append(waiter)
        self._waiting += 1
        timer = loop.call_later(timeout, _expire, waiter, timeout)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self.release()  # the slot came just as this caller was cancelled: pass it on
            raise
        finally:
            timer.cancel()
            self._waiting -= 1

    def release(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():  # timed out or cancelled ones are skipped
                waiter.set_result(None)
                return
        self._free += 1


def _expire(waiter: asyncio.Future[Any], timeout: float) -> None:
    if not waiter.done():
        waiter.set_exception(PoolTimeout(timeout))
