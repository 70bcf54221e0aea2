"""Transactions over HTTP: staging through every row write route, reads that see staged writes,
commit and rollback, conflicts, expiry, limits, ownership and bad input (each rejected request
leaves rows and the transaction unchanged)."""

from __future__ import annotations

import json
import threading

import pytest

from apps.databases.tests.conftest import Tdb

COLUMNS = [
    ("varchar", {"key": "title", "size": 64, "required": True}),
    ("integer", {"key": "count", "required": False, "min": 0, "max": 1000}),
    ("varchar", {"key": "code", "size": 16, "required": False}),
]
X = "/tablesdb/transactions"


def q(method, attribute=None, values=None):
    out = {"method": method}
    if attribute:
        out["attribute"] = attribute
    if values is not None:
        out["values"] = values
    return json.dumps(out)


@pytest.fixture
def t(api):
    return Tdb(api).setup(permissions=['read("users")', 'create("users")', 'update("users")', 'delete("users")'],
                          columns=COLUMNS, indexes=[{"key": "u_code", "type": "unique", "columns": ["code"]}])


def begin(t, **kw) -> str:
    r = t.call("POST", X, json={"ttl": 300}, **kw)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["status"] == "pending" and body["operations"] == 0 and body["expiresAt"] > body["$createdAt"]
    return body["$id"]


def txn(t, tid, **kw) -> dict:
    r = t.call("GET", f"{X}/{tid}", **kw)
    assert r.status_code == 200, r.text
    return r.json()


def titles(t, **kw) -> list[str]:
    r = t.call("GET", t.R, **kw)
    assert r.status_code == 200, r.text
    return sorted(row["title"] for row in r.json()["rows"])


def test_list_route_is_not_a_database(t):
    tid = begin(t)
    r = t.call("GET", X)
    assert r.status_code == 200, r.text
    assert tid in [x["$id"] for x in r.json()["transactions"]]
    r = t.call("GET", "/databases/transactions")
    assert r.status_code == 200 and r.json()["total"] >= 1
    r = t.call("GET", X, params={"queries[0]": q("equal", "status", ["pending"]), "queries[1]": q("limit", values=[1])})
    assert r.status_code == 200 and len(r.json()["transactions"]) == 1
    r = t.call("GET", X, params={"queries[0]": q("equal", "nope", ["x"])})
    assert r.status_code == 400 and r.json()["type"] == "general_query_invalid"


def test_stage_read_commit(t, sql):
    assert t.add({"title": "keep", "count": 1}, row_id="k").status_code == 201
    assert t.add({"title": "gone"}, row_id="g").status_code == 201
    tid = begin(t)
    tx = {"transactionId": tid}
    r = t.call("POST", t.R, json={"rowId": "n1", "data": {"title": "new", "count": 3}, **tx})
    assert r.status_code == 201, r.text
    assert r.json() == {"$id": "n1", "$tableId": t.table, "$databaseId": t.db, "$permissions": [], "title": "new",
                        "count": 3}
    assert t.call("PATCH", f"{t.R}/k", json={"data": {"title": "kept"}, **tx}).status_code == 200
    assert t.call("PATCH", f"{t.R}/k/count/increment", json={"value": 5, **tx}).status_code == 200
    assert t.call("DELETE", f"{t.R}/g", json=tx).status_code == 204
    assert t.call("PATCH", f"{t.R}/n1", json={"data": {"count": 4}, **tx}).status_code == 200  # created earlier
    r = t.call("PUT", f"{t.R}/u1", json={"data": {"title": "upserted"}, **tx})
    assert r.status_code == 201, r.text
    assert txn(t, tid)["operations"] == 6
    # Nothing is written yet; reads with the transaction see the staged state.
    assert titles(t) == ["gone", "keep"] and t.count(sql) == 2
    assert titles(t, params=tx) == ["kept", "new", "upserted"]
    r = t.call("GET", f"{t.R}/k", params=tx)
    assert r.status_code == 200 and r.json()["count"] == 6
    assert t.call("GET", f"{t.R}/g", params=tx).json()["type"] == "row_not_found"
    assert t.call("GET", f"{t.R}/n1").json()["type"] == "row_not_found"
    r = t.call("PATCH", f"{X}/{tid}", json={"commit": True})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "committed" and r.json()["operations"] == 6
    assert titles(t) == ["kept", "new", "upserted"]
    assert t.call("GET", f"{t.R}/n1").json()["count"] == 4
    assert t.call("GET", f"{t.R}/k").json()["count"] == 6
    # A finished transaction takes nothing more.
    r = t.call("POST", t.R, json={"rowId": "late", "data": {"title": "late"}, **tx})
    assert r.status_code == 400 and r.json()["type"] == "transaction_not_ready"
    r = t.call("PATCH", f"{X}/{tid}", json={"commit": True})
    assert r.status_code == 400 and r.json()["type"] == "transaction_not_ready"
    assert t.call("DELETE", f"{X}/{tid}").status_code == 204
    assert t.call("GET", f"{X}/{tid}").json()["type"] == "transaction_not_found"


