"""Relationship columns through the Python SDK 27 (three builds) and over HTTP: the four kinds,
one- and two-way, nested writes, ``select`` loading with per-row read checks, the allowed
queries (direct and dotted), ``onDelete`` restrict/cascade/setNull (atomic), column updates and
deletes, and bad input that stores nothing."""

from __future__ import annotations

import json

import pytest
from appwrite.client import Client
from appwrite.enums.relation_mutate import RelationMutate
from appwrite.enums.relationship_type import RelationshipType
from appwrite.exception import AppwriteException
from appwrite.query import Query
from appwrite.services.tables_db import TablesDB

from apps.databases.tests.conftest import Tdb


def library(endpoint: str, project_id: str, key: str, permissions=None):
    """authors -1:1- profiles (two-way, cascade), authors -1:n- books (two-way, restrict),
    books -n:1- publishers (one-way, setNull), books -n:m- tags (two-way, setNull)."""
    t = TablesDB(Client().set_endpoint(endpoint).set_project(project_id).set_key(key))
    d = t.create("unique()", "Library").id
    for name, col in (("authors", "name"), ("books", "title"), ("profiles", "bio"), ("tags", "label"),
                      ("publishers", "name")):
        t.create_table(d, name, name, permissions=permissions, row_security=True)
        t.create_varchar_column(d, name, col, 64, False)
    t.create_relationship_column(d, "authors", "profiles", RelationshipType.ONETOONE, two_way=True, key="profile",
                                 two_way_key="author", on_delete=RelationMutate.CASCADE)
    t.create_relationship_column(d, "authors", "books", RelationshipType.ONETOMANY, two_way=True, key="books",
                                 two_way_key="author", on_delete=RelationMutate.RESTRICT)
    t.create_relationship_column(d, "books", "publishers", RelationshipType.MANYTOONE, key="publisher",
                                 on_delete=RelationMutate.SETNULL)
    t.create_relationship_column(d, "books", "tags", RelationshipType.MANYTOMANY, two_way=True, key="tags",
                                 two_way_key="books", on_delete=RelationMutate.SETNULL)
    return t, d


def ids(rows) -> list[str]:
    return sorted(r.id for r in rows)


