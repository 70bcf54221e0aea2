"""Row/file events published by another process (this pytest process) onto the shared Redis reach
sockets on the live server, filtered by read roles; cross-process account events; the
connection rate limit.

The databases/storage apps are not on this branch, so row/file events are announced here with
the same subscriber the server uses (``apps.realtime.publisher.on_write``): in sync mode (the
WSGI path: a plain ``PUBLISH`` with the sync client) and in async mode (``group_send``).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
import redis
import websockets
from django.conf import settings

from apps.core.domain.events import WriteEvent
from apps.core.drivers.runtime import run_sync
from apps.realtime.publisher import on_write
from apps.realtime.tests.conftest import connect, nothing, recv, recv_type, subscribe
from conftest import start_server

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="cross-process delivery needs REDIS_URL")


def row(project_id: str, owner: str, n: int = 1, action: str = "create", roles: list[str] | None = None):
    payload = {"$id": f"r{n}", "$sequence": str(n), "$tableId": "t1", "$databaseId": "db1",
               "$createdAt": "2026-01-01T00:00:00.000+00:00", "$updatedAt": "2026-01-01T00:00:00.000+00:00",
               "$permissions": [f'read("user:{owner}")'], "n": n}
    return WriteEvent(project_id, "row", action, {"databaseId": "db1", "tableId": "t1", "rowId": f"r{n}"}, payload,
                      extra={"read_roles": roles if roles is not None else [f"user:{owner}"]})


def publish(event: WriteEvent, mode: str = "sync") -> None:
    ctx = SimpleNamespace(mode=mode, project=None)
    if mode == "sync":
        run_sync(on_write(ctx, event))
    else:
        asyncio.run(on_write(ctx, event))


def test_row_and_file_events_respect_read_roles(rt_server, rt_api):
    a, token_a = rt_api.signup()
    b, token_b = rt_api.signup()
    pid = rt_api.project.id

    async def run():
        ws_a, _ = await connect(rt_server, pid, session=token_a)
        ws_b, _ = await connect(rt_server, pid, session=token_b)
        ws_g, _ = await connect(rt_server, pid)
        for ws in (ws_a, ws_b, ws_g):
            await subscribe(ws, "rows", ["tablesdb.db1.tables.t1.rows"])
            await subscribe(ws, "docs", ["databases.db1.collections.t1.documents.r1.create"])
            await subscribe(ws, "files", ["buckets.b1.files"])
        await asyncio.to_thread(publish, row(pid, a["$id"]))
        first, second = await recv(ws_a), await recv(ws_a)
        assert first["data"]["subscriptions"] == ["rows"] and first["data"]["payload"]["$tableId"] == "t1"
        assert second["data"]["subscriptions"] == ["docs"] and second["data"]["payload"]["$collectionId"] == "t1"
        assert "tablesdb.db1.tables.t1.rows.r1.create" in first["data"]["channels"]
        assert second["data"]["events"][0] == "databases.db1.collections.t1.documents.r1.create"
        await nothing(ws_b)
        await nothing(ws_g, 0.1)

        file_event = WriteEvent(pid, "file", "create", {"bucketId": "b1", "fileId": "f1"},
                                {"$id": "f1", "bucketId": "b1", "$permissions": []}, extra={"read_roles": ["any"]})
        await asyncio.to_thread(publish, file_event, "async")
        for ws in (ws_a, ws_b, ws_g):
            frame = await recv(ws)
            assert frame["data"]["subscriptions"] == ["files"] and frame["data"]["payload"]["$id"] == "f1"

        # Without read_roles nobody gets a row event (fail closed).
        event = row(pid, a["$id"], 2)
        event.extra = {}
        await asyncio.to_thread(publish, event)
        await nothing(ws_a)

        # Roles are checked now, not at subscribe time: after logout A stops receiving.
        r = await asyncio.to_thread(rt_api.call, "DELETE", "/account/sessions/current", session=token_a)
        assert r.status_code == 204, r.text
        await asyncio.sleep(1.3)  # REALTIME_AUTH_TTL=1 on this server
        await asyncio.to_thread(publish, row(pid, a["$id"], 3))
        await nothing(ws_a)
        for ws in (ws_a, ws_b, ws_g):
            await ws.close()

    asyncio.run(run())


def test_write_on_one_process_reaches_socket_on_another(rt_server, rt_env, rt_api):
    other = start_server("asgi", rt_env)
    try:
        user, token = rt_api.signup()

        async def run():
            ws, _ = await connect(other, rt_api.project.id, session=token)
            await subscribe(ws, "me", ["account"])
            r = await asyncio.to_thread(rt_api.call, "PATCH", "/account/name", json={"name": "via A"}, session=token)
            assert r.status_code == 200
            event = await recv_type(ws, "event")
            assert event["data"]["payload"]["name"] == "via A"
            assert event["data"]["channels"] == ["account", f"account.{user['$id']}"]
            await ws.close()

        asyncio.run(run())
    finally:
        other.stop()


@pytest.mark.alone  # counts on rt:conn:127.0.0.1, which every worker's servers share
def test_connection_rate_limit(rt_env, project):
    redis.Redis.from_url(settings.REDIS_URL).delete("rt:conn:127.0.0.1")
    server = start_server("asgi", {**rt_env, "REALTIME_CONNECTIONS_PER_MINUTE": "3"})
    try:
        async def run():
            for _ in range(3):
                ws, frame = await connect(server, project.id)
                assert frame["type"] == "connected"
                await ws.close()
            ws, frame = await connect(server, project.id)
            assert frame == {"type": "error", "data": {"code": 1013, "message": "Too many requests"}}
            with pytest.raises(websockets.ConnectionClosed):
                await recv(ws)
            assert ws.close_code == 1013

        asyncio.run(run())
    finally:
        server.stop()
        redis.Redis.from_url(settings.REDIS_URL).delete("rt:conn:127.0.0.1")


def test_wsgi_build_has_no_realtime(wsgi_server, project):
    async def run():
        with pytest.raises((websockets.InvalidStatus, websockets.InvalidHandshake, OSError)):
            ws = await websockets.connect(wsgi_server.url.replace("http", "ws") + f"/v1/realtime?project={project.id}",
                                          open_timeout=5)
            await ws.close()

    asyncio.run(run())


def test_wsgi_write_reaches_asgi_socket(rt_server, wsgi_server, project):
    """The WSGI build publishes without an event loop (sync PUBLISH in the layer's format)."""
    from conftest import Api

    wsgi_api = Api(wsgi_server, project)
    user, token = wsgi_api.signup()

    async def run():
        ws, _ = await connect(rt_server, project.id, session=token)
        await subscribe(ws, "me", ["account"])
        r = await asyncio.to_thread(wsgi_api.call, "PATCH", "/account/prefs", json={"prefs": {"via": "wsgi"}},
                                    session=token)
        assert r.status_code == 200, r.text
        event = await recv_type(ws, "event")
        assert event["data"]["payload"]["prefs"] == {"via": "wsgi"}
        await ws.close()

    asyncio.run(run())


def test_subscription_queries_filter_live_events(rt_server, rt_api):
    pid = rt_api.project.id

    async def run():
        ws, _ = await connect(rt_server, pid)
        await subscribe(ws, "big", ["rows"], ['{"method":"greaterThan","attribute":"n","values":[5]}'])
        await subscribe(ws, "all", ["documents"])
        for n in (3, 8):
            await asyncio.to_thread(publish, row(pid, "x", n, roles=["any"]))
        frames = [await recv(ws) for _ in range(3)]
        assert [(f["data"]["subscriptions"], f["data"]["payload"]["n"]) for f in frames] == [
            (["all"], 3), (["big"], 8), (["all"], 8)]
        # Re-subscribing with the same ID replaces the subscription (the web SDK's update()).
        await subscribe(ws, "big", ["rows"], ['{"method":"lessThan","attribute":"n","values":[5]}'])
        await ws.send('{"type":"unsubscribe","data":[{"subscriptionId":"all"}]}')
        await recv(ws)
        for n in (9, 2):
            await asyncio.to_thread(publish, row(pid, "x", n, roles=["any"]))
        frame = await recv(ws)
        assert frame["data"]["subscriptions"] == ["big"] and frame["data"]["payload"]["n"] == 2
        await nothing(ws, 0.3)
        await ws.close()

    asyncio.run(run())


@pytest.mark.parametrize("writer", ["asgi", "wsgi"])
def test_bulk_create_publishes_every_row_in_order(rt_server, wsgi_server, project, writer):
    """A bulk write's events go out in one Redis call (kv.publish_many): every row, in order,
    from both builds."""
    from conftest import Api

    api = Api(rt_server if writer == "asgi" else wsgi_server, project)
    db = "/tablesdb"
    assert api.call("POST", db, json={"databaseId": "bk", "name": "bk"}, key=True).status_code in (201, 409)
    assert api.call("POST", f"{db}/bk/tables", key=True,
                    json={"tableId": writer, "name": writer, "permissions": ['read("any")']}).status_code == 201
    assert api.call("POST", f"{db}/bk/tables/{writer}/columns/integer", key=True,
                    json={"key": "n", "required": False}).status_code == 202
    ids = [f"{writer}{n}" for n in range(5)]

    async def run():
        ws, _ = await connect(rt_server, project.id)
        await subscribe(ws, "bulk", [f"tablesdb.bk.tables.{writer}.rows"])
        r = await asyncio.to_thread(api.call, "POST", f"{db}/bk/tables/{writer}/rows", key=True,
                                    json={"rows": [{"$id": rid, "n": n} for n, rid in enumerate(ids)]})
        assert r.status_code == 201, r.text
        got = [(await recv_type(ws, "event"))["data"] for _ in ids]
        assert [e["payload"]["$id"] for e in got] == ids
        assert all(f"tablesdb.bk.tables.{writer}.rows.{rid}.create" in e["events"] or
                   f"databases.bk.tables.{writer}.rows.{rid}.create" in e["events"] for e, rid in zip(got, ids, strict=True))
        await nothing(ws, 0.3)
        await ws.close()

    asyncio.run(run())
