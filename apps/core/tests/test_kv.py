"""The async Redis client's deadline: one per call (apps/core/drivers/kv.py, ``REDIS_TIMEOUT``)."""

from __future__ import annotations

import asyncio
import socket
import time

import orjson
import pytest

from apps.core.drivers.kv import KVUnavailable, RedisAsync, RedisSync


def test_a_redis_that_never_answers_fails_the_call_within_its_deadline(settings):
    """A server that accepts the connection and never replies (a hung Redis): the call gives up
    with KVUnavailable after REDIS_TIMEOUT instead of waiting forever."""
    settings.REDIS_TIMEOUT = 0.5
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    kv = RedisAsync(f"redis://127.0.0.1:{silent.getsockname()[1]}/0")

    async def call() -> float:
        started = time.monotonic()
        with pytest.raises(KVUnavailable, match="no answer"):
            await kv.get("key")
        return time.monotonic() - started

    try:
        took = asyncio.run(call())
    finally:
        silent.close()
    assert 0.4 < took < 3


def test_calls_work_against_the_real_redis(settings):
    kv = RedisAsync(settings.REDIS_URL)

    async def roundtrip():
        await kv.set("kv-test", b"1", ttl=5)
        value = await kv.get("kv-test")
        await kv.delete("kv-test")
        await kv.close()
        return value

    assert asyncio.run(roundtrip()) == b"1"


def test_events_lost_to_an_outage_are_logged_once_per_interval_without_traceback(caplog, monkeypatch, settings):
    """A Redis outage fails every write's publish (the real realtime subscriber, Redis on a port
    nobody listens on): one warning line per LOG_INTERVAL with the count, not a traceback per
    write (breaker run: 912 tracebacks in one outage)."""
    from types import SimpleNamespace

    from apps.core.domain import events

    if not settings.REDIS_URL:
        pytest.skip("the realtime subscriber publishes through Redis only with REDIS_URL")
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    ctx = SimpleNamespace(kv=RedisAsync(f"redis://127.0.0.1:{port}/0"), mode="async")
    monkeypatch.setattr(events, "_unpublished", events.Throttle())
    event = _row_event()
    with caplog.at_level("WARNING", logger="apps.core.domain.events"):
        for _ in range(5):
            asyncio.run(events.announce(ctx, event))
    lines = [r for r in caplog.records if r.name == "apps.core.domain.events"]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "1 event(s) not published" in lines[0].getMessage() and lines[0].exc_info is None
    assert events._unpublished.pending == 4


def _row_event():
    from apps.core.domain.events import WriteEvent

    return WriteEvent(project_id="p", resource="row", action="create",
                      ids={"databaseId": "d", "tableId": "t", "rowId": "r"},
                      payload={"$id": "r", "$permissions": []}, extra={"read_roles": ["any"]})


class _StalledRedis:
    """A TCP server that accepts connections and never answers (a stalled Redis); counts the
    connections it accepted."""

    def __init__(self):
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.accepted = []
        self.url = f"redis://127.0.0.1:{self.sock.getsockname()[1]}/0"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                self.accepted.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self):
        self.sock.close()
        for conn in self.accepted:
            conn.close()


