"""The ASGI build's SQLite driver on the embedded default (apps/core/drivers/db/sqlite.py): commits do
not wait for fsync unless asked, and the planner's statistics are kept current so a filter on
an indexed expression uses its index instead of walking the table in ``ORDER BY`` order."""

from __future__ import annotations

import asyncio
import sqlite3

from apps.core.drivers.db.sqlite import SqliteAsync

# The shape of the rows table: every table's rows in one, ordered by (table_id, id), and a user
# index as a partial expression index on one table's rows.
_SCHEMA = ("CREATE TABLE t (id integer PRIMARY KEY, table_id int, data text)",
           "CREATE INDEX t_seq ON t (table_id, id)",
           "CREATE INDEX t_n ON t ((json_extract(data, '$.n'))) WHERE table_id = 1")
_PLAN = ("EXPLAIN QUERY PLAN SELECT id FROM t WHERE table_id = 1 AND json_extract(data, '$.n') >= 500 "
         "AND json_extract(data, '$.n') < 510 ORDER BY id LIMIT 10")


def test_synchronous_follows_the_setting(settings, tmp_path):
    async def main(value):
        settings.SQLITE_SYNCHRONOUS = value
        db = SqliteAsync(str(tmp_path / f"{value}.sqlite3"))
        try:
            return (await db.fetchone("PRAGMA synchronous"))["synchronous"]
        finally:
            await db.close()

    # SQLite's numbers: 0 OFF, 1 NORMAL, 2 FULL
    assert asyncio.run(main("NORMAL")) == 1
    assert asyncio.run(main("FULL")) == 2


def test_statistics_are_gathered_and_the_index_is_used(settings, tmp_path):
    path = str(tmp_path / "stats.sqlite3")

    async def main():
        db = SqliteAsync(path)
        try:
            for statement in _SCHEMA:
                await db.execute(statement)
            async with db.transaction() as tx:
                for i in range(6000):  # two tables' rows, as in the rows table
                    await tx.execute("INSERT INTO t (table_id, data) VALUES (%s, %s)", (1 + i % 2, f'{{"n": {i // 2}}}'))
            await db.fetchall("SELECT 1")  # the first statement after 1,000 changes starts ANALYZE
            for _ in range(100):
                if db._analyzing is None and db._analyze_at > 6000:
                    break
                await asyncio.sleep(0.05)
            plan = " ".join(row["detail"] for row in await db.fetchall(_PLAN))
            threshold = db._analyze_at
        finally:
            await db.close()
        return plan, threshold

    plan, threshold = asyncio.run(main())
    assert "USING INDEX t_n" in plan, plan
    # the next run comes after about as many changes again as the table then held
    assert threshold >= 6000 + 6000
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 't'").fetchone()[0] >= 1
    finally:
        conn.close()


def test_without_statistics_sqlite_walks_the_order_by_index(tmp_path):
    """Why the statistics matter: the same query on a table never analyzed is planned on the
    ``ORDER BY`` column (reading every row before the matching ones)."""
    conn = sqlite3.connect(str(tmp_path / "none.sqlite3"))
    try:
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.executemany("INSERT INTO t (table_id, data) VALUES (?, ?)",
                         [(1 + i % 2, f'{{"n": {i // 2}}}') for i in range(6000)])
        conn.commit()
        plan = " ".join(row[3] for row in conn.execute(_PLAN))
    finally:
        conn.close()
    assert "t_n" not in plan, plan
