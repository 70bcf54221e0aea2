"""Database faults as API answers, for both PostgreSQL drivers (the async pool and Django's).

* A connection lost mid-request (PostgreSQL restarted, the network cut) or none to be had
  within the pool wait: 503 ``general_service_unavailable`` with ``Retry-After``
  (:class:`DatabaseUnavailable`). The pipeline runs a GET/HEAD once more on a new connection
  when its connection was lost (``lost``): a read has nothing to undo.
* A statement cancelled by ``statement_timeout`` (``DB_STATEMENT_TIMEOUT_MS``): 408
  ``database_timeout`` (Appwrite's type for a query that ran too long).
* A deadlock or serialization failure (PostgreSQL rolled the transaction back): 503 with
  ``Retry-After``; nothing was written.
* Dead idle connections (every pooled connection after a PostgreSQL restart): found at
  checkout by :func:`is_dead`, which reads what waits on the socket without blocking - a
  server that closed the connection has sent its goodbye and end-of-file - so a live
  connection costs one ``recv`` system call and no round trip. A dead one is closed (the pool
  replaces it), the pool's other idle connections are swept once, and the caller gets another.
"""

from __future__ import annotations

from typing import Any

from apps.core.errors import AppwriteError

RETRY_AFTER = "1"  # seconds (header value): a restart or a conflict is over in about that time


class DatabaseUnavailable(AppwriteError):
    """503 ``general_service_unavailable`` with ``Retry-After``; ``lost`` when the request's
    connection broke (the request may be retried on a new one), not when none could be had;
    ``sqlstate`` is PostgreSQL's 40001/40P01 when it aborted the transaction for a conflict."""

    sqlstate: str | None = None

    def __init__(self, message: str | None = None, *, lost: bool = False):
        super().__init__("general_service_unavailable", message or "The database is unavailable. Please try again "
                         "shortly.", headers={"Retry-After": RETRY_AFTER})
        self.lost = lost


class PoolTimeout(DatabaseUnavailable):
    """No pooled connection became free within the pool's wait (``DB_POOL_TIMEOUT``) of the
    ASGI build's pool (:class:`apps.core.drivers.db.gate.Gate`): 503 as :class:`DatabaseUnavailable`;
    ``waited`` is the wait in seconds. The answer's message is the same as for any database
    outage; the wait is for logs and tests."""

    def __init__(self, waited: float):
        super().__init__()
        self.waited = waited


class PoolQueueFull(DatabaseUnavailable):
    """More callers already wait for a pooled connection than ``DB_POOL_MAX_WAITING`` allows:
    refused at once, 503 as :class:`DatabaseUnavailable`; ``waiting`` is how many were waiting."""

    def __init__(self, waiting: int):
        super().__init__()
        self.waiting = waiting


def is_dead(conn: Any) -> bool:
    """True when psycopg connection ``conn`` (idle, just taken from a pool) can no longer be
    used: libpq reads whatever is waiting on its socket without blocking (``PQconsumeInput``);
    a server that ended the session has sent a FATAL message and closed it."""
    pg = conn.pgconn
    if pg.status != 0:  # CONNECTION_OK
        return True
    try:
        # Twice: the first read returns with the server's FATAL message, the second meets the
        # end of file (libpq stops reading once it got data). On a live connection both find
        # nothing (measured: about 1 us each).
        pg.consume_input()
        pg.consume_input()
    except Exception:  # psycopg.OperationalError: "server closed the connection unexpectedly"
        return True
    return bool(pg.status != 0)


def translate(exc: BaseException) -> AppwriteError | None:
    """The answer for ``exc`` when it is a fault of the database rather than of the request:
    a psycopg or psycopg-pool error (Django's pool of the WSGI build), or Django's wrapper of
    one (its ``__cause__``). ``None`` for anything else (the caller re-raises it). The ASGI
    build's asyncpg path raises :class:`PoolTimeout`/:class:`PoolQueueFull` itself and uses
    :func:`translate_asyncpg`."""
    from psycopg import InterfaceError, OperationalError, errors
    from psycopg_pool import PoolTimeout, TooManyRequests

    cause = exc if isinstance(exc, (OperationalError, InterfaceError)) else exc.__cause__
    if isinstance(cause, (PoolTimeout, TooManyRequests)):
        return DatabaseUnavailable()
    if isinstance(cause, errors.QueryCanceled):
        return AppwriteError("database_timeout")
    # SQLSTATE class 40 (transaction rollback: serialization failure 40001, deadlock 40P01...);
    # psycopg's DeadlockDetected is not a TransactionRollback subclass, so test the code.
    if (getattr(cause, "sqlstate", None) or "").startswith("40"):
        err = DatabaseUnavailable("A concurrent request changed the same data. Please try again.")
        err.sqlstate = getattr(cause, "sqlstate", None)  # 40001/40P01: callers that expect a conflict answer their own 409
        return err
    if isinstance(cause, (OperationalError, InterfaceError)):
        return DatabaseUnavailable(lost=True)
    return None


def translate_asyncpg(exc: BaseException, *, lost: bool) -> AppwriteError | None:
    """:func:`translate` for the ASGI build's asyncpg connections (``apps.core.drivers.db.postgres``),
    called on errors of a statement (``lost=True``: the connection broke while the request
    used it, so a read may be run again) or of taking a connection (``lost=False``: none could
    be opened). ``None`` for an error that is not a database fault (the caller re-raises it)."""
    from asyncpg import exceptions as pg

    if isinstance(exc, pg.QueryCanceledError):
        return AppwriteError("database_timeout")
    sqlstate = getattr(exc, "sqlstate", None) or ""
    if sqlstate.startswith("40"):
        err = DatabaseUnavailable("A concurrent request changed the same data. Please try again.")
        err.sqlstate = sqlstate
        return err
    # Class 08 (connection exception), 53 (insufficient resources: too many connections), 57
    # (operator intervention: shut down, terminated, starting up), a socket error or a connect
    # timeout, and asyncpg's own "connection is closed" errors. InternalClientError is asyncpg
    # finding its protocol mid-way through another operation: seen on an idle pooled connection
    # that had just read the server's FATAL shutdown notice ("cannot switch to state 12;
    # another operation (2) is in progress"); the connection is unusable, like a closed one.
    if (isinstance(exc, (pg.PostgresConnectionError, pg.InsufficientResourcesError, pg.OperatorInterventionError,
                         pg.InternalClientError, OSError, TimeoutError))
            or (isinstance(exc, pg.InterfaceError) and "closed" in str(exc))):
        return DatabaseUnavailable(lost=lost)
    return None


def check_django_pool(conn: Any) -> None:
    """``check`` callback of Django's connection pool (the WSGI build): raises for a dead
    connection (psycopg-pool then discards it and hands out another, at once for the first)
    after sweeping the pool's other idle connections, which died with it."""
    if not is_dead(conn):
        return
    from django.db import connections

    conn.close()
    connections["default"].pool.check()  # type: ignore[attr-defined]  # the psycopg pool of Django's PostgreSQL backend; not in django-stubs
    raise DatabaseUnavailable(lost=True)
