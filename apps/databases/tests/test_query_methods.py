"""Every method of the SDK 27 ``Query`` classes against the row list routes (Python SDK on the
three builds), the filter queries of the column and index lists, bad queries, and the indexes
that serve the newer methods on PostgreSQL."""

from __future__ import annotations

import json

import pytest
from appwrite.client import Client
from appwrite.enums.tables_db_index_type import TablesDBIndexType
from appwrite.exception import AppwriteException
from appwrite.query import Query
from appwrite.services.tables_db import TablesDB

from apps.databases.tests.conftest import Tdb
from tests.websdk import run_node


def make_shop(endpoint: str, project_id: str, key: str, permissions=None):
    """The test table (five rows) through the Python SDK: ``(TablesDB, databaseId, tableId)``."""
    tdb = TablesDB(Client().set_endpoint(endpoint).set_project(project_id).set_key(key))
    d = tdb.create("unique()", "Shop").id
    t = tdb.create_table(d, "items", "Items", permissions=permissions).id
    tdb.create_varchar_column(d, t, "name", 64, True)
    tdb.create_integer_column(d, t, "qty", False)
    tdb.create_float_column(d, t, "price", False)
    tdb.create_boolean_column(d, t, "active", False)
    tdb.create_varchar_column(d, t, "tags", 16, False, array=True)
    tdb.create_varchar_column(d, t, "note", 64, False)
    tdb.create_index(d, t, "ft", TablesDBIndexType.FULLTEXT, ["name"])
    tdb.create_index(d, t, "tri", TablesDBIndexType.TRIGRAM, ["note"])
    tdb.create_index(d, t, "tags_idx", TablesDBIndexType.KEY, ["tags"])
    rows = [("a", "red apple", 3, 1.5, True, ["fruit", "red"], "crisp 100%"),
            ("b", "green apple", 0, 1.2, False, ["fruit", "green"], None),
            ("c", "banana", 12, 0.5, True, ["fruit", "yellow"], "soft_ripe"),
            ("d", "red chair", 1, 49.0, True, ["furniture", "red"], "Wood"),
            ("e", "lamp", None, 20.0, None, [], "a\\b")]
    for rid, name, qty, price, active, tags, note in rows:
        tdb.create_row(d, t, rid, {"name": name, "qty": qty, "price": price, "active": active, "tags": tags,
                                   "note": note})
    return tdb, d, t


@pytest.fixture
def shop(server, project):
    return make_shop(server.endpoint, project.id, project.key)


def ids(shop, *queries) -> list[str]:
    tdb, d, t = shop
    return sorted(r.id for r in tdb.list_rows(d, t, queries=list(queries)).rows)


