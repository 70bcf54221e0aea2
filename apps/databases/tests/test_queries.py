"""Queries on row lists: every operator, and/or, orders, cursors, select, and
the invalid ones (unknown columns, wrong types, malformed JSON, too many, too long, too deep)."""

from __future__ import annotations

import json

import pytest

from apps.databases.tests.conftest import Tdb

ROWS = {
    "r1": {"title": "apple pie", "count": 1, "score": 1.5, "done": True, "due": "2024-01-01T00:00:00Z",
           "tags": ["a", "b"], "color": "red"},
    "r2": {"title": "banana split", "count": 2, "score": -2.0, "done": False, "due": "2024-06-01T00:00:00Z",
           "tags": ["b"], "color": "green"},
    "r3": {"title": "cherry tart", "count": 3, "score": 0, "done": True, "tags": [], "color": "blue"},
    "r4": {"title": "apple crumble", "count": 4, "done": False},
    "r5": {"title": "date"},
    "r6": {"title": "elder", "count": 6, "score": 9.9},
}


@pytest.fixture(scope="module")
def qt(asgi_server, django_db_setup, django_db_blocker):
    from conftest import Api, make_project

    t = Tdb(Api(asgi_server, make_project(django_db_blocker))).setup(indexes=[
        {"key": "ft", "type": "fulltext", "columns": ["title"]},
        {"key": "by_count", "type": "key", "columns": ["count"]}])
    for rid, data in ROWS.items():
        assert t.add(data, row_id=rid).status_code == 201
    return t


def q(method, attribute=None, values=None):
    out = {"method": method}
    if attribute is not None:
        out["attribute"] = attribute
    if values is not None:
        out["values"] = values
    return out


def _list(t, queries, style="indexed", **extra):
    if style == "indexed":
        params = {f"queries[{i}]": json.dumps(x) for i, x in enumerate(queries)}
    else:
        params = {"queries[]": [json.dumps(x) for x in queries]}
    params.update(extra)
    return t.call("GET", t.R, params=params)


CASES = [
    ("equal", [q("equal", "title", ["date"])], ["r5"]),
    ("equal many", [q("equal", "count", [1, 2])], ["r1", "r2"]),
    ("notEqual skips null", [q("notEqual", "count", [1])], ["r2", "r3", "r4", "r6"]),
    ("lessThan", [q("lessThan", "count", [3])], ["r1", "r2"]),
    ("lessThanEqual", [q("lessThanEqual", "count", [3])], ["r1", "r2", "r3"]),
    ("greaterThan float", [q("greaterThan", "score", [0])], ["r1", "r6"]),
    ("greaterThanEqual float", [q("greaterThanEqual", "score", [0])], ["r1", "r3", "r6"]),
    ("between", [q("between", "count", [2, 4])], ["r2", "r3", "r4"]),
    ("isNull", [q("isNull", "score")], ["r4", "r5"]),
    ("isNotNull", [q("isNotNull", "due")], ["r1", "r2"]),
    ("startsWith", [q("startsWith", "title", ["apple"])], ["r1", "r4"]),
    ("endsWith", [q("endsWith", "title", ["tart"])], ["r3"]),
    ("contains string", [q("contains", "title", ["nan"])], ["r2"]),
    ("contains array", [q("contains", "tags", ["b"])], ["r1", "r2"]),
    ("search fulltext", [q("search", "title", ["apple"])], ["r1", "r4"]),
    ("boolean equal", [q("equal", "done", [True])], ["r1", "r3"]),
    ("enum equal", [q("equal", "color", ["green"])], ["r2"]),
    ("datetime greaterThan", [q("greaterThan", "due", ["2024-03-01T00:00:00.000+00:00"])], ["r2"]),
    ("$id", [q("equal", "$id", ["r3", "r4"])], ["r3", "r4"]),
    ("$createdAt", [q("lessThan", "$createdAt", ["2999-01-01T00:00:00.000+00:00"]), q("limit", values=[2])],
     ["r1", "r2"]),
    ("or", [q("or", values=[q("equal", "count", [1]), q("equal", "count", [6])])], ["r1", "r6"]),
    ("and", [q("and", values=[q("greaterThan", "count", [1]), q("lessThan", "count", [4])])], ["r2", "r3"]),
    ("nested", [q("or", values=[q("and", values=[q("equal", "done", [True]), q("greaterThan", "count", [2])]),
                                q("equal", "title", ["date"])])], ["r3", "r5"]),
    ("orderDesc limit", [q("orderDesc", "count"), q("limit", values=[2])], ["r6", "r4"]),
    ("orderAsc nulls first", [q("orderAsc", "score"), q("limit", values=[3])], ["r4", "r5", "r2"]),
    ("offset", [q("limit", values=[2]), q("offset", values=[4])], ["r5", "r6"]),
    ("cursorAfter", [q("cursorAfter", values=["r2"])], ["r3", "r4", "r5", "r6"]),
    ("cursorBefore", [q("cursorBefore", values=["r4"])], ["r1", "r2", "r3"]),
    ("cursor with desc order and nulls", [q("orderDesc", "count"), q("cursorAfter", values=["r4"])],
     ["r3", "r2", "r1", "r5"]),
    ("cursorBefore desc", [q("orderDesc", "count"), q("cursorBefore", values=["r1"]), q("limit", values=[2])],
     ["r3", "r2"]),
]


