"""The async Redis client's deadline: one per call (apps/core/kv.py, ``REDIS_TIMEOUT``)."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from apps.core.kv import KVUnavailable, RedisAsync


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

    from apps.core import events

    if not settings.REDIS_URL:
        pytest.skip("the realtime subscriber publishes through Redis only with REDIS_URL")
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    ctx = SimpleNamespace(kv=RedisAsync(f"redis://127.0.0.1:{port}/0"), mode="async")
    monkeypatch.setattr(events, "_unpublished", events.Throttle())
    event = events.WriteEvent(
        project_id="p", resource="row", action="create",
        ids={"databaseId": "d", "tableId": "t", "rowId": "r"},
        payload={"$id": "r", "$permissions": []}, extra={"read_roles": ["any"]},
    )
    with caplog.at_level("WARNING", logger="apps.core.events"):
        for _ in range(5):
            asyncio.run(events.announce(ctx, event))
    lines = [r for r in caplog.records if r.name == "apps.core.events"]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "1 event(s) not published" in lines[0].getMessage() and lines[0].exc_info is None
    assert events._unpublished.pending == 4
