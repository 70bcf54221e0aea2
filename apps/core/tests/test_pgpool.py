"""The ASGI build's asyncpg connection pool (apps/core/drivers/db/pgpool.py), on the real PostgreSQL of
``DATABASE_URL``: reuse, the size bound, the connections it retires, idle reaping, the minimum,
and shutdown. Each test opens at most a handful of connections and closes them all."""

from __future__ import annotations

import asyncio
import os

import pytest

from apps.core.drivers.db.faults import PoolTimeout
from apps.core.drivers.db.pgpool import ConnectionPool


def _url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("needs DATABASE_URL on PostgreSQL")
    return url


def _pool(**kw) -> tuple[ConnectionPool, list]:
    """A pool over real connections, and the list of every connection it opened."""
    import asyncpg

    url, opened = _url(), []

    async def connect():
        conn = await asyncpg.connect(url)
        opened.append(conn)
        return conn

    options = {"min_size": 0, "max_size": 2, "max_waiting": 0, "max_idle": 300.0, "max_lifetime": 1800.0, **kw}
    return ConnectionPool(connect, **options), opened


def _run(body, **kw):
    async def main():
        pool, opened = _pool(**kw)
        try:
            await body(pool, opened)
        finally:
            await pool.close()
            for conn in opened:
                if not conn.is_closed():
                    conn.terminate()

    asyncio.run(main())


def test_the_last_connection_given_back_is_the_next_handed_out():
    async def body(pool, opened):
        a = await pool.acquire(1)
        b = await pool.acquire(1)
        pool.release(a)
        pool.release(b)
        assert await pool.acquire(1) is b
        assert len(opened) == 2 and pool.size == 2 and pool.idle == 1

    _run(body)


def test_never_more_than_max_size_connections():
    """A third caller waits for a slot (here past its timeout: PoolTimeout, the pipeline's
    503); once one is given back, it gets that connection and no third one is opened."""
    async def body(pool, opened):
        a = await pool.acquire(1)
        await pool.acquire(1)
        with pytest.raises(PoolTimeout):
            await pool.acquire(0.2)
        later = asyncio.ensure_future(pool.acquire(5))
        await asyncio.sleep(0.05)
        pool.release(a)
        assert await later is a
        assert len(opened) == 2

    _run(body)


def test_a_closed_idle_connection_is_skipped_at_checkout():
    """Connections that died while idle (PostgreSQL restarted) are dropped, not handed out."""
    async def body(pool, opened):
        a = await pool.acquire(1)
        b = await pool.acquire(1)
        pool.release(a)
        pool.release(b)
        b.terminate()
        assert await pool.acquire(1) is a
        assert pool.size == 1

    _run(body)


@pytest.mark.parametrize("spoil", ["closed", "in_transaction", "too_old"])
def test_connections_that_cannot_be_reused_are_closed_on_release(spoil):
    async def body(pool, opened):
        conn = await pool.acquire(1)
        if spoil == "closed":
            conn.terminate()
        elif spoil == "in_transaction":
            await conn.execute("BEGIN")
        pool.release(conn)
        assert conn.is_closed() and pool.size == 0 and pool.idle == 0
        fresh = await pool.acquire(1)
        assert fresh is not conn and await fresh.fetchval("SELECT 1") == 1
        pool.release(fresh)

    _run(body, max_lifetime=0.0 if spoil == "too_old" else 1800.0)


def test_idle_connections_are_closed_down_to_the_minimum():
    async def body(pool, opened):
        conns = [await pool.acquire(1) for _ in range(3)]
        for conn in conns:
            pool.release(conn)
        assert pool.idle == 3
        await asyncio.sleep(1.5)  # max_idle 0.2 s: the check runs every second
        assert pool.size == 1 and sum(not c.is_closed() for c in opened) == 1

    _run(body, min_size=1, max_size=3, max_idle=0.2)


def test_the_minimum_is_opened_after_the_first_checkout():
    async def body(pool, opened):
        conn = await pool.acquire(1)
        pool.release(conn)
        for _ in range(50):
            if pool.size == 3:
                break
            await asyncio.sleep(0.05)
        assert pool.size == 3 and pool.idle == 3

    _run(body, min_size=3, max_size=4)


def test_close_closes_idle_connections_and_later_releases():
    async def body(pool, opened):
        held = await pool.acquire(1)
        idle = await pool.acquire(1)
        pool.release(idle)
        await pool.close()
        assert idle.is_closed() and not held.is_closed()
        pool.release(held)
        assert held.is_closed()
        with pytest.raises(ConnectionError):
            await pool.acquire(1)

    _run(body)


def test_a_failed_connect_frees_its_slot():
    """Nothing listens: the error reaches the caller and the slot is free again."""
    import socket

    import asyncpg

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def main():
        pool = ConnectionPool(lambda: asyncpg.connect(f"postgres://postgres@127.0.0.1:{port}/none", timeout=2),
                              min_size=0, max_size=1, max_waiting=0, max_idle=300.0, max_lifetime=1800.0)
        for _ in range(2):  # the second attempt gets the slot back, and fails the same way
            with pytest.raises(OSError):
                await pool.acquire(1)
        await pool.close()

    asyncio.run(main())
