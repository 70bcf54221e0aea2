"""Table-driven cases for the row routes: create/get/list/update/upsert/delete and bad input.
Every rejected write must leave the row count unchanged."""

from __future__ import annotations

import pytest

GOOD = {"title": "ok"}

# (name, data, permissions, status, error type)
CREATE_CASES = [
    ("minimal", {"title": "a"}, None, 201, None),
    ("all types", {"title": "a", "note": "n", "body": "long text", "count": 5, "big": 2**60, "score": 1.5,
                   "done": True, "due": "2024-05-06T07:08:09.123+02:00", "email": "a@b.co",
                   "site": "https://example.com/x", "addr": "10.0.0.1", "color": "red", "tags": ["x", "y"]}, None,
     201, None),
    ("ipv6", {"title": "a", "addr": "::1"}, None, 201, None),
    ("int as float score", {"title": "a", "score": 2}, None, 201, None),
    ("explicit null optional", {"title": "a", "count": None}, None, 201, None),
    ("empty data", {}, None, 400, "row_missing_data"),
    ("missing required", {"count": 1}, None, 400, "row_invalid_structure"),
    ("required null", {"title": None}, None, 400, "row_invalid_structure"),
    ("unknown key", {"title": "a", "nope": 1}, None, 400, "row_invalid_structure"),
    ("string too long", {"title": "x" * 65}, None, 400, "row_invalid_structure"),
    ("int wrong type", {"title": "a", "count": "5"}, None, 400, "row_invalid_structure"),
    ("int is float", {"title": "a", "count": 1.5}, None, 400, "row_invalid_structure"),
    ("int bool", {"title": "a", "count": True}, None, 400, "row_invalid_structure"),
    ("int above max", {"title": "a", "count": 1001}, None, 400, "row_invalid_structure"),
    ("int below min", {"title": "a", "count": -1}, None, 400, "row_invalid_structure"),
    ("bigint overflow", {"title": "a", "big": 2**64}, None, 400, "row_invalid_structure"),
    ("float above max", {"title": "a", "score": 10.5}, None, 400, "row_invalid_structure"),
    ("bool as string", {"title": "a", "done": "true"}, None, 400, "row_invalid_structure"),
    ("bad datetime", {"title": "a", "due": "yesterday"}, None, 400, "row_invalid_structure"),
    ("bad email", {"title": "a", "email": "not-an-email"}, None, 400, "row_invalid_structure"),
    ("bad url", {"title": "a", "site": "notaurl"}, None, 400, "row_invalid_structure"),
    ("bad ip", {"title": "a", "addr": "999.1.1.1"}, None, 400, "row_invalid_structure"),
    ("bad enum", {"title": "a", "color": "pink"}, None, 400, "row_invalid_structure"),
    ("array expected", {"title": "a", "tags": "x"}, None, 400, "row_invalid_structure"),
    ("array item too long", {"title": "a", "tags": ["x" * 17]}, None, 400, "row_invalid_structure"),
    ("array null item", {"title": "a", "tags": [None]}, None, 400, "row_invalid_structure"),
    ("scalar given array", {"title": ["a"]}, None, 400, "row_invalid_structure"),
    ("NUL in string", {"title": "a\x00b"}, None, 400, "row_invalid_structure"),
    ("NUL in array item", {"title": "a", "tags": ["\x00"]}, None, 400, "row_invalid_structure"),
    ("datetime beyond year 1 in UTC", {"title": "a", "due": "0001-01-01T00:00:00+14:00"}, None, 400,
     "row_invalid_structure"),
    ("bad permission string", GOOD, ["read(any)"], 400, "general_argument_invalid"),
    ("create is not an item permission", GOOD, ['create("any")'], 400, "general_argument_invalid"),
    ("permissions ok", GOOD, ['read("any")', 'write("any")'], 201, None),
]


