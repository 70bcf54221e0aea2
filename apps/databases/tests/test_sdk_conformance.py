"""The unmodified Appwrite Python SDK (27.0.0) against the ASGI and WSGI builds: TablesDB and
legacy Databases services, parsed models, queries, cursors and permissions."""

from __future__ import annotations

import pytest
from appwrite import models
from appwrite.client import Client
from appwrite.enums.databases_index_type import DatabasesIndexType
from appwrite.enums.order_by import OrderBy
from appwrite.enums.tables_db_index_type import TablesDBIndexType
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.permission import Permission
from appwrite.query import Query
from appwrite.role import Role
from appwrite.services.account import Account
from appwrite.services.databases import Databases
from appwrite.services.tables_db import TablesDB

from conftest import EVERY_BUILD


def _client(server, project, *, key=True, session=None) -> Client:
    c = Client().set_endpoint(server.endpoint).set_project(project.id)
    if key:
        c.set_key(project.key)
    if session:
        c.set_session(session)
    return c


def _user_client(server, project, email):
    admin = _client(server, project)
    Account(admin).create(user_id=ID.unique(), email=email, password="password123")
    session = Account(admin).create_email_password_session(email=email, password="password123")
    user = _client(server, project, key=False, session=session.secret)
    return user, Account(user).get().id


@EVERY_BUILD  # also on the naive build: one of its smoke tests (conftest.EVERY_BUILD)
def test_tablesdb_with_sdk(server, project):
    tdb = TablesDB(_client(server, project))
    db = tdb.create(database_id=ID.unique(), name="Shop")
    assert isinstance(db, models.Database) and db.type.value == "tablesdb"
    table = tdb.create_table(database_id=db.id, table_id=ID.unique(), name="Products",
                             permissions=[Permission.read(Role.any())])
    assert isinstance(table, models.Table) and table.rowsecurity is False
    d, t = db.id, table.id
    cols = [
        tdb.create_varchar_column(d, t, "name", 64, True),
        tdb.create_string_column(d, t, "sku", 16, False, default="none"),
        tdb.create_text_column(d, t, "about", False),
        tdb.create_mediumtext_column(d, t, "spec", False),
        tdb.create_longtext_column(d, t, "manual", False),
        tdb.create_integer_column(d, t, "stock", False, min=0, max=1000, default=0),
        tdb.create_big_int_column(d, t, "views", False),
        tdb.create_float_column(d, t, "price", False, min=0, max=1e6),
        tdb.create_boolean_column(d, t, "active", False, default=True),
        tdb.create_datetime_column(d, t, "released", False),
        tdb.create_email_column(d, t, "contact", False),
        tdb.create_url_column(d, t, "link", False),
        tdb.create_ip_column(d, t, "origin", False),
        tdb.create_enum_column(d, t, "size", ["s", "m", "l"], False),
        tdb.create_varchar_column(d, t, "tags", 20, False, array=True),
    ]
    assert all(c.status.value == "available" for c in cols)
    assert isinstance(cols[7], models.ColumnFloat) and cols[7].type == "double"
    assert isinstance(tdb.get_column(d, t, "contact"), models.ColumnEmail)
    assert isinstance(tdb.get_column(d, t, "size"), models.ColumnEnum)
    assert isinstance(tdb.get_column(d, t, "released"), models.ColumnDatetime)
    assert tdb.list_columns(d, t).total == 15
    updated = tdb.update_varchar_column(d, t, "name", True, None, size=80)
    assert updated.size == 80
    index = tdb.create_index(d, t, "by_price", TablesDBIndexType.KEY, ["price"], orders=[OrderBy.DESC])
    assert index.status == "available" and index.columns == ["price"]
    tdb.create_index(d, t, "uniq_sku", TablesDBIndexType.UNIQUE, ["sku"])
    tdb.create_index(d, t, "ft_name", TablesDBIndexType.FULLTEXT, ["name"])
    assert tdb.list_indexes(d, t).total == 3

    ids = []
    for i, (name, price) in enumerate([("red chair", 10.0), ("blue chair", 20.5), ("red table", 99.0),
                                       ("green lamp", 5.0)]):
        row = tdb.create_row(d, t, ID.unique(), {"name": name, "price": price, "sku": f"s{i}", "stock": i,
                                                 "tags": ["x"] if i % 2 else [], "released": f"2024-01-0{i + 1}T10:00:00Z"})
        assert isinstance(row, models.Row) and isinstance(row.sequence, str)
        assert row.data["name"] == name and row.tableid == t and row.databaseid == d
        ids.append(row.id)
    page = tdb.list_rows(d, t, queries=[Query.greater_than("price", 6), Query.order_desc("price"), Query.limit(2)])
    assert page.total == 3 and [r.data["name"] for r in page.rows] == ["red table", "blue chair"]
    nxt = tdb.list_rows(d, t, queries=[Query.greater_than("price", 6), Query.order_desc("price"),
                                       Query.cursor_after(page.rows[-1].id)])
    assert [r.data["name"] for r in nxt.rows] == ["red chair"]
    found = tdb.list_rows(d, t, queries=[Query.search("name", "chair"), Query.contains("tags", ["x"])])
    assert [r.data["name"] for r in found.rows] == ["blue chair"]
    either = tdb.list_rows(d, t, queries=[Query.or_queries([Query.equal("name", "green lamp"),
                                                            Query.starts_with("name", "blue")]),
                                          Query.select(["name"])])
    assert sorted(r.data["name"] for r in either.rows) == ["blue chair", "green lamp"]
    assert "price" not in either.rows[0].data
    got = tdb.get_row(d, t, ids[0])
    assert got.data["stock"] == 0 and got.data["active"] is True
    patched = tdb.update_row(d, t, ids[0], {"stock": 5})
    assert patched.data["stock"] == 5 and patched.data["name"] == "red chair"
    assert tdb.increment_row_column(d, t, ids[0], "stock", value=2).data["stock"] == 7
    assert tdb.decrement_row_column(d, t, ids[0], "stock").data["stock"] == 6
    assert tdb.create_query(d, t, queries=[Query.equal("stock", 6)]).rows[0].id == ids[0]
    upserted = tdb.upsert_row(d, t, "fixed-id", {"name": "new", "sku": "s9"})
    assert upserted.id == "fixed-id"
    again = tdb.upsert_row(d, t, "fixed-id", {"price": 1.0})
    assert again.data["name"] == "new" and again.data["price"] == 1.0
    with pytest.raises(AppwriteException) as err:
        tdb.create_row(d, t, ID.unique(), {"name": "dup", "sku": "s1"})
    assert err.value.code == 409 and err.value.type == "row_already_exists"
    with pytest.raises(AppwriteException) as err:
        tdb.create_row(d, t, ID.unique(), {"name": "bad", "stock": "many"})
    assert err.value.type == "row_invalid_structure"
    with pytest.raises(AppwriteException) as err:
        tdb.list_rows(d, t, queries=[Query.equal("nope", 1)])
    assert err.value.type == "general_query_invalid"
    bulk = tdb.create_rows(d, t, [{"$id": "b1", "name": "bulk one", "sku": "b1"}, {"name": "bulk two", "sku": "b2"}])
    assert bulk.total == 2 and bulk.rows[0].id == "b1"
    tdb.delete_row(d, t, ids[3])
    with pytest.raises(AppwriteException) as err:
        tdb.get_row(d, t, ids[3])
    assert err.value.type == "row_not_found"
    assert tdb.delete_rows(d, t, queries=[Query.starts_with("name", "bulk")]).total == 2
    tdb.delete_index(d, t, "by_price")
    tdb.delete_column(d, t, "manual")
    assert tdb.get_table(d, t).columns[-1].key == "tags"
    tdb.delete_table(d, t)
    tdb.delete(d)
    with pytest.raises(AppwriteException) as err:
        tdb.get(d)
    assert err.value.type == "database_not_found"