@pytest.mark.parametrize("style", ["indexed", "brackets"])
@pytest.mark.parametrize("name,queries,expected", CASES, ids=[c[0] for c in CASES])
def test_query(qt, name, queries, expected, style):
    r = _list(qt, queries, style)
    assert r.status_code == 200, r.text
    assert [row["$id"] for row in r.json()["rows"]] == expected


def test_total_ignores_paging_and_can_be_skipped(qt):
    r = _list(qt, [q("limit", values=[1]), q("offset", values=[1])])
    assert r.json()["total"] == 6 and len(r.json()["rows"]) == 1
    assert _list(qt, [], total="false").json()["total"] == 0
    assert _list(qt, [q("offset", values=[5])]).json()["total"] == 6  # short page: total inferred
    assert _list(qt, [q("offset", values=[10])]).json()["total"] == 6  # empty page: counted
    assert _list(qt, [q("cursorAfter", values=["r5"])]).json()["total"] == 6
    assert len(_list(qt, []).json()["rows"]) == 6


def test_select_in_list(qt):
    rows = _list(qt, [q("select", values=["title"]), q("limit", values=[1])]).json()["rows"]
    assert rows[0]["title"] == "apple pie" and "count" not in rows[0] and rows[0]["$sequence"]


BAD = [
    ("unknown column", [q("equal", "nope", [1])], "general_query_invalid"),
    ("wrong value type", [q("equal", "count", ["x"])], "general_query_invalid"),
    ("bool for string", [q("equal", "title", [True])], "general_query_invalid"),
    ("startsWith on integer", [q("startsWith", "count", ["1"])], "general_query_invalid"),
    ("search without fulltext index", [q("search", "note", ["x"])], "general_query_invalid"),
    ("lessThan on array", [q("lessThan", "tags", ["x"])], "general_query_invalid"),
    ("bad datetime value", [q("greaterThan", "due", ["soon"])], "general_query_invalid"),
    ("unknown method", [{"method": "teleport", "attribute": "title", "values": [1]}], "general_query_invalid"),
    ("limit too large", [q("limit", values=[5001])], "general_query_invalid"),
    ("negative offset", [q("offset", values=[-1])], "general_query_invalid"),
    ("unknown cursor", [q("cursorAfter", values=["ghost"])], "general_cursor_not_found"),
    ("two cursors", [q("cursorAfter", values=["r1"]), q("cursorBefore", values=["r2"])], "general_query_invalid"),
    ("too deep", [q("or", values=[q("and", values=[q("or", values=[q("and", values=[q("equal", "count", [1])])])])])],
     "general_query_invalid"),
    ("order unknown column", [q("orderAsc", "nope")], "general_query_invalid"),
    ("NUL in value", [q("equal", "title", ["a\x00"])], "general_query_invalid"),
    ("NUL in startsWith", [q("startsWith", "title", ["\x00"])], "general_query_invalid"),
    ("NUL in array contains", [q("contains", "tags", ["\x00"])], "general_query_invalid"),
    ("NUL in cursor", [q("cursorAfter", values=["r\x00"])], "general_query_invalid"),
    ("offset beyond bigint", [q("offset", values=[2**63])], "general_query_invalid"),
    ("datetime before year 1 in UTC", [q("greaterThan", "$createdAt", ["0001-01-01T00:00:00+14:00"])],
     "general_query_invalid"),
    ("datetime after year 9999 in UTC", [q("lessThan", "due", ["9999-12-31T23:59:59-14:00"])], "general_query_invalid"),
]


@pytest.mark.parametrize("name,queries,etype", BAD, ids=[b[0] for b in BAD])
def test_bad_query(qt, name, queries, etype):
    r = _list(qt, queries)
    assert r.status_code == 400, r.text
    assert r.json()["type"] == etype


@pytest.mark.parametrize("raw", ["{not json", '"just a string"', "[1,2]", "x" * 5000,
                                 json.dumps({"method": "equal", "attribute": "title", "values": ["x" * 5000]})],
                         ids=["malformed", "string", "array", "5 KB garbage", "5 KB query"])
def test_malformed_queries(qt, raw):
    r = qt.call("GET", qt.R, params={"queries[0]": raw})
    assert r.status_code == 400 and r.json()["type"] == "general_query_invalid"


def test_101_queries(qt):
    r = _list(qt, [q("equal", "count", [1])] * 101)
    assert r.status_code == 400 and r.json()["type"] == "general_query_invalid"
    assert _list(qt, [q("equal", "count", [1])] * 100).status_code == 200


def test_queries_in_admin_lists(qt):
    r = qt.call("GET", f"{qt.D}/tables", params={"queries[0]": json.dumps(q("equal", "name", ["T"]))})
    assert r.status_code == 200 and r.json()["total"] == 1
    r = qt.call("GET", f"{qt.D}/tables", params={"queries[0]": json.dumps(q("cursorAfter", values=["ghost"]))})
    assert r.status_code == 400 and r.json()["type"] == "general_cursor_not_found"
