"""No acknowledged write loses its realtime event (``apps.realtime.outbox``).

A live ASGI server on its own throw-away ``redis-server`` (never the shared one): rows written
through the REST API while that Redis is stopped are answered 201/200 and their events wait in
the database outbox until Redis is back; a websocket subscriber then receives every
acknowledged write's event exactly once, in the order the writes were answered. The server's
relay also sends outbox rows no writer published (a crashed writer, a WSGI process in an
outage), drops those older than ``REALTIME_REPLAY_SECONDS``, and readers drop an event that
reached the stream twice."""

from __future__ import annotations

import asyncio
import collections
import os
import time
from types import SimpleNamespace

import orjson
import pytest
import redis
from django.conf import settings

from apps.realtime.tests.conftest import connect, nothing, recv, subscribe
from conftest import Api, PrivateRedis, free_port, start_server

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="the outbox relays to Redis only with REDIS_URL set")

# This server's stream and outbox rows are its own: servers of other tests share the database
# and their relays take only rows of their own stream (REDIS_PREFIX).
PREFIX = f"outbox-test-{os.getpid()}."
STREAM = f"{PREFIX}rt:events"


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory):
    server = PrivateRedis(free_port(), data_dir=tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def redis_running(private_redis):
    """Each test starts with the private Redis up (a failed test may have left it stopped)."""
    if private_redis.proc is None:
        private_redis.start()


@pytest.fixture(scope="module")
def outbox_server(rt_env, private_redis):
    server = start_server("asgi", {**rt_env, "REDIS_URL": private_redis.url, "REDIS_PREFIX": PREFIX,
                                   "REDIS_TIMEOUT": "1", "REALTIME_OUTBOX_POLL_SECONDS": "0.5"})
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


async def _frames_until(ws, wanted: set[str], timeout: float, quiet: float) -> list[str]:
    """Row IDs of the ``event`` frames received, in order, until every ID of ``wanted`` came
    (or ``timeout`` seconds passed), then for ``quiet`` more seconds (to catch duplicates)."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            frame = await recv(ws, timeout=max(0.05, deadline - time.monotonic()))
        except TimeoutError:
            break
        if frame["type"] == "event":
            seen.append(frame["data"]["payload"]["$id"])
            if wanted <= set(seen) and deadline - time.monotonic() > quiet:
                deadline = time.monotonic() + quiet
    return seen


def _waiting(sql) -> int:
    return sql("SELECT COUNT(*) FROM realtime_outbox WHERE stream = %s", (STREAM,))[0][0]


def _sql_in_thread(fn, *args):
    """``fn(*args)`` (SQL through the ``sql`` fixture) on a worker thread, for a coroutine; the
    thread's own Django connection is closed after (else it keeps the test database in use)."""
    from django.db import connections

    def run():
        try:
            return fn(*args)
        finally:
            connections.close_all()

    return asyncio.to_thread(run)


def test_every_acknowledged_write_reaches_the_subscriber_once_in_order_across_a_redis_outage(
        outbox_server, project, private_redis, sql):
    """Single-statement creates (POST: published after the commit, stored in the outbox when
    Redis fails), upserts and bulk creates (their transaction records the events) before,
    during and after a ~3 s Redis outage."""
    api = Api(outbox_server, project)
    db, table = _table(api)
    path = f"/tablesdb/{db}/tables/{table}/rows"
    acknowledged: list[str] = []

    def write(n: int) -> None:
        kind = n % 3
        if kind == 0:
            r = api.call("POST", path, key=True, json={"rowId": f"c{n}", "data": {"title": f"n{n}"}})
        elif kind == 1:
            r = api.call("PUT", f"{path}/u{n}", key=True, json={"data": {"title": f"n{n}"}})
        else:
            r = api.call("POST", path, key=True, json={"rows": [{"$id": f"b{n}a", "title": "a"},
                                                                     {"$id": f"b{n}b", "title": "b"}]})
        assert r.status_code in (200, 201), r.text
        body = r.json()
        acknowledged.extend([row["$id"] for row in body["rows"]] if "rows" in body else [body["$id"]])

    async def run():
        ws, _ = await connect(outbox_server, project.id)
        await subscribe(ws, "s", [f"tablesdb.{db}.tables.{table}.rows"])
        n = 0
        for n in range(30):  # Redis up
            await asyncio.to_thread(write, n)
        await asyncio.to_thread(private_redis.stop)
        down_until, during = time.monotonic() + 3, len(acknowledged)
        while time.monotonic() < down_until:  # Redis down: every write still acknowledged
            n += 1
            await asyncio.to_thread(write, n)
        during = len(acknowledged) - during
        waiting = await _sql_in_thread(_waiting, sql)
        await asyncio.to_thread(private_redis.start)
        for after in range(n + 1, n + 31):  # Redis back
            await asyncio.to_thread(write, after)
        seen = await _frames_until(ws, set(acknowledged), timeout=30, quiet=1.5)
        await ws.close()
        return seen, during, waiting

    seen, during, waiting = asyncio.run(run())
    assert during >= 10, "too few writes while Redis was down to prove anything"
    assert waiting >= during  # they waited in the database, not in memory
    counts = collections.Counter(seen)
    missing = [i for i in acknowledged if i not in counts]
    assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged rows' events never arrived: {missing[:10]}"
    assert not {i: c for i, c in counts.items() if c != 1}, "events delivered more than once"
    assert seen == acknowledged  # in the order the writes were answered
    deadline = time.monotonic() + 5
    while _waiting(sql) and time.monotonic() < deadline:  # rows on the stream are deleted
        time.sleep(0.2)
    assert _waiting(sql) == 0


def test_a_write_that_rolls_back_leaves_no_outbox_event(outbox_server, project, private_redis, sql):
    """The outbox row is in the write's transaction: a bulk create that fails on a duplicate ID
    (409) leaves nothing for the relay, while Redis is down and its events would wait."""
    api = Api(outbox_server, project)
    db, table = _table(api)
    path = f"/tablesdb/{db}/tables/{table}/rows"
    assert api.call("POST", path, key=True, json={"rowId": "taken", "data": {"title": "t"}}).status_code == 201
    private_redis.stop()
    try:
        r = api.call("POST", path, key=True, json={"rows": [{"$id": "fresh", "title": "f"},
                                                                 {"$id": "taken", "title": "t"}]})
        assert r.status_code == 409, r.text
        assert sql("SELECT COUNT(*) FROM realtime_outbox WHERE stream = %s AND message LIKE %s",
                   (STREAM, '%"fresh"%'))[0][0] == 0
        ok = api.call("PUT", f"{path}/later", key=True, json={"data": {"title": "l"}})
        assert ok.status_code == 201, ok.text
        assert sql("SELECT COUNT(*) FROM realtime_outbox WHERE stream = %s AND message LIKE %s",
                   (STREAM, '%"later"%'))[0][0] == 1
    finally:
        private_redis.start()


def _outbox_message(project_id: str, row_id: str) -> bytes:
    from apps.realtime.tests.test_live_delivery import row

    event = row(project_id, "x", 1, roles=["any"])
    event.ids["rowId"] = event.payload["$id"] = row_id
    from apps.realtime.outbox import entry_for

    return entry_for(SimpleNamespace(project=None), event, "2026-01-01T00:00:00.000+00:00").message


def test_the_relay_sends_rows_left_behind_and_drops_stale_ones(outbox_server, project, sql):
    """Rows no writer published (as a writer that crashed after its commit, or a WSGI process
    during an outage, leaves them) are relayed by the server within a few poll intervals; rows
    older than REALTIME_REPLAY_SECONDS are dropped and logged instead."""
    now = time.time()

    def insert(row_id: str, age: float) -> None:
        sql("INSERT INTO realtime_outbox (stream, project, message, created_at) "
            "VALUES (%s, %s, %s, to_timestamp(%s))" if settings.DATABASE_URL else
            "INSERT INTO realtime_outbox (stream, project, message, created_at) "
            "VALUES (%s, %s, %s, datetime(%s, 'unixepoch'))",
            (STREAM, project.id, _outbox_message(project.id, row_id).decode(), now - age))

    async def run():
        ws, _ = await connect(outbox_server, project.id)
        await subscribe(ws, "s", ["rows"])
        await _sql_in_thread(insert, "stale", settings.REALTIME_REPLAY_SECONDS + 60)
        await _sql_in_thread(insert, "left", 0)
        frame = await recv(ws, timeout=10)
        await nothing(ws, 1.0)
        await ws.close()
        return frame

    frame = asyncio.run(run())
    assert frame["data"]["payload"]["$id"] == "left"
    assert _waiting(sql) == 0
    assert "outbox event(s) older than" in outbox_server.log.read_text()


def test_an_event_on_the_stream_twice_reaches_a_socket_once(outbox_server, project, private_redis):
    """A relay may add an entry Redis had already taken (its reply was lost): readers drop a
    message whose event ID they handled."""
    client = redis.Redis.from_url(private_redis.url)
    first, second = _outbox_message(project.id, "twice"), _outbox_message(project.id, "other")

    async def run():
        ws, _ = await connect(outbox_server, project.id)
        await subscribe(ws, "s", ["rows"])
        for message in (first, first, second):
            client.xadd(STREAM, {"p": project.id, "m": message})
        got = [(await recv(ws))["data"]["payload"]["$id"], (await recv(ws))["data"]["payload"]["$id"]]
        await nothing(ws, 1.0)
        await ws.close()
        return got

    assert asyncio.run(run()) == ["twice", "other"]
    assert orjson.loads(first)["id"] != orjson.loads(second)["id"]