CASES = [
    ("equal", Query.equal("name", "banana"), ["c"]),
    ("equal many", Query.equal("qty", [0, 1]), ["b", "d"]),
    ("notEqual", Query.not_equal("name", "banana"), ["a", "b", "d", "e"]),
    ("regex", Query.regex("name", "^(red|green) "), ["a", "b", "d"]),
    ("regex class", Query.regex("note", "[0-9]+%"), ["a"]),
    ("lessThan", Query.less_than("price", 1.5), ["b", "c"]),
    ("lessThanEqual", Query.less_than_equal("price", 1.5), ["a", "b", "c"]),
    ("greaterThan", Query.greater_than("qty", 1), ["a", "c"]),
    ("greaterThanEqual", Query.greater_than_equal("qty", 1), ["a", "c", "d"]),
    ("isNull", Query.is_null("qty"), ["e"]),
    ("isNotNull", Query.is_not_null("note"), ["a", "c", "d", "e"]),
    ("exists", Query.exists(["qty", "note"]), ["a", "c", "d"]),
    ("notExists", Query.not_exists(["note"]), ["b"]),
    ("between", Query.between("price", 1, 20), ["a", "b", "e"]),
    ("notBetween", Query.not_between("price", 1, 20), ["c", "d"]),
    ("startsWith", Query.starts_with("name", "red"), ["a", "d"]),
    ("endsWith", Query.ends_with("name", "apple"), ["a", "b"]),
    ("notStartsWith", Query.not_starts_with("name", "red"), ["b", "c", "e"]),
    ("notEndsWith", Query.not_ends_with("name", "apple"), ["c", "d", "e"]),
    ("contains text", Query.contains("note", "_rip"), ["c"]),
    ("contains percent", Query.contains("note", "0%"), ["a"]),
    ("contains backslash", Query.contains("note", "a\\b"), ["e"]),
    ("contains array", Query.contains("tags", "red"), ["a", "d"]),
    ("containsAny", Query.contains_any("tags", ["green", "yellow"]), ["b", "c"]),
    ("containsAll", Query.contains_all("tags", ["fruit", "red"]), ["a"]),
    ("containsAny text", Query.contains_any("name", ["chair", "lamp"]), ["d", "e"]),
    ("containsAll text", Query.contains_all("name", ["red", "apple"]), ["a"]),
    ("notContains", Query.not_contains("tags", "fruit"), ["d", "e"]),
    ("search", Query.search("name", "apple"), ["a", "b"]),
    ("notSearch", Query.not_search("name", "apple"), ["c", "d", "e"]),
    ("boolean", Query.equal("active", True), ["a", "c", "d"]),
    ("or", Query.or_queries([Query.equal("qty", 0), Query.is_null("qty")]), ["b", "e"]),
    ("and", Query.and_queries([Query.greater_than("qty", 0), Query.contains("tags", "red")]), ["a", "d"]),
    ("createdAfter", Query.created_after("2000-01-01T00:00:00.000+00:00"), ["a", "b", "c", "d", "e"]),
    ("createdBefore", Query.created_before("2000-01-01T00:00:00.000+00:00"), []),
    ("createdBetween", Query.created_between("2000-01-01", "2999-01-01"), ["a", "b", "c", "d", "e"]),
    ("updatedAfter", Query.updated_after("2999-01-01T00:00:00.000+00:00"), []),
    ("updatedBefore", Query.updated_before("2999-01-01T00:00:00.000+00:00"), ["a", "b", "c", "d", "e"]),
    ("updatedBetween", Query.updated_between("2000-01-01", "2999-01-01"), ["a", "b", "c", "d", "e"]),
]


def test_filter_methods(shop):
    for name, query, expected in CASES:
        assert ids(shop, query) == expected, name


def test_order_page_and_select(shop):
    tdb, d, t = shop
    ordered = tdb.list_rows(d, t, queries=[Query.order_desc("price"), Query.limit(2)])
    assert [r.id for r in ordered.rows] == ["d", "e"] and ordered.total == 5
    asc = tdb.list_rows(d, t, queries=[Query.order_asc("qty"), Query.offset(1), Query.limit(2)])
    assert [r.id for r in asc.rows] == ["b", "d"]  # NULL first, then 0, 1, ...
    after = tdb.list_rows(d, t, queries=[Query.order_asc("name"), Query.cursor_after("c")])
    assert [r.id for r in after.rows] == ["b", "e", "a", "d"]
    before = tdb.list_rows(d, t, queries=[Query.order_asc("name"), Query.cursor_before("e")])
    assert [r.id for r in before.rows] == ["c", "b"]
    assert [r.id for r in tdb.list_rows(d, t, queries=Query.page(2, 2)).rows] == ["c", "d"]
    shuffled = {tuple(r.id for r in tdb.list_rows(d, t, queries=[Query.order_random()]).rows) for _ in range(12)}
    assert len(shuffled) > 1 and all(sorted(s) == ["a", "b", "c", "d", "e"] for s in shuffled)
    picked = tdb.list_rows(d, t, queries=[Query.select(["name"]), Query.equal("name", "lamp")]).rows[0]
    assert picked.data == {"name": "lamp"}
    got = tdb.get_row(d, t, "a", queries=[Query.select(["qty", "tags"])])
    assert got.data == {"qty": 3, "tags": ["fruit", "red"]}