def test_relationships_with_sdk(server, project):
    t, d = library(server.endpoint, project.id, project.key)
    column = t.get_column(d, "authors", "books")
    assert (column.type, column.relatedtable, column.relationtype, column.side, column.twowaykey) == (
        "relationship", "books", "oneToMany", "parent", "author")
    assert t.get_column(d, "books", "author").side == "child"
    assert [c.key for c in t.list_columns(d, "publishers").columns] == ["name"]  # one-way: the child side is hidden
    t.create_row(d, "publishers", "p1", {"name": "Pub"})
    t.create_row(d, "tags", "t1", {"label": "one"})
    t.create_row(d, "books", "b0", {"title": "Old"})
    t.create_row(d, "authors", "ada", {"name": "Ada", "profile": {"$id": "pr1", "bio": "hi"}, "books": [
        {"$id": "b1", "title": "B1", "publisher": "p1", "tags": ["t1", {"$id": "t2", "label": "two"}]}, "b0"]})
    assert t.get_row(d, "authors", "ada").data == {"name": "Ada"}  # related rows load only when selected
    got = t.get_row(d, "authors", "ada", queries=[Query.select(["*", "books.*", "profile.bio", "books.tags.label"])])
    assert got.data["profile"]["bio"] == "hi" and got.data["profile"]["$tableId"] == "profiles"
    assert "author" not in got.data["profile"]
    books = {b["$id"]: b for b in got.data["books"]}
    assert set(books) == {"b0", "b1"} and books["b1"]["title"] == "B1"
    assert sorted(tag["label"] for tag in books["b1"]["tags"]) == ["one", "two"]
    assert set(books["b1"]["tags"][0]) == {"$id", "$sequence", "$tableId", "$databaseId", "$createdAt",
                                           "$updatedAt", "$permissions", "label"}
    page = t.list_rows(d, "authors", queries=[Query.select(["name", "books.title"])])
    assert page.rows[0].data["books"][0].keys() >= {"$id", "title"}
    assert ids(t.list_rows(d, "books", queries=[Query.equal("publisher", "p1")]).rows) == ["b1"]
    assert ids(t.list_rows(d, "books", queries=[Query.equal("author", "ada")]).rows) == ["b0", "b1"]
    assert ids(t.list_rows(d, "books", queries=[Query.equal("author.name", "Ada")]).rows) == ["b0", "b1"]
    assert ids(t.list_rows(d, "authors", queries=[Query.equal("books.title", "B1")]).rows) == ["ada"]
    assert ids(t.list_rows(d, "books", queries=[Query.equal("tags.label", "two")]).rows) == ["b1"]
    assert ids(t.list_rows(d, "tags", queries=[Query.starts_with("books.title", "B")]).rows) == ["t1", "t2"]
    assert ids(t.list_rows(d, "authors", queries=[Query.equal("books.tags.label", "one")]).rows) == ["ada"]
    assert ids(t.list_rows(d, "publishers", queries=[Query.is_not_null("name")]).rows) == ["p1"]
    for virtual in (Query.equal("tags", "t1"), Query.equal("books", "b1")):
        with pytest.raises(AppwriteException) as err:
            t.list_rows(d, "books" if "tags" in virtual else "authors", queries=[virtual])
        assert err.value.type == "general_query_invalid" and "virtual relationship" in err.value.message
    tag = t.get_row(d, "tags", "t1", queries=[Query.select(["*", "books.title"])])
    assert [b["title"] for b in tag.data["books"]] == ["B1"]

    # onDelete: restrict while books are linked; unlink them, then the delete cascades to the profile.
    with pytest.raises(AppwriteException) as err:
        t.delete_row(d, "authors", "ada")
    assert err.value.code == 403 and err.value.type == "row_delete_restricted"
    assert t.list_rows(d, "profiles").total == 1
    t.update_row(d, "authors", "ada", {"books": ["b1"]})
    assert t.get_row(d, "books", "b0", queries=[Query.select(["*", "author.name"])]).data["author"] is None
    t.update_row(d, "authors", "ada", {"books": []})
    t.delete_row(d, "authors", "ada")
    assert t.list_rows(d, "profiles").total == 0
    t.delete_row(d, "publishers", "p1")  # setNull: b1 keeps existing, its link is cleared
    assert t.get_row(d, "books", "b1", queries=[Query.select(["*", "publisher.*"])]).data["publisher"] is None
    t.delete_row(d, "tags", "t1")
    assert [x["$id"] for x in t.get_row(d, "books", "b1", queries=[Query.select(["tags.*"])]).data["tags"]] == ["t2"]

    # Column update (rename, onDelete) and delete (both sides go).
    updated = t.update_relationship_column(d, "books", "tags", on_delete=RelationMutate.CASCADE, new_key="labels")
    assert updated.key == "labels" and updated.ondelete == "cascade"
    assert t.get_column(d, "tags", "books").twowaykey == "labels"
    assert [x["$id"] for x in t.get_row(d, "books", "b1", queries=[Query.select(["labels.*"])]).data["labels"]] == ["t2"]
    t.delete_column(d, "books", "labels")
    assert "books" not in [c.key for c in t.list_columns(d, "tags").columns]
    with pytest.raises(AppwriteException) as err:
        t.create_rows(d, "books", [{"title": "bulk"}])
    assert err.value.code == 400 and err.value.type == "general_bad_request"


def test_every_kind_and_direction(api, sql):
    """Each kind, one-way and two-way: a write from each writable side links both ways."""
    a = Tdb(api).setup(columns=[("varchar", {"key": "n", "size": 8, "required": False})])
    for name in ("other", "third"):  # one many-to-many per pair of tables
        assert a.call("POST", f"{a.D}/tables", json={"tableId": name, "name": "B", "columns": [
            {"key": "n", "type": "varchar", "size": 8, "required": False}]}).status_code == 201
    for kind, many_here, many_there in (("oneToOne", False, False), ("oneToMany", True, False),
                                        ("manyToOne", False, True), ("manyToMany", True, True)):
        for two_way in (False, True):
            code = "".join(ch for ch in kind if ch.isupper() or ch == "o")[:4]
            key, back = f"k{kind}{int(two_way)}", f"b{code}{int(two_way)}"
            b_table = "third" if kind == "manyToMany" and two_way else "other"
            B = f"{a.D}/tables/{b_table}"
            r = a.call("POST", f"{a.T}/columns/relationship", json={
                "relatedTableId": b_table, "type": kind, "twoWay": two_way, "key": key, "twoWayKey": back})
            assert r.status_code == 202, r.text
            assert r.json()["twoWay"] is two_way and r.json()["side"] == "parent"
            rid = f"x{key}"
            assert a.call("POST", f"{B}/rows", json={"rowId": rid, "data": {"n": "b"}}).status_code == 201
            value = [rid] if many_here else rid
            assert a.call("POST", f"{a.R}", json={"rowId": f"a{key}", "data": {"n": "a", key: value}}).status_code == 201
            got = a.call("GET", f"{a.R}/a{key}", params={"queries[0]": json.dumps({"method": "select", "values": [
                f"{key}.*"]})}).json()[key]
            assert (got[0] if many_here else got)["$id"] == rid, (kind, two_way, got)
            back_get = a.call("GET", f"{B}/rows/{rid}", params={"queries[0]": json.dumps(
                {"method": "select", "values": ["*", f"{back}.*"]})})
            if two_way:
                other = back_get.json()[back]
                assert (other[0] if many_there else other)["$id"] == f"a{key}", (kind, other)
                # write from the other side: link a second row
                value = [f"a{key}", {"$id": f"n{key}", "n": "new"}] if many_there else {"$id": f"n{key}", "n": "new"}
                r = a.call("PATCH", f"{B}/rows/{rid}", json={"data": {back: value}})
                assert r.status_code == 200, (kind, r.text)
            else:
                assert back_get.status_code == 400  # the hidden side cannot be selected
                r = a.call("PATCH", f"{B}/rows/{rid}", json={"data": {back: None}})
                assert r.status_code == 400 and r.json()["type"] == "row_invalid_structure", r.text


