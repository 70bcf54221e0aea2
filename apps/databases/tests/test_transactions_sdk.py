"""Transactions through the official SDKs: Python SDK 27 (TablesDB and the legacy Databases
service) on the ASGI, WSGI and Django-handler builds, and the web SDK 27 under Node, with
realtime events that arrive only after the commit (ASGI)."""

from __future__ import annotations

import json
import warnings

import pytest
from appwrite import models
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.permission import Permission
from appwrite.query import Query
from appwrite.role import Role
from appwrite.services.databases import Databases
from appwrite.services.tables_db import TablesDB

from tests.websdk import run_node


def _tables(server, project) -> TablesDB:
    return TablesDB(Client().set_endpoint(server.endpoint).set_project(project.id).set_key(project.key))


def _table(tdb: TablesDB, permissions=None) -> tuple[str, str]:
    d = tdb.create(ID.unique(), "Shop").id
    t = tdb.create_table(d, ID.unique(), "orders", permissions=permissions or []).id
    tdb.create_varchar_column(d, t, "title", 64, True)
    tdb.create_integer_column(d, t, "qty", False, min=0, max=100)
    return d, t


def test_python_sdk_transactions(server, project):
    tdb = _tables(server, project)
    d, t = _table(tdb)
    tdb.create_row(d, t, "stock", {"title": "stock", "qty": 10})
    tx = tdb.create_transaction(ttl=120)
    assert isinstance(tx, models.Transaction) and tx.status == "pending"
    staged = tdb.create_row(d, t, "o1", {"title": "order 1", "qty": 2}, transaction_id=tx.id)
    assert staged.id == "o1" and staged.data["qty"] == 2
    tdb.decrement_row_column(d, t, "stock", "qty", value=2, transaction_id=tx.id)
    tdb.create_operations(tx.id, operations=[
        {"action": "create", "databaseId": d, "tableId": t, "rowId": "o2", "data": {"title": "order 2", "qty": 1}},
        {"action": "decrement", "databaseId": d, "tableId": t, "rowId": "stock", "data": {"column": "qty", "value": 1}},
    ])
    assert tdb.get_transaction(tx.id).operations == 4
    assert tdb.list_rows(d, t).total == 1
    inside = tdb.list_rows(d, t, queries=[Query.order_asc("title")], transaction_id=tx.id)
    assert [r.data["title"] for r in inside.rows] == ["order 1", "order 2", "stock"]
    assert tdb.get_row(d, t, "stock", transaction_id=tx.id).data["qty"] == 7
    assert tx.id in [x.id for x in tdb.list_transactions(queries=[Query.equal("status", "pending")]).transactions]
    done = tdb.update_transaction(tx.id, commit=True)
    assert done.status == "committed"
    assert tdb.get_row(d, t, "stock").data["qty"] == 7 and tdb.list_rows(d, t).total == 3

    # A conflict: the row changed after the operation was staged; nothing of the transaction lands.
    tx = tdb.create_transaction()
    tdb.create_row(d, t, "o3", {"title": "order 3"}, transaction_id=tx.id)
    tdb.update_row(d, t, "stock", {"qty": 6}, transaction_id=tx.id)
    tdb.update_row(d, t, "stock", {"qty": 5})
    with pytest.raises(AppwriteException) as err:
        tdb.update_transaction(tx.id, commit=True)
    assert err.value.code == 409 and err.value.type == "transaction_conflict"
    assert tdb.get_transaction(tx.id).status == "failed"
    assert tdb.list_rows(d, t).total == 3 and tdb.get_row(d, t, "stock").data["qty"] == 5
    with pytest.raises(AppwriteException) as err:
        tdb.create_row(d, t, ID.unique(), {"title": "late"}, transaction_id=tx.id)
    assert err.value.type == "transaction_not_ready"

    tx = tdb.create_transaction()
    tdb.delete_rows(d, t, queries=[Query.starts_with("title", "order")], transaction_id=tx.id)
    assert tdb.list_rows(d, t, transaction_id=tx.id).total == 1
    assert tdb.update_transaction(tx.id, rollback=True).status == "failed"
    assert tdb.list_rows(d, t).total == 3
    tdb.delete_transaction(tx.id)
    with pytest.raises(AppwriteException) as err:
        tdb.get_transaction(tx.id)
    assert err.value.code == 404 and err.value.type == "transaction_not_found"


def test_python_sdk_legacy_transactions(server, project):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        dbs = Databases(Client().set_endpoint(server.endpoint).set_project(project.id).set_key(project.key))
        d = dbs.create(ID.unique(), "Legacy").id
        c = dbs.create_collection(d, ID.unique(), "books", permissions=[Permission.read(Role.any())]).id
        dbs.create_string_attribute(d, c, "title", 100, True)
        tx = dbs.create_transaction()
        dbs.create_document(d, c, "b1", {"title": "Dune"}, transaction_id=tx.id)
        dbs.create_operations(tx.id, operations=[
            {"action": "create", "databaseId": d, "collectionId": c, "documentId": "b2", "data": {"title": "Emma"}}])
        assert dbs.list_documents(d, c).total == 0
        assert dbs.update_transaction(tx.id, commit=True).status == "committed"
        assert sorted(x.data["title"] for x in dbs.list_documents(d, c).documents) == ["Dune", "Emma"]


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_web_sdk_transactions(request, kind, project):
    server = request.getfixturevalue(f"{kind}_server")
    from conftest import Api

    api = Api(server, project)
    _, session = api.signup()
    tdb = _tables(server, project)
    d, t = _table(tdb, permissions=[Permission.read(Role.users()), Permission.create(Role.users()),
                                    Permission.update(Role.users())])
    realtime = "1" if kind == "asgi" else "0"
    proc = run_node("transactions.mjs", server.endpoint, project.id, session, d, t, realtime, timeout=60)
    assert proc.returncode == 0, f"stdout: {proc.stdout}\nstderr: {proc.stderr}"
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["created"] == {"status": "pending", "operations": 0}
    assert out["staged"] == {"id": "w1", "title": "from web"}
    assert out["afterOperations"] == 3
    assert out["seenInTransaction"] == "from web, updated"
    assert out["visibleBeforeCommit"] == 0
    assert out["committed"] == "committed" and out["listed"] is True
    assert out["rowsAfterCommit"] == ["from web, updated", "second"]
    assert out["rolledBack"] == "failed" and out["rowsAfterRollback"] == 2
    assert out["missing"] == "404 transaction_not_found"
    if kind == "asgi":
        assert out["eventsBeforeCommit"] == 0
        # One event per applied operation, in staging order, all after the commit.
        assert [(e["id"], e["events"][0].rsplit(".", 1)[1]) for e in out["events"]] == [
            ("w1", "create"), ("w2", "create"), ("w1", "update")]
