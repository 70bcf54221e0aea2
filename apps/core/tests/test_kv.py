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
