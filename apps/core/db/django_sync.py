"""Django's thread-local connection for WSGI: every coroutine completes without suspending."""

from __future__ import annotations

from contextlib import asynccontextmanager

from apps.core.db.base import UTC, Database, ForeignKeyViolation, UniqueViolation, _bad_input
from apps.core.errors import AppwriteError


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
                    description = cur.description
                    if description is None:
                        return []
                    cols = [c[0] for c in description]
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
