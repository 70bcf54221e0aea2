"""SQL access for the /v1 hot path: one async interface, three drivers.

Selectors and services write plain SQL with ``%s`` placeholders against the tables that Django
models and migrations own, and call it through a :class:`Database`:

* ``PgAsync`` (ASGI on PostgreSQL): a psycopg ``AsyncConnectionPool`` bound to the server's
  event loop; no thread hop (django-asgi-facts §2).
* ``DjangoSync`` (WSGI, any backend): Django's own connection for the current thread, so the
  WSGI build keeps Django's psycopg pool (``CONN_MAX_AGE=0``, returned at request end).
  Its coroutines never suspend, so :func:`apps.core.runtime.run_sync` can drive them.
* ``SqliteAsync`` (ASGI on the embedded SQLite): one connection used from the loop thread;
  calls are short and run inline, an ``asyncio.Lock`` keeps transactions from interleaving.

Rows come back as ``dict``; use :func:`as_json`, :func:`as_dt` and :func:`as_bool` to read
columns whose Python type differs between backends. Unique-constraint failures raise
:class:`UniqueViolation`; an exhausted pool raises 503 ``general_service_unavailable``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import sqlite3
from contextlib import asynccontextmanager
from typing import Any

import orjson
from django.conf import settings

from apps.core.errors import AppwriteError

UTC = dt.UTC


class UniqueViolation(Exception):
    """An INSERT/UPDATE broke a unique constraint; ``constraint`` names it when known."""

    def __init__(self, constraint: str = ""):
        super().__init__(constraint)
        self.constraint = constraint


class ForeignKeyViolation(Exception):
    """An INSERT/UPDATE referenced a parent row that is gone (deleted by a concurrent request)."""


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _parse_int(text: str) -> int | float:
    # PostgreSQL's jsonb prints large floats without an exponent (1e308 -> "1000...0"), so a
    # stored float can read back as an integer no JSON encoder (orjson: 64 bits) can write.
    # Every integer we accept fits in 64 bits, so anything wider was a float.
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else float(text)


_LONG_DIGITS_STR = re.compile(r"\d{19}")
_LONG_DIGITS_BYTES = re.compile(rb"\d{19}")


def json_loads(data: str | bytes) -> Any:
    """Decode a JSON column's value: orjson on the hot path (every row read); the stdlib with
    :func:`_parse_int` when a 19+ digit run could be an integer beyond signed 64 bits (or
    orjson refuses the text)."""
    long_digits = _LONG_DIGITS_BYTES if isinstance(data, bytes) else _LONG_DIGITS_STR
    if not long_digits.search(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data, parse_int=_parse_int)


def as_json(value: Any) -> Any:
    """A JSON column's value as Python data (drivers return text or decoded data)."""
    if isinstance(value, (str, bytes)):
        return json_loads(value)
    return value


# Data exceptions caused by request values (PostgreSQL rejects what SQLite stores): answered
# 400 instead of a 500 with a traceback. NUL in text is refused by psycopg itself (no sqlstate).
_BAD_INPUT_SQLSTATES = frozenset({
    None,  # psycopg: "PostgreSQL text fields cannot contain NUL (0x00) bytes"
    "22P05",  # untranslatable_character: \u0000 in jsonb
    "22003",  # numeric_value_out_of_range
    "22008",  # datetime_field_overflow
    "22021",  # character_not_in_repertoire
})


def _bad_input(exc: BaseException) -> AppwriteError | None:
    from psycopg import DataError

    cause = exc if isinstance(exc, DataError) else exc.__cause__
    if isinstance(cause, DataError) and getattr(cause, "sqlstate", None) in _BAD_INPUT_SQLSTATES:
        return AppwriteError("general_argument_invalid", "Invalid parameter: a value cannot be stored "
                                                         "(NUL characters or numbers out of range).")
    return None


