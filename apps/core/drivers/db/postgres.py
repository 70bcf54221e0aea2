"""PostgreSQL for ASGI: asyncpg connections bound to the server's loop, behind the gate.

Why asyncpg and not psycopg's async connection here: one row read by primary key cost about
2.3 times the client CPU through psycopg 3.3 (its cursor, transformer and generator-driven
waits, which register and unregister the socket with the event loop several times per
statement) as through asyncpg 0.32, whose protocol is written in Cython on top of the loop's
transport: one ``write`` and one ``read`` system call per statement (README "Dependency notes").
The WSGI build keeps Django's psycopg connections (:mod:`apps.core.drivers.db.django_sync`).

asyncpg differs from psycopg in three ways this module hides from the callers:

* placeholders: callers write ``%s`` (and ``%%`` for a literal ``%``), as for psycopg and
  Django; :func:`numbered` rewrites them to ``$1, $2, ...`` once per distinct statement;
* parameter types come from the server: every statement is prepared, and PostgreSQL infers
  each parameter's type from where it stands; ``json`` and ``jsonb`` parameters take JSON text
  (:meth:`PgAsync.json`) or plain data (encoded with :func:`json_dumps`), and their values
  come back decoded by :func:`json_loads`;
* results: rows come back as ``dict``; :meth:`execute` returns the number of rows the
  statement touched (``-1`` when its status carries none), like psycopg's ``rowcount``.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from django.conf import settings

from apps.core.drivers.db import faults
from apps.core.drivers.db.base import (
    Database,
    ForeignKeyViolation,
    UniqueViolation,
    json_dumps,
    json_loads,
    refused_value,
)
from apps.core.drivers.db.pgpool import ConnectionPool

_NUMBERED: dict[str, str] = {}
_NUMBERED_MAX = 4096  # distinct statements remembered (list queries build many shapes)


def numbered(sql: str) -> str:
    """``sql`` with psycopg-style ``%s`` placeholders as PostgreSQL's ``$1, $2, ...`` and
    ``%%`` as ``%``; any other ``%`` is left as it is. Cached per statement text."""
    out = _NUMBERED.get(sql)
    if out is not None:
        return out
    parts, n, i, start = [], 0, 0, 0
    while True:
        i = sql.find("%", start)
        if i < 0 or i + 1 >= len(sql):
            break
        nxt = sql[i + 1]
        if nxt == "s":
            n += 1
            parts.append(sql[start:i])
            parts.append(f"${n}")
            start = i + 2
        elif nxt == "%":
            parts.append(sql[start:i + 1])
            start = i + 2
        else:
            parts.append(sql[start:i + 1])
            start = i + 1
    parts.append(sql[start:])
    out = "".join(parts)
    if len(_NUMBERED) >= _NUMBERED_MAX:
        _NUMBERED.clear()
    _NUMBERED[sql] = out
    return out


def connect_timeout() -> int:
    """The connect timeout (whole seconds, at least 2) from ``DB_CONNECT_TIMEOUT``."""
    return max(2, math.ceil(settings.DB_CONNECT_TIMEOUT))


def _json_param(value: Any) -> str:
    # JSON text (PgAsync.json's result, or a str a caller wrote as JSON) goes as it is, as
    # psycopg sends a str to a jsonb parameter; anything else is encoded.
    return value if isinstance(value, str) else json_dumps(value).decode()


async def _configure(conn: Any) -> None:
    """Per new connection: JSON in and out through :func:`json_loads`/:func:`json_dumps`
    (asyncpg's default returns JSON as text)."""
    for name in ("jsonb", "json"):
        await conn.set_type_codec(name, schema="pg_catalog", encoder=_json_param, decoder=json_loads, format="text")


def _rowcount(status: str) -> int:
    """The row count at the end of a command status (``UPDATE 3``, ``INSERT 0 1``), else -1."""
    tail = status.rpartition(" ")[2]
    return int(tail) if tail.isdigit() else -1


def _statement_error(exc: BaseException) -> BaseException:
    """The exception to raise for an error of a statement (or a BEGIN/COMMIT): the project's
    unique/foreign key violations and refused values, a database fault's answer
    (:func:`apps.core.drivers.db.faults.translate_asyncpg`), else ``exc`` itself."""
    from asyncpg import exceptions as pg

    if isinstance(exc, pg.UniqueViolationError):
        return UniqueViolation(getattr(exc, "constraint_name", "") or "")
    if isinstance(exc, pg.ForeignKeyViolationError):
        return ForeignKeyViolation()
    if isinstance(exc, pg.DataError):
        return refused_value(exc) or exc
    return faults.translate_asyncpg(exc, lost=True) or exc


class PgAsync(Database):
    vendor = "postgresql"

    def __init__(self, dsn: str):
        self._dsn = dsn
        # Waiting for a connection happens in the pool's gate (apps.core.drivers.db.gate), first come
        # first served; the pool itself is a deque of asyncpg connections (apps.core.drivers.db.pgpool).
        self._pool = ConnectionPool(self._connect, min_size=settings.DB_POOL_MIN_SIZE,
                                    max_size=settings.DB_POOL_MAX_SIZE, max_waiting=settings.DB_POOL_MAX_WAITING,
                                    max_idle=settings.DB_POOL_MAX_IDLE, max_lifetime=settings.DB_POOL_MAX_LIFETIME)
        self._gate = self._pool.gate

    async def _connect(self) -> Any:
        """One new connection with the server settings and JSON codecs of this module."""
        import asyncpg

        # plan_cache_mode: asyncpg prepares every statement, and after five runs PostgreSQL may
        # keep a generic plan that ignores the values. Over a 5-minute mixed load (the `mix`
        # load test) PostgreSQL spent 0.86 ms of CPU per request with generic plans and 0.40 ms
        # with custom ones.
        conn = await asyncpg.connect(self._dsn, timeout=connect_timeout(), command_timeout=None,
                                     server_settings={"statement_timeout": str(settings.DB_STATEMENT_TIMEOUT_MS),
                                                      "plan_cache_mode": "force_custom_plan"})
        try:
            await _configure(conn)
        except BaseException:
            conn.terminate()
            raise
        return conn

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        """A pooled connection for one statement or transaction. Waiting longer than
        ``DB_POOL_TIMEOUT`` for one, or failing to connect, raises 503
        (:class:`apps.core.drivers.db.faults.DatabaseUnavailable`)."""
        try:
            conn = await self._pool.acquire(settings.DB_POOL_TIMEOUT)
        except faults.DatabaseUnavailable:  # the gate's PoolTimeout / PoolQueueFull: 503 as they are
            raise
        except Exception as exc:  # connecting failed
            raise (faults.translate_asyncpg(exc, lost=False) or exc) from None
        try:
            # A statement cancelled here (the client left) is being cancelled on the server by
            # asyncpg when the connection goes back: its next statement, whoever runs it, first
            # waits for that to finish (asyncpg's own rule), so the connection is reused as is.
            yield conn
        finally:
            self._pool.release(conn)

    async def fetchall(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[dict[str, Any]]:
        async with self._connection() as conn:
            return await _PgConn(conn).fetchall(sql, params)

    async def fetchone(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> dict[str, Any] | None:
        async with self._connection() as conn:
            return await _PgConn(conn).fetchone(sql, params)

    async def execute(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        async with self._connection() as conn:
            return await _PgConn(conn).execute(sql, params)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        async with self._connection() as conn:
            tx, stmts = conn.transaction(), _PgConn(conn)
            try:
                await tx.start()
            except Exception as exc:
                raise stmts._failed(exc) from None
            try:
                yield stmts
            except BaseException:
                if not conn.is_closed():
                    try:
                        await tx.rollback()
                    except BaseException:  # noqa: BLE001 - the connection broke (or the rollback was
                        _terminate(conn)  # cancelled): it is closed, never reused; the first error stands
                raise
            try:
                await tx.commit()
            except Exception as exc:  # deferred foreign keys and serialization failures surface here
                raise stmts._failed(exc) from None

    def json(self, value: Any) -> Any:
        return json_dumps(value).decode()

    async def close(self) -> None:
        await self._pool.close()


class _PgConn(Database):
    """One checked-out connection (a statement's or a transaction's)."""

    vendor = "postgresql"
    __slots__ = ("_conn",)

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def fetchall(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[dict[str, Any]]:
        try:
            rows = await self._conn.fetch(numbered(sql), *params)
        except Exception as exc:
            raise self._failed(exc) from None
        return [dict(row) for row in rows]

    async def fetchone(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> dict[str, Any] | None:
        try:
            row = await self._conn.fetchrow(numbered(sql), *params)
        except Exception as exc:
            raise self._failed(exc) from None
        return None if row is None else dict(row)

    async def execute(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        try:
            return _rowcount(await self._conn.execute(numbered(sql), *params))
        except Exception as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: BaseException) -> BaseException:
        """:func:`_statement_error` for ``exc``; a connection that may be left mid-statement
        (anything but an error answer of PostgreSQL's that leaves the session usable) is
        terminated, so the pool never hands it to another request."""
        out = _statement_error(exc)
        if not _session_survives(exc, out):
            _terminate(self._conn)
        return out

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        yield self

    json = PgAsync.json


def _terminate(conn: Any) -> None:
    """Close ``conn`` at once, unless it is already closed; the pool forgets it on release."""
    if not conn.is_closed():
        conn.terminate()


def _session_survives(exc: BaseException, answer: BaseException) -> bool:
    """Whether the connection is still in a known state after ``exc``: PostgreSQL answered
    the statement with an error (its session goes on) that is not a lost connection."""
    from asyncpg import exceptions as pg

    if isinstance(answer, faults.DatabaseUnavailable) and answer.lost:
        return False
    return isinstance(exc, pg.PostgresError) and not isinstance(exc, pg.FatalPostgresError)
