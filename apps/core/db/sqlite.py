"""SQLite for ASGI on the embedded default: one connection used inline from the loop thread."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from contextlib import asynccontextmanager

from apps.core.db.base import UTC, Database, ForeignKeyViolation, UniqueViolation


class SqliteAsync(Database):
    vendor = "sqlite"

    def __init__(self, path: str):
        self._conn = sqlite3.connect(path, timeout=20, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        # `x REGEXP y` (database regex queries), as Django registers it on its own SQLite connections.
        self._conn.create_function("regexp", 2, _regexp, deterministic=True)
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


def _regexp(pattern, value) -> bool | None:
    if pattern is None or value is None:
        return None
    return re.search(pattern, str(value)) is not None


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
