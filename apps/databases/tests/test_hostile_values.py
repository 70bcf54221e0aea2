"""Values PostgreSQL stores differently from what was sent, on every server build: a row or a
column spec must never be stored in a form that later fails to serialise (one such row made
every list of its table answer 500), and NUL characters are a 400, not a driver error."""

from __future__ import annotations

import pytest

from apps.databases.tests.conftest import Tdb


@pytest.fixture
def hostile(server, django_db_blocker):
    from conftest import Api, make_project

    return Tdb(Api(server, make_project(django_db_blocker))).setup(columns=[
        ("float", {"key": "f", "required": False}),
        ("float", {"key": "bounded", "required": False, "min": -1e300, "max": 1e300, "default": 1e299}),
        ("varchar", {"key": "s", "size": 8, "required": False}),
    ])


@pytest.mark.parametrize("value", [1e308, -1e308, 1e19, 2.0**64, 1.5e300])
def test_huge_floats_read_back_as_floats(hostile, value):
    t = hostile
    r = t.add({"f": value})
    assert r.status_code == 201, r.text
    assert r.json()["f"] == value and r.json()["bounded"] == 1e299
    row = r.json()["$id"]
    for path in (t.R, f"{t.R}/{row}"):
        got = t.call("GET", path)
        assert got.status_code == 200, got.text
    assert t.call("GET", t.R).json()["rows"][0]["f"] == value
    assert isinstance(t.call("GET", f"{t.R}/{row}").json()["f"], float)


def test_huge_float_column_spec_reads_back(hostile):
    t = hostile
    for path in (t.T, f"{t.T}/columns", f"{t.T}/columns/bounded"):
        r = t.call("GET", path)
        assert r.status_code == 200, r.text
    col = t.call("GET", f"{t.T}/columns/bounded").json()
    assert (col["min"], col["max"], col["default"]) == (-1e300, 1e300, 1e299)


@pytest.mark.parametrize("method,path,body", [
    ("POST", "/tablesdb", {"databaseId": "unique()", "name": "a\x00"}),
    ("POST", "TABLES", {"tableId": "unique()", "name": "a\x00"}),
    ("POST", "ROWS", {"rowId": "unique()", "data": {"s": "a"}, "permissions": ['read("user:a\x00")']}),
], ids=["database name", "table name", "permission role"])
def test_nul_characters_are_400(hostile, sql, method, path, body):
    t = hostile
    before = t.count(sql)
    path = {"TABLES": f"{t.D}/tables", "ROWS": t.R}.get(path, path)
    r = t.call(method, path, json=body)
    assert r.status_code == 400, r.text
    assert r.json()["type"] in ("general_argument_invalid", "row_invalid_structure")
    assert t.count(sql) == before


def test_row_insert_into_a_table_deleted_meanwhile_is_404(django_db_setup, django_db_blocker):
    """A row create racing a table delete hit the row's foreign key: a 500 (seen on ASGI under
    a create storm while the table was deleted). The driver error is now 404 table_not_found."""
    from apps.core.drivers.db import DjangoSync
    from apps.core.drivers.runtime import run_sync
    from apps.core.errors import AppwriteError
    from apps.databases.naming import TABLESDB
    from apps.databases.rowstore import insert_row

    with django_db_blocker.unblock():
        db = DjangoSync()
        missing = run_sync(db.fetchval("SELECT COALESCE(MAX(id), 0) + 1000 FROM databases_table"))
        with pytest.raises(AppwriteError) as err:
            run_sync(insert_row(db, TABLESDB, {"id": missing}, "orphan", {}, []))
    assert err.value.type == "table_not_found"
