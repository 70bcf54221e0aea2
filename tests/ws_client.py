"""A small websocket client for tests of /v1/realtime (used by the realtime tests and by other
apps' tests that check what a socket receives)."""

from __future__ import annotations

import asyncio
import json

import websockets


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
