"""The embedded default (SQLite, no services): the same API on a fresh SQLite file served by
one ASGI process, and by the WSGI build. ``search`` falls back to a substring match there."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from apps.databases.tests.conftest import Tdb


@pytest.fixture(scope="module")
def sqlite_env(tmp_path_factory):
    path = tmp_path_factory.mktemp("embedded") / "db.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SQLITE_PATH=str(path), PYTHONUNBUFFERED="1")
    manage = [sys.executable, "manage.py"]
    from conftest import ROOT

    subprocess.run([*manage, "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "createproject", "embedded"], cwd=ROOT, env=env, check=True, capture_output=True)
    key = subprocess.run([*manage, "createapikey", "embedded", "--all-scopes"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    return env, key


@pytest.fixture(scope="module", params=["asgi", "wsgi"])
def embedded(request, sqlite_env):
    from conftest import Api, ProjectInfo, start_server

    env, key = sqlite_env
    server = start_server(request.param, env)
    yield Api(server, ProjectInfo(id="embedded", key=key, pk=0))
    server.stop()


def _q(method, attribute=None, values=None):
    out = {"method": method}
    if attribute:
        out["attribute"] = attribute
    if values is not None:
        out["values"] = values
    return json.dumps(out)


def test_sqlite_end_to_end(embedded):
    t = Tdb(embedded).setup(permissions=['create("users")'], security=True, indexes=[
        {"key": "u_email", "type": "unique", "columns": ["email"]},
        {"key": "by_count", "type": "key", "columns": ["count"], "orders": ["desc"]},
        {"key": "ft", "type": "fulltext", "columns": ["title"]}])
    for i, title in enumerate(["Red apple", "green apple", "banana", "cherry"]):
        r = t.add({"title": title, "count": i, "email": f"u{i}@x.io", "tags": ["even"] if i % 2 == 0 else []},
                  row_id=f"r{i}")
        assert r.status_code == 201, r.text
    r = t.add({"title": "dup", "email": "u1@x.io"})
    assert r.status_code == 409 and r.json()["type"] == "row_already_exists"

    def ids(*queries):
        r = t.call("GET", t.R, params={f"queries[{i}]": q for i, q in enumerate(queries)})
        assert r.status_code == 200, r.text
        return [row["$id"] for row in r.json()["rows"]]

    assert ids(_q("search", "title", ["APPLE"])) == ["r0", "r1"]
    assert ids(_q("contains", "tags", ["even"])) == ["r0", "r2"]
    assert ids(_q("orderDesc", "count"), _q("cursorAfter", values=["r2"])) == ["r1", "r0"]
    assert ids(_q("greaterThan", "count", [1]), _q("startsWith", "title", ["b"])) == ["r2"]
    assert ids(_q("or", values=[json.loads(_q("equal", "count", [0])), json.loads(_q("endsWith", "title", ["rry"]))])) \
        == ["r0", "r3"]
    assert ids(_q("equal", "done", [False]), _q("limit", values=[1]), _q("offset", values=[1])) == ["r1"]
    r = t.call("PATCH", f"{t.R}/r0", json={"data": {"count": 9}})
    assert r.json()["count"] == 9
    # Row security on SQLite: a user sees only rows it may read.
    _, token = embedded.signup()
    embedded.http.cookies.clear()
    assert t.add({"title": "mine"}, row_id="m1", key=False, session=token).status_code == 201
    r = t.call("GET", t.R, key=False, session=token)
    assert [row["$id"] for row in r.json()["rows"]] == ["m1"] and r.json()["total"] == 1
    assert t.call("DELETE", f"{t.T}/columns/count").status_code == 204
    assert "count" not in t.call("GET", f"{t.R}/r0").json()
    assert t.call("DELETE", t.T).status_code == 204


def test_sqlite_transactions_with_sdk(embedded):
    """Transactions on the embedded default: staged writes, reads through the transaction, an
    atomic commit, and a conflict that applies nothing."""
    from appwrite.client import Client
    from appwrite.exception import AppwriteException
    from appwrite.services.tables_db import TablesDB

    tdb = TablesDB(Client().set_endpoint(embedded.server.endpoint).set_project("embedded")
                   .set_key(embedded.project.key))
    t = Tdb(embedded).setup(columns=[("varchar", {"key": "title", "size": 32, "required": True}),
                                     ("integer", {"key": "n", "required": False})])
    tdb.create_row(t.db, t.table, "base", {"title": "base", "n": 1})
    tx = tdb.create_transaction()
    tdb.create_row(t.db, t.table, "a", {"title": "a"}, transaction_id=tx.id)
    tdb.increment_row_column(t.db, t.table, "base", "n", value=4, transaction_id=tx.id)
    assert tdb.list_rows(t.db, t.table).total == 1
    assert tdb.get_row(t.db, t.table, "base", transaction_id=tx.id).data["n"] == 5
    assert tdb.update_transaction(tx.id, commit=True).status == "committed"
    assert tdb.get_row(t.db, t.table, "base").data["n"] == 5 and tdb.list_rows(t.db, t.table).total == 2
    tx = tdb.create_transaction()
    tdb.create_row(t.db, t.table, "b", {"title": "b"}, transaction_id=tx.id)
    tdb.update_row(t.db, t.table, "base", {"n": 6}, transaction_id=tx.id)
    tdb.update_row(t.db, t.table, "base", {"n": 7})
    with pytest.raises(AppwriteException) as err:
        tdb.update_transaction(tx.id, commit=True)
    assert err.value.type == "transaction_conflict"
    assert tdb.list_rows(t.db, t.table).total == 2 and tdb.get_row(t.db, t.table, "base").data["n"] == 7


def test_sqlite_query_methods(embedded):
    """Every SDK 27 filter method on the embedded default (regex through Python's ``re``)."""
    from apps.databases.tests.test_query_methods import CASES, ids, make_shop

    shop = make_shop(embedded.server.endpoint, "embedded", embedded.project.key)
    for name, query, expected in CASES:
        assert ids(shop, query) == expected, name


def test_sqlite_relationships(embedded):
    """Relationships on the embedded default: nested writes, select loading, dotted filters,
    many-to-many lists (JSON arrays in SQLite), onDelete."""
    from appwrite.exception import AppwriteException
    from appwrite.query import Query

    from apps.databases.tests.test_relationships import library

    t, d = library(embedded.server.endpoint, "embedded", embedded.project.key)
    t.create_row(d, "authors", "ada", {"name": "Ada", "profile": {"bio": "hi"}, "books": [
        {"$id": "b1", "title": "B1", "tags": [{"$id": "t1", "label": "one"}]}]})
    got = t.get_row(d, "authors", "ada", queries=[Query.select(["*", "profile.bio", "books.tags.*"])])
    assert got.data["profile"]["bio"] == "hi" and got.data["books"][0]["tags"][0]["label"] == "one"
    assert [r.id for r in t.list_rows(d, "books", queries=[Query.equal("tags.label", "one")]).rows] == ["b1"]
    assert [r.id for r in t.list_rows(d, "tags", queries=[Query.equal("books.author.name", "Ada")]).rows] == ["t1"]
    with pytest.raises(AppwriteException) as err:
        t.delete_row(d, "authors", "ada")
    assert err.value.type == "row_delete_restricted"
    t.delete_row(d, "tags", "t1")
    assert t.get_row(d, "books", "b1", queries=[Query.select(["tags.*"])]).data["tags"] == []


def test_sqlite_refuses_spatial_columns_clearly(embedded):
    """The embedded SQLite default has no spatial support: a clear 400 that says why."""
    t = Tdb(embedded).setup(columns=[("varchar", {"key": "name", "size": 8, "required": False})])
    for kind in ("point", "line", "polygon"):
        r = t.call("POST", f"{t.T}/columns/{kind}", json={"key": f"g{kind}", "required": False})
        assert r.status_code == 400 and r.json()["type"] == "general_feature_unsupported", r.text
        assert "SQLite" in r.json()["message"] and "PostGIS" in r.json()["message"]
    assert [c["key"] for c in t.call("GET", f"{t.T}/columns").json()["columns"]] == ["name"]