REFUSED = [
    ("elemMatch", Query.elem_match("tags", [Query.equal("x", "y")]), "elemMatch is not supported"),
    ("vector", Query.vector_cosine("price", [1.0, 2.0]), "vector attributes"),
    ("spatial on text", Query.intersects("name", [1, 2]), "non-spatial attribute"),
    ("distance on number", Query.distance_less_than("price", [1, 2], 10), "non-spatial attribute"),
    ("aggregate", Query.count(), "not supported by this server"),
    ("groupBy", Query.group_by(["name"]), "not supported by this server"),
    ("join", Query.join("other", "name", "name"), "not supported by this server"),
    ("distinct", Query.distinct(), "not supported by this server"),
    ("relationship", Query.relationship("name", [Query.limit(1)]), "not supported by this server"),
    ("regex on number", Query.regex("qty", "1"), "not a string"),
    ("regex invalid", Query.regex("name", "(unclosed"), "Invalid regex"),
    ("regex value type", json.dumps({"method": "regex", "attribute": "name", "values": [5]}), "invalid"),
    ("containsAll on number", Query.contains_all("qty", [1]), "not a string"),
    ("containsAny wrong type", Query.contains_any("tags", [5]), "invalid"),
    ("exists unknown", Query.exists(["nope"]), "not found in schema"),
    ("exists with attribute", json.dumps({"method": "exists", "attribute": "qty", "values": ["qty"]}),
     "list of attribute names"),
    ("random with cursor", [Query.order_random(), Query.cursor_after("a")], "orderRandom"),
    ("unknown method", json.dumps({"method": "fuzzy", "attribute": "name", "values": ["x"]}), "unknown method"),
    ("startsWith on array", Query.starts_with("tags", "f"), "array"),
    ("greaterThan wrong type", Query.greater_than("qty", "many"), "invalid"),
]


def test_refused_queries(shop):
    tdb, d, t = shop
    for name, query, words in REFUSED:
        with pytest.raises(AppwriteException) as err:
            tdb.list_rows(d, t, queries=query if isinstance(query, list) else [query])
        assert err.value.code == 400 and err.value.type == "general_query_invalid", name
        assert words.lower() in err.value.message.lower(), (name, err.value.message)


def test_column_and_index_list_filters(shop):
    tdb, d, t = shop
    assert [c.key for c in tdb.list_columns(d, t, queries=[Query.equal("type", "varchar")]).columns] == [
        "name", "tags", "note"]
    assert [c.key for c in tdb.list_columns(d, t, queries=[Query.equal("array", True)]).columns] == ["tags"]
    assert [c.key for c in tdb.list_columns(d, t, queries=[Query.equal("required", True)]).columns] == ["name"]
    assert [c.key for c in tdb.list_columns(d, t, queries=[Query.greater_than("size", 20)]).columns] == [
        "name", "note"]
    page = tdb.list_columns(d, t, queries=[Query.equal("status", "available"), Query.order_desc("key"),
                                           Query.limit(2)])
    assert page.total == 6 and [c.key for c in page.columns] == ["tags", "qty"]
    assert [c.key for c in tdb.list_columns(d, t, queries=[Query.starts_with("key", "p")]).columns] == ["price"]
    assert [i.key for i in tdb.list_indexes(d, t, queries=[Query.equal("type", "trigram")]).indexes] == ["tri"]
    assert [i.key for i in tdb.list_indexes(d, t, queries=[Query.contains("attributes", "tags")]).indexes] == [
        "tags_idx"]
    for bad in ([Query.equal("min", 1)], [Query.equal("required", "yes")], [Query.search("key", "x")],
                [Query.equal("columns", "x")], ):
        with pytest.raises(AppwriteException) as err:
            tdb.list_columns(d, t, queries=bad)
        assert err.value.code == 400 and err.value.type == "general_query_invalid", bad


