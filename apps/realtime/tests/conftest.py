"""Fixtures for realtime tests: a dedicated live ASGI server and a small websocket client."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from conftest import Api, start_server


@pytest.fixture(scope="module")
def rt_env(live_env) -> dict[str, str]:
    """Server environment: the connection limit is off (tests open many sockets from one IP)."""
    return {**live_env, "REALTIME_CONNECTIONS_PER_MINUTE": "0", "REALTIME_AUTH_TTL": "1"}


@pytest.fixture(scope="module")
def rt_server(rt_env):
    server = start_server("asgi", rt_env)
    yield server
    server.stop()


@pytest.fixture
def rt_api(rt_server, project) -> Api:
    return Api(rt_server, project)


def ws_url(server, project_id: str, **params) -> str:
    query = "&".join([f"project={project_id}", *[f"{k}={v}" for k, v in params.items()]])
    return server.url.replace("http://", "ws://") + "/v1/realtime?" + query


async def recv(ws, timeout: float = 5) -> dict:
    """The next JSON frame (raises ``TimeoutError``)."""
    return json.loads(await asyncio.wait_for(ws.recv(), timeout))


async def recv_type(ws, kind: str, timeout: float = 5) -> dict:
    """Skip frames until one of type ``kind``."""
    while True:
        frame = await recv(ws, timeout)
        if frame["type"] == kind:
            return frame


async def nothing(ws, wait: float = 0.7) -> None:
    """Assert that no frame arrives within ``wait`` seconds."""
    try:
        frame = await asyncio.wait_for(ws.recv(), wait)
    except TimeoutError:
        return
    raise AssertionError(f"unexpected frame {frame}")


async def connect(server, project_id: str, *, session: str | None = None, headers: dict | None = None,
                  origin: str | None = None, **params):
    """Open a socket and read its ``connected`` frame; returns ``(ws, connected frame)``."""
    h = dict(headers or {})
    if session:
        h["X-Appwrite-Session"] = session
    ws = await websockets.connect(ws_url(server, project_id, **params), additional_headers=h, origin=origin,
                                  open_timeout=10)
    return ws, await recv(ws)


async def subscribe(ws, sub_id: str, channels: list[str], queries: list[str] | None = None) -> dict:
    await ws.send(json.dumps({"type": "subscribe", "data": [
        {"subscriptionId": sub_id, "channels": channels, "queries": queries or []}]}))
    return await recv_type(ws, "response")
