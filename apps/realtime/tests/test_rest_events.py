"""End to end: row and file writes made through the REST API (databases and storage apps) reach
websocket subscribers with the right frames, only those allowed to read the item, on the ASGI
build; a write through the WSGI build reaches an ASGI socket too."""

from __future__ import annotations

import asyncio

import pytest
from django.conf import settings

from apps.realtime.tests.conftest import connect, nothing, recv, subscribe
from conftest import Api

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="cross-process delivery needs REDIS_URL")


def _table(api: Api) -> tuple[str, str]:
    db = api.call("POST", "/tablesdb", json={"databaseId": "unique()", "name": "rt"}, key=True).json()["$id"]
    r = api.call("POST", f"/tablesdb/{db}/tables", key=True, json={
        "tableId": "notes", "name": "notes", "rowSecurity": True, "permissions": ['create("users")']})
    assert r.status_code == 201, r.text
    c = api.call("POST", f"/tablesdb/{db}/tables/notes/columns/varchar", key=True,
                 json={"key": "title", "size": 100, "required": False})
    assert c.status_code == 202, c.text
    return db, "notes"


def test_row_events_from_rest_writes(rt_server, rt_api, wsgi_server):
    db, table = _table(rt_api)
    a, token_a = rt_api.signup()
    b, token_b = rt_api.signup()
    pid = rt_api.project.id
    channel = f"tablesdb.{db}.tables.{table}.rows"

    async def run():
        ws_a, _ = await connect(rt_server, pid, session=token_a)
        ws_b, _ = await connect(rt_server, pid, session=token_b)
        await subscribe(ws_a, "mine", [channel])
        await subscribe(ws_b, "theirs", [channel, "documents"])
        created = await asyncio.to_thread(rt_api.call, "POST", f"/tablesdb/{db}/tables/{table}/rows",
                                          json={"rowId": "n1", "data": {"title": "hello"}}, session=token_a)
        assert created.status_code == 201, created.text
        frame = await recv(ws_a)
        assert frame["type"] == "event" and frame["data"]["subscriptions"] == ["mine"]
        data = frame["data"]
        assert data["payload"]["$id"] == "n1" and data["payload"]["title"] == "hello"
        assert data["payload"]["$tableId"] == table and data["payload"]["$sequence"].isdigit()
        assert f"{channel}.n1.create" in data["channels"]
        assert f"databases.{db}.tables.{table}.rows.n1.create" in data["events"]
        assert data["timestamp"].endswith("+00:00")
        await nothing(ws_b)  # B may not read A's row

        updated = await asyncio.to_thread(rt_api.call, "PATCH", f"/tablesdb/{db}/tables/{table}/rows/n1",
                                          json={"data": {"title": "edited"}}, session=token_a)
        assert updated.status_code == 200, updated.text
        frame = await recv(ws_a)
        assert frame["data"]["payload"]["title"] == "edited"
        assert any(e.endswith(".update") for e in frame["data"]["events"])

        # Written through the WSGI build: the event still reaches the ASGI socket.
        wsgi = Api(wsgi_server, rt_api.project)
        deleted = await asyncio.to_thread(wsgi.call, "DELETE", f"/tablesdb/{db}/tables/{table}/rows/n1",
                                          session=token_a)
        assert deleted.status_code == 204, deleted.text
        frame = await recv(ws_a)
        assert any(e.endswith(".delete") for e in frame["data"]["events"])
        await nothing(ws_b)

        # A row readable by any user reaches B too.
        shared = await asyncio.to_thread(rt_api.call, "POST", f"/tablesdb/{db}/tables/{table}/rows", session=token_a,
                                         json={"rowId": "n2", "data": {"title": "for all"},
                                               "permissions": ['read("users")']})
        assert shared.status_code == 201, shared.text
        assert (await recv(ws_a))["data"]["payload"]["$id"] == "n2"
        got = [await recv(ws_b), await recv(ws_b)]  # one frame per channel family
        assert {f["data"]["payload"].get("$collectionId", f["data"]["payload"].get("$tableId")) for f in got} == {table}
        for ws in (ws_a, ws_b):
            await ws.close()

    asyncio.run(run())


def test_file_events_from_rest_writes(rt_server, rt_api):
    a, token_a = rt_api.signup()
    b, token_b = rt_api.signup()
    pid = rt_api.project.id
    bucket = rt_api.call("POST", "/storage/buckets", key=True, json={
        "bucketId": "unique()", "name": "rt", "fileSecurity": True, "permissions": ['create("users")']}).json()["$id"]

    async def run():
        ws_a, _ = await connect(rt_server, pid, session=token_a)
        ws_b, _ = await connect(rt_server, pid, session=token_b)
        for ws in (ws_a, ws_b):
            await subscribe(ws, "files", [f"buckets.{bucket}.files"])
        up = await asyncio.to_thread(rt_api.call, "POST", f"/storage/buckets/{bucket}/files", session=token_a,
                                     data={"fileId": "f1"}, files={"file": ("a.txt", b"hello", "text/plain")})
        assert up.status_code == 201, up.text
        frame = await recv(ws_a)
        assert frame["data"]["payload"]["$id"] == "f1" and frame["data"]["payload"]["bucketId"] == bucket
        assert f"buckets.{bucket}.files.f1.create" in frame["data"]["channels"]
        await nothing(ws_b)
        for ws in (ws_a, ws_b):
            await ws.close()

    asyncio.run(run())
