"""The permission matrix: rows and files shared by team, team role, member and label, read by a
member holding the role, a member without it, a labelled user outside the team, a removed
member and a guest, through get, list, queries, cursors, search and realtime.

Every reader must see exactly the items whose permissions name one of its roles, however it
asks; a removed member loses the team's items on the next request.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from apps.realtime.tests.conftest import connect, nothing, recv_type, subscribe
from conftest import Api, start_server

DB, TABLE, BUCKET = "pm", "items", "pmfiles"


@pytest.fixture(scope="module")
def pm_server(live_env):
    server = start_server("asgi", {**live_env, "REALTIME_CONNECTIONS_PER_MINUTE": "0", "REALTIME_AUTH_TTL": "1"})
    yield server
    server.stop()


@pytest.fixture
def pm(pm_server, project):
    api = Api(pm_server, project)
    users = {name: api.signup(name=name) for name in ("alice", "bob", "carol", "dave")}
    team_id = f"team{time.monotonic_ns()}"
    key = {"key": True}
    assert api.call("POST", "/teams", json={"teamId": team_id, "name": "T"}, **key).status_code == 201
    memberships = {}
    for name, roles in (("alice", ["editor"]), ("bob", []), ("dave", ["editor"])):
        r = api.call("POST", f"/teams/{team_id}/memberships", json={"userId": users[name][0]["$id"], "roles": roles},
                     **key)
        assert r.status_code == 201, r.text
        memberships[name] = r.json()["$id"]
    assert api.call("PUT", f"/users/{users['carol'][0]['$id']}/labels", json={"labels": ["vip"]}, **key).status_code == 200
    grants = {
        "team": f'read("team:{team_id}")',
        "role": f'read("team:{team_id}/editor")',
        "member": f'read("member:{memberships["alice"]}")',
        "label": 'read("label:vip")',
        "any": 'read("any")',
    }
    assert api.call("POST", "/tablesdb", json={"databaseId": DB, "name": "pm"}, **key).status_code == 201
    t = f"/tablesdb/{DB}/tables"
    assert api.call("POST", t, json={"tableId": TABLE, "name": "items", "rowSecurity": True,
                                     "permissions": ['create("users")']}, **key).status_code == 201
    t += f"/{TABLE}"
    assert api.call("POST", t + "/columns/varchar", json={"key": "title", "size": 64, "required": False},
                    **key).status_code == 202
    assert api.call("POST", t + "/indexes", json={"key": "ft", "type": "fulltext", "columns": ["title"]},
                    **key).status_code == 202
    for name, perm in grants.items():
        r = api.call("POST", t + "/rows", json={"rowId": name, "data": {"title": f"shared {name}"},
                                                "permissions": [perm]}, **key)
        assert r.status_code == 201, r.text
    assert api.call("POST", "/storage/buckets", json={"bucketId": BUCKET, "name": "f", "fileSecurity": True,
                                                      "permissions": []}, **key).status_code == 201
    for name, perm in grants.items():
        r = api.call("POST", f"/storage/buckets/{BUCKET}/files", key=True,
                     data={"fileId": name, "permissions[]": [perm]}, files={"file": (f"{name}.txt", b"x")})
        assert r.status_code == 201, r.text
    # dave leaves: his session, cached by this read, must lose the team at once.
    assert api.call("GET", f"{t}/rows/role", session=users["dave"][1]).status_code == 200
    assert api.call("DELETE", f"/teams/{team_id}/memberships/{memberships['dave']}", **key).status_code == 204
    return api, users, team_id, grants


EXPECTED = {
    "alice": {"team", "role", "member", "any"},
    "bob": {"team", "any"},
    "carol": {"label", "any"},
    "dave": {"any"},
    "guest": {"any"},
}


def _session(users, who):
    return None if who == "guest" else users[who][1]


@pytest.mark.parametrize("who", sorted(EXPECTED))
def test_rows_and_files_follow_team_member_and_label_roles(pm, who):
    api, users, _, grants = pm
    session = _session(users, who)
    rows = f"/tablesdb/{DB}/tables/{TABLE}/rows"
    files = f"/storage/buckets/{BUCKET}/files"
    expected = EXPECTED[who]
    for name in grants:
        r = api.call("GET", f"{rows}/{name}", session=session)
        assert r.status_code == (200 if name in expected else 404), (who, name, r.text)
        f = api.call("GET", f"{files}/{name}", session=session)
        assert f.status_code == (200 if name in expected else 404), (who, name, f.text)
    listed = api.call("GET", rows, session=session).json()
    assert {x["$id"] for x in listed["rows"]} == expected and listed["total"] == len(expected)
    q = json.dumps({"method": "startsWith", "attribute": "title", "values": ["shared"]})
    queried = api.call("GET", rows, session=session, params={"queries[]": q}).json()
    assert {x["$id"] for x in queried["rows"]} == expected
    found = api.call("GET", rows, session=session, params={
        "queries[]": json.dumps({"method": "search", "attribute": "title", "values": ["shared"]})}).json()
    assert {x["$id"] for x in found["rows"]} == expected
    seen, cursor = [], None
    while True:
        qs = [json.dumps({"method": "limit", "values": [1]})]
        if cursor:
            qs.append(json.dumps({"method": "cursorAfter", "values": [cursor]}))
        page = api.call("GET", rows, session=session, params={"queries[]": qs}).json()["rows"]
        if not page:
            break
        seen += [x["$id"] for x in page]
        cursor = page[-1]["$id"]
    assert set(seen) == expected and len(seen) == len(expected)
    for hidden in set(grants) - expected:  # a row the reader cannot see is no cursor either
        r = api.call("GET", rows, session=session,
                     params={"queries[]": json.dumps({"method": "cursorAfter", "values": [hidden]})})
        assert r.status_code == 400 and r.json()["type"] == "general_cursor_not_found", (who, hidden)
    listed_files = api.call("GET", files, session=session).json()
    assert {x["$id"] for x in listed_files["files"]} == expected
    searched = api.call("GET", files, session=session, params={"search": ".txt"}).json()
    assert {x["$id"] for x in searched["files"]} == expected


def test_only_held_roles_may_be_granted(pm):
    api, users, team_id, _ = pm
    rows = f"/tablesdb/{DB}/tables/{TABLE}/rows"
    ok = api.call("POST", rows, session=users["alice"][1], json={
        "rowId": "unique()", "data": {"title": "mine"}, "permissions": [f'read("team:{team_id}/editor")']})
    assert ok.status_code == 201, ok.text
    for who in ("bob", "dave"):
        refused = api.call("POST", rows, session=users[who][1], json={
            "rowId": "unique()", "data": {"title": "x"}, "permissions": [f'read("team:{team_id}/editor")']})
        assert refused.status_code == 401 and refused.json()["type"] == "user_unauthorized", (who, refused.text)
    label = api.call("POST", rows, session=users["carol"][1], json={
        "rowId": "unique()", "data": {"title": "x"}, "permissions": ['read("label:vip")']})
    assert label.status_code == 201, label.text


def test_role_changes_apply_on_the_next_request(pm):
    api, users, team_id, _ = pm
    rows = f"/tablesdb/{DB}/tables/{TABLE}/rows"
    bob = users["bob"][1]
    assert api.call("GET", f"{rows}/role", session=bob).status_code == 404
    mid = api.call("GET", f"/users/{users['bob'][0]['$id']}/memberships", key=True).json()["memberships"][0]["$id"]
    assert api.call("PATCH", f"/teams/{team_id}/memberships/{mid}", key=True,
                    json={"roles": ["editor"]}).status_code == 200
    assert api.call("GET", f"{rows}/role", session=bob).status_code == 200
    assert api.call("PUT", f"/users/{users['bob'][0]['$id']}/labels", key=True, json={"labels": ["vip"]}).status_code == 200
    assert api.call("GET", f"{rows}/label", session=bob).status_code == 200
    assert api.call("DELETE", f"/teams/{team_id}", key=True).status_code == 204
    assert api.call("GET", f"{rows}/team", session=bob).status_code == 404
    assert api.call("GET", f"{rows}/role", session=bob).status_code == 404
    assert api.call("GET", "/teams", session=bob).json()["total"] == 0


def test_realtime_delivers_by_team_role(pm, pm_server):
    api, users, team_id, _ = pm

    async def main():
        sockets = {}
        for who in ("alice", "bob", "carol", "dave"):
            ws, _ = await connect(pm_server, api.project.id, session=users[who][1])
            await subscribe(ws, "s1", ["rows", "teams", "memberships"])
            sockets[who] = ws
        rows = f"/tablesdb/{DB}/tables/{TABLE}/rows"
        await asyncio.to_thread(api.call, "POST", rows, key=True, json={
            "rowId": "rt1", "data": {"title": "rt"}, "permissions": [f'read("team:{team_id}/editor")']})
        frame = await recv_type(sockets["alice"], "event")
        assert frame["data"]["payload"]["$id"] == "rt1"
        for who in ("bob", "carol", "dave"):
            await nothing(sockets[who])
        await asyncio.to_thread(api.call, "PUT", f"/teams/{team_id}", key=True, json={"name": "Renamed"})
        for who in ("alice", "bob"):
            frame = await recv_type(sockets[who], "event")
            assert f"teams.{team_id}.update" in frame["data"]["events"]
            assert "teams" in frame["data"]["channels"] and frame["data"]["payload"]["name"] == "Renamed"
        for who in ("carol", "dave"):
            await nothing(sockets[who])
        for ws in sockets.values():
            await ws.close()

    asyncio.run(main())