def test_permissions_with_two_users(server, project):
    admin = TablesDB(_client(server, project))
    d = admin.create(ID.unique(), "Notes").id
    t = admin.create_table(d, ID.unique(), "notes", permissions=[Permission.create(Role.users())],
                           row_security=True).id
    admin.create_varchar_column(d, t, "text", 100, True)
    alice, alice_id = _user_client(server, project, f"alice-{ID.unique()}@example.com")
    bob, bob_id = _user_client(server, project, f"bob-{ID.unique()}@example.com")
    a, b = TablesDB(alice), TablesDB(bob)
    private = a.create_row(d, t, ID.unique(), {"text": "secret"})
    assert set(private.permissions) == {f'{x}("user:{alice_id}")' for x in ("read", "update", "delete")}
    shared = a.create_row(d, t, ID.unique(), {"text": "hello"},
                          permissions=[Permission.read(Role.users()), Permission.update(Role.user(alice_id))])
    assert [r.id for r in b.list_rows(d, t).rows] == [shared.id]
    assert a.list_rows(d, t).total == 2
    with pytest.raises(AppwriteException) as err:
        b.get_row(d, t, private.id)
    assert err.value.code == 404 and err.value.type == "row_not_found"
    with pytest.raises(AppwriteException) as err:
        b.update_row(d, t, shared.id, {"text": "hacked"})
    assert err.value.code == 401 and err.value.type == "user_unauthorized"
    with pytest.raises(AppwriteException) as err:
        a.create_row(d, t, ID.unique(), {"text": "x"}, permissions=[Permission.read(Role.user(bob_id))])
    assert err.value.type == "user_unauthorized"
    with pytest.raises(AppwriteException) as err:
        TablesDB(_client(server, project, key=False)).create_row(d, t, ID.unique(), {"text": "guest"})
    assert err.value.code == 401
    a.delete_row(d, t, private.id)
    assert admin.list_rows(d, t).total == 1


def test_legacy_databases_with_sdk(server, project):
    dbs = Databases(_client(server, project))
    db = dbs.create(ID.unique(), "Legacy")
    assert db.type.value == "legacy"
    coll = dbs.create_collection(db.id, ID.unique(), "books", permissions=[Permission.read(Role.any())],
                                 document_security=False)
    assert isinstance(coll, models.Collection) and coll.documentsecurity is False
    attr = dbs.create_string_attribute(db.id, coll.id, "title", 100, True)
    assert attr.status.value == "available"
    dbs.create_integer_attribute(db.id, coll.id, "year", False)
    index = dbs.create_index(db.id, coll.id, "by_year", DatabasesIndexType.KEY, ["year"])
    assert isinstance(index, models.Index) and index.attributes == ["year"]
    doc = dbs.create_document(db.id, coll.id, ID.unique(), {"title": "Dune", "year": 1965})
    assert isinstance(doc, models.Document) and doc.collectionid == coll.id and doc.data["year"] == 1965
    docs = dbs.list_documents(db.id, coll.id, queries=[Query.less_than("year", 2000)])
    assert docs.total == 1 and docs.documents[0].data["title"] == "Dune"
    assert dbs.update_document(db.id, coll.id, doc.id, {"year": 1966}).data["year"] == 1966
    dbs.delete_document(db.id, coll.id, doc.id)
    with pytest.raises(AppwriteException) as err:
        dbs.get_document(db.id, coll.id, doc.id)
    assert err.value.type == "document_not_found"
    with pytest.raises(AppwriteException) as err:
        dbs.get_collection(db.id, "missing")
    assert err.value.type == "collection_not_found"