def _rel(t, **kw):
    body = {"relatedTableId": "tB", "type": "oneToMany", "twoWay": True, "key": "kids", "twoWayKey": "parent", **kw}
    return t.call("POST", f"{t.T}/columns/relationship", json=body)


# (name, extra body, status, error type)
CREATE_CASES = [
    ("bad type", {"type": "oneToFew"}, 400, "general_argument_invalid"),
    ("bad onDelete", {"onDelete": "explode"}, 400, "general_argument_invalid"),
    ("missing related table", {"relatedTableId": "nope"}, 404, "table_not_found"),
    ("bad key", {"key": "-bad"}, 400, "general_argument_invalid"),
    ("bad twoWayKey", {"twoWayKey": "a" * 40}, 400, "general_argument_invalid"),
    ("key taken", {"key": "title"}, 409, "column_already_exists"),
    ("twoWayKey taken", {"twoWayKey": "title"}, 409, "column_already_exists"),
    ("self with one key", {"relatedTableId": "T", "key": "same", "twoWayKey": "same"}, 409, "column_already_exists"),
    ("missing type", {"type": None}, 400, "general_argument_invalid"),
]


@pytest.fixture
def pair(api):
    t = Tdb(api).setup(columns=[("varchar", {"key": "title", "size": 32, "required": False})])
    r = t.call("POST", f"{t.D}/tables", json={"tableId": "tB", "name": "B", "columns": [
        {"key": "title", "type": "varchar", "size": 32, "required": False}]})
    assert r.status_code == 201
    return t


