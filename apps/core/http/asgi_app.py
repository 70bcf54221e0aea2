"""The outer ASGI application: body-size cap, lifespan, protocol routing.

Django's ASGI handler reads the whole request body before any middleware runs
(django-asgi-facts §6), so the cap must sit outside it: a ``Content-Length`` over
``MAX_REQUEST_BODY`` is answered 413 before a byte of the body is read, and a body without a
length is cut off as soon as it passes the cap (CVE-2026-5766 notes the limit belongs at the
server level).
"""

from __future__ import annotations

import logging

import orjson
from django.conf import settings

from apps.core.db import close_databases
from apps.core.kv import close_kv

log = logging.getLogger("apps.core.http")


def _too_large_body() -> bytes:
    return orjson.dumps({
        "message": "The request body is too large.",
        "code": 413,
        "type": "general_payload_too_large",
        "version": settings.APPWRITE_VERSION,
    })


async def _send_413(send) -> None:
    body = _too_large_body()
    await send({
        "type": "http.response.start",
        "status": 413,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close")],
    })
    await send({"type": "http.response.body", "body": body})


def body_limit(app, limit: int):
    """Wrap ``app`` so request bodies over ``limit`` bytes get 413 without being buffered."""

    async def limited(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > limit:
                    return await _send_413(send)
                break
        state = {"received": 0, "over": False, "started": False}

        async def counting_receive():
            if state["over"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > limit:
                    state["over"] = True
                    return {"type": "http.disconnect"}
            return message

        async def tracking_send(message):
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await app(scope, counting_receive, tracking_send)
        if state["over"] and not state["started"]:
            await _send_413(send)

    return limited


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            try:
                await close_databases()
                await close_kv()
                log.info("lifespan shutdown: database and Redis pools closed")
            except Exception:
                log.exception("error while closing pools")
            await send({"type": "lifespan.shutdown.complete"})
            return


def build_application(django_app, websocket_app=None):
    """The process's ASGI app: http -> capped Django app (or, with ``V1_ADAPTER=lean``, /v1
    straight to the lean adapter), websocket -> ``websocket_app``."""
    http_app = body_limit(django_app, settings.MAX_REQUEST_BODY)
    lean_app = None
    if settings.V1_ADAPTER == "lean":
        from apps.core.http.lean_asgi import serve_v1

        lean_app = body_limit(serve_v1, settings.MAX_REQUEST_BODY)

    async def application(scope, receive, send):
        kind = scope["type"]
        if kind == "http":
            if lean_app is not None:
                path = scope["path"]
                if path.startswith("/v1/") or path == "/v1":
                    return await lean_app(scope, receive, send)
            return await http_app(scope, receive, send)
        if kind == "websocket":
            if websocket_app is None:
                await send({"type": "websocket.close", "code": 1008})
                return
            return await websocket_app(scope, receive, send)
        if kind == "lifespan":
            return await _lifespan(receive, send)

    return application