@pytest.mark.parametrize("name,data,permissions,status,etype", CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_create_row(tdb, sql, name, data, permissions, status, etype):
    before = tdb.count(sql)
    r = tdb.add(data, permissions=permissions)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        assert tdb.count(sql) == before
    else:
        body = r.json()
        assert isinstance(body["$sequence"], str) and body["$tableId"] == tdb.table
        assert body["$databaseId"] == tdb.db and body["note"] == data.get("note", "none")
        assert tdb.count(sql) == before + 1


# (name, method, path suffix, kwargs, status, error type)
BAD_REQUESTS = [
    ("malformed json", "POST", "", {"data": b'{"rowId": "x", "data": {', "headers": {"Content-Type": "application/json"}},
     400, "general_bad_request"),
    ("missing rowId", "POST", "", {"json": {"data": GOOD}}, 400, "general_argument_invalid"),
    ("missing data", "POST", "", {"json": {"rowId": "unique()"}}, 400, "general_argument_invalid"),
    ("data not object", "POST", "", {"json": {"rowId": "unique()", "data": [1]}}, 400, "general_argument_invalid"),
    ("bad row id", "POST", "", {"json": {"rowId": "-bad", "data": GOOD}}, 400, "general_argument_invalid"),
    ("row id too long", "POST", "", {"json": {"rowId": "a" * 37, "data": GOOD}}, 400, "general_argument_invalid"),
    ("2 MB row", "POST", "", {"json": {"rowId": "unique()", "data": {"title": "a", "manual": "x" * 2_000_000}}}, 400,
     "row_invalid_structure"),
    ("unknown transaction", "POST", "", {"json": {"rowId": "unique()", "data": GOOD, "transactionId": "t1"}}, 404,
     "transaction_not_found"),
    ("unknown row", "GET", "/nope", {}, 404, "row_not_found"),
    ("update unknown row", "PATCH", "/nope", {"json": {"data": GOOD}}, 404, "row_not_found"),
    ("delete unknown row", "DELETE", "/nope", {}, 404, "row_not_found"),
    ("update without payload", "PATCH", "/nope", {"json": {}}, 400, "row_missing_payload"),
    ("missing auth (no project)", "GET", "", {"project": False}, 400, "project_id_missing"),
]


@pytest.mark.parametrize("name,method,suffix,kwargs,status,etype", BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS])
def test_bad_row_requests(tdb, sql, name, method, suffix, kwargs, status, etype):
    r = tdb.call(method, tdb.R + suffix, **kwargs)
    assert r.status_code == status, r.text[:300]
    assert r.json()["type"] == etype
    assert tdb.count(sql) == 0


def test_duplicate_row_id(tdb, sql):
    assert tdb.add(GOOD, row_id="same").status_code == 201
    r = tdb.add(GOOD, row_id="same")
    assert r.status_code == 409 and r.json()["type"] == "row_already_exists"
    assert tdb.count(sql) == 1


