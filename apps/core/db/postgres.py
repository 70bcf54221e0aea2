"""PostgreSQL for ASGI: a psycopg ``AsyncConnectionPool`` bound to the server's loop."""

from __future__ import annotations

import asyncio
import math
from contextlib import asynccontextmanager

from django.conf import settings

from apps.core.db import faults
from apps.core.db.base import Database, ForeignKeyViolation, UniqueViolation, _bad_input, json_loads
from apps.core.db.gate import Gate


def connect_timeout() -> int:
    """libpq's ``connect_timeout`` (whole seconds, at least 2) from ``DB_CONNECT_TIMEOUT``."""
    return max(2, math.ceil(settings.DB_CONNECT_TIMEOUT))


async def _configure_pg(conn) -> None:
    from psycopg.types.json import set_json_loads

    set_json_loads(json_loads, conn)


class PgAsync(Database):
    vendor = "postgresql"

    def __init__(self, conninfo: str):
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool

        self._pool = AsyncConnectionPool(
            conninfo,
            min_size=min(settings.DB_POOL_MIN_SIZE, settings.DB_POOL_MAX_SIZE),
            max_size=settings.DB_POOL_MAX_SIZE,
            timeout=settings.DB_POOL_TIMEOUT,
            max_waiting=settings.DB_POOL_MAX_WAITING,
            max_lifetime=settings.DB_POOL_MAX_LIFETIME,
            max_idle=settings.DB_POOL_MAX_IDLE,
            kwargs={
                "row_factory": dict_row,
                "autocommit": True,
                "connect_timeout": connect_timeout(),
                "options": f"-c statement_timeout={settings.DB_STATEMENT_TIMEOUT_MS}",
            },
            # No check= (a round trip per checkout measured 29 % of the request CPU under the
            # mix load test): _checkout only reads what is waiting on the socket (faults.is_dead).
            configure=_configure_pg,
            open=False,
        )
        self._opened = False
        self._open_lock = asyncio.Lock()
        # Waiting for a connection happens here, not in the pool (apps.core.db.gate).
        self._gate = Gate(settings.DB_POOL_MAX_SIZE, settings.DB_POOL_MAX_WAITING)
        # True from start-up and after a lost connection until a statement succeeds: then a
        # checkout waits DB_CONNECT_TIMEOUT, not DB_POOL_TIMEOUT (nothing will be returned to an
        # empty pool, so waiting longer only delays the 503).
        self._unreachable = True
        self._sweeping = False

    async def _checkout(self):
        """A live connection from the pool. A dead one (PostgreSQL restarted since it was last
        used) is closed and given back - the pool replaces it - and the pool's other idle
        connections are swept once; the next is then waited for at most DB_CONNECT_TIMEOUT."""
        conn = await self._pool.getconn(settings.DB_CONNECT_TIMEOUT if self._unreachable else None)
        while faults.is_dead(conn):
            self._unreachable = True
            await conn.close()
            await self._pool.putconn(conn)
            if not self._sweeping:
                self._sweeping = True
                try:
                    await self._pool.check()
                finally:
                    self._sweeping = False
            conn = await self._pool.getconn(settings.DB_CONNECT_TIMEOUT)
        return conn

    async def _ensure_open(self) -> None:
        if not self._opened:
            async with self._open_lock:
                if not self._opened:
                    await self._pool.open(wait=False)
                    self._opened = True

    @asynccontextmanager
    async def _connection(self):
        """A pooled connection for one statement or transaction; database faults become
        answers (:mod:`apps.core.db.faults`)."""
        await self._ensure_open()
        conn = None
        gated = False
        try:
            await self._gate.acquire(settings.DB_CONNECT_TIMEOUT if self._unreachable else settings.DB_POOL_TIMEOUT)
            gated = True
            conn = await self._checkout()
            yield conn
        except Exception as exc:
            err = faults.translate(exc)
            if err is None:
                raise
            if getattr(err, "lost", False) or (err.status == 503 and not self._pool.get_stats().get("pool_size")):
                self._unreachable = True
            raise err from None
        finally:
            if conn is not None:
                await self._pool.putconn(conn)  # a broken one is discarded and replaced by the pool
            if gated:
                self._gate.release()
        if self._unreachable:
            self._unreachable = False

    async def fetchall(self, sql, params=()):
        async with self._connection() as conn:
            return await _PgConn(conn).fetchall(sql, params)

    async def fetchone(self, sql, params=()):
        async with self._connection() as conn:
            return await _PgConn(conn).fetchone(sql, params)

    async def execute(self, sql, params=()):
        async with self._connection() as conn:
            return await _PgConn(conn).execute(sql, params)

    @asynccontextmanager
    async def transaction(self):
        async with self._connection() as conn:
            async with conn.transaction():
                yield _PgConn(conn)

    def json(self, value):
        from psycopg.types.json import Jsonb

        return Jsonb(value)

    async def close(self):
        if self._opened:
            await self._pool.close()
            self._opened = False


def _has_rows(cur) -> bool:
    # The result's field count, read from libpq: ``cur.description`` would build a Column object
    # per field on every query (measured: 6 % of a row read's CPU).
    res = cur.pgresult
    return res is not None and res.nfields > 0


class _PgConn(Database):
    vendor = "postgresql"

    def __init__(self, conn):
        self._conn = conn

    async def _run(self, sql, params):
        """Execute ``sql``; driver errors become the project's (unique/foreign key/bad input)."""
        from psycopg import errors

        try:
            return await self._conn.execute(sql, params)
        except errors.UniqueViolation as exc:
            raise UniqueViolation(getattr(exc.diag, "constraint_name", "") or "") from None
        except errors.ForeignKeyViolation:
            raise ForeignKeyViolation() from None
        except errors.DataError as exc:
            raise (_bad_input(exc) or exc) from None

    async def fetchall(self, sql, params=()):
        cur = await self._run(sql, params)
        return await cur.fetchall() if _has_rows(cur) else []

    async def fetchone(self, sql, params=()):
        cur = await self._run(sql, params)
        return await cur.fetchone() if _has_rows(cur) else None

    async def execute(self, sql, params=()):
        return (await self._run(sql, params)).rowcount

    @asynccontextmanager
    async def transaction(self):
        async with self._conn.transaction():
            yield self

    json = PgAsync.json


# --- Django's connection, sync (WSGI) ------------------------------------------------------------
