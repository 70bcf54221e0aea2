"""The ASGI build's PostgreSQL driver (apps/core/drivers/db/postgres.py, asyncpg): placeholders, row
counts, JSON both ways, the project's errors for constraint violations and refused values, and
database faults as answers. Statements run against the real PostgreSQL of ``DATABASE_URL``, in
a temporary table of each test's own connection (nothing is left behind)."""

from __future__ import annotations

import asyncio
import datetime as dt
import os

import pytest

from apps.core.drivers.db.base import ForeignKeyViolation, UniqueViolation
from apps.core.drivers.db.faults import DatabaseUnavailable
from apps.core.drivers.db.postgres import PgAsync, _rowcount, numbered
from apps.core.errors import AppwriteError


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT 1", "SELECT 1"),
    ("a = %s AND b = %s", "a = $1 AND b = $2"),
    ("x LIKE 'a%%' AND y = %s", "x LIKE 'a%' AND y = $1"),
    ("%s%s", "$1$2"),
    ("100 %", "100 %"),  # a lone % at the end is left alone
    ("mod(a, 5) % 2 = %s", "mod(a, 5) % 2 = $1"),  # so is one before anything but s or %
    ("%%s", "%s"),  # an escaped percent followed by s is not a placeholder
])
def test_placeholders_are_numbered(sql, expected):
    assert numbered(sql) == expected


@pytest.mark.parametrize(("status", "count"), [
    ("UPDATE 3", 3), ("INSERT 0 1", 1), ("DELETE 0", 0), ("CREATE TABLE", -1), ("BEGIN", -1),
])
def test_row_count_from_the_command_status(status, count):
    assert _rowcount(status) == count


def _url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("needs DATABASE_URL on PostgreSQL")
    return url


def _with_db(settings, body, **overrides):
    """Run ``body(db)`` on a fresh one-connection driver whose connection has the temporary
    tables ``t_parent``/``t_child`` (a unique column, a deferred foreign key, jsonb, int4)."""
    settings.DB_POOL_MIN_SIZE, settings.DB_POOL_MAX_SIZE = 0, 1
    for name, value in overrides.items():
        setattr(settings, name, value)
    url = _url()

    async def main():
        db = PgAsync(url)
        try:
            await db.execute(
                "CREATE TEMPORARY TABLE IF NOT EXISTS t_parent (id int PRIMARY KEY, name text UNIQUE, "
                "doc jsonb, small int4, at timestamptz)")
            await db.execute(
                "CREATE TEMPORARY TABLE IF NOT EXISTS t_child (id int PRIMARY KEY, parent int REFERENCES "
                "t_parent(id) DEFERRABLE INITIALLY DEFERRED)")
            return await body(db)
        finally:
            await db.close()

    return asyncio.run(main())


@pytest.mark.django_db(transaction=False)
def test_rows_are_dicts_and_json_goes_both_ways(settings):
    async def body(db):
        at = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
        assert await db.execute("INSERT INTO t_parent (id, name, doc, at) VALUES (%s, %s, %s, %s)",
                                (1, "a", db.json({"k": [1, 2.5, "x", None]}), at)) == 1
        # a str is JSON text, as psycopg sends it; plain data is encoded
        await db.execute("INSERT INTO t_parent (id, name, doc) VALUES (%s, %s, %s)", (2, "b", '{"s": "t"}'))
        await db.execute("INSERT INTO t_parent (id, name, doc) VALUES (%s, %s, %s::jsonb)", (3, "c", db.json([1])))
        rows = await db.fetchall("SELECT id, name, doc, at FROM t_parent ORDER BY id")
        assert rows == [{"id": 1, "name": "a", "doc": {"k": [1, 2.5, "x", None]}, "at": at},
                        {"id": 2, "name": "b", "doc": {"s": "t"}, "at": None},
                        {"id": 3, "name": "c", "doc": [1], "at": None}]
        assert await db.fetchone("SELECT name FROM t_parent WHERE id = %s", (9,)) is None
        assert await db.fetchval("SELECT count(*) AS n FROM t_parent WHERE name LIKE 'a%%'") == 1
        assert await db.execute("UPDATE t_parent SET small = %s WHERE id > %s", (7, 1)) == 2
        assert await db.fetchone("UPDATE t_parent SET small = 8 WHERE id = 99 RETURNING id") is None

    _with_db(settings, body)


@pytest.mark.django_db(transaction=False)
def test_constraint_violations_are_the_projects_errors(settings):
    async def body(db):
        await db.execute("INSERT INTO t_parent (id, name) VALUES (1, 'a')")
        with pytest.raises(UniqueViolation) as caught:
            await db.execute("INSERT INTO t_parent (id, name) VALUES (%s, %s)", (2, "a"))
        assert caught.value.constraint == "t_parent_name_key"
        # the foreign key is deferred: its violation surfaces at COMMIT, and nothing is written
        with pytest.raises(ForeignKeyViolation):
            async with db.transaction() as tx:
                await tx.execute("INSERT INTO t_child (id, parent) VALUES (%s, %s)", (1, 42))
        assert await db.fetchval("SELECT count(*) FROM t_child") == 0
        # an error inside the block rolls back what the block wrote
        with pytest.raises(RuntimeError):
            async with db.transaction() as tx:
                await tx.execute("INSERT INTO t_parent (id, name) VALUES (5, 'e')")
                raise RuntimeError("the handler failed")
        assert await db.fetchval("SELECT count(*) FROM t_parent WHERE id = 5") == 0

    _with_db(settings, body)


