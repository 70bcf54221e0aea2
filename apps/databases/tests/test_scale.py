"""Concurrency on unique indexes, and the query plan of a permission-filtered list."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from apps.databases.tests.conftest import Tdb


def test_parallel_inserts_of_one_unique_value(server, project, sql):
    from conftest import Api

    t = Tdb(Api(server, project)).setup(
        columns=[("varchar", {"key": "email", "size": 64, "required": True})],
        indexes=[{"key": "uniq", "type": "unique", "columns": ["email"]}])

    def insert(_):
        return Api(server, project).call("POST", t.R, key=True, json={
            "rowId": "unique()", "data": {"email": "same@example.com"}}).status_code

    with ThreadPoolExecutor(max_workers=50) as pool:
        codes = list(pool.map(insert, range(50)))
    assert codes.count(201) == 1, codes
    assert codes.count(409) == 49, codes
    assert t.count(sql) == 1


class _Ctx:
    def __init__(self, project_pk):
        from apps.core.drivers.db import DjangoSync

        self.db = DjangoSync()
        self.project = {"id": project_pk}


@pytest.mark.slow
def test_permission_filtered_list_uses_indexes(api, sql, django_db_blocker):
    from django.conf import settings

    from apps.core.domain.queries import parse_queries
    from apps.core.drivers.runtime import run_sync
    from apps.core.http.auth import Auth, user_roles
    from apps.databases.selectors.meta import table_meta
    from apps.databases.selectors.rows import row_list_sql

    if not settings.DATABASE_URL:
        pytest.skip("plans are checked on PostgreSQL")
    t = Tdb(api).setup(permissions=['create("users")'], security=True,
                       columns=[("varchar", {"key": "cat", "size": 16, "required": True}),
                                ("varchar", {"key": "title", "size": 64, "required": False})],
                       indexes=[{"key": "by_cat", "type": "key", "columns": ["cat"]}])
    with django_db_blocker.unblock():
        _, table = run_sync(table_meta(_Ctx(api.project.pk), database_uid=t.db, table_uid=t.table))
    sql(
        "INSERT INTO databases_row (table_id, uid, data, permissions, read_roles, created_at, updated_at) "
        "SELECT %s, 'r' || g, jsonb_build_object('cat', 'c' || (g %% 500), 'title', 'row ' || g), "
        "jsonb_build_array('read(\"user:u' || (g %% 1000) || '\")'), ARRAY['user:u' || (g %% 1000)], now(), now() "
        "FROM generate_series(1, 100000) g", (table["id"],))
    sql("ANALYZE databases_row")
    auth = Auth(kind="session", user={"uid": "u7"}, roles=user_roles("u7", verified=False, labels=[]))
    cases = {
        "indexed filter": ['{"method":"equal","attribute":"cat","values":["c7"]}'],
        "indexed filter, ordered": ['{"method":"equal","attribute":"cat","values":["c7"]}',
                                    '{"method":"orderDesc","attribute":"$createdAt"}'],
        "permissions only": [],
        "ordered by indexed column": ['{"method":"orderAsc","attribute":"cat"}'],
    }
    with django_db_blocker.unblock():
        from django.db import connection

        ctx = _Ctx(api.project.pk)
        for name, raw in cases.items():
            query, params = row_list_sql(ctx.db, auth, table, parse_queries(raw))
            with connection.cursor() as cur:
                cur.execute("EXPLAIN " + query, params)
                plan = "\n".join(r[0] for r in cur.fetchall())
            assert "Seq Scan on databases_row" not in plan, f"{name}:\n{plan}"
    assert t.count(sql) == 100000
    listed = t.call("GET", t.R).json()
    assert listed["total"] == 5000 and len(listed["rows"]) == 25  # APP_LIMIT_COUNT, default page size
    listed = t.call("GET", t.R, params={"queries[0]": '{"method":"equal","attribute":"cat","values":["c7"]}'}).json()
    assert listed["total"] == 200


def test_parallel_patches_of_one_row_lose_no_update(server, project):
    from conftest import Api

    t = Tdb(Api(server, project)).setup()
    assert t.add({"title": "base"}, row_id="p1").status_code == 201
    changes = [{"note": "n"}, {"body": "b"}, {"count": 3}, {"big": 4}, {"score": 1.5}, {"done": True},
               {"due": "2024-01-01T00:00:00.000+00:00"}, {"email": "a@b.co"}, {"site": "https://x.io"},
               {"addr": "1.2.3.4"}, {"color": "red"}, {"tags": ["t"]}] * 2

    def patch(data):
        return Api(server, project).call("PATCH", f"{t.R}/p1", key=True, json={"data": data}).status_code

    with ThreadPoolExecutor(max_workers=12) as pool:
        assert set(pool.map(patch, changes)) == {200}
    row = t.call("GET", f"{t.R}/p1").json()
    for change in changes:
        for key, value in change.items():
            assert row[key] == value, key
