"""Transactions cost plain row reads and writes no SQL round trip: the row routes without a
``transactionId`` run exactly the statements they ran before transactions existed, none of them
on the transaction tables. Counted in-process (WSGI mode, the real PostgreSQL or SQLite) by
wrapping the request's database driver."""

from __future__ import annotations

import orjson
import pytest

from apps.core.drivers.runtime import run_sync
from apps.core.http import pipeline
from apps.core.http.context import RequestContext
from conftest import make_project


class Counting:
    """A driver wrapper that records every SQL statement, including those run in transactions."""

    def __init__(self, inner, log):
        self._inner, self.log = inner, log
        self.vendor = inner.vendor

    def __getattr__(self, name):
        return getattr(self._inner, name)

    async def fetchall(self, sql, params=()):
        self.log.append(sql)
        return await self._inner.fetchall(sql, params)

    async def fetchone(self, sql, params=()):
        self.log.append(sql)
        return await self._inner.fetchone(sql, params)

    async def fetchval(self, sql, params=()):
        self.log.append(sql)
        return await self._inner.fetchval(sql, params)

    async def execute(self, sql, params=()):
        self.log.append(sql)
        return await self._inner.execute(sql, params)

    def transaction(self):
        outer = self

        class _Tx:
            async def __aenter__(self):
                self._cm = outer._inner.transaction()
                return Counting(await self._cm.__aenter__(), outer.log)

            async def __aexit__(self, *exc):
                return await self._cm.__aexit__(*exc)

        return _Tx()


@pytest.fixture
def call(django_db_setup, django_db_blocker, monkeypatch, settings):
    # Process caches off: whether this test process's cache is live depends on its Redis
    # listener, so counts are taken with the table metadata read on every request.
    settings.LOCAL_CACHE_TTL = 0
    project = make_project(django_db_blocker)
    log: list[str] = []
    real = pipeline.get_database
    monkeypatch.setattr(pipeline, "get_database", lambda mode: Counting(real(mode), log))

    def run(method, path, body=None):
        ctx = RequestContext(mode="sync", method=method, path=path, query=[], peer_ip="127.0.0.1",
                             headers={"x-appwrite-project": project.id, "x-appwrite-key": project.key,
                                      "content-type": "application/json"},
                             body=orjson.dumps(body) if body is not None else b"")
        log.clear()
        with django_db_blocker.unblock():
            response = run_sync(pipeline.handle(ctx))
        assert response.status < 300, response.body
        return [s for s in log if "databases_" in s]

    return run


def test_plain_row_routes_touch_no_transaction_table(call):
    call("POST", "/tablesdb", {"databaseId": "d", "name": "d"})
    call("POST", "/tablesdb/d/tables", {"tableId": "t", "name": "t"})
    call("POST", "/tablesdb/d/tables/t/columns/integer", {"key": "n", "required": False})
    R = "/tablesdb/d/tables/t/rows"
    counts = {
        "create": call("POST", R, {"rowId": "r1", "data": {"n": 1}}),
        "get": call("GET", f"{R}/r1"),
        "list": call("GET", R),
        "update": call("PATCH", f"{R}/r1", {"data": {"n": 2}}),
        "upsert": call("PUT", f"{R}/r1", {"data": {"n": 3}}),
        "increment": call("PATCH", f"{R}/r1/n/increment", {"value": 1}),
        "delete": call("DELETE", f"{R}/r1"),
    }
    for name, statements in counts.items():
        assert not [s for s in statements if "databases_transaction" in s], name
    # Each request reads the table's metadata (with the row, for get/update/delete: one round
    # trip); then create and list run one statement, update and delete one conditional write,
    # upsert and increment lock, read and write in one SQL transaction.
    assert {name: len(s) for name, s in counts.items()} == {
        "create": 2, "get": 1, "list": 2, "update": 2, "upsert": 3, "increment": 3, "delete": 2}
