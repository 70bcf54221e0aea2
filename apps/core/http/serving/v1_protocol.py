"""HTTP/1.1 for the /v1 API straight on the event loop, inside uvicorn (the product's server).

Why: under uvicorn the /v1 pipeline itself is a small part of a request's CPU. A row read by id
on the embedded build cost 128-142 us of server CPU per request through uvicorn's httptools
protocol and the lean ASGI adapter, of which 52 us was the pipeline; the rest was uvicorn's
parser callbacks, the ASGI scope, ``receive``/``send`` messages and header checks, and the
adapter's translation of all that back into a request. With this protocol the same read cost
82-85 us (``loadtests/``, k6 on the other core). It parses the request head once, builds the
:class:`~apps.core.http.context.RequestContext` directly and writes the answer with one
``write``.

What it serves, and what it hands over: a request it can serve exactly is an HTTP/1.1 request
for ``/v1`` whose head parses strictly (a token method of the usual seven, an origin-form
target of visible ASCII, header lines ``name: value`` without control characters, within the
head limits of :mod:`apps.core.http.serving.limits`) and whose body, if any, has one ``Content-Length``
of at most :data:`MAX_BODY` bytes, with no ``Transfer-Encoding``, ``Expect`` or ``Upgrade``.
Anything else - the admin and other Django pages, websockets (``/v1/realtime``), HTTP/1.0,
chunked or large uploads, malformed or oversized heads - is handed over with every byte
received so far to uvicorn's protocol (:class:`~apps.core.http.serving.uvicorn_protocol.LimitedHttpToolsProtocol`),
which then keeps the connection and answers exactly as before (its 400, 414 and 431 included).
Handing over happens only between requests, before a byte of an answer was written.

What it keeps from uvicorn: the server (sockets, signals, lifespan, graceful shutdown: it
registers its connections and request tasks in uvicorn's ``server_state``), the ``date`` and
``server`` headers uvicorn keeps current, ``--limit-concurrency`` (the same JSON 503), and the
client timeouts of the uvicorn protocol (``SERVER_IDLE_TIMEOUT``, ``SERVER_HEADER_TIMEOUT``,
``SERVER_BODY_TIMEOUT``) with the same 408 answers, checked by one timer per connection that
re-arms itself instead of one timer per request. A client that goes away while its request runs
has the request's task cancelled at once (the lean ASGI adapter needs a watch for that).

Selected by ``--http apps.core.http.serving.v1_protocol:protocol`` (``backend.serve.HTTP_PROTOCOL``).
With ``V1_PROTOCOL=asgi`` (and so with ``V1_ADAPTER=django``, the naive build) every connection goes
to uvicorn's protocol.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

from django.conf import settings

from apps.core.http.serving.uvicorn_protocol import HALF_CLOSE_GRACE, LimitedHttpToolsProtocol
from apps.core.http.serving.v1_connection import BODY, BUSY, HEAD, IDLE, Connection
from apps.core.http.serving.v1_head import MAX_BODY, Request, parse_head
from apps.core.http.serving.v1_request import serve
from apps.core.http.serving.v1_writer import ResponseWriter

log = logging.getLogger("apps.core.http")



def protocol(config: Any, server_state: Any, app_state: dict[str, Any],
             _loop: asyncio.AbstractEventLoop | None = None) -> asyncio.Protocol:
    """uvicorn's ``--http`` factory: this protocol with ``V1_PROTOCOL=direct`` (the default), else
    uvicorn's with the project's limits (``V1_PROTOCOL=asgi``, implied by ``V1_ADAPTER=django``)."""
    cls = V1HttpProtocol if settings.V1_PROTOCOL == "direct" else LimitedHttpToolsProtocol
    return cls(config=config, server_state=server_state, app_state=app_state, _loop=_loop)


class V1HttpProtocol(Connection):
    """One client connection (see the module docstring): reading requests, answering them in
    order (:func:`~.v1_request.serve`), and the connection events uvicorn and asyncio deliver."""

    # --- connection ---------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream connection's transport: asyncio's or uvloop's (which does not subclass asyncio.Transport)
        self.transport = cast(asyncio.Transport, transport)
        self.server_state.connections.add(self)
        peer = transport.get_extra_info("peername")
        self.peer = peer[0] if isinstance(peer, tuple) and peer else ""
        self.client = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else self.peer
        if transport.get_extra_info("sslcontext") is not None:
            self.scheme = "https"
        self.writer = ResponseWriter(self.transport, self.server_state)
        self.since = self.loop.time()
        self._arm(self.limits.idle_timeout)

    def connection_lost(self, exc: BaseException | None) -> None:
        self.lost = True
        self.server_state.connections.discard(self)
        self._disarm()
        self.writer.lost()
        if self.task is not None and not self.task.done():
            self.task.cancel()  # the client left: its request's work stops now

    def eof_received(self) -> bool | None:
        """The client closed its sending side (``shutdown(SHUT_WR)``, or ``close``: the same FIN
        on the wire). Requests it sent whole are still answered, pipelined ones in turn, then
        the connection closes (:meth:`_next`); an incomplete one can never be answered, so an
        idle or half-received connection closes now. Requests still running
        ``HALF_CLOSE_GRACE`` seconds after the FIN are taken as abandoned by a client that left
        for good: the connection closes and their work is cancelled (it used to be cancelled at
        once, so a half-closing client never got an answer that had to wait for PostgreSQL)."""
        if self.state != BUSY or self.closing or self.writer.broken:
            return None
        self.eof = True
        self.loop.call_later(HALF_CLOSE_GRACE, self._abandon)
        return True

    def _abandon(self) -> None:
        if not self.lost and not self.transport.is_closing():
            log.info("client %s half-closed %g s ago and its request is still running: cancelled",
                     self.peer, HALF_CLOSE_GRACE)
            self.transport.close()

    def pause_writing(self) -> None:
        self.writer.pause()

    def resume_writing(self) -> None:
        self.writer.resume()
        if self.blocked and not self.lost:
            self.blocked = False
            self._next()

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: close now unless a request is being handled (then after
        its answer)."""
        if self.state in (BUSY, BODY):
            self.closing = True
        else:
            self.transport.close()

    # --- reading ------------------------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        buf = self.buf
        if self.pos == len(buf):
            self.buf, self.pos = data, 0  # the usual case: a whole request in one read, not copied
        else:
            if self.pos or type(buf) is bytes:  # a request in pieces: appended in place from now on
                buf = self.buf = bytearray(memoryview(buf)[self.pos:])
                self.scanned = max(0, self.scanned - self.pos)
                self.pos = 0
            buf += data
        if self.state == BUSY:
            self._hold()
            return
        if self.state == BODY:
            self.since = self.loop.time()
        self._advance()

    def _hold(self) -> None:
        """Stop reading while more than a request's worth of bytes waits unread (a client that
        pipelines): it is read again as the requests are answered (:meth:`_next`)."""
        if not self.paused and len(self.buf) - self.pos > self.limits.head_buffer + MAX_BODY:
            self.paused = True
            self.transport.pause_reading()

    def _advance(self) -> None:
        """Start the next request if its head and body are in the buffer, else wait for them.
        ``buf[pos:]`` is what has not been used yet: requests are taken from it by moving
        ``pos``, not by copying the rest of the buffer each time."""
        buf, pos = self.buf, self.pos
        request = self.request
        if request is None:
            end = buf.find(b"\r\n\r\n", max(pos, self.scanned))
            if end < 0:
                if len(buf) - pos > self.limits.head_buffer:
                    return self._hand_over()  # uvicorn's protocol answers 431
                if buf.count(b"\n", pos) != buf.count(b"\r\n", pos):
                    return self._hand_over()  # bare LF line ends: httptools reads those
                self.scanned = max(pos, len(buf) - 3)  # the next read is searched from here on
                if len(buf) > pos and self.state != HEAD:
                    self.state, self.since = HEAD, self.loop.time()
                    self._arm(self.limits.header_timeout)
                return
            self.scanned = 0
            request = parse_head(buf, end, self.limits, pos)
            if request is None:
                return self._hand_over()
            pos = self.pos = end + 4
        if len(buf) - pos < request.length:
            self.request = request
            if self.state != BODY:
                self.state, self.since = BODY, self.loop.time()
                self._arm(self.limits.body_timeout)
            return
        self.request = None
        if self.state != IDLE:
            self._disarm()  # the head's or the body's clock; the idle one is armed after the answer
        n = request.length
        body = bytes(buf[pos:pos + n]) if n else b""
        self.pos = pos + n
        self._start(request, body)

    # --- a request ----------------------------------------------------------------------------
    def _start(self, request: Request, body: bytes) -> None:
        self.state = BUSY
        if request.close:
            self.closing = True
        limit = self.config.limit_concurrency
        server_state = self.server_state
        if limit is not None and (len(server_state.connections) >= limit or len(server_state.tasks) >= limit):
            # uvicorn's --limit-concurrency, answered as the uvicorn protocol answers it
            self.writer.error(503, "general_service_unavailable",
                              "The server is at its limit of connections. Please retry shortly.",
                              [(b"retry-after", b"1"), (b"connection", b"close")], request.method == "HEAD")
            self.transport.close()
            return
        task = self.loop.create_task(serve(self, request, body))
        self.task = task
        server_state.tasks.add(task)
        task.add_done_callback(self._served)

    def _served(self, task: asyncio.Task[Any]) -> None:
        self.server_state.tasks.discard(task)
        self.task = None
        if not task.cancelled() and task.exception() is not None:
            log.error("the /v1 protocol failed", exc_info=task.exception())
            self.closing = True
        if self.lost:
            return
        if self.writer.stalled:
            self.transport.abort()  # its client reads nothing: nothing more can be flushed to it
            return
        if self.closing or self.writer.broken:
            self._close_gently()
            return
        if self.writer.paused:
            # The client is not reading its answers (the transport holds more than its high-water
            # mark): read and answer nothing more until it does (resume_writing), so a client
            # that pipelines without reading cannot make the answers pile up in memory.
            self.blocked = True
            if not self.paused:
                self.paused = True
                self.transport.pause_reading()
            return
        self._next()

    def _next(self) -> None:
        """After an answer: wait for the next request, or start it if it is already here."""
        if self.closing:  # a graceful shutdown came while the answer waited for the client
            self._close_gently()
            return
        self.state, self.since = IDLE, self.loop.time()
        if self.timer is None:
            self._arm(self.limits.idle_timeout)
        unread = len(self.buf) - self.pos
        if self.paused and unread <= self.limits.head_buffer + MAX_BODY:
            self.paused = False
            self.transport.resume_reading()
        if unread:
            self._advance()
        else:
            self.buf, self.pos = b"", 0
        if self.eof and self.state != BUSY:  # no whole request left from a half-closed client
            self.transport.close()

