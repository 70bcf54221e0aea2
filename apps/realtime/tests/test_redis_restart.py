"""Realtime across a Redis restart: a live ASGI server on its own throw-away ``redis-server``
(never the shared one), which is stopped and started again while events flow. Every event that
reached Redis arrives at the socket once, in order; events missed while the server's stream
reader reconnected are replayed, unless older than ``REALTIME_REPLAY_SECONDS``."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from types import SimpleNamespace

import orjson
import pytest
import redis
from django.conf import settings

from apps.core.drivers.kv import KVUnavailable, RedisSync
from apps.core.drivers.runtime import run_sync
from apps.realtime.hub import stream_key
from apps.realtime.publisher import on_write
from apps.realtime.tests.conftest import connect, recv, subscribe
from apps.realtime.tests.test_live_delivery import row
from conftest import PrivateRedis, free_port, start_server

pytestmark = pytest.mark.skipif(not settings.REDIS_URL, reason="the publisher under test needs REDIS_URL set")


@pytest.fixture
def restartable_redis(tmp_path):
    server = PrivateRedis(free_port(), data_dir=tmp_path)
    server.start()
    yield server
    server.stop()


class Publisher(threading.Thread):
    """Publishes events ``0..count-1`` with the server's own publisher (sync mode, as a WSGI
    worker) to ``url``, about ``rate`` per second. A publish that fails because Redis is down is
    retried until it succeeds; before a retry it checks whether the failed ``XADD`` reached the
    stream after all (its reply lost), so the stream holds every event exactly once."""

    def __init__(self, project_id: str, url: str, count: int, rate: float):
        super().__init__(daemon=True)
        self.project_id, self.count, self.rate = project_id, count, rate
        self.ctx = SimpleNamespace(mode="sync", project=None, kv=RedisSync(url))
        self.probe = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        self.failures = 0
        self.error: BaseException | None = None

    def stored(self, n: int) -> bool:
        newest = self.probe.xrevrange(stream_key(), count=1)
        return bool(newest) and orjson.loads(newest[0][1][b"m"])["event"]["payload"]["n"] == n

    def run(self):
        try:
            for n in range(self.count):
                while True:
                    try:
                        run_sync(on_write(self.ctx, row(self.project_id, "x", n, roles=["any"])))
                        break
                    except KVUnavailable:
                        self.failures += 1
                        time.sleep(0.05)
                        try:
                            if self.stored(n):
                                break
                        except redis.RedisError:
                            pass
                time.sleep(1 / self.rate)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc


def _server(rt_env, url: str, **extra):
    # The pytest process publishes with its own REDIS_PREFIX: the server must read the same stream.
    return start_server("asgi", {**rt_env, "REDIS_URL": url, "REDIS_PREFIX": settings.REDIS_PREFIX,
                                 "REDIS_TIMEOUT": "1", **extra})


async def _collect(ws, count: int, timeout: float) -> list[int]:
    seen: list[int] = []
    deadline = time.monotonic() + timeout
    while len(seen) < count and time.monotonic() < deadline:
        try:
            frame = await recv(ws, timeout=max(0.1, deadline - time.monotonic()))
        except TimeoutError:
            break
        seen.append(frame["data"]["payload"]["n"])
    return seen


def test_every_event_arrives_once_in_order_across_a_redis_restart(rt_env, project, restartable_redis):
    server = _server(rt_env, restartable_redis.url)
    count = 600
    try:
        async def run():
            ws, _ = await connect(server, project.id)
            await subscribe(ws, "s", ["rows"])
            publisher = Publisher(project.id, restartable_redis.url, count, rate=150)
            publisher.start()
            await asyncio.sleep(1.0)  # events flowing
            await asyncio.to_thread(restartable_redis.stop)
            await asyncio.sleep(1.0)  # Redis down: the publisher retries, the reader reconnects
            await asyncio.to_thread(restartable_redis.start)
            seen = await _collect(ws, count, timeout=30)
            await asyncio.to_thread(publisher.join, 30)
            await ws.close()
            return seen, publisher

        seen, publisher = asyncio.run(run())
        assert publisher.error is None
        assert publisher.failures > 0  # the restart really happened while events were published
        assert seen == list(range(count))
        assert "stream reader lost Redis" in server.log.read_text()
    finally:
        server.stop()


def test_missed_events_older_than_the_replay_window_are_skipped(rt_env, project, restartable_redis):
    """The server is frozen (SIGSTOP) and its Redis connections killed; events published then
    wait in the stream. Those older than ``REALTIME_REPLAY_SECONDS`` (1 s here) when the reader
    is back are skipped and logged; the newer ones arrive, in order."""
    server = _server(rt_env, restartable_redis.url, REALTIME_REPLAY_SECONDS="1")
    admin = redis.Redis.from_url(restartable_redis.url)
    ctx = SimpleNamespace(mode="sync", project=None, kv=RedisSync(restartable_redis.url))

    def publish(numbers):
        for n in numbers:
            run_sync(on_write(ctx, row(project.id, "x", n, roles=["any"])))

    try:
        async def run():
            ws, _ = await connect(server, project.id)
            await subscribe(ws, "s", ["rows"])
            await asyncio.to_thread(publish, [0])
            assert (await recv(ws))["data"]["payload"]["n"] == 0
            os.kill(server.proc.pid, signal.SIGSTOP)
            try:
                admin.client_kill_filter(_type="normal", skipme=True)
                await asyncio.to_thread(publish, range(1, 6))  # stale by the time the reader is back
                await asyncio.sleep(2.5)
                await asyncio.to_thread(publish, range(6, 11))
            finally:
                os.kill(server.proc.pid, signal.SIGCONT)
            seen = await _collect(ws, 5, timeout=15)
            await ws.close()
            return seen

        assert asyncio.run(run()) == list(range(6, 11))
        assert "5 event(s) older than 1 s (REALTIME_REPLAY_SECONDS) not replayed" in server.log.read_text()
    finally:
        server.stop()
