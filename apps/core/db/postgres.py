"""PostgreSQL for ASGI: asyncpg connections bound to the server's loop, behind the gate.

Why asyncpg and not psycopg's async connection here: one row read by primary key cost about
2.3 times the client CPU through psycopg 3.3 (its cursor, transformer and generator-driven
waits, which register and unregister the socket with the event loop several times per
statement) as through asyncpg 0.32, whose protocol is written in Cython on top of the loop's
transport: one ``write`` and one ``read`` system call per statement (README "Dependency notes").
The WSGI build keeps Django's psycopg connections (:mod:`apps.core.db.django_sync`).

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

import asyncio
import math
import time
import weakref
from contextlib import asynccontextmanager

from django.conf import settings

from apps.core.db import faults
from apps.core.db.base import Database, ForeignKeyViolation, UniqueViolation, _bad_input, json_dumps, json_loads
from apps.core.db.gate import Gate

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


def _json_param(value) -> str:
    # JSON text (PgAsync.json's result, or a str a caller wrote as JSON) goes as it is, as
    # psycopg sends a str to a jsonb parameter; anything else is encoded.
    return value if isinstance(value, str) else json_dumps(value).decode()


async def _configure(conn) -> None:
    """Per new connection: JSON in and out through :func:`json_loads`/:func:`json_dumps`
    (asyncpg's default returns JSON as text)."""
    for name in ("jsonb", "json"):
        await conn.set_type_codec(name, schema="pg_catalog", encoder=_json_param, decoder=json_loads, format="text")


async def _no_reset(conn) -> None:
    """The pool's reset on release. asyncpg's default runs ``RESET ALL; UNLISTEN *; ...`` (a
    round trip per request); this server changes no session state (``SET LOCAL`` ends with its
    transaction) and listens to nothing. An open transaction is still rolled back by asyncpg."""


def _rowcount(status: str) -> int:
    """The row count at the end of a command status (``UPDATE 3``, ``INSERT 0 1``), else -1."""
    tail = status.rpartition(" ")[2]
    return int(tail) if tail.isdigit() else -1


def _statement_error(exc: BaseException) -> BaseException:
    """The exception to raise for an error of a statement (or a BEGIN/COMMIT): the project's
    unique/foreign key violations and refused values, a database fault's answer
    (:func:`apps.core.db.faults.translate_asyncpg`), else ``exc`` itself."""
    from asyncpg import exceptions as pg

    if isinstance(exc, pg.UniqueViolationError):
        return UniqueViolation(getattr(exc, "constraint_name", "") or "")
    if isinstance(exc, pg.ForeignKeyViolationError):
        return ForeignKeyViolation()
    if isinstance(exc, pg.DataError):
        return _bad_input(exc) or exc
    return faults.translate_asyncpg(exc, lost=True) or exc


async def _opened(pool):
    try:
        return await pool  # asyncpg's Pool opens when awaited
    except BaseException:
        pool.terminate()
        raise


class PgAsync(Database):
    vendor = "postgresql"

    def __init__(self, dsn: str):
        self._dsn = dsn
        self._pool = None
        self._opening = None  # the task opening the pool, while it runs
        self._born: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # connection -> monotonic open time
        # Waiting for a connection happens here, not in the pool (apps.core.db.gate): the pool
        # is only asked when one of its DB_POOL_MAX_SIZE connections is free.
        self._gate = Gate(settings.DB_POOL_MAX_SIZE, settings.DB_POOL_MAX_WAITING)

    async def _open(self):
        """The pool, opened on first use inside the server's loop (asyncpg connects its
        ``DB_POOL_MIN_SIZE`` connections now, the others on demand). A server that is down
        fails this request with 503; the next request tries again."""
        import asyncpg

        if self._opening is None:
            pool = asyncpg.create_pool(
                self._dsn,
                min_size=min(settings.DB_POOL_MIN_SIZE, settings.DB_POOL_MAX_SIZE),
                max_size=settings.DB_POOL_MAX_SIZE,
                max_inactive_connection_lifetime=settings.DB_POOL_MAX_IDLE,
                init=self._init,
                reset=_no_reset,
                timeout=connect_timeout(),
                command_timeout=None,
                server_settings={"statement_timeout": str(settings.DB_STATEMENT_TIMEOUT_MS)},
            )
            self._opening = asyncio.ensure_future(_opened(pool))
        opening = self._opening
        try:
            pool = await asyncio.shield(opening)
        except Exception:
            if self._opening is opening:
                self._opening = None
            raise
        self._pool = pool
        return pool

    async def _init(self, conn) -> None:
        await _configure(conn)
        self._born[conn] = time.monotonic()

    @asynccontextmanager
    async def _connection(self):
        """A pooled connection for one statement or transaction. Waiting longer than
        ``DB_POOL_TIMEOUT`` for one, or failing to connect, raises 503
        (:class:`apps.core.db.faults.DatabaseUnavailable`)."""
        try:
            await self._gate.acquire(settings.DB_POOL_TIMEOUT)
        except Exception as exc:
            raise (faults.translate(exc) or exc) from None
        conn = pool = None
        try:
            try:
                pool = self._pool or await self._open()
                conn = await pool.acquire()
            except Exception as exc:
                raise (faults.translate_asyncpg(exc, lost=False) or exc) from None
            yield conn
        finally:
            if conn is not None:
                await self._release(pool, conn)
            self._gate.release()

    async def _release(self, pool, conn) -> None:
        raw = conn._con  # the proxy's connection (None once released)
        if raw is not None and time.monotonic() - self._born.get(raw, 0) > settings.DB_POOL_MAX_LIFETIME:
            raw.terminate()  # past DB_POOL_MAX_LIFETIME: the pool opens a new one when needed
        try:
            await pool.release(conn)
        except Exception:  # noqa: BLE001 - the pool terminates a connection it cannot reset
            pass

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
            tx, stmts = conn.transaction(), _PgConn(conn)
            try:
                await tx.start()
            except Exception as exc:
                raise stmts._failed(exc) from None
            try:
                yield stmts
            except BaseException:
                if conn._con is not None and not conn._con.is_closed():
                    try:
                        await tx.rollback()
                    except Exception:  # noqa: BLE001 - the connection broke: it is not reused
                        _terminate(conn)
                raise
            try:
                await tx.commit()
            except Exception as exc:  # deferred foreign keys and serialization failures surface here
                raise stmts._failed(exc) from None

    def json(self, value):
        return json_dumps(value).decode()

    async def close(self):
        pool, self._pool, self._opening = self._pool, None, None
        if pool is not None:
            try:
                await pool.close()
            except Exception:  # noqa: BLE001 - shutting down: what cannot close cleanly is terminated
                pool.terminate()


class _PgConn(Database):
    """One checked-out connection (a statement's or a transaction's)."""

    vendor = "postgresql"
    __slots__ = ("_conn",)

    def __init__(self, conn):
        self._conn = conn

    async def fetchall(self, sql, params=()):
        try:
            rows = await self._conn.fetch(numbered(sql), *params)
        except Exception as exc:
            raise self._failed(exc) from None
        return [dict(row) for row in rows]

    async def fetchone(self, sql, params=()):
        try:
            row = await self._conn.fetchrow(numbered(sql), *params)
        except Exception as exc:
            raise self._failed(exc) from None
        return None if row is None else dict(row)

    async def execute(self, sql, params=()):
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
    async def transaction(self):
        yield self

    json = PgAsync.json


def _terminate(proxy) -> None:
    """Close the pooled connection behind ``proxy`` at once, unless it is already gone (asyncpg
    hands a connection that closed back to its pool by itself)."""
    raw = proxy._con
    if raw is not None and not raw.is_closed():
        raw.terminate()


def _session_survives(exc: BaseException, answer: BaseException) -> bool:
    """Whether the connection is still in a known state after ``exc``: PostgreSQL answered
    the statement with an error (its session goes on) that is not a lost connection."""
    from asyncpg import exceptions as pg

    if isinstance(answer, faults.DatabaseUnavailable) and answer.lost:
        return False
    return isinstance(exc, pg.PostgresError) and not isinstance(exc, pg.FatalPostgresError)
