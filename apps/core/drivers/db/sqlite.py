"""SQLite for ASGI on the embedded default: one connection used inline from the loop thread."""

from __future__ import annotations

import asyncio
import datetime as _dt
import logging
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal, overload

from django.conf import settings

from apps.core.drivers import cache
from apps.core.drivers.db.base import UTC, Database, ForeignKeyViolation, UniqueViolation

log = logging.getLogger("apps.core.drivers.db")


class SqliteAsync(Database):
    vendor = "sqlite"

    def __init__(self, path: str):
        self._conn = sqlite3.connect(path, timeout=20, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA synchronous={settings.SQLITE_SYNCHRONOUS}")  # NORMAL: no fsync per commit
        self._conn.execute("PRAGMA foreign_keys=ON")
        # `x REGEXP y` (database regex queries), as Django registers it on its own SQLite connections.
        self._conn.create_function("regexp", 2, _regexp, deterministic=True)
        self._lock = asyncio.Lock()
        # The process caches work without Redis: they are emptied whenever another connection
        # (another process, Django's own) has committed to the file since they were last read.
        cache.watch_changes(self.data_version)
        self._path = path
        self._analyze_at = 0  # total_changes at which the planner's statistics are refreshed next
        self._analyzing: asyncio.Task[None] | None = None

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version`` on this connection: it changes when another
        connection commits to the database (never for this connection's own commits)."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("%s", "?").replace("%%", "%")

    @overload
    def _run(self, sql: str, params: tuple[Any, ...] | list[Any], fetch: Literal[True]) -> list[dict[str, Any]]: ...
    @overload
    def _run(self, sql: str, params: tuple[Any, ...] | list[Any], fetch: Literal[False]) -> int: ...
    def _run(self, sql: str, params: tuple[Any, ...] | list[Any], fetch: bool) -> list[dict[str, Any]] | int:
        """``fetch``: the rows as dicts; else the number of rows the statement changed."""
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

    async def fetchall(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[dict[str, Any]]:
        async with self._lock:
            rows = self._run(sql, params, True)
        self._statistics()
        return rows

    async def execute(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        async with self._lock:
            count = self._run(sql, params, False)
        self._statistics()
        return count

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        async with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteTx(self)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
        self._statistics()

    def _statistics(self) -> None:
        """Keep SQLite's planner statistics (``ANALYZE``) current: once after the server starts
        and again whenever this connection has changed about as many rows as the database
        held at the last run (at least 1,000). Without them SQLite walks a table in the order
        of ``ORDER BY`` and tests every row instead of using the index of a filter (a list of
        10 rows by an indexed range read every row before them). ``ANALYZE`` runs on a
        connection of its own in a thread, so requests go on meanwhile; its one commit empties
        the process caches once (:func:`apps.core.drivers.cache.watch_changes`)."""
        if self._analyzing is not None or self._conn.total_changes < self._analyze_at:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._analyze_at = 1 << 62  # until this run has counted the rows
        self._analyzing = loop.create_task(self._analyze())

    async def _analyze(self) -> None:
        started = self._conn.total_changes
        try:
            rows = await asyncio.to_thread(_analyze, self._path)
            # Statistics written by another connection are not loaded by this one by themselves;
            # this statement makes it reload them (SQLite's documented way).
            async with self._lock:
                self._conn.execute("ANALYZE sqlite_master")
            self._analyze_at = started + max(1000, rows)
        except Exception as exc:  # noqa: BLE001 - statistics are an optimisation; retried later
            log.warning("ANALYZE of %s failed: %s", self._path, exc)
            self._analyze_at = started + 1000
        finally:
            self._analyzing = None

    def dt(self, value: _dt.datetime) -> Any:
        return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")

    async def close(self) -> None:
        cache.watch_changes(None)
        if self._analyzing is not None:
            await asyncio.wait((self._analyzing,))
        self._conn.close()


def _analyze(path: str) -> int:
    """Run ``ANALYZE`` on the database at ``path``; the number of rows it holds in all."""
    conn = sqlite3.connect(path, timeout=20, isolation_level=None)
    try:
        conn.execute("ANALYZE")
        rows: dict[str, int] = {}
        for table, stat in conn.execute("SELECT tbl, stat FROM sqlite_stat1"):
            first = (stat or "").split(" ", 1)[0]
            if first.isdigit():
                rows[table] = max(rows.get(table, 0), int(first))
        return sum(rows.values())
    finally:
        conn.close()


def _regexp(pattern: Any, value: Any) -> bool | None:
    if pattern is None or value is None:
        return None
    return re.search(pattern, str(value)) is not None


class _SqliteTx(Database):
    vendor = "sqlite"

    def __init__(self, owner: SqliteAsync):
        self._owner = owner

    async def fetchall(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[dict[str, Any]]:
        return self._owner._run(sql, params, True)

    async def execute(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> int:
        return self._owner._run(sql, params, False)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Database]:
        yield self

    dt = SqliteAsync.dt
