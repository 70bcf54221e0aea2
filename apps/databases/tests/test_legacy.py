"""The legacy Databases API: a second view of the same data with its own names and errors."""

from __future__ import annotations

import json

import pytest

from apps.databases.tests.conftest import Tdb


@pytest.fixture
def legacy(api) -> Tdb:
    return Tdb(api, prefix="/databases", tables="collections", rows="documents", columns="attributes").setup(
        columns=[("varchar", {"key": "title", "size": 32, "required": True}),
                 ("integer", {"key": "n", "required": False})],
        indexes=[{"key": "by_n", "type": "unique", "attributes": ["n"]}])


CASES = [
    ("unknown document", "GET", "/documents/nope", None, 404, "document_not_found"),
    ("unknown collection", "GET", "DB/collections/nope", None, 404, "collection_not_found"),
    ("unknown attribute", "GET", "/attributes/nope", None, 404, "attribute_not_found"),
    ("duplicate attribute", "POST", "/attributes/integer", {"key": "n", "required": False}, 409,
     "attribute_already_exists"),
    ("duplicate collection", "POST", "DB/collections", {"collectionId": "SELF", "name": "x"}, 409,
     "collection_already_exists"),
    ("invalid structure", "POST", "/documents", {"documentId": "unique()", "data": {"n": 1}}, 400,
     "document_invalid_structure"),
    ("missing data", "POST", "/documents", {"documentId": "unique()", "data": {}}, 400, "document_missing_data"),
    ("tablesdb param names refused", "POST", "/documents", {"rowId": "unique()", "data": {"title": "x"}}, 400,
     "general_argument_invalid"),
    ("update wrong kind", "PATCH", "/attributes/boolean/n", {"required": False, "default": None}, 400,
     "attribute_type_invalid"),
]


@pytest.mark.parametrize("name,method,suffix,body,status,etype", CASES, ids=[c[0] for c in CASES])
def test_legacy_errors(legacy, name, method, suffix, body, status, etype):
    path = legacy.D + suffix[2:] if suffix.startswith("DB") else legacy.T + suffix
    if isinstance(body, dict) and body.get("collectionId") == "SELF":
        body["collectionId"] = legacy.table
    r = legacy.call(method, path, json=body) if body is not None else legacy.call(method, path)
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype


def test_legacy_models(legacy):
    db = legacy.call("GET", legacy.D).json()
    assert db["type"] == "legacy"
    coll = legacy.call("GET", legacy.T).json()
    assert coll["documentSecurity"] is False and "rowSecurity" not in coll
    assert [a["key"] for a in coll["attributes"]] == ["title", "n"] and "columns" not in coll
    assert coll["indexes"][0]["attributes"] == ["n"] and coll["indexes"][0]["status"] == "available"
    r = legacy.add({"title": "doc", "n": 1}, row_id="d1")
    assert r.status_code == 201, r.text
    doc = r.json()
    assert doc["$collectionId"] == legacy.table and "$tableId" not in doc and doc["$sequence"].isdigit()
    r = legacy.add({"title": "dup", "n": 1})
    assert r.status_code == 409 and r.json()["type"] == "document_already_exists"
    listed = legacy.call("GET", legacy.R, params={"queries[0]": json.dumps({"method": "equal", "attribute": "n",
                                                                            "values": [1]})}).json()
    assert listed["total"] == 1 and listed["documents"][0]["$id"] == "d1"


def test_same_data_through_both_views(legacy):
    legacy.add({"title": "shared", "n": 5}, row_id="s1")
    tables_path = f"/tablesdb/{legacy.db}/tables/{legacy.table}"
    table = legacy.call("GET", tables_path).json()
    assert table["$id"] == legacy.table and [c["key"] for c in table["columns"]] == ["title", "n"]
    row = legacy.call("GET", f"{tables_path}/rows/s1").json()
    assert row["title"] == "shared" and row["$tableId"] == legacy.table
    r = legacy.call("GET", f"{tables_path}/rows/nope")
    assert r.json()["type"] == "row_not_found"
