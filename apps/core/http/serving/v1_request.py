"""Serving one request read by the /v1 protocol (:mod:`.v1_protocol`): the request context from
the parsed head, the admission limit (``API_MAX_IN_FLIGHT``), the pipeline, the access log line,
and the answer through the connection's writer."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING
from urllib.parse import unquote

from django.conf import settings

from apps.core.drivers.runtime import ASYNC, current_task
from apps.core.errors import AppwriteError
from apps.core.http import pipeline
from apps.core.http.clientip import client_ip, client_scheme
from apps.core.http.context import RequestContext
from apps.core.http.params import parse_query
from apps.core.http.serving.lean_asgi import InFlight, load_body
from apps.core.http.serving.v1_head import Request

if TYPE_CHECKING:
    from apps.core.http.serving.v1_protocol import V1HttpProtocol

log = logging.getLogger("apps.core.http")


async def serve(conn: V1HttpProtocol, request: Request, body: bytes) -> None:
    """Answer ``request`` (its ``body`` complete) on ``conn``; a client that left has the work
    cancelled (its task is cancelled by ``connection_lost``)."""
    raw_path, _, query = request.target.partition(b"?")
    path = raw_path.decode("ascii")
    if "%" in path:
        path = unquote(path)
    headers = request.headers
    ctx = RequestContext(mode=ASYNC, method=request.method, path=path[3:] or "/", query=[], headers=headers,
                         peer_ip=conn.peer,
                         scheme=client_scheme(conn.peer, conn.scheme, headers.get("x-forwarded-proto")))
    ctx.client_ip = client_ip(conn.peer, headers.get("x-forwarded-for"))
    head = request.method == "HEAD"
    max_in_flight = settings.API_MAX_IN_FLIGHT
    if max_in_flight and InFlight.count >= max_in_flight:
        # The admission limit's answer, as the ASGI edge gives it: a request that came with a
        # body also gets Connection: close (there, its body is still unread on the wire).
        if request.length:
            conn.closing = True
        conn.writer.error(503, "general_service_unavailable",
                          "The server is at its limit of requests in progress. Please retry shortly.",
                          [(b"retry-after", b"1"), (b"connection", b"close")] if request.length
                          else [(b"retry-after", b"1")], head)
        return
    InFlight.count += 1
    counted = True
    try:
        try:
            ctx.query = parse_query(query)
            load_body(ctx, body, len(body))
        except AppwriteError as err:
            response = pipeline.error_response(err)
        else:
            response = await pipeline.handle(ctx)
        InFlight.count -= 1
        counted = False
        if conn.access_log:  # the arguments uvicorn's access formatter reads
            logging.getLogger("uvicorn.access").info('%s - "%s %s HTTP/%s" %d', conn.client, request.method,
                                                     request.target.decode("ascii"), "1.1", response.status)
        if not await conn.writer.send(response, head, conn.closing):
            conn.closing = True  # an unfinished answer: the connection must end
    except asyncio.CancelledError:
        if conn.lost and current_task().uncancel() == 0:
            log.info("client left during %s %s: its work was cancelled", request.method, path)
            return
        raise
    finally:
        if counted:
            InFlight.count -= 1

