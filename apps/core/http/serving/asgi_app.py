"""The outer ASGI application: body-size cap, lifespan, protocol routing.

Django's ASGI handler reads the whole request body before any middleware runs,
so the cap must sit outside it: a ``Content-Length`` over
``MAX_REQUEST_BODY`` is answered 413 before a byte of the body is read, and a body without a
length is cut off as soon as it passes the cap (CVE-2026-5766 notes the limit belongs at the
server level).
"""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings

from apps.core.drivers.db import close_databases
from apps.core.drivers.kv import close_kv
from apps.core.drivers.runtime import start_services, stop_services
from apps.core.http.serving.asgi_types import ASGIApp, Message, Receive, Scope, Send
from apps.core.http.serving.limits import asgi_head_limits, refuse_admission, send_413

log = logging.getLogger("apps.core.http")


def body_limit(app: ASGIApp, limit: int) -> ASGIApp:
    """Wrap ``app`` so request bodies over ``limit`` bytes get 413 without being buffered."""

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > limit:
                    return await send_413(send)
                break
        state = {"received": 0, "over": False, "started": False}

        async def counting_receive() -> Message:
            if state["over"]:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                if state["received"] > limit:
                    state["over"] = True
                    return {"type": "http.disconnect"}
            return message

        async def tracking_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await app(scope, counting_receive, tracking_send)
        if state["over"] and not state["started"]:
            await send_413(send)

    return limited


def admission_limit(app: ASGIApp, limit: int) -> ASGIApp:
    """Wrap ``app`` so at most ``limit`` requests are being handled in this process at once
    (0 = no limit).

    A request counts from the moment its body has arrived until its answer starts: a client
    that sends its body or reads its answer slowly costs no CPU and holds no slot (the body cap
    and ``STORAGE_STREAMS_MAX`` bound those). One more is answered at once, before any request
    work, with 503 ``general_service_unavailable`` and ``Retry-After: 1`` (RFC 9110 §10.2.3). A
    bodiless request keeps its connection; one with a body gets ``Connection: close``, since
    its unread body is still on the wire. The answer carries no CORS grant (checking the origin
    is request work). Why: under overload every admitted request shares the event loop, so each
    one more makes all of them slower; a fast refusal keeps the admitted ones' latency bounded.
    """
    if limit <= 0:
        return app
    in_flight = 0

    async def admitted(scope: Scope, receive: Receive, send: Send) -> None:
        nonlocal in_flight
        if in_flight >= limit:
            return await refuse_admission(scope, send)
        state = 0  # 0 body arriving, 1 counted, 2 answered

        async def receiving() -> Message:
            nonlocal in_flight, state
            message = await receive()
            if state == 0 and message["type"] == "http.request" and not message.get("more_body", False):
                state = 1
                in_flight += 1
            return message

        async def answering(message: Message) -> None:
            nonlocal in_flight, state
            if state == 1 and message["type"] == "http.response.start":
                state = 2
                in_flight -= 1
            await send(message)

        try:
            return await app(scope, receiving, answering)
        finally:
            if state == 1:
                in_flight -= 1

    return admitted


# Logged at startup by a process without the in-process worker, so that an operator who moved the
# quick start to PostgreSQL learns why mails, messages and webhooks are not sent.
NO_WORKER = ("no in-process worker (TASKS_IN_PROCESS_WORKER is off): mail, messaging, webhooks, function "
             "builds and large deletes wait in their queues for `python manage.py worker`")


async def _lifespan(receive: Receive, send: Send) -> None:
    worker = None
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            from apps.core.http.serving.lean_asgi import note_server
            from apps.core.http.serving.path import announce

            note_server(send)
            announce(send)  # one INFO line: server, protocol, adapter
            start_services()  # e.g. the realtime outbox relay
            if settings.TASKS_IN_PROCESS_WORKER:  # the embedded quick start: no separate worker
                from apps.core.tasks.worker import in_process_worker

                worker = in_process_worker()
            else:  # e.g. the quick start moved to PostgreSQL: queued work waits for a worker
                log.info(NO_WORKER)
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            if worker is not None:  # it finishes its running task first (a few seconds at most)
                await asyncio.get_running_loop().run_in_executor(None, worker.stop)
            try:
                await stop_services()
            except Exception:
                log.exception("error while stopping background services")
            try:
                await close_databases()
                await close_kv()
                log.info("lifespan shutdown: database and Redis pools closed")
            except Exception:
                log.exception("error while closing pools")
            await send({"type": "lifespan.shutdown.complete"})
            return


def build_application(django_app: ASGIApp, websocket_app: ASGIApp | None = None) -> ASGIApp:
    """The process's ASGI app: http -> capped Django app (or, with ``V1_ADAPTER=lean``, /v1
    straight to the lean adapter), websocket -> ``websocket_app``. /v1 requests on either path
    pass the admission limit (``API_MAX_IN_FLIGHT``) first; every HTTP request the head limits
    (:mod:`apps.core.http.serving.limits`) before that."""
    http_app = body_limit(django_app, settings.MAX_REQUEST_BODY)
    v1_app = admission_limit(http_app, settings.API_MAX_IN_FLIGHT)
    # The head caps for every ASGI server (under uvicorn the protocol has already enforced them
    # while the head arrived; daphne and granian bound its memory themselves).
    http_app = asgi_head_limits(http_app)
    v1_app = asgi_head_limits(v1_app)
    if settings.V1_ADAPTER == "lean":  # the same three checks, done inside the adapter
        from apps.core.http.serving.lean_asgi import lean_v1

        v1_app = lean_v1(settings.MAX_REQUEST_BODY, settings.API_MAX_IN_FLIGHT)

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            path = scope["path"]
            if path.startswith("/v1/") or path == "/v1":
                return await v1_app(scope, receive, send)
            return await http_app(scope, receive, send)
        if kind == "websocket":
            if websocket_app is None:
                await send({"type": "websocket.close", "code": 1008})
                return
            return await websocket_app(scope, receive, send)
        if kind == "lifespan":
            return await _lifespan(receive, send)

    return application
