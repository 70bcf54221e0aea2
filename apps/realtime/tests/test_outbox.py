"""No acknowledged write loses its realtime event: rows created through the REST API of a live
ASGI server while its Redis (a throw-away ``redis-server``, never the shared one) is stopped
are answered 201 and their events wait in the database outbox (``apps.realtime.outbox``) until
Redis is back; a websocket subscriber then receives every acknowledged row's create event
exactly once."""

from __future__ import annotations

import asyncio
import collections
import time

import pytest
from django.conf import settings

from apps.realtime.tests.conftest import connect, recv, subscribe
from conftest import Api, PrivateRedis, free_port, start_server

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="the outbox relays to Redis only with REDIS_URL set")


@pytest.fixture
def restartable_redis(tmp_path):
    server = PrivateRedis(free_port(), data_dir=tmp_path)
    server.start()
    yield server
    server.stop()


def _table(api: Api) -> tuple[str, str]:
    """A table every guest may read (so a guest socket receives every row event)."""
    db = api.call("POST", "/tablesdb", json={"databaseId": "unique()", "name": "outbox"}, key=True).json()["$id"]
    r = api.call("POST", f"/tablesdb/{db}/tables", key=True, json={
        "tableId": "notes", "name": "notes", "permissions": ['read("any")']})
    assert r.status_code == 201, r.text
    c = api.call("POST", f"/tablesdb/{db}/tables/notes/columns/varchar", key=True,
                 json={"key": "title", "size": 100, "required": False})
    assert c.status_code == 202, c.text
    return db, "notes"


async def _frames_until(ws, wanted: set[str], timeout: float, quiet: float) -> collections.Counter:
    """Row IDs of the ``event`` frames received until every ID of ``wanted`` came (or
    ``timeout`` seconds passed), then for ``quiet`` more seconds (to catch duplicates)."""
    seen: collections.Counter = collections.Counter()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            frame = await recv(ws, timeout=max(0.05, deadline - time.monotonic()))
        except TimeoutError:
            break
        if frame["type"] == "event":
            seen[frame["data"]["payload"]["$id"]] += 1
            if wanted <= set(seen) and deadline - time.monotonic() > quiet:
                deadline = time.monotonic() + quiet
    return seen


def test_every_acknowledged_row_reaches_the_subscriber_once_across_a_redis_outage(rt_env, project,
                                                                                   restartable_redis):
    server = start_server("asgi", {**rt_env, "REDIS_URL": restartable_redis.url, "REDIS_TIMEOUT": "1"})
    try:
        api = Api(server, project)
        db, table = _table(api)
        path = f"/tablesdb/{db}/tables/{table}/rows"
        acknowledged: list[str] = []

        def create(n: int) -> None:
            r = api.call("POST", path, key=True, json={"rowId": f"r{n}", "data": {"title": f"n{n}"}})
            assert r.status_code == 201, r.text
            acknowledged.append(r.json()["$id"])

        async def run():
            ws, _ = await connect(server, project.id)
            await subscribe(ws, "s", [f"tablesdb.{db}.tables.{table}.rows"])
            n = 0
            for n in range(20):  # Redis up
                await asyncio.to_thread(create, n)
            await asyncio.to_thread(restartable_redis.stop)
            down_until = time.monotonic() + 3
            during = 0
            while time.monotonic() < down_until:  # Redis down: every write still answered 201
                n += 1
                during += 1
                await asyncio.to_thread(create, n)
            await asyncio.to_thread(restartable_redis.start)
            for after in range(n + 1, n + 21):  # Redis back
                await asyncio.to_thread(create, after)
            seen = await _frames_until(ws, set(acknowledged), timeout=30, quiet=1.5)
            await ws.close()
            return seen, during

        seen, during = asyncio.run(run())
        assert during >= 10, "too few writes while Redis was down to prove anything"
        missing = [i for i in acknowledged if i not in seen]
        assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged rows' events never arrived: {missing[:10]}"
        twice = {i: c for i, c in seen.items() if c != 1}
        assert not twice, f"events delivered more than once: {twice}"
        assert set(seen) == set(acknowledged)
    finally:
        server.stop()