def test_index_plans_serve_new_methods(api, sql, django_db_blocker):
    """On PostgreSQL a trigram index serves contains/regex/startsWith, and a key index on an array
    column serves containsAny/containsAll: EXPLAIN of a list's count query on 20,000 rows (a
    page ordered by ``$sequence`` may rightly walk the primary key instead), with sequential scans
    priced out so the plan shows whether an index can serve the filter at all."""
    from django.conf import settings

    from apps.core.domain.queries import parse_queries
    from apps.core.drivers.runtime import run_sync
    from apps.core.http.auth import Auth
    from apps.databases import querying as qp
    from apps.databases.selectors.meta import table_meta
    from apps.databases.selectors.rows import listing
    from apps.databases.tests.test_scale import _Ctx

    if not settings.DATABASE_URL:
        pytest.skip("plans are checked on PostgreSQL")
    t = Tdb(api).setup(columns=[("varchar", {"key": "note", "size": 64, "required": False}),
                                ("varchar", {"key": "tags", "size": 16, "required": False, "array": True})],
                       indexes=[{"key": "tri", "type": "trigram", "columns": ["note"]},
                                {"key": "tags_idx", "type": "key", "columns": ["tags"]}])
    with django_db_blocker.unblock():
        _, table = run_sync(table_meta(_Ctx(api.project.pk), database_uid=t.db, table_uid=t.table))
    sql("INSERT INTO databases_row (table_id, uid, data, permissions, read_roles, created_at, updated_at) "
        "SELECT %s, 'r' || g, jsonb_build_object('note', md5(g::text), 'tags', jsonb_build_array('t' || (g %% 300))), "
        "'[]', ARRAY[]::text[], now(), now() FROM generate_series(1, 20000) g", (table["id"],))
    sql("ANALYZE databases_row")
    cases = {
        "contains": [Query.contains("note", "abcd")],
        "regex": [Query.regex("note", "^ab[0-9]f")],
        "startsWith": [Query.starts_with("note", "abcd")],
        "containsAny": [Query.contains_any("tags", ["t7", "t8"])],
        "containsAll": [Query.contains_all("tags", ["t7"])],
    }
    with django_db_blocker.unblock():
        from django.db import connection

        ctx = _Ctx(api.project.pk)
        for name, raw in cases.items():
            lst = listing(ctx.db, Auth(kind="key"), table)
            query, params = qp.count_sql(lst.source, qp.plan(ctx.db, lst, parse_queries(raw, extended=True)))
            with connection.cursor() as cur:
                cur.execute("SET enable_seqscan = off")
                try:
                    cur.execute("EXPLAIN " + query, params)
                    plan = "\n".join(r[0] for r in cur.fetchall())
                finally:
                    cur.execute("RESET enable_seqscan")
            assert "udx_" in plan, f"{name}:\n{plan}"


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_web_sdk_query_methods(request, kind, project):
    """Each method of the web SDK 27 ``Query`` class, as a signed-in user."""
    from conftest import Api

    server = request.getfixturevalue(f"{kind}_server")
    _, session = Api(server, project).signup()
    _, d, t = make_shop(server.endpoint, project.id, project.key, permissions=['read("users")'])
    proc = run_node("queries.mjs", server.endpoint, project.id, session, d, t)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = {name: ids for name, _, ids in CASES}
    for name in ("equal", "notEqual", "regex", "lessThan", "lessThanEqual", "greaterThan", "greaterThanEqual",
                 "isNull", "isNotNull", "exists", "notExists", "between", "notBetween", "startsWith", "endsWith",
                 "notStartsWith", "notEndsWith", "containsAny", "containsAll", "notContains", "search", "notSearch",
                 "or", "and", "createdBefore", "createdAfter", "createdBetween", "updatedBefore", "updatedAfter",
                 "updatedBetween"):
        assert out[name] == expected[name], name
    assert out["contains"] == expected["contains array"]
    assert out["selectOrderLimitOffset"] == [["name"], ["name"]]
    assert out["orderAsc"] == ["c"] and sorted(out["orderRandom"]) == ["a", "b", "c", "d", "e"]
    assert out["cursorAfter"] == ["b", "e", "a", "d"] and out["cursorBefore"] == ["c", "b"]
    refused = [name for name, got in out.items() if got == "400 general_query_invalid"]
    assert sorted(refused) == sorted([
        "elemMatch", "vectorDot", "vectorCosine", "vectorEuclidean", "intersects", "notIntersects", "crosses",
        "notCrosses", "overlaps", "notOverlaps", "touches", "notTouches", "distanceEqual", "distanceNotEqual",
        "distanceGreaterThan", "distanceLessThan"])  # on attributes that are not spatial or vector columns