def test_operations_route_and_rollback(t, sql):
    tid = begin(t)
    ops = [
        {"action": "create", "databaseId": t.db, "tableId": t.table, "rowId": "a", "data": {"title": "A"}},
        {"action": "increment", "databaseId": t.db, "tableId": t.table, "rowId": "a", "data": {"column": "count", "value": 2}},
        {"action": "bulkCreate", "databaseId": t.db, "tableId": t.table,
         "data": [{"$id": "b", "title": "B"}, {"title": "C"}]},
    ]
    r = t.call("POST", f"{X}/{tid}/operations", json={"operations": ops})
    assert r.status_code == 201, r.text
    assert r.json()["operations"] == 3
    assert titles(t, params={"transactionId": tid}) == ["A", "B", "C"]
    r = t.call("PATCH", f"{X}/{tid}", json={"rollback": True})
    assert r.status_code == 200 and r.json()["status"] == "failed"
    assert t.count(sql) == 0
    tid = begin(t)
    assert t.call("POST", f"{X}/{tid}/operations", json={"operations": ops}).status_code == 201
    more = [{"action": "bulkUpdate", "databaseId": t.db, "tableId": t.table,
             "data": {"queries": [q("equal", "title", ["B", "C"])], "data": {"count": 9}}},
            {"action": "bulkDelete", "databaseId": t.db, "tableId": t.table,
             "data": {"queries": [q("equal", "title", ["C"])]}}]
    assert t.call("POST", f"{X}/{tid}/operations", json={"operations": more}).status_code == 201
    assert t.call("PATCH", f"{X}/{tid}", json={"commit": True}).json()["status"] == "committed"
    rows = {r["$id"]: r for r in t.call("GET", t.R).json()["rows"]}
    assert set(rows) == {"a", "b"} and rows["a"]["count"] == 2 and rows["b"]["count"] == 9


def test_legacy_view(api, sql):
    t = Tdb(api, prefix="/databases", tables="collections", rows="documents", columns="attributes").setup(
        columns=COLUMNS)
    r = t.call("POST", "/databases/transactions", json={})
    assert r.status_code == 201
    tid = r.json()["$id"]
    ops = [{"action": "create", "databaseId": t.db, "collectionId": t.table, "documentId": "d1",
            "data": {"title": "doc"}},
           {"action": "increment", "databaseId": t.db, "collectionId": t.table, "documentId": "d1",
            "data": {"attribute": "count"}}]
    assert t.call("POST", f"/databases/transactions/{tid}/operations", json={"operations": ops}).status_code == 201
    r = t.call("POST", t.R, json={"documentId": "d2", "data": {"title": "two"}, "transactionId": tid})
    assert r.status_code == 201 and r.json()["$collectionId"] == t.table
    assert t.call("PATCH", f"/databases/transactions/{tid}", json={"commit": True}).status_code == 200
    docs = t.call("GET", t.R).json()["documents"]
    assert sorted((d["$id"], d["count"]) for d in docs) == [("d1", 1), ("d2", None)]


def test_conflict_with_a_later_write(t, sql):
    assert t.add({"title": "x", "count": 1}, row_id="r").status_code == 201
    tid = begin(t)
    assert t.call("POST", t.R, json={"rowId": "other", "data": {"title": "o"}, "transactionId": tid}).status_code == 201
    assert t.call("PATCH", f"{t.R}/r", json={"data": {"count": 2}, "transactionId": tid}).status_code == 200
    assert t.call("PATCH", f"{t.R}/r", json={"data": {"count": 7}}).status_code == 200  # a direct write meanwhile
    r = t.call("PATCH", f"{X}/{tid}", json={"commit": True})
    assert r.status_code == 409 and r.json()["type"] == "transaction_conflict"
    assert txn(t, tid)["status"] == "failed"
    assert t.count(sql) == 1 and t.call("GET", f"{t.R}/r").json()["count"] == 7  # nothing applied


