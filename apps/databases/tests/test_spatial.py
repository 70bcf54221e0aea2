"""Spatial columns on PostgreSQL with PostGIS through the Python SDK 27 (three builds) and the web
SDK 27: point, line and polygon columns, values as arrays or WKT, every spatial query, spatial
indexes (EXPLAIN), bad geometries and bad queries; and the clear refusal where there is no
PostGIS (a database user that may not create it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from appwrite.client import Client
from appwrite.enums.tables_db_index_type import TablesDBIndexType
from appwrite.query import Query
from appwrite.services.tables_db import TablesDB
from django.conf import settings

from apps.databases.tests.conftest import Tdb
from tests.websdk import run_node

pytestmark = pytest.mark.skipif(not settings.DATABASE_URL, reason="spatial columns need PostgreSQL with PostGIS")

SQUARE = [[[0, 0], [0, 10], [10, 10], [10, 0], [0, 0]]]


def atlas(endpoint: str, project_id: str, key: str, permissions=None):
    t = TablesDB(Client().set_endpoint(endpoint).set_project(project_id).set_key(key))
    d = t.create("unique()", "Atlas").id
    t.create_table(d, "places", "Places", permissions=permissions)
    t.create_varchar_column(d, "places", "name", 32, True)
    t.create_point_column(d, "places", "loc", False)
    t.create_line_column(d, "places", "route", False)
    t.create_polygon_column(d, "places", "area", False)
    t.create_index(d, "places", "by_loc", TablesDBIndexType.SPATIAL, ["loc"])
    t.create_index(d, "places", "by_area", TablesDBIndexType.SPATIAL, ["area"])
    rows = {
        "berlin": {"loc": [13.405, 52.52]},
        "potsdam": {"loc": "POINT(13.0645 52.3906)"},
        "paris": {"loc": [2.3522, 48.8566]},
        "square": {"area": SQUARE, "route": [[-1, 5], [11, 5]]},
        "corner": {"area": "POLYGON((10 10, 10 20, 20 20, 20 10, 10 10))", "route": "LINESTRING(20 0, 30 0)"},
        "overlap": {"area": [[5, 5], [5, 15], [15, 15], [15, 5], [5, 5]]},  # one ring without the outer list
    }
    for rid, values in rows.items():
        t.create_row(d, "places", rid, {"name": rid, **values})
    return t, d


def ids(t, d, *queries) -> list[str]:
    return sorted(r.id for r in t.list_rows(d, "places", queries=list(queries)).rows)


CASES = [
    ("distance meters", Query.distance_less_than("loc", [13.4, 52.5], 30000), ["berlin", "potsdam"]),
    ("distance meters, far", Query.distance_greater_than("loc", [13.4, 52.5], 100000), ["paris"]),
    ("distance degrees", Query.distance_less_than("loc", [13.4, 52.5], 0.5, False), ["berlin", "potsdam"]),
    ("distance equal", Query.distance_equal("loc", [13.405, 52.52], 0), ["berlin"]),
    ("distance not equal", Query.distance_not_equal("loc", [13.405, 52.52], 0), ["paris", "potsdam"]),
    ("intersects point", Query.intersects("area", [3, 3]), ["square"]),
    ("not intersects", Query.not_intersects("area", [12, 12]), ["square"]),
    ("intersects polygon", Query.intersects("area", [[[9, 9], [9, 11], [11, 11], [11, 9], [9, 9]]]),
     ["corner", "overlap", "square"]),
    ("crosses", Query.crosses("route", SQUARE), ["square"]),
    ("not crosses", Query.not_crosses("route", SQUARE), ["corner"]),
    ("overlaps", Query.overlaps("area", SQUARE), ["overlap"]),
    ("not overlaps", Query.not_overlaps("area", SQUARE), ["corner", "square"]),
    ("touches", Query.touches("area", SQUARE), ["corner"]),
    ("not touches", Query.not_touches("area", SQUARE), ["overlap", "square"]),
    ("covers", Query.covers("area", [1, 1]), ["square"]),
    ("not covers", Query.not_covers("area", [1, 1]), ["corner", "overlap"]),
    ("spatial equals", Query.spatial_equals("area", SQUARE), ["square"]),
    ("not spatial equals", Query.not_spatial_equals("area", SQUARE), ["corner", "overlap"]),
    ("wkt geometry", Query.intersects("area", "POINT(15 15)"), ["corner", "overlap"]),
    ("is null", Query.is_null("loc"), ["corner", "overlap", "square"]),
]


def test_spatial_with_sdk(server, project):
    t, d = atlas(server.endpoint, project.id, project.key)
    column = t.get_column(d, "places", "route")
    assert (column.type, column.status.value) == ("linestring", "available")
    assert t.get_row(d, "places", "potsdam").data["loc"] == [13.0645, 52.3906]  # WKT in, arrays out
    assert t.get_row(d, "places", "overlap").data["area"] == [[[5, 5], [5, 15], [15, 15], [15, 5], [5, 5]]]
    for name, query, expected in CASES:
        assert ids(t, d, query) == expected, name
    t.update_point_column(d, "places", "loc", False, default=[1, 2])
    assert t.get_column(d, "places", "loc").default == [1, 2]
    assert t.create_row(d, "places", "nowhere", {"name": "n"}).data["loc"] == [1, 2]
    t.update_row(d, "places", "nowhere", {"loc": [3, 4]})
    assert ids(t, d, Query.distance_less_than("loc", [3, 4], 1)) == ["nowhere"]


# (name, values, error type) - nothing is stored
BAD_VALUES = [
    ("self-intersecting polygon", {"area": [[[0, 0], [10, 10], [10, 0], [0, 10], [0, 0]]]}, "row_invalid_structure"),
    ("open ring", {"area": [[[0, 0], [0, 10], [10, 10], [10, 0]]]}, "row_invalid_structure"),
    ("ring of 3 points", {"area": [[[0, 0], [1, 1], [0, 0]]]}, "row_invalid_structure"),
    ("longitude out of range", {"loc": [181, 0]}, "row_invalid_structure"),
    ("latitude out of range", {"loc": [0, -91]}, "row_invalid_structure"),
    ("three coordinates", {"loc": [1, 2, 3]}, "row_invalid_structure"),
    ("one coordinate", {"loc": [1]}, "row_invalid_structure"),
    ("text coordinates", {"loc": ["1", "2"]}, "row_invalid_structure"),
    ("line of one point", {"route": [[1, 1]]}, "row_invalid_structure"),
    ("point for a line", {"route": [1, 1]}, "row_invalid_structure"),
    ("bad WKT", {"loc": "POINT(1)"}, "row_invalid_structure"),
    ("WKT of another kind", {"loc": "LINESTRING(0 0, 1 1)"}, "row_invalid_structure"),
    ("crossing rings", {"area": [SQUARE[0], [[5, 5], [5, 20], [6, 20], [6, 5], [5, 5]]]}, "row_invalid_structure"),
]


@pytest.mark.parametrize("name,values,etype", BAD_VALUES, ids=[c[0] for c in BAD_VALUES])
def test_bad_geometries(api, sql, name, values, etype):
    t = Tdb(api).setup(columns=[("point", {"key": "loc", "required": False}),
                                ("line", {"key": "route", "required": False}),
                                ("polygon", {"key": "area", "required": False})])
    r = t.add(values)
    assert r.status_code == 400, r.text
    assert r.json()["type"] == etype
    assert t.count(sql) == 0


# (name, query JSON, message fragment)
BAD_QUERIES = [
    ("distance without distance", {"method": "distanceLessThan", "attribute": "loc", "values": [[[1, 2]]]}, "distance"),
    ("negative distance", {"method": "distanceLessThan", "attribute": "loc", "values": [[[1, 2], -1, True]]},
     "non-negative"),
    ("geometry out of range", {"method": "intersects", "attribute": "loc", "values": [[500, 0]]}, "longitude"),
    ("not a geometry", {"method": "intersects", "attribute": "loc", "values": ["nowhere"]}, "WKT"),
    ("spatial on text", {"method": "intersects", "attribute": "name", "values": [[1, 2]]}, "non-spatial"),
    ("order by spatial", {"method": "orderAsc", "attribute": "loc"}, "spatial"),
    ("two geometries", {"method": "touches", "attribute": "loc", "values": [[1, 2], [3, 4]]}, "one value"),
]


@pytest.mark.parametrize("name,query,words", BAD_QUERIES, ids=[c[0] for c in BAD_QUERIES])
def test_bad_spatial_queries(api, name, query, words):
    t = Tdb(api).setup(columns=[("varchar", {"key": "name", "size": 8, "required": False}),
                                ("point", {"key": "loc", "required": False})])
    r = t.call("GET", t.R, params={"queries[0]": json.dumps(query)})
    assert r.status_code == 400 and r.json()["type"] == "general_query_invalid", r.text
    assert words.lower() in r.json()["message"].lower(), r.text


def test_bad_spatial_columns_and_indexes(api):
    t = Tdb(api).setup(columns=[("varchar", {"key": "name", "size": 8, "required": False}),
                                ("point", {"key": "loc", "required": False})])
    cases = [
        ("POST", f"{t.T}/columns/point", {"key": "p2", "required": False, "array": True}, "general_argument_invalid"),
        ("POST", f"{t.T}/columns/point", {"key": "p3", "required": True, "default": [1, 2]},
         "attribute_default_unsupported"),
        ("POST", f"{t.T}/columns/polygon", {"key": "p4", "required": False, "default": [[0, 0], [1, 1]]},
         "attribute_value_invalid"),
        ("POST", f"{t.T}/indexes", {"key": "i1", "type": "spatial", "columns": ["name"]}, "index_invalid"),
        ("POST", f"{t.T}/indexes", {"key": "i2", "type": "key", "columns": ["loc"]}, "index_invalid"),
        ("POST", f"{t.T}/indexes", {"key": "i3", "type": "spatial", "columns": ["loc", "name"]}, "index_invalid"),
    ]
    for method, path, body, etype in cases:
        r = t.call(method, path, json=body)
        assert r.status_code == 400 and r.json()["type"] == etype, (body, r.text)
    assert [c["key"] for c in t.call("GET", f"{t.T}/columns").json()["columns"]] == ["name", "loc"]
    assert t.call("GET", f"{t.T}/indexes").json()["total"] == 0


def test_spatial_indexes_serve_queries(api, sql, django_db_blocker):
    """EXPLAIN: the GiST indexes of a spatial index serve intersects and meter distances."""
    from apps.core.domain.queries import parse_queries
    from apps.core.drivers.runtime import run_sync
    from apps.core.http.auth import Auth
    from apps.databases import querying as qp
    from apps.databases.selectors.meta import table_meta
    from apps.databases.selectors.rows import listing
    from apps.databases.tests.test_scale import _Ctx

    t = Tdb(api).setup(columns=[("point", {"key": "loc", "required": False})],
                       indexes=[{"key": "g", "type": "spatial", "columns": ["loc"]}])
    with django_db_blocker.unblock():
        _, table = run_sync(table_meta(_Ctx(api.project.pk), database_uid=t.db, table_uid=t.table))
    sql("INSERT INTO databases_row (table_id, uid, data, permissions, read_roles, created_at, updated_at) "
        "SELECT %s, 'r' || g, jsonb_build_object('loc', jsonb_build_array((g %% 360) - 180, (g %% 180) - 90)), "
        "'[]', ARRAY[]::text[], now(), now() FROM generate_series(1, 20000) g", (table["id"],))
    sql("ANALYZE databases_row")
    cases = {"intersects": [Query.intersects("loc", [[[0, 0], [0, 1], [1, 1], [1, 0], [0, 0]]])],
             "distance": [Query.distance_less_than("loc", [10, 10], 5000)]}
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
def test_web_sdk_spatial_queries(request, kind, project):
    from conftest import Api

    server = request.getfixturevalue(f"{kind}_server")
    _, session = Api(server, project).signup()
    _, d = atlas(server.endpoint, project.id, project.key, permissions=['read("users")', 'create("users")'])
    proc = run_node("spatial.mjs", server.endpoint, project.id, session, d)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"near": ["berlin", "potsdam"], "far": ["paris"], "inSquare": ["square"], "crosses": ["square"],
                   "touches": ["corner"], "overlaps": ["overlap"], "created": [7.5, 47.5],
                   "bad": "400 row_invalid_structure"}


def _free_port() -> int:
    from conftest import free_port

    return free_port()


@pytest.fixture
def no_postgis_server(live_env):
    """A throwaway PostgreSQL cluster whose application user is not a superuser, so it may not
    create PostGIS (an untrusted extension): a server without spatial support."""
    bindir = "/usr/lib/postgresql/15/bin"
    if not os.path.exists(f"{bindir}/initdb") or shutil.which("runuser") is None:
        pytest.skip("needs PostgreSQL 15 binaries and runuser")
    root = Path(tempfile.mkdtemp(prefix="nopostgis-"))  # pytest's tmp dirs are closed to the postgres user
    root.chmod(0o755)
    data = root / "pg"
    data.mkdir()
    shutil.chown(data, "postgres")
    port = _free_port()
    as_pg = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*as_pg, f"{bindir}/initdb", "-D", str(data), "-A", "trust", "-U", "postgres"], check=True,
                   capture_output=True)
    proc = subprocess.Popen([*as_pg, f"{bindir}/postgres", "-D", str(data), "-p", str(port), "-k", str(data),
                             "-c", "listen_addresses=127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", str(port)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        psql = ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-c"]
        subprocess.run([*psql, "CREATE ROLE app LOGIN"], check=True, capture_output=True)
        subprocess.run([*psql, "CREATE DATABASE app OWNER app"], check=True, capture_output=True)
        env = {**live_env, "DATABASE_URL": f"postgres://app@127.0.0.1:{port}/app"}
        from conftest import ROOT, start_server

        subprocess.run([os.sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        key = subprocess.run([os.sys.executable, "-c", (
            "import os, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'backend.settings'); django.setup()\n"
            "from apps.core.http.auth import KEY_SCOPES\nfrom apps.projects.services import api_key_create, project_create\n"
            "project_create(project_id='plain', name='plain', origins=[])\n"
            "print(api_key_create(project_id='plain', name='k', scopes=sorted(KEY_SCOPES))[1])")],
            cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        server = start_server("asgi", env)
        yield server, key
        server.stop()
    finally:
        proc.terminate()
        proc.wait(20)
        shutil.rmtree(root, ignore_errors=True)


def test_without_postgis_spatial_is_refused_and_the_rest_works(no_postgis_server):
    from conftest import Api, ProjectInfo

    server, key = no_postgis_server
    t = Tdb(Api(server, ProjectInfo(id="plain", key=key, pk=0))).setup(
        columns=[("varchar", {"key": "name", "size": 8, "required": False})])
    r = t.call("POST", f"{t.T}/columns/point", json={"key": "loc", "required": False})
    assert r.status_code == 400 and r.json()["type"] == "general_feature_unsupported", r.text
    assert "postgis" in r.json()["message"].lower()
    r = t.call("POST", f"{t.D}/tables", json={"tableId": "t2", "name": "T2", "columns": [
        {"key": "area", "type": "polygon", "required": False}]})
    assert r.status_code == 400 and r.json()["type"] == "general_feature_unsupported"
    assert t.add({"name": "ok"}).status_code == 201
    r = t.call("GET", t.R, params={"queries[0]": json.dumps({"method": "intersects", "attribute": "name",
                                                             "values": [[1, 2]]})})
    assert r.status_code == 400 and r.json()["type"] == "general_query_invalid"