def as_dt(value: Any) -> dt.datetime | None:
    """A timestamp column as an aware UTC datetime (SQLite returns text or naive values)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def as_bool(value: Any) -> bool:
    """A boolean column (SQLite stores 0/1)."""
    return bool(value)


def now() -> dt.datetime:
    """The current time, aware UTC."""
    return dt.datetime.now(UTC)


class Database:
    """The async SQL interface; see the module docstring for the drivers."""

    vendor: str = ""

    async def fetchone(self, sql: str, params: tuple | list = ()) -> dict | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def fetchall(self, sql: str, params: tuple | list = ()) -> list[dict]:  # pragma: no cover
        raise NotImplementedError

    async def fetchval(self, sql: str, params: tuple | list = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else next(iter(row.values()))

    async def execute(self, sql: str, params: tuple | list = ()) -> int:  # pragma: no cover
        raise NotImplementedError

    def transaction(self):  # pragma: no cover
        """``async with db.transaction() as tx:`` - ``tx`` has the same query methods."""
        raise NotImplementedError

    def json(self, value: Any) -> Any:
        """Adapt a Python value for a JSON column parameter."""
        return json.dumps(value, separators=(",", ":"))

    def dt(self, value: dt.datetime) -> Any:
        """Adapt an aware datetime for a timestamp column parameter."""
        return value

    async def close(self) -> None:
        """Release pooled connections (graceful shutdown)."""


# --- PostgreSQL, async ---------------------------------------------------------------------------

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
                "options": f"-c statement_timeout={settings.DB_STATEMENT_TIMEOUT_MS}",
            },
            # No check= on getconn: it costs a round trip per acquisition (measured: 29 % of the
            # request CPU under the mix load test). Broken connections are replaced by the pool
            # when they fail and at max_lifetime.
            configure=_configure_pg,
            open=False,
        )
        self._opened = False
        self._open_lock = asyncio.Lock()

    async def _ensure_open(self) -> None:
        if not self._opened:
            async with self._open_lock:
                if not self._opened:
                    await self._pool.open(wait=False)
                    self._opened = True

    @asynccontextmanager
    async def _connection(self):
        from psycopg_pool import PoolTimeout, TooManyRequests

        await self._ensure_open()
        try:
            async with self._pool.connection() as conn:
                yield conn
        except (PoolTimeout, TooManyRequests):
            raise AppwriteError("general_service_unavailable") from None

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


class _PgConn(Database):
    vendor = "postgresql"

    def __init__(self, conn):
        self._conn = conn

    async def fetchall(self, sql, params=()):
        from psycopg import errors

        try:
            cur = await self._conn.execute(sql, params)
            return await cur.fetchall() if cur.description else []
        except errors.UniqueViolation as exc:
            raise UniqueViolation(getattr(exc.diag, "constraint_name", "") or "") from None
        except errors.ForeignKeyViolation:
            raise ForeignKeyViolation() from None
        except errors.DataError as exc:
            raise (_bad_input(exc) or exc) from None

    async def fetchone(self, sql, params=()):
        from psycopg import errors

        try:
            cur = await self._conn.execute(sql, params)
            return await cur.fetchone() if cur.description else None
        except errors.UniqueViolation as exc:
            raise UniqueViolation(getattr(exc.diag, "constraint_name", "") or "") from None
        except errors.ForeignKeyViolation:
            raise ForeignKeyViolation() from None
        except errors.DataError as exc:
            raise (_bad_input(exc) or exc) from None

    async def execute(self, sql, params=()):
        from psycopg import errors

        try:
            cur = await self._conn.execute(sql, params)
            return cur.rowcount
        except errors.UniqueViolation as exc:
            raise UniqueViolation(getattr(exc.diag, "constraint_name", "") or "") from None
        except errors.ForeignKeyViolation:
            raise ForeignKeyViolation() from None
        except errors.DataError as exc:
            raise (_bad_input(exc) or exc) from None

    @asynccontextmanager
    async def transaction(self):
        async with self._conn.transaction():
            yield self

    json = PgAsync.json


# --- Django's connection, sync (WSGI) ------------------------------------------------------------

class DjangoSync(Database):
    """Django's thread-local connection; every coroutine here completes without suspending."""

    def __init__(self):
        from django.db import connection

        self.vendor = connection.vendor

    def _run(self, sql, params, fetch):
        from django.db import DataError, IntegrityError, OperationalError, connection

        try:
            with connection.cursor() as cur:
                cur.execute(sql, params)
                if fetch:
                    if cur.description is None:
                        return []
                    cols = [c[0] for c in cur.description]
                    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
                return cur.rowcount
        except IntegrityError as exc:
            if _is_unique_error(exc):
                raise UniqueViolation(_constraint_of(exc)) from None
            if _is_fk_error(exc):
                raise ForeignKeyViolation() from None
            raise
        except DataError as exc:
            bad = _bad_input(exc) if self.vendor == "postgresql" else None
            if bad is not None:
                raise bad from None
            raise
        except OperationalError as exc:
            if type(exc.__cause__).__name__ in ("PoolTimeout", "TooManyRequests"):
                raise AppwriteError("general_service_unavailable") from None
            raise

    async def fetchall(self, sql, params=()):
        return self._run(sql, params, True)

    async def execute(self, sql, params=()):
        return self._run(sql, params, False)

    @asynccontextmanager
    async def transaction(self):
        from django.db import transaction

        with transaction.atomic():
            yield self

    def json(self, value):
        if self.vendor == "postgresql":
            from psycopg.types.json import Jsonb

            return Jsonb(value)
        return super().json(value)

    def dt(self, value):
        if self.vendor == "sqlite":
            return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")
        return value


