"""Requests racing each other on one resource answer 404/409, never 500.

Each case fires a few requests at the same moment (threads released by one barrier) at a live
server, on the ASGI and the WSGI build, several rounds each: an update racing a delete of the
same resource, two renames to the same key. The answers allowed are the success status and the
resource's 404 ``*_not_found`` / 409 ``*_already_exists`` types.
"""

from __future__ import annotations

import pytest

from apps.core.tests.racing import check, eventually, fire
from apps.databases.tests.conftest import Tdb, uid
from conftest import Api

pytestmark = pytest.mark.slow

ROUNDS = 6


@pytest.fixture(params=["asgi", "wsgi"])
def race_api(request, project) -> Api:
    return Api(request.getfixturevalue(f"{request.param}_server"), project)


def test_column_update_racing_its_delete(race_api):
    t = Tdb(race_api).setup(columns=[("varchar", {"key": "title", "size": 64, "required": False})])
    for _ in range(ROUNDS):
        key = uid("c")
        r = t.call("POST", f"{t.T}/columns/varchar", json={"key": key, "size": 32, "required": False})
        assert r.status_code == 202, r.text
        patch = ("PATCH", f"{t.T}/columns/varchar/{key}", {"required": False, "default": None})
        answers = fire(race_api, [patch, patch, patch, ("DELETE", f"{t.T}/columns/{key}", None)])
        check(answers, {200: None, 204: None, 404: {"column_not_found"}})
        eventually(lambda key=key: t.call("GET", f"{t.T}/columns/{key}").status_code == 404)


def test_two_columns_renamed_to_one_key(race_api):
    t = Tdb(race_api).setup(columns=[("varchar", {"key": "title", "size": 64, "required": False})])
    for _ in range(ROUNDS):
        a, b, target = uid("a"), uid("b"), uid("n")
        for key in (a, b):
            assert t.call("POST", f"{t.T}/columns/varchar", json={"key": key, "size": 8, "required": False}).status_code == 202
        answers = fire(race_api, [("PATCH", f"{t.T}/columns/varchar/{k}", {"required": False, "default": None,
                                                                         "newKey": target}) for k in (a, b)])
        check(answers, {200: None, 409: {"column_already_exists"}})
        assert sorted(r.status_code for r in answers) == [200, 409]
        eventually(lambda target=target: [c["key"] for c in t.call("GET", f"{t.T}/columns").json()["columns"]].count(target) == 1)


def test_database_and_table_updates_racing_their_delete(race_api):
    for _ in range(ROUNDS):
        t = Tdb(race_api).setup(columns=[("varchar", {"key": "title", "size": 64, "required": False})])
        put = ("PUT", t.T, {"name": "renamed"})
        check(fire(race_api, [put, put, ("DELETE", t.T, None)]), {200: None, 204: None, 404: {"table_not_found"}})
        put = ("PUT", t.D, {"name": "renamed"})
        check(fire(race_api, [put, put, ("DELETE", t.D, None)]), {200: None, 204: None, 404: {"database_not_found"}})


def test_index_and_row_writes_racing_deletes(race_api, sql):
    t = Tdb(race_api).setup(columns=[("varchar", {"key": "title", "size": 64, "required": False})])
    for _ in range(ROUNDS):
        key, col, row = uid("i"), uid("c"), uid("r")
        assert t.call("POST", f"{t.T}/columns/varchar", json={"key": col, "size": 8, "required": False}).status_code == 202
        index = ("POST", f"{t.T}/indexes", {"key": key, "type": "key", "columns": [col]})
        check(fire(race_api, [index, index, ("DELETE", f"{t.T}/columns/{col}", None)]),
              {201: None, 202: None, 204: None, 400: None, 404: {"column_not_found"},
               409: {"index_already_exists"}})

        def consistent():
            indexes = t.call("GET", f"{t.T}/indexes").json()["indexes"]
            columns = {c["key"] for c in t.call("GET", f"{t.T}/columns").json()["columns"]}
            return all(set(i["columns"]) <= columns for i in indexes)

        eventually(consistent)  # no index over a deleted column, in the API...
        assert sql(  # ...nor in the database
            "SELECT count(*) FROM databases_index i JOIN databases_table tb ON tb.id = i.table_id "
            "JOIN databases_database d ON d.id = tb.database_id, jsonb_array_elements_text(i.columns) k "
            "WHERE d.uid = %s AND tb.uid = %s AND NOT EXISTS "
            "(SELECT 1 FROM databases_column c WHERE c.table_id = i.table_id AND c.key = k)", (t.db, t.table))[0][0] == 0
        assert t.add({"title": "x"}, row_id=row).status_code == 201
        patch = ("PATCH", f"{t.R}/{row}", {"data": {"title": "y"}})
        check(fire(race_api, [patch, patch, ("DELETE", f"{t.R}/{row}", None)]),
              {200: None, 204: None, 404: {"row_not_found"}})
        upsert = ("PUT", f"{t.R}/{row}", {"data": {"title": "z"}})
        check(fire(race_api, [upsert, upsert, upsert]), {200: None, 201: None})


def test_relationship_update_racing_its_delete(race_api):
    """Both sides of a relationship change in one transaction under both tables' locks: an
    update racing the delete is 404, a second delete is 404 (it removed the sides twice)."""
    t = Tdb(race_api).setup(columns=[("varchar", {"key": "title", "size": 64, "required": False})])
    other = uid("o")
    assert t.call("POST", f"{t.D}/tables", json={"tableId": other, "name": "O"}).status_code == 201
    for _ in range(ROUNDS):
        key = uid("rel")
        r = t.call("POST", f"{t.T}/columns/relationship", json={"relatedTableId": other, "type": "oneToMany",
                                                                "twoWay": True, "key": key, "twoWayKey": key})
        assert r.status_code == 202, r.text
        patch = ("PATCH", f"{t.T}/columns/{key}/relationship", {"onDelete": "cascade"})
        delete = ("DELETE", f"{t.T}/columns/{key}", None)
        answers = fire(race_api, [patch, patch, delete, delete])
        check(answers, {200: None, 204: None, 404: {"column_not_found"}})
        assert sum(r.status_code == 204 for r in answers) == 1


def test_row_increments_and_bulk_writes_racing_deletes(race_api):
    t = Tdb(race_api).setup(columns=[("integer", {"key": "n", "required": False})])
    for _ in range(ROUNDS):
        row = uid("r")
        assert t.add({"n": 1}, row_id=row).status_code == 201
        inc = ("PATCH", f"{t.R}/{row}/n/increment", {"value": 1})
        bulk = ("PATCH", t.R, {"data": {"n": 5}})
        check(fire(race_api, [inc, inc, bulk, ("DELETE", f"{t.R}/{row}", None), ("DELETE", t.R, None)]),
              {200: None, 204: None, 404: {"row_not_found"}})