def test_conflict_on_duplicate_id_and_unique_value(t, sql):
    tid = begin(t)
    assert t.call("POST", t.R, json={"rowId": "a", "data": {"title": "A"}, "transactionId": tid}).status_code == 201
    assert t.call("POST", t.R, json={"rowId": "dup", "data": {"title": "D"}, "transactionId": tid}).status_code == 201
    assert t.add({"title": "taken"}, row_id="dup").status_code == 201
    r = t.call("PATCH", f"{X}/{tid}", json={"commit": True})
    assert r.status_code == 409 and r.json()["type"] == "transaction_conflict"
    assert t.count(sql) == 1
    tid = begin(t)
    assert t.call("POST", t.R, json={"rowId": "b", "data": {"title": "B", "code": "c1"}, "transactionId": tid}).status_code == 201
    assert t.add({"title": "first", "code": "c1"}).status_code == 201
    r = t.call("PATCH", f"{X}/{tid}", json={"commit": True})
    assert r.status_code == 409 and r.json()["type"] == "transaction_conflict"
    assert t.count(sql) == 2


def test_concurrent_conflicting_commits(t, sql):
    for rid in ("p", "q"):
        assert t.add({"title": rid, "count": 0}, row_id=rid).status_code == 201
    first, second = begin(t), begin(t)
    for tid, order in ((first, ("p", "q")), (second, ("q", "p"))):
        for rid in order:
            r = t.call("PATCH", f"{t.R}/{rid}", json={"data": {"count": 1 if tid == first else 2}, "transactionId": tid})
            assert r.status_code == 200, r.text
    answers = {}

    def commit(tid):
        answers[tid] = t.call("PATCH", f"{X}/{tid}", json={"commit": True})

    threads = [threading.Thread(target=commit, args=(tid,)) for tid in (first, second)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    statuses = sorted(r.status_code for r in answers.values())
    assert statuses == [200, 409], [r.text for r in answers.values()]
    loser = next(r for r in answers.values() if r.status_code == 409)
    assert loser.json()["type"] == "transaction_conflict"
    winner = 1 if answers[first].status_code == 200 else 2
    counts = {r["$id"]: r["count"] for r in t.call("GET", t.R).json()["rows"]}
    assert counts == {"p": winner, "q": winner}  # all of one transaction, none of the other


def test_expiry_and_limits(t, sql):
    tid = begin(t)
    sql("UPDATE databases_transaction SET expires_at = now() - interval '1 second' WHERE uid = %s", (tid,))
    for method, path, body in (("POST", t.R, {"rowId": "x", "data": {"title": "x"}, "transactionId": tid}),
                               ("PATCH", f"{X}/{tid}", {"commit": True}),
                               ("PATCH", f"{X}/{tid}", {"rollback": True}),
                               ("POST", f"{X}/{tid}/operations", {"operations": [
                                   {"action": "delete", "databaseId": t.db, "tableId": t.table, "rowId": "x"}]})):
        r = t.call(method, path, json=body)
        assert r.status_code == 410 and r.json()["type"] == "transaction_expired", r.text
    tid = begin(t)
    ops = [{"action": "create", "databaseId": t.db, "tableId": t.table, "rowId": f"r{i}", "data": {"title": "x"}}
           for i in range(100)]
    assert t.call("POST", f"{X}/{tid}/operations", json={"operations": ops}).json()["operations"] == 100
    r = t.call("POST", t.R, json={"rowId": "one-more", "data": {"title": "x"}, "transactionId": tid})
    assert r.status_code == 400 and r.json()["type"] == "transaction_limit_exceeded"
    assert txn(t, tid)["operations"] == 100
    assert t.call("PATCH", f"{X}/{tid}", json={"commit": True}).status_code == 200
    assert t.count(sql) == 100
    for ttl in (59, 3601, "soon"):
        r = t.call("POST", X, json={"ttl": ttl})
        assert r.status_code == 400 and r.json()["type"] == "general_argument_invalid"


def test_ownership(t, sql):
    (alice, ta), (_, tb) = t.api.signup(), t.api.signup()
    t.api.http.cookies.clear()
    mine = begin(t, key=False, session=ta)
    assert txn(t, mine, key=False, session=ta)["$id"] == mine
    assert txn(t, mine)["$id"] == mine  # API keys see every transaction
    for who in ({"session": tb}, {}):
        r = t.call("GET", f"{X}/{mine}", key=False, **who)
        assert r.status_code == 404 and r.json()["type"] == "transaction_not_found"
        r = t.call("POST", t.R, json={"rowId": "x", "data": {"title": "x"}, "transactionId": mine}, key=False, **who)
        assert r.json()["type"] in ("transaction_not_found", "user_unauthorized"), r.text
    listed = t.call("GET", X, key=False, session=tb).json()
    assert mine not in [x["$id"] for x in listed["transactions"]]
    r = t.call("POST", t.R, json={"rowId": "a1", "data": {"title": "by alice"}, "transactionId": mine},
               key=False, session=ta)
    assert r.status_code == 201 and r.json()["$permissions"] == [
        f'{a}("user:{alice["$id"]}")' for a in ("read", "update", "delete")]
    r = t.call("POST", t.R, json={"rows": [{"title": "bulk"}], "transactionId": mine}, key=False, session=ta)
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    assert t.call("PATCH", f"{X}/{mine}", json={"commit": True}, key=False, session=ta).status_code == 200
    assert t.call("GET", f"{t.R}/a1").json()["$permissions"] == [
        f'{a}("user:{alice["$id"]}")' for a in ("read", "update", "delete")]


GOOD_OP = {"action": "create", "databaseId": "DB", "tableId": "T", "rowId": "r1", "data": {"title": "ok"}}

# (name, operations, status, error type)
OPERATION_CASES = [
    ("empty list", [], 400, "general_bad_request"),
    ("not a list", "create", 400, "general_argument_invalid"),
    ("not an object", ["x"], 400, "general_argument_invalid"),
    ("missing action", [{k: v for k, v in GOOD_OP.items() if k != "action"}], 400, "general_argument_invalid"),
    ("unknown action", [{**GOOD_OP, "action": "merge"}], 400, "general_argument_invalid"),
    ("missing table", [{k: v for k, v in GOOD_OP.items() if k != "tableId"}], 400, "general_argument_invalid"),
    ("legacy key in tablesdb", [{**GOOD_OP, "collectionId": "T"}], 400, "general_argument_invalid"),
    ("missing row id", [{k: v for k, v in GOOD_OP.items() if k != "rowId"}], 400, "general_argument_invalid"),
    ("empty row id", [{**GOOD_OP, "rowId": ""}], 400, "general_argument_invalid"),
    ("missing data", [{k: v for k, v in GOOD_OP.items() if k != "data"}], 400, "general_argument_invalid"),
    ("data not object", [{**GOOD_OP, "data": "x"}], 400, "general_argument_invalid"),
    ("bad row id", [{**GOOD_OP, "rowId": "-bad"}], 400, "general_argument_invalid"),
    ("unknown table", [{**GOOD_OP, "tableId": "nope"}], 404, "table_not_found"),
    ("unknown database", [{**GOOD_OP, "databaseId": "nope"}], 404, "database_not_found"),
    ("bad structure", [{**GOOD_OP, "data": {"title": 5}}], 400, "row_invalid_structure"),
    ("unknown column", [{**GOOD_OP, "data": {"title": "x", "nope": 1}}], 400, "row_invalid_structure"),
    ("update missing row", [{**GOOD_OP, "action": "update", "rowId": "missing"}], 404, "row_not_found"),
    ("delete missing row", [{"action": "delete", "databaseId": "DB", "tableId": "T", "rowId": "missing"}], 404,
     "row_not_found"),
    ("increment without column", [{**GOOD_OP, "action": "increment", "data": {"value": 1}}], 400,
     "general_argument_invalid"),
    ("increment text column", [GOOD_OP, {**GOOD_OP, "action": "increment", "data": {"column": "title"}}], 400,
     "general_argument_invalid"),
    ("increment value not numeric", [{**GOOD_OP, "action": "increment", "data": {"column": "count", "value": "1"}}],
     400, "general_argument_invalid"),
    ("bulk update without queries", [{**GOOD_OP, "action": "bulkUpdate", "data": {"data": {}}}], 400,
     "general_argument_invalid"),
    ("bulk update bad query", [{"action": "bulkUpdate", "databaseId": "DB", "tableId": "T",
                                "data": {"queries": [q("equal", "nope", ["x"])], "data": {"count": 1}}}], 400,
     "general_query_invalid"),
    ("bulk create not a list", [{"action": "bulkCreate", "databaseId": "DB", "tableId": "T", "data": {"title": "x"}}],
     400, "general_argument_invalid"),
    ("bad permission", [{**GOOD_OP, "data": {"title": "x", "$permissions": ["read(any)"]}}], 400,
     "general_argument_invalid"),
    ("valid then invalid", [GOOD_OP, {**GOOD_OP, "rowId": "r2", "data": {}}], 400, "row_missing_data"),
    ("over the limit", [GOOD_OP] * 101, 400, "transaction_limit_exceeded"),
]


def _fill(op, t):
    if isinstance(op, dict):
        return {k: (t.db if v == "DB" else t.table if v == "T" else v) for k, v in op.items()}
    return op


@pytest.mark.parametrize("name,operations,status,etype", OPERATION_CASES, ids=[c[0] for c in OPERATION_CASES])
def test_bad_operations(t, sql, name, operations, status, etype):
    tid = begin(t)
    ops = [_fill(op, t) for op in operations] if isinstance(operations, list) else operations
    r = t.call("POST", f"{X}/{tid}/operations", json={"operations": ops})
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert txn(t, tid)["operations"] == 0  # nothing of the batch was staged


# (name, method, path, body, status, error type)
ROUTE_CASES = [
    ("unknown transaction", "POST", "R", {"rowId": "x", "data": {"title": "x"}, "transactionId": "nope"}, 404,
     "transaction_not_found"),
    ("bad structure", "POST", "R", {"rowId": "x", "data": {"title": 1}, "transactionId": "TID"}, 400,
     "row_invalid_structure"),
    ("update missing row", "PATCH", "R/none", {"data": {"title": "x"}, "transactionId": "TID"}, 404, "row_not_found"),
    ("delete missing row", "DELETE", "R/none", {"transactionId": "TID"}, 404, "row_not_found"),
    ("increment missing column", "PATCH", "R/r0/nope/increment", {"transactionId": "TID"}, 404, "column_not_found"),
    ("update without payload", "PATCH", "R/r0", {"transactionId": "TID"}, 400, "row_missing_payload"),
    ("bulk bad query", "DELETE", "R", {"queries": [q("equal", "nope", ["x"])], "transactionId": "TID"}, 400,
     "general_query_invalid"),
    ("commit and rollback", "PATCH", "X/TID", {"commit": True, "rollback": True}, 400, "general_bad_request"),
    ("neither", "PATCH", "X/TID", {}, 400, "general_bad_request"),
    ("commit not bool", "PATCH", "X/TID", {"commit": [True]}, 400, "general_argument_invalid"),
    ("get unknown", "GET", "X/nope", None, 404, "transaction_not_found"),
    ("delete unknown", "DELETE", "X/nope", None, 404, "transaction_not_found"),
    ("commit unknown", "PATCH", "X/nope", {"commit": True}, 404, "transaction_not_found"),
    ("operations unknown", "POST", "X/nope/operations", {"operations": [GOOD_OP]}, 404, "transaction_not_found"),
    ("read unknown", "GET", "R?transactionId=nope", None, 404, "transaction_not_found"),
]


@pytest.mark.parametrize("name,method,path,body,status,etype", ROUTE_CASES, ids=[c[0] for c in ROUTE_CASES])
def test_bad_route_input(t, sql, name, method, path, body, status, etype):
    assert t.add({"title": "r0"}, row_id="r0").status_code == 201
    tid = begin(t)
    path = path.replace("R", t.R, 1) if path.startswith("R") else path.replace("X", X, 1)
    path = path.replace("TID", tid)
    if body is not None:
        body = {k: (tid if v == "TID" else [_fill(o, t) for o in v] if k == "operations" else v) for k, v in body.items()}
    r = t.call(method, path, json=body)
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert txn(t, tid)["operations"] == 0 and txn(t, tid)["status"] == "pending"
    assert t.count(sql) == 1
