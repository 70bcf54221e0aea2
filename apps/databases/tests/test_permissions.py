"""Table- and row-level permissions for guests, two users and API keys."""

from __future__ import annotations

import json

import pytest

from apps.databases.tests.conftest import Tdb

COLUMNS = [("varchar", {"key": "title", "size": 64, "required": True})]


@pytest.fixture
def users(api):
    (a, ta), (b, tb) = api.signup(), api.signup()
    api.http.cookies.clear()  # the session cookies would make "guest" calls signed-in ones
    return {"a": (a, ta), "b": (b, tb)}


def test_table_level_permissions(api, users, sql):
    t = Tdb(api).setup(permissions=['create("users")', 'read("users")'], columns=COLUMNS)
    a, ta = users["a"]
    _, tb = users["b"]
    r = t.add({"title": "x"}, key=False)
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    assert t.call("GET", t.R, key=False).json()["type"] == "user_unauthorized"
    r = t.add({"title": "mine"}, row_id="a1", key=False, session=ta)
    assert r.status_code == 201, r.text
    assert sorted(r.json()["$permissions"]) == sorted(f'{x}("user:{a["$id"]}")' for x in ("read", "update", "delete"))
    # B reads through the table permission; updates need a table grant (row security is off).
    assert t.call("GET", f"{t.R}/a1", key=False, session=tb).status_code == 200
    r = t.call("PATCH", f"{t.R}/a1", json={"data": {"title": "b"}}, key=False, session=tb)
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    # Without row security A's own row permissions don't count either.
    assert t.call("DELETE", f"{t.R}/a1", key=False, session=ta).status_code == 401
    assert t.count(sql) == 1
    assert t.call("DELETE", f"{t.R}/a1").status_code == 204  # API keys bypass


def test_row_security(api, users, sql):
    t = Tdb(api).setup(permissions=['create("users")'], security=True, columns=COLUMNS)
    a, ta = users["a"]
    b, tb = users["b"]
    assert t.add({"title": "private"}, row_id="a1", key=False, session=ta).status_code == 201
    assert t.add({"title": "public"}, row_id="a2", permissions=['read("any")'], key=False,
                 session=ta).status_code == 201
    listed = t.call("GET", t.R, key=False, session=tb).json()
    assert listed["total"] == 1 and [r["$id"] for r in listed["rows"]] == ["a2"]
    assert t.call("GET", t.R, key=False).json()["total"] == 1  # guests see the read("any") row
    assert t.call("GET", t.R, key=False, session=ta).json()["total"] == 2
    assert t.call("GET", f"{t.R}/a1", key=False, session=tb).json()["type"] == "row_not_found"
    cursor = {"queries[0]": json.dumps({"method": "cursorAfter", "values": ["a1"]})}
    r = t.call("GET", t.R, params=cursor, key=False, session=tb)
    assert r.status_code == 400 and r.json()["type"] == "general_cursor_not_found"
    assert t.call("GET", t.R, params=cursor, key=False, session=ta).status_code == 200
    filt = {"queries[0]": json.dumps({"method": "equal", "attribute": "title", "values": ["private"]})}
    assert t.call("GET", t.R, params=filt, key=False, session=tb).json()["total"] == 0
    assert t.call("PATCH", f"{t.R}/a1", json={"data": {"title": "x"}}, key=False, session=tb).status_code == 401
    assert t.call("DELETE", f"{t.R}/a2", key=False, session=tb).status_code == 401
    assert t.call("PATCH", f"{t.R}/a1", json={"data": {"title": "edited"}}, key=False,
                  session=ta).json()["title"] == "edited"
    # Granting roles the caller does not hold is refused; nothing is written.
    r = t.add({"title": "x"}, permissions=[f'read("user:{b["$id"]}")'], key=False, session=ta)
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    r = t.call("PATCH", f"{t.R}/a1", json={"permissions": [f'update("user:{b["$id"]}")']}, key=False, session=ta)
    assert r.status_code == 401
    assert t.add({"title": "x"}, permissions=['read("users")'], key=False, session=ta).status_code == 201
    assert t.count(sql) == 3
    # Share a1 with B for update: now B may update but still not delete.
    r = t.call("PATCH", f"{t.R}/a1", json={"permissions": [f'read("user:{a["$id"]}")', 'update("users")']},
               key=False, session=ta)
    assert r.status_code == 200, r.text
    assert t.call("PATCH", f"{t.R}/a1", json={"data": {"title": "by b"}}, key=False, session=tb).status_code == 200
    assert t.call("DELETE", f"{t.R}/a1", key=False, session=tb).status_code == 401
    # Bulk delete only touches rows the caller may delete.
    r = t.call("DELETE", t.R, json={"queries": []}, key=False, session=tb)
    assert r.status_code == 200 and r.json()["total"] == 0
    assert t.count(sql) == 3


def test_guest_cannot_write_without_create_permission(api, sql):
    t = Tdb(api).setup(permissions=['read("any")'], columns=COLUMNS)
    r = t.add({"title": "x"}, key=False)
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    assert t.count(sql) == 0
    assert t.call("GET", t.R, key=False).status_code == 200


def test_guest_create_gets_no_default_permissions(api):
    t = Tdb(api).setup(permissions=['create("any")', 'read("any")'], columns=COLUMNS)
    r = t.add({"title": "x"}, key=False)
    assert r.status_code == 201 and r.json()["$permissions"] == []


def test_disabled_table_and_database_hide_from_users(api, users):
    _, ta = users["a"]
    t = Tdb(api).setup(permissions=['read("any")'], columns=COLUMNS)
    t.call("PUT", t.T, json={"enabled": False})
    assert t.call("GET", t.R, key=False, session=ta).json()["type"] == "table_not_found"
    assert t.call("GET", t.R).status_code == 200
    t.call("PUT", t.T, json={"enabled": True})
    t.call("PUT", t.D, json={"enabled": False})
    assert t.call("GET", t.R, key=False, session=ta).json()["type"] == "database_not_found"