def test_row_update_upsert_delete(tdb, sql):
    row = tdb.add({"title": "a", "count": 1, "tags": ["x"]}, row_id="r1").json()
    r = tdb.call("PATCH", f"{tdb.R}/r1", json={"data": {"count": 2, "tags": None}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["count"] == 2 and body["tags"] is None and body["title"] == "a"
    assert body["$sequence"] == row["$sequence"] and body["$createdAt"] == row["$createdAt"]
    r = tdb.call("PATCH", f"{tdb.R}/r1", json={"data": {"count": "x"}})
    assert r.status_code == 400 and r.json()["type"] == "row_invalid_structure"
    r = tdb.call("PATCH", f"{tdb.R}/r1", json={"permissions": ['read("any")']})
    assert r.json()["$permissions"] == ['read("any")'] and r.json()["count"] == 2
    r = tdb.call("PUT", f"{tdb.R}/r2", json={"data": {"title": "new"}})
    assert r.status_code == 201, r.text
    r = tdb.call("PUT", f"{tdb.R}/r2", json={"data": {"count": 9}})
    assert r.status_code == 200 and r.json()["title"] == "new" and r.json()["count"] == 9
    r = tdb.call("PUT", f"{tdb.R}/r3", json={"data": {"count": 9}})
    assert r.status_code == 400 and r.json()["type"] == "row_invalid_structure"
    assert tdb.count(sql) == 2
    assert tdb.call("DELETE", f"{tdb.R}/r1").status_code == 204
    assert tdb.call("GET", f"{tdb.R}/r1").status_code == 404
    assert tdb.count(sql) == 1


def test_get_with_select(tdb):
    tdb.add({"title": "a", "count": 3}, row_id="s1")
    r = tdb.call("GET", f"{tdb.R}/s1", params={"queries[0]": '{"method":"select","values":["count"]}'})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["count"] == 3 and "title" not in body and body["$id"] == "s1"
    r = tdb.call("GET", f"{tdb.R}/s1", params={"queries[0]": '{"method":"select","values":["nope"]}'})
    assert r.status_code == 400 and r.json()["type"] == "general_query_invalid"
    r = tdb.call("GET", f"{tdb.R}/s1", params={"queries[0]": '{"method":"limit","values":[1]}'})
    assert r.status_code == 400


def test_bulk_create_answers_what_is_stored(tdb):
    """The bulk answer (and its realtime event) is the row as stored, as a later GET reads it:
    jsonb normalises numbers (-0.0 is stored as 0)."""
    import math

    r = tdb.call("POST", tdb.R, json={"rows": [{"$id": "z1", "title": "a", "score": -0.0}]})
    assert r.status_code == 201, r.text
    created = r.json()["rows"][0]["score"]
    got = tdb.call("GET", f"{tdb.R}/z1").json()["score"]
    assert created == got and math.copysign(1, created) == math.copysign(1, got)


def test_bulk_create_update_delete(tdb, sql):
    r = tdb.call("POST", tdb.R, json={"rows": [{"$id": "b1", "title": "a", "count": 1},
                                               {"title": "b", "count": 2}, {"title": "c", "count": 3}]})
    assert r.status_code == 201, r.text
    assert r.json()["total"] == 3 and r.json()["rows"][0]["$id"] == "b1"
    r = tdb.call("POST", tdb.R, json={"rows": [{"title": "d"}, {"title": "e", "count": "bad"}]})
    assert r.status_code == 400 and tdb.count(sql) == 3
    r = tdb.call("PATCH", tdb.R, json={"data": {"done": True},
                                       "queries": ['{"method":"greaterThan","attribute":"count","values":[1]}']})
    assert r.status_code == 200, r.text
    assert r.json()["total"] == 2 and all(row["done"] for row in r.json()["rows"])
    r = tdb.call("PUT", tdb.R, json={"rows": [{"$id": "b1", "count": 10}, {"$id": "b9", "title": "z"}]})
    assert r.status_code == 200, r.text
    assert [row["count"] for row in r.json()["rows"]] == [10, None]
    r = tdb.call("DELETE", tdb.R, json={"queries": ['{"method":"equal","attribute":"done","values":[true]}']})
    assert r.status_code == 200 and r.json()["total"] == 2
    assert tdb.count(sql) == 2


@pytest.mark.parametrize("rows,status,etype", [
    ([{"$id": "u1", "title": "ok"}, {"$id": "u2", "title": "x", "count": "bad"}], 400, "row_invalid_structure"),
    ([{"$id": "u1", "title": "ok"}, {"$id": "u2", "count": 1}], 400, "row_invalid_structure"),
    ([{"$id": "u1", "title": "ok"}, {"$id": "-bad", "title": "x"}], 400, "general_argument_invalid"),
    ([{"$id": "u1", "title": "ok"}, {"$id": "u2", "title": "x", "$permissions": ["read(any)"]}], 400,
     "general_argument_invalid"),
    ([{"$id": "u1", "title": "ok"}, 5], 400, "row_invalid_structure"),
], ids=["bad value", "missing required", "bad id", "bad permission", "not an object"])
def test_bulk_upsert_is_all_or_nothing(tdb, sql, rows, status, etype):
    """PUT rows[] used to upsert item by item: rows before the bad one stayed written."""
    tdb.add({"title": "keep", "count": 1}, row_id="u0")
    r = tdb.call("PUT", tdb.R, json={"rows": [{"$id": "u0", "title": "changed"}, *rows]})
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert tdb.count(sql) == 1
    assert tdb.call("GET", f"{tdb.R}/u0").json()["title"] == "keep"


def test_increment_decrement_and_post_query(tdb):
    tdb.add({"title": "a", "count": 5}, row_id="c1")
    r = tdb.call("PATCH", f"{tdb.R}/c1/count/increment", json={"value": 3})
    assert r.status_code == 200, r.text
    assert r.json()["count"] == 8
    assert tdb.call("PATCH", f"{tdb.R}/c1/count/decrement", json={}).json()["count"] == 7
    r = tdb.call("PATCH", f"{tdb.R}/c1/count/increment", json={"value": 5, "max": 10})
    assert r.status_code == 400 and r.json()["type"] == "row_invalid_structure"
    r = tdb.call("PATCH", f"{tdb.R}/c1/count/increment", json={"value": 2000})  # column max is 1000
    assert r.status_code == 400 and r.json()["type"] == "row_invalid_structure"
    assert tdb.call("PATCH", f"{tdb.R}/c1/title/increment", json={}).json()["type"] == "general_argument_invalid"
    assert tdb.call("PATCH", f"{tdb.R}/c1/nope/increment", json={}).json()["type"] == "column_not_found"
    assert tdb.call("PATCH", f"{tdb.R}/zz/count/increment", json={}).json()["type"] == "row_not_found"
    assert tdb.call("PATCH", f"{tdb.R}/c1/score/increment", json={"value": 0.5}).json()["score"] == 0.5
    r = tdb.call("POST", f"{tdb.R}/query", json={"queries": ['{"method":"equal","attribute":"count","values":[7]}']})
    assert r.status_code == 200 and [row["$id"] for row in r.json()["rows"]] == ["c1"]
