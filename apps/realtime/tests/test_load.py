"""Bursts, slow consumers and connection churn against a live ASGI server on Redis."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import socket
import struct
import time

import pytest
import redis
from django.conf import settings

from apps.realtime.tests.conftest import connect, recv, subscribe
from apps.realtime.tests.test_live_delivery import publish, row
from conftest import start_server

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL")]


def test_burst_500_events_to_50_subscribers_in_order(rt_server, project):
    """Every subscriber gets all 500 events, in publish order (no silent loss)."""

    async def run():
        sockets = []
        for _ in range(50):
            ws, _ = await connect(rt_server, project.id)
            await subscribe(ws, "s", ["rows"])
            sockets.append(ws)

        async def collect(ws):
            seen = []
            while len(seen) < 500:  # "rows" matches the rows family only: one frame per event
                frame = await recv(ws, timeout=30)
                assert frame["data"]["subscriptions"] == ["s"]
                seen.append(frame["data"]["payload"]["n"])
            return seen

        readers = [asyncio.create_task(collect(ws)) for ws in sockets]

        def burst():
            for n in range(500):
                publish(row(project.id, "x", n, roles=["any"]))

        started = time.monotonic()
        await asyncio.to_thread(burst)
        results = await asyncio.gather(*readers)
        elapsed = time.monotonic() - started
        for seen in results:
            assert seen == list(range(500))
        for ws in sockets:
            await ws.close()
        print(f"burst: 50 x 500 events (25,000 frames) in {elapsed:.1f} s")

    asyncio.run(run())


def _masked_text_frame(text: str) -> bytes:
    data, mask = text.encode(), os.urandom(4)
    length = bytes([0x80 | len(data)]) if len(data) < 126 else bytes([0x80 | 126]) + struct.pack("!H", len(data))
    return bytes([0x81]) + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def test_slow_consumer_is_closed_not_buffered(rt_env, project):
    """A client that stops reading is closed once its queue (50 events here) is full, instead of
    the server buffering without bound. The client is a raw socket with a small receive buffer
    (no read-ahead, no Linux autotuning), so it really pushes back."""
    server = start_server("asgi", {**rt_env, "REALTIME_SEND_QUEUE": "50"})
    sock = socket.socket()
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        sock.connect(("127.0.0.1", server.port))
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall((f"GET /v1/realtime?project={project.id} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                      f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                      "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        sock.settimeout(5)
        assert b"101 Switching Protocols" in sock.recv(4096)
        sock.sendall(_masked_text_frame(json.dumps({"type": "subscribe", "data": [
            {"subscriptionId": "s", "channels": ["rows"], "queries": []}]})))
        time.sleep(0.5)
        sock.recv(65536)  # connected + subscribe response
        for n in range(1500):  # ~30 MB of events; the client reads nothing meanwhile
            event = row(project.id, "x", n, roles=["any"])
            event.payload["blob"] = "x" * 20000
            publish(event)
        deadline = time.monotonic() + 20
        while "closing a slow connection" not in server.log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        received = 0
        sock.settimeout(20)  # uvicorn waits up to 10 s for the close handshake the raw client never sends
        while chunk := sock.recv(1 << 20):
            received += len(chunk)
        assert "closing a slow connection" in server.log.read_text()
        assert received < 1500 * 20000 // 2  # closed well before half the burst was delivered
        print(f"slow consumer: closed after {received // 1024} KiB of ~30,000 KiB")
    finally:
        sock.close()
        server.stop()


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return int(re.search(r"VmRSS:\s+(\d+) kB", fh.read()).group(1))


def _redis_sockets(pid: int, port: int) -> int:
    """Established TCP connections from process ``pid`` to ``port`` (Redis shared with other
    developers' runs, so its global client count is not this server's)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as fh:
            for line in fh.readlines()[1:]:
                parts = line.split()
                if parts[2].endswith(f":{port:04X}") and parts[3] == "01" and parts[9] in inodes:
                    count += 1
    return count


def test_churn_1000_abrupt_disconnects_return_to_baseline(rt_env, project):
    """1,000 connect/subscribe/abort cycles: RSS within 25 MiB of the warmed-up baseline, the
    server's Redis connections within 2 of baseline."""
    server = start_server("asgi", rt_env)
    r = redis.Redis.from_url(settings.REDIS_URL)
    redis_port = r.connection_pool.connection_kwargs.get("port", 6379)
    try:
        async def cycles(count: int, concurrency: int = 20):
            sem = asyncio.Semaphore(concurrency)

            async def one():
                async with sem:
                    ws, frame = await connect(server, project.id)
                    assert frame["type"] == "connected"
                    await ws.send(json.dumps({"type": "subscribe", "data": [
                        {"subscriptionId": "s", "channels": ["rows", "account"], "queries": []}]}))
                    await recv(ws)
                    ws.transport.abort()  # no close handshake

            await asyncio.gather(*[one() for _ in range(count)])

        asyncio.run(cycles(100))
        time.sleep(1.5)
        base_rss, base_clients = _rss_kib(server.proc.pid), _redis_sockets(server.proc.pid, redis_port)
        asyncio.run(cycles(1000))
        time.sleep(1.5)
        rss, clients = _rss_kib(server.proc.pid), _redis_sockets(server.proc.pid, redis_port)
        print(f"churn: RSS {base_rss} -> {rss} KiB, server's redis connections {base_clients} -> {clients}")
        assert rss - base_rss < 25 * 1024
        assert clients <= base_clients + 2
    finally:
        server.stop()
