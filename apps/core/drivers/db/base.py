"""Shared pieces of the SQL drivers: the :class:`Database` interface, column readers and
the typed constraint errors. See the package docstring."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import Any, overload

import orjson

from apps.core.errors import AppwriteError

UTC = dt.UTC


class UniqueViolation(Exception):
    """An INSERT/UPDATE broke a unique constraint; ``constraint`` names it when known."""

    def __init__(self, constraint: str = ""):
        super().__init__(constraint)
        self.constraint = constraint


class ForeignKeyViolation(Exception):
    """An INSERT/UPDATE referenced a parent row that is gone (deleted by a concurrent request)."""


class Vanished(Exception):
    """A row that a write had to find is gone: deleted by a concurrent request after it was
    read (an ``UPDATE``/``DELETE ... RETURNING`` that touched no row). See :func:`present`."""


def present(row: Any) -> Any:
    """``row`` unless it is ``None`` (or empty), else raise :class:`Vanished`. For the result of
    an ``UPDATE``/``DELETE ... RETURNING`` of a row read earlier in the request."""
    if not row:
        raise Vanished()
    return row


@contextmanager
def races(*, missing: Callable[[], Exception] | None = None,
          exists: Callable[[], Exception] | None = None) -> Iterator[None]:
    """Answer what a concurrent request can do to a write with the resource's own errors.

    Inside the block, :class:`Vanished` and :class:`ForeignKeyViolation` (the row, or the parent
    it names, was deleted meanwhile) raise ``missing()`` - the resource's 404 ``*_not_found`` -
    and :class:`UniqueViolation` (another request took the same key first) raises ``exists()``
    - its 409 ``*_already_exists``. A factory left ``None`` lets that exception through. Usable
    around ``await``s in coroutines of both builds (a plain ``with``).
    """
    try:
        yield
    except (Vanished, ForeignKeyViolation):
        if missing is None:
            raise
        raise missing() from None
    except UniqueViolation:
        if exists is None:
            raise
        raise exists() from None


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
    long = _LONG_DIGITS_BYTES.search(data) if isinstance(data, bytes) else _LONG_DIGITS_STR.search(data)
    if not long:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data, parse_int=_parse_int)


def json_dumps(value: Any) -> bytes:
    """Encode a JSON column's value: orjson, or the stdlib for what orjson refuses (integers
    beyond 64 bits, non-string keys). Non-finite floats never get here (validation refuses them)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":")).encode()


def use_fast_json() -> None:
    """Make psycopg encode every ``Jsonb`` parameter with :func:`json_dumps`, in every
    connection of both builds (its default, ``json.dumps``, was 4 % of a bulk insert's CPU)."""
    try:
        from psycopg.types.json import set_json_dumps
    except ImportError:  # SQLite-only install
        return
    set_json_dumps(json_dumps)


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


def refused_value(exc: BaseException) -> AppwriteError | None:
    """400 ``general_argument_invalid`` for a value PostgreSQL (or the driver) refused to store:
    the drivers raise it in place of the error, and the /v1 pipeline answers it for Django's ORM
    (the handlers that write with it, e.g. the Project and Webhooks services), whose
    ``django.db.DataError`` wraps psycopg's;
    psycopg's or asyncpg's data errors with a SQLSTATE of :data:`_BAD_INPUT_SQLSTATES`, or
    (asyncpg) a number out of range of its column before it was sent. ``None`` otherwise."""
    cause = exc if _is_data_error(exc) else exc.__cause__
    if cause is None or not _is_data_error(cause):
        return None
    sqlstate = getattr(cause, "sqlstate", None)
    if type(cause).__module__.startswith("asyncpg") and cause.__cause__ is not None:
        # asyncpg refused a parameter before sending it (raised from the encoder's error): only
        # a number out of its column's range is the request's fault; a wrong Python type is a
        # bug, left to fail loudly.
        if not isinstance(cause.__cause__, OverflowError):
            return None
        sqlstate = "22003"  # numeric_value_out_of_range, as PostgreSQL would have answered
    if sqlstate in _BAD_INPUT_SQLSTATES:
        return AppwriteError("general_argument_invalid", "Invalid parameter: a value cannot be stored "
                                                         "(NUL characters or numbers out of range).")
    return None


def _is_data_error(exc: BaseException | None) -> bool:
    if exc is None:
        return False
    module = type(exc).__module__
    if module.startswith("psycopg"):
        from psycopg import DataError

        return isinstance(exc, DataError)
    if module.startswith("asyncpg"):
        from asyncpg import exceptions as pg

        return isinstance(exc, pg.DataError)  # also what asyncpg raises for a parameter it cannot encode
    return False


@overload
def as_dt(value: None) -> None: ...
@overload
def as_dt(value: str | dt.datetime) -> dt.datetime: ...


def as_dt(value: Any) -> dt.datetime | None:
    """A timestamp column as an aware UTC datetime (SQLite returns text or naive values)."""
    if value is None:
        return None
    out: dt.datetime = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    if out.tzinfo is None:
        out = out.replace(tzinfo=UTC)
    return out


def as_bool(value: Any) -> bool:
    """A boolean column (SQLite stores 0/1)."""
    return bool(value)


def now() -> dt.datetime:
    """The current time, aware UTC."""
    return dt.datetime.now(UTC)


class Database:
    """The async SQL interface; see the module docstring for the drivers."""

    vendor: str = ""

    async def fetchone(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> dict[str, Any] | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def fetchall(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[dict[str, Any]]:  # pragma: no cover
        raise NotImplementedError

    async def fetchval(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else next(iter(row.values()))

    async def execute(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:  # pragma: no cover
        raise NotImplementedError

    def transaction(self) -> AbstractAsyncContextManager[Database]:  # pragma: no cover
        """``async with db.transaction() as tx:`` - ``tx`` has the same query methods."""
        raise NotImplementedError

    def json(self, value: Any) -> Any:
        """Adapt a Python value for a JSON column parameter: its JSON text (orjson, see
        :func:`json_dumps`; the stdlib encoder was 3 calls of 4 us per row create)."""
        return json_dumps(value).decode()

    def dt(self, value: dt.datetime) -> Any:
        """Adapt an aware datetime for a timestamp column parameter."""
        return value

    async def recover(self) -> None:
        """Before a request is run again after its connection was lost: let go of that
        connection (Django keeps one per thread; pooled async connections are already back)."""

    async def close(self) -> None:
        """Release pooled connections (graceful shutdown)."""


# --- PostgreSQL, async ---------------------------------------------------------------------------
