"""Django's thread-local connection for WSGI: every coroutine completes without suspending."""

from __future__ import annotations

import datetime as _dt
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal, overload

from apps.core.drivers.db import faults
from apps.core.drivers.db.base import UTC, Database, ForeignKeyViolation, UniqueViolation, refused_value
from apps.core.errors import AppwriteError


class DjangoSync(Database):
    """Django's thread-local connection; every coroutine here completes without suspending."""

    def __init__(self) -> None:
        from django.db import connection

        self.vendor = connection.vendor

    @overload
    def _run(self, sql: str, params: tuple[Any, ...] | list[Any], fetch: Literal[True]) -> list[dict[str, Any]]: ...
    @overload
    def _run(self, sql: str, params: tuple[Any, ...] | list[Any], fetch: Literal[False]) -> int: ...
    def _run(self, sql: str, params: tuple[Any, ...] | list[Any], fetch: bool) -> list[dict[str, Any]] | int:
        """``fetch``: the rows as dicts; else the number of rows the statement changed."""
        from django.db import DataError, IntegrityError, InterfaceError, OperationalError, connection

        try:
            with connection.cursor() as cur:
                cur.execute(sql, params)
                if fetch:
                    description = cur.description
                    if description is None:
                        return []
                    cols = [c[0] for c in description]
                    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
                return int(cur.rowcount)
        except IntegrityError as exc:
            if _is_unique_error(exc):
                raise UniqueViolation(_constraint_of(exc)) from None
            if _is_fk_error(exc):
                raise ForeignKeyViolation() from None
            raise
        except DataError as exc:
            bad = refused_value(exc) if self.vendor == "postgresql" else None
            if bad is not None:
                raise bad from None
            raise
        except (OperationalError, InterfaceError) as exc:
            raise (_fault(exc) or exc) from None

    async def fetchall(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[dict[str, Any]]:
        return self._run(sql, params, True)

    async def execute(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        return self._run(sql, params, False)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        from django.db import InterfaceError, OperationalError, transaction

        try:
            with transaction.atomic():
                yield self
        except (OperationalError, InterfaceError) as exc:  # from BEGIN or COMMIT (statements: _run)
            raise (_fault(exc) or exc) from None

    async def recover(self) -> None:
        from django.db import connection

        if not connection.in_atomic_block:
            try:
                connection.close()  # back to the pool, which discards it when it is broken
            except Exception:  # noqa: BLE001 - a dead connection may fail to close; it is gone either way
                pass

    def json(self, value: Any) -> Any:
        if self.vendor == "postgresql":
            from psycopg.types.json import Jsonb

            return Jsonb(value)
        return super().json(value)

    def dt(self, value: _dt.datetime) -> Any:
        if self.vendor == "sqlite":
            return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")
        return value


def limit_statements() -> None:
    """Give this process's Django connections ``DB_STATEMENT_TIMEOUT_MS`` (the WSGI server,
    where they serve the API; called before its pool opens). Other processes (migrations,
    management commands, the worker) keep PostgreSQL's default, no limit."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.postgresql" and settings.DB_STATEMENT_TIMEOUT_MS:
        db.setdefault("OPTIONS", {})["options"] = f"-c statement_timeout={settings.DB_STATEMENT_TIMEOUT_MS}"


def _fault(exc: Exception) -> AppwriteError | None:
    """:func:`faults.translate` for PostgreSQL (SQLite's OperationalErrors stay as they are)."""
    return faults.translate(exc) if type(exc.__cause__).__module__.startswith("psycopg") else None


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