@pytest.mark.django_db(transaction=False)
@pytest.mark.parametrize(("sql", "params"), [
    ("INSERT INTO t_parent (id, name) VALUES (1, %s)", ("nul\x00byte",)),  # PostgreSQL refuses NUL in text
    ("INSERT INTO t_parent (id, doc) VALUES (1, %s)", ('{"a": "\\u0000"}',)),  # and in jsonb
    ("INSERT INTO t_parent (id, small) VALUES (1, %s)", (2**40,)),  # past int4: refused by asyncpg itself
    ("INSERT INTO t_parent (id, small) VALUES (1, %s::bigint)", (2**40,)),  # by PostgreSQL's cast
])
def test_values_postgresql_cannot_store_are_400(settings, sql, params):
    async def body(db):
        with pytest.raises(AppwriteError) as caught:
            await db.execute(sql, params)
        assert (caught.value.status, caught.value.type) == (400, "general_argument_invalid")
        assert await db.fetchval("SELECT count(*) FROM t_parent") == 0  # the connection is still usable

    _with_db(settings, body)


@pytest.mark.django_db(transaction=False)
def test_a_wrong_python_type_is_not_blamed_on_the_request(settings):
    """A str where the column is an integer is a bug of the caller: it stays an error that
    the pipeline logs and answers 500, not a 400 that would hide it."""
    async def body(db):
        with pytest.raises(Exception) as caught:
            await db.execute("INSERT INTO t_parent (id) VALUES (%s)", ("one",))
        assert not isinstance(caught.value, AppwriteError)

    _with_db(settings, body)


@pytest.mark.django_db(transaction=False)
def test_statement_timeout_answers_408(settings):
    async def body(db):
        with pytest.raises(AppwriteError) as caught:
            await db.fetchone("SELECT pg_sleep(2)")
        assert (caught.value.status, caught.value.type) == (408, "database_timeout")
        assert await db.fetchval("SELECT 1") == 1

    _with_db(settings, body, DB_STATEMENT_TIMEOUT_MS=200)


@pytest.mark.django_db(transaction=False)
def test_prepared_statements_are_planned_with_their_values(settings):
    """Every connection plans each run of a prepared statement with its values (no generic plan)."""
    async def body(db):
        assert await db.fetchval("SELECT current_setting('plan_cache_mode')") == "force_custom_plan"

    _with_db(settings, body)


@pytest.mark.django_db(transaction=False)
def test_a_terminated_connection_is_lost_and_replaced(settings):
    """The backend of the pool's connection is terminated under a statement: 503 with
    ``lost`` (the pipeline runs a read once more), and the next statement gets a new one."""
    async def body(db):
        pid = await db.fetchval("SELECT pg_backend_pid()")
        killer = PgAsync(_url())
        try:
            sleeper = asyncio.ensure_future(db.fetchone("SELECT pg_sleep(5)"))
            await asyncio.sleep(0.3)
            await killer.fetchval("SELECT pg_terminate_backend(%s)", (pid,))
            with pytest.raises(DatabaseUnavailable) as caught:
                await sleeper
            assert caught.value.lost and caught.value.status == 503
            assert await db.fetchval("SELECT pg_backend_pid()") != pid
        finally:
            await killer.close()

    _with_db(settings, body)


def test_no_server_answers_503_at_once(settings):
    """Nothing listens on the port: 503 (not lost: no connection was had), quickly."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    settings.DB_POOL_MIN_SIZE, settings.DB_POOL_MAX_SIZE = 0, 1

    async def main():
        db = PgAsync(f"postgres://postgres@127.0.0.1:{port}/none")
        try:
            for _ in range(2):  # the second request tries again, and fails the same way
                with pytest.raises(DatabaseUnavailable) as caught:
                    await asyncio.wait_for(db.fetchval("SELECT 1"), 10)
                assert not caught.value.lost
        finally:
            await db.close()

    asyncio.run(main())


@pytest.mark.parametrize(("make", "status", "lost"), [
    # asyncpg found its protocol mid-way through another operation: an idle pooled connection
    # that had read the server's shutdown notice (seen in the restart-under-load test)
    (lambda pg: pg.InternalClientError("cannot switch to state 12; another operation (2) is in progress"), 503, True),
    (lambda pg: pg.ConnectionDoesNotExistError("connection was closed in the middle of operation"), 503, True),
    (lambda pg: pg.AdminShutdownError("terminating connection due to administrator command"), 503, True),
    (lambda pg: pg.TooManyConnectionsError("sorry, too many clients already"), 503, True),
    (lambda pg: ConnectionResetError(104, "reset"), 503, True),
    (lambda pg: pg.QueryCanceledError("canceling statement due to statement timeout"), 408, False),
    (lambda pg: pg.SerializationError("could not serialize access"), 503, False),
])
def test_asyncpg_faults_become_answers(make, status, lost):
    """Every way a statement's connection can fail maps to an answer, never a 500."""
    from asyncpg import exceptions as pg

    from apps.core.drivers.db.faults import translate_asyncpg

    answer = translate_asyncpg(make(pg), lost=True)
    assert isinstance(answer, AppwriteError) and answer.status == status
    assert getattr(answer, "lost", False) is lost


def test_a_programming_error_is_not_a_database_fault():
    from asyncpg import exceptions as pg

    from apps.core.drivers.db.faults import translate_asyncpg

    assert translate_asyncpg(pg.UndefinedColumnError("column x does not exist"), lost=True) is None
    assert translate_asyncpg(ValueError("bad"), lost=True) is None