@pytest.mark.parametrize("name,extra,status,etype", CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_bad_relationship_definitions(pair, name, extra, status, etype):
    extra = {k: (pair.table if v == "T" else v) for k, v in extra.items()}
    body_extra = {k: v for k, v in extra.items() if v is not None}
    if extra.get("type", "") is None:
        r = pair.call("POST", f"{pair.T}/columns/relationship", json={"relatedTableId": "tB"})
    else:
        r = _rel(pair, **body_extra)
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    cols = pair.call("GET", f"{pair.T}/columns").json()["columns"]
    assert [c["key"] for c in cols] == ["title"]  # nothing created
    assert [c["key"] for c in pair.call("GET", f"{pair.D}/tables/tB/columns").json()["columns"]] == ["title"]


def test_second_many_to_many_and_limits(pair):
    assert _rel(pair, type="manyToMany", key="m1", twoWayKey="m1b").status_code == 202
    r = _rel(pair, type="manyToMany", key="m2", twoWayKey="m2b")
    assert r.status_code == 409 and r.json()["type"] == "column_already_exists"
    assert _rel(pair, type="oneToOne", key="o1", twoWayKey="o1b").status_code == 202
    r = pair.call("PATCH", f"{pair.T}/columns/o1/relationship", json={"onDelete": "boom"})
    assert r.status_code == 400 and r.json()["type"] == "general_argument_invalid"
    r = pair.call("PATCH", f"{pair.T}/columns/title/relationship", json={"onDelete": "cascade"})
    assert r.status_code == 400 and r.json()["type"] == "column_type_invalid"
    r = pair.call("PATCH", f"{pair.T}/columns/o1/relationship", json={"newKey": "title"})
    assert r.status_code == 409


# (name, data, status, error type)
VALUE_CASES = [
    ("list for a single link", {"one": ["b1"]}, 400, "relationship_value_invalid"),
    ("single for a list", {"many": "b1"}, 400, "relationship_value_invalid"),
    ("number", {"one": 5}, 400, "relationship_value_invalid"),
    ("unknown id", {"one": "missing"}, 400, "relationship_value_invalid"),
    ("bad id", {"one": "-x"}, 400, "relationship_value_invalid"),
    ("bad nested row", {"one": {"title": 5}}, 400, "row_invalid_structure"),
    ("nested too deep", {"many": [{"back": {"many": [{"title": "x"}]}}]}, 400, "relationship_value_invalid"),
    ("hidden side", {"oneb": "b1"}, 400, "row_invalid_structure"),
    ("linked twice one-to-one", {"one": "taken"}, 409, "row_already_exists"),
]


@pytest.mark.parametrize("name,data,status,etype", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_bad_relationship_values(pair, sql, name, data, status, etype):
    assert _rel(pair, type="oneToOne", twoWay=False, key="one", twoWayKey="oneb").status_code == 202
    assert _rel(pair, type="oneToMany", key="many", twoWayKey="back").status_code == 202
    for rid in ("b1", "taken"):
        assert pair.call("POST", f"{pair.D}/tables/tB/rows", json={"rowId": rid, "data": {"title": rid}}).status_code == 201
    assert pair.add({"title": "first", "one": "taken"}).status_code == 201
    before = sql("SELECT COUNT(*) FROM databases_row")[0][0]
    r = pair.add({"title": "x", **data})
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert sql("SELECT COUNT(*) FROM databases_row")[0][0] == before  # nothing stored, nested rows included


def test_permissions_on_related_rows(api, sql):
    """A user sees only related rows it may read, cannot link rows it cannot read, cannot nest
    rows into a table it may not create in, and a cascade into rows it may not delete rolls the
    whole delete back."""
    (_, ta), (_, tb) = api.signup(), api.signup()
    api.http.cookies.clear()
    perms = ['create("users")', 'read("users")', 'update("users")', 'delete("users")']
    t = Tdb(api).setup(permissions=perms, security=True, columns=[("varchar", {"key": "n", "size": 16, "required": False})])
    assert t.call("POST", f"{t.D}/tables", json={"tableId": "notes", "name": "N", "permissions": ['create("users")'],
                                                  "rowSecurity": True, "columns": [
        {"key": "n", "type": "varchar", "size": 16, "required": False}]}).status_code == 201
    assert _rel(t, relatedTableId="notes", type="oneToMany", key="notes", twoWayKey="owner",
                onDelete="cascade").status_code == 202
    N = f"{t.D}/tables/notes/rows"
    mine = t.call("POST", N, json={"rowId": "mine", "data": {"n": "alice"}}, key=False, session=ta)
    theirs = t.call("POST", N, json={"rowId": "theirs", "data": {"n": "bob"}}, key=False, session=tb)
    assert mine.status_code == theirs.status_code == 201
    r = t.call("POST", t.R, json={"rowId": "a", "data": {"n": "x", "notes": ["mine", "theirs"]}}, key=False, session=ta)
    assert r.status_code == 400 and r.json()["type"] == "relationship_value_invalid"  # cannot read "theirs"
    r = t.call("POST", t.R, json={"rowId": "a", "data": {"n": "x", "notes": ["mine"]}}, key=False, session=ta)
    assert r.status_code == 201, r.text
    # The key links bob's note too; alice then sees only her own.
    assert t.call("PATCH", f"{t.R}/a", json={"data": {"notes": ["mine", "theirs"]}}).status_code == 200
    sel = {"queries[0]": json.dumps({"method": "select", "values": ["*", "notes.*"]})}
    assert [x["$id"] for x in t.call("GET", f"{t.R}/a", params=sel, key=False, session=ta).json()["notes"]] == ["mine"]
    assert len(t.call("GET", f"{t.R}/a", params=sel).json()["notes"]) == 2
    before = sql("SELECT COUNT(*) FROM databases_row")[0][0]
    r = t.call("DELETE", f"{t.R}/a", key=False, session=ta)  # would cascade into bob's note
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    assert sql("SELECT COUNT(*) FROM databases_row")[0][0] == before
    r = t.call("POST", t.R, json={"rowId": "b", "data": {"n": "x", "notes": [{"n": "nested"}]}}, key=False, session=tb)
    assert r.status_code == 201, r.text  # users may create notes
    assert t.call("DELETE", f"{t.R}/b", key=False, session=tb).status_code == 204
    assert sql("SELECT COUNT(*) FROM databases_row")[0][0] == before  # b and its nested note


def test_legacy_clients_before_18_get_related_documents(api):
    t = Tdb(api, prefix="/databases", tables="collections", rows="documents", columns="attributes").setup(
        columns=[("varchar", {"key": "n", "size": 16, "required": False})])
    assert t.call("POST", f"{t.D}/collections", json={"collectionId": "c2", "name": "C", "attributes": [
        {"key": "n", "type": "varchar", "size": 16, "required": False}]}).status_code == 201
    r = t.call("POST", f"{t.T}/attributes/relationship", json={"relatedCollectionId": "c2", "type": "manyToOne",
                                                              "key": "ref"})
    assert r.status_code == 202 and r.json()["relatedCollection"] == "c2"
    assert t.call("POST", t.R, json={"documentId": "d1", "data": {"n": "x", "ref": {"$id": "r1", "n": "y"}}}).status_code == 201
    assert "ref" not in t.call("GET", f"{t.R}/d1").json()
    old = t.call("GET", f"{t.R}/d1", headers={"X-Appwrite-Response-Format": "1.7.0"}).json()
    assert old["ref"]["$id"] == "r1" and old["ref"]["$collectionId"] == "c2"
    listed = t.call("GET", t.R, headers={"X-Appwrite-Response-Format": "1.7.0"}).json()["documents"]
    assert listed[0]["ref"]["n"] == "y"


def test_transaction_with_nested_rows(api, sql):
    t = Tdb(api).setup(columns=[("varchar", {"key": "n", "size": 16, "required": False})])
    assert t.call("POST", f"{t.D}/tables", json={"tableId": "tB", "name": "B", "columns": [
        {"key": "n", "type": "varchar", "size": 16, "required": False}]}).status_code == 201
    assert _rel(t, type="oneToMany", key="kids", twoWayKey="parent", onDelete="cascade").status_code == 202
    tid = t.call("POST", "/tablesdb/transactions", json={}).json()["$id"]
    r = t.call("POST", t.R, json={"rowId": "p", "data": {"n": "p", "kids": [{"$id": "k1", "n": "k"}]},
                                  "transactionId": tid})
    assert r.status_code == 201, r.text
    r = t.call("POST", t.R, json={"rowId": "q", "data": {"n": "q", "kids": 5}, "transactionId": tid})
    assert r.status_code == 400 and r.json()["type"] == "relationship_value_invalid"
    assert t.call("DELETE", f"{t.R}/p", json={"transactionId": tid}).status_code == 204
    assert t.call("POST", t.R, json={"rowId": "p2", "data": {"n": "p2", "kids": [{"$id": "k2"}]},
                                     "transactionId": tid}).status_code == 201
    r = t.call("PATCH", f"/tablesdb/transactions/{tid}", json={"commit": True})
    assert r.status_code == 200, r.text
    rows = sql("SELECT r.uid FROM databases_row r JOIN databases_table t ON t.id = r.table_id WHERE t.database_id = "
               "(SELECT id FROM databases_database WHERE uid = %s) ORDER BY r.uid", (t.db,))
    assert [x[0] for x in rows] == ["k2", "p2"]  # p and its cascaded kid k1 are gone
    r = t.call("POST", t.R, json={"rows": [{"n": "bulk"}], "transactionId": t.call(
        "POST", "/tablesdb/transactions", json={}).json()["$id"]})
    assert r.status_code == 400 and r.json()["type"] == "general_bad_request"


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_web_sdk_relationships(request, kind, project):
    """The web SDK 27 (Node) as a user: nested create, select loading, a dotted filter, restrict."""
    from conftest import Api
    from tests.websdk import run_node

    server = request.getfixturevalue(f"{kind}_server")
    _, session = Api(server, project).signup()
    _, d = library(server.endpoint, project.id, project.key,
                   permissions=['create("users")', 'read("users")', 'update("users")', 'delete("users")'])
    proc = run_node("relationships.mjs", server.endpoint, project.id, session, d)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"plainKeys": ["name"], "profile": "compilers",
                   "books": [["web-b1", "COBOL", ["langs"]], ["web-b2", "Nanos", []]],
                   "viaAuthor": ["web-b1", "web-b2"], "restricted": "403 row_delete_restricted",
                   "badValue": "400 relationship_value_invalid"}
