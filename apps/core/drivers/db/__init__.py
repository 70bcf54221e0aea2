"""SQL access for the /v1 hot path: one async interface, three drivers.

Selectors and services write plain SQL with ``%s`` placeholders against the tables that Django
models and migrations own, and call it through a :class:`Database`:

* ``PgAsync`` (ASGI on PostgreSQL): an asyncpg pool bound to the server's event loop, behind
  a first-come, first-served gate (:mod:`apps.core.drivers.db.gate`); no thread hop.
* ``DjangoSync`` (WSGI, any backend): Django's own connection for the current thread, so the
  WSGI build keeps Django's psycopg pool (``CONN_MAX_AGE=0``, returned at request end).
  Its coroutines never suspend, so :func:`apps.core.drivers.runtime.run_sync` can drive them.
* ``SqliteAsync`` (ASGI on the embedded SQLite): one connection used from the loop thread;
  calls are short and run inline, an ``asyncio.Lock`` keeps transactions from interleaving.

Rows come back as ``dict``; use :func:`as_json`, :func:`as_dt` and :func:`as_bool` to read
columns whose Python type differs between backends. Unique-constraint failures raise
:class:`UniqueViolation`; :func:`races` turns those, :class:`ForeignKeyViolation` and a row
that vanished (:func:`present`) into the resource's 409/404 when requests race; an exhausted pool raises 503 ``general_service_unavailable``.
"""

from __future__ import annotations

from django.conf import settings

from apps.core.drivers.db.base import (
    UTC,
    Database,
    ForeignKeyViolation,
    UniqueViolation,
    Vanished,
    as_bool,
    as_dt,
    as_json,
    json_loads,
    now,
    present,
    races,
    refused_value,
)
from apps.core.drivers.db.django_sync import DjangoSync
from apps.core.drivers.db.postgres import PgAsync
from apps.core.drivers.db.sqlite import SqliteAsync

__all__ = [  # the public interface
    "UTC", "Database", "DjangoSync", "ForeignKeyViolation", "UniqueViolation", "Vanished", "as_bool", "as_dt",
    "as_json", "close_databases", "get_database", "json_loads", "now", "present", "races",
    "refused_value",
]

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