@pytest.mark.parametrize("pause,connects", [(60.0, 1), (0.0, 4)], ids=["paused", "no-pause"])
def test_a_stalled_redis_costs_one_publish_timeout_per_retry_pause(pause, connects, settings, db):
    """After a publish times out, a WSGI process's writes leave their events in the database
    outbox for REALTIME_PUBLISH_RETRY_SECONDS instead of each waiting REDIS_TIMEOUT on the
    stalled store again; with 0 every write tries (and reconnects) again. Either way no event
    is lost: every one waits in the outbox (the real realtime subscriber, sync mode, the real
    database)."""
    from types import SimpleNamespace

    from apps.core.domain import events
    from apps.core.drivers.db import DjangoSync
    from apps.core.drivers.runtime import run_sync
    from apps.realtime import outbox

    if not settings.REDIS_URL:
        pytest.skip("the realtime subscriber publishes through Redis only with REDIS_URL")
    settings.REDIS_TIMEOUT = 0.3
    settings.REALTIME_PUBLISH_RETRY_SECONDS = pause
    outbox._sync_state.until = 0.0
    stalled = _StalledRedis()
    ctx = SimpleNamespace(kv=RedisSync(stalled.url), mode="sync", db=DjangoSync(), project=None)
    try:
        for _ in range(4):
            run_sync(events.announce(ctx, _row_event()))
        time.sleep(0.2)  # let the accept thread catch up
        assert len(stalled.accepted) == connects
        waiting = run_sync(ctx.db.fetchall("SELECT project, message FROM realtime_outbox"))
        assert [row["project"] for row in waiting] == ["p"] * 4
        assert len({orjson.loads(row["message"])["id"] for row in waiting}) == 4  # one event ID each
    finally:
        outbox._sync_state.until = 0.0
        stalled.close()


def test_publishing_resumes_when_the_retry_pause_ends(settings, db):
    """The pause is per outage, not for good: once it ends the next write publishes to the
    stream again and leaves nothing in the outbox (real Redis, sync mode)."""
    from types import SimpleNamespace

    import redis

    from apps.core.domain import events
    from apps.core.drivers.db import DjangoSync
    from apps.core.drivers.runtime import run_sync
    from apps.realtime import outbox
    from apps.realtime.hub import stream_key

    if not settings.REDIS_URL:
        pytest.skip("the realtime subscriber publishes through Redis only with REDIS_URL")
    settings.REALTIME_PUBLISH_RETRY_SECONDS = 0.3
    outbox._sync_state.failed(KVUnavailable("test"))
    ctx = SimpleNamespace(kv=RedisSync(settings.REDIS_URL), mode="sync", db=DjangoSync(), project=None)
    client = redis.Redis.from_url(settings.REDIS_URL)
    before = client.xlen(stream_key())
    count = "SELECT COUNT(*) AS n FROM realtime_outbox"
    try:
        run_sync(events.announce(ctx, _row_event()))  # inside the pause: into the outbox
        assert run_sync(ctx.db.fetchval(count)) == 1
        assert client.xlen(stream_key()) == before
        time.sleep(0.35)
        run_sync(events.announce(ctx, _row_event()))
        assert run_sync(ctx.db.fetchval(count)) == 1  # straight to the stream
        newest = client.xrevrange(stream_key(), count=1)[0][1]
        assert newest[b"p"] == b"p" and orjson.loads(newest[b"m"])["event"]["ids"]["rowId"] == "r"
    finally:
        outbox._sync_state.until = 0.0


@pytest.mark.parametrize("mode", ["async", "sync"])
def test_the_event_stream_is_trimmed_by_age_and_expires_when_idle(settings, mode):
    """Entries older than ``max_age`` go at the next append (whole 100-entry nodes: ``MINID ~``),
    so a burst of large events does not stay in memory up to MAXLEN; an idle stream expires."""
    import redis

    from apps.core.drivers.kv import RedisSync

    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL")
    key = f"{settings.REDIS_PREFIX}test:stream:{mode}:{time.monotonic_ns()}"
    kv = RedisAsync(settings.REDIS_URL) if mode == "async" else RedisSync(settings.REDIS_URL)
    admin = redis.Redis.from_url(settings.REDIS_URL)

    async def run():
        await kv.append_stream(key, 10000, 0.5, [(b"p", b"%d" % n) for n in range(250)])
        first = admin.xlen(key), admin.pttl(key)
        await asyncio.sleep(0.7)
        await kv.append_stream(key, 10000, 0.5, [(b"p", b"last")])
        await kv.close()
        return first

    try:
        (length, ttl) = asyncio.run(run())
        assert length == 250 and 0 < ttl <= 500
        assert admin.xlen(key) <= 101  # the old nodes are gone, the new entry stays
        assert admin.xrevrange(key, count=1)[0][1] == {b"p": b"p", b"m": b"last"}
    finally:
        admin.delete(key)