def _is_unique_error(exc: Exception) -> bool:
    cause = exc.__cause__ or exc
    name = type(cause).__name__
    return name == "UniqueViolation" or "UNIQUE constraint failed" in str(cause)


def _is_fk_error(exc: Exception) -> bool:
    cause = exc.__cause__ or exc
    return type(cause).__name__ == "ForeignKeyViolation" or "FOREIGN KEY constraint failed" in str(cause)


def _constraint_of(exc: Exception) -> str:
    cause = exc.__cause__ or exc
    diag = getattr(cause, "diag", None)
    if diag is not None:
        return getattr(diag, "constraint_name", "") or ""
    return str(cause)


# --- SQLite, async (embedded default under ASGI) -------------------------------------------------

class SqliteAsync(Database):
    vendor = "sqlite"

    def __init__(self, path: str):
        self._conn = sqlite3.connect(path, timeout=20, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._lock = asyncio.Lock()

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("%s", "?").replace("%%", "%")

    def _run(self, sql, params, fetch):
        try:
            cur = self._conn.execute(self._sql(sql), tuple(params))
            if fetch:
                return [dict(row) for row in cur.fetchall()] if cur.description else []
            return cur.rowcount
        except sqlite3.IntegrityError as exc:
            if "UNIQUE constraint failed" in str(exc):
                raise UniqueViolation(str(exc)) from None
            if "FOREIGN KEY constraint failed" in str(exc):
                raise ForeignKeyViolation() from None
            raise

    async def fetchall(self, sql, params=()):
        async with self._lock:
            return self._run(sql, params, True)

    async def execute(self, sql, params=()):
        async with self._lock:
            return self._run(sql, params, False)

    @asynccontextmanager
    async def transaction(self):
        async with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteTx(self)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    def dt(self, value):
        return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")

    async def close(self):
        self._conn.close()


class _SqliteTx(Database):
    vendor = "sqlite"

    def __init__(self, owner: SqliteAsync):
        self._owner = owner

    async def fetchall(self, sql, params=()):
        return self._owner._run(sql, params, True)

    async def execute(self, sql, params=()):
        return self._owner._run(sql, params, False)

    @asynccontextmanager
    async def transaction(self):
        yield self

    dt = SqliteAsync.dt


_async_db: Database | None = None
_sync_db: Database | None = None


def get_database(mode: str) -> Database:
    """The process-wide driver for ``mode`` (``"async"`` or ``"sync"``), created on first use."""
    global _async_db, _sync_db
    if mode == "sync":
        if _sync_db is None:
            _sync_db = DjangoSync()
        return _sync_db
    if _async_db is None:
        if settings.DATABASE_URL:
            _async_db = PgAsync(settings.DATABASE_URL)
        else:
            _async_db = SqliteAsync(settings.DATABASES["default"]["NAME"])
    return _async_db


async def close_databases() -> None:
    """Close the async pool (called on ASGI lifespan shutdown)."""
    global _async_db
    if _async_db is not None:
        await _async_db.close()
        _async_db = None
