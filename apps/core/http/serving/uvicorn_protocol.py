"""uvicorn's httptools protocol with bounded request heads, client timeouts and JSON refusals.

uvicorn 0.54 with httptools has no limit on a request head (a client may send megabytes of
headers, all buffered) and no timeout for a client that stalls before or inside a request: the
connection and its buffers are held for as long as the client likes. This subclass adds, per
connection (numbers from :func:`apps.core.http.serving.limits.head_limits`):

* the head caps, checked as the parser delivers the target and each header field; a field still
  being received is bounded by counting the bytes read while the head is incomplete
  (``head_buffer``). That guard counts whole reads, so a head sharing one read with a large
  tail of the previous, pipelined request may be refused early (clients do not pipeline bodies);
* ``SERVER_IDLE_TIMEOUT``: a connection with no request in progress, before its first request
  as after a response, is closed (uvicorn's keep-alive timer, armed on connect as well);
* ``SERVER_HEADER_TIMEOUT``: a head must be complete within this time of its first byte;
* ``SERVER_BODY_TIMEOUT``: a body may go this long without a byte while the server is reading
  it (time the app itself pauses reading does not count);
* RFC 9112 §3.2: an HTTP/1.1 request without ``Host``, or any request with two, gets 400;
* upgrades (docs/reliability-http.md): only a websocket handshake ``GET /v1/realtime`` (with
  ``Sec-WebSocket-Key`` and ``Sec-WebSocket-Version: 13``) switches protocols; any other
  ``Upgrade: websocket``, and any upgrade request with a body, gets 400 at once (uvicorn handed
  the first to its websocket protocol, which never answered, and the connection hung for good;
  httptools takes whatever follows an upgrade request's head, body included, for the new
  protocol, so such a body cannot be framed). Another protocol (``h2c``) on a request without a
  body is ignored (RFC 9110 §7.8) and the request served, with any pipelined behind it (uvicorn
  dropped those without a word);
* a client that half-closes after whole requests gets their answers, then the close, unless
  they are still running ``HALF_CLOSE_GRACE`` seconds later (a client that closed for good
  looks the same on the wire: its work is cancelled as before);
* every refusal, and uvicorn's own answers to an unparsable request and past
  ``--limit-concurrency`` (503 ``general_service_unavailable``), are Appwrite's JSON error with
  ``Connection: close`` (:func:`apps.core.http.serving.limits.raw_error`), never a silent close or text.

Selected with ``--http apps.core.http.serving.uvicorn_protocol:LimitedHttpToolsProtocol`` (the launcher
and the test servers pass it).
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import httptools
from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from apps.core.http.serving import limits
from apps.core.http.serving.asgi_types import Receive, Scope, Send
from apps.core.http.serving.limits import (
    BAD_REQUEST,
    BAD_WEBSOCKET,
    BODY_TIMEOUT,
    HEAD_TIMEOUT,
    HEADERS_TOO_LARGE,
    LINE_TOO_LONG,
    NO_HOST,
    TOO_MANY_HEADERS,
    TWO_HOSTS,
    UPGRADE_WITH_BODY,
    error_body,
    head_limits,
    raw_error,
)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "backend.settings")
log = logging.getLogger("apps.core.http")
# Seconds a refused connection keeps reading (and dropping) what its client still sends.
LINGER_SECONDS = 2.0
# Seconds the requests of a client that closed its sending side may still run to be answered;
# then they are taken as abandoned and cancelled (a client that closed for good sends the same
# FIN as one that only half-closed: only a write could tell them apart).
HALF_CLOSE_GRACE = 1.0
REALTIME_PATH = b"/v1/realtime"


async def _json_unavailable(scope: Scope, receive: Receive, send: Send) -> None:
    """uvicorn's answer past ``--limit-concurrency``, as the API's JSON 503."""
    body = error_body(503, "The server is at its limit of connections. Please retry shortly.",
                      "general_service_unavailable")
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"1"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class _Refused(Exception):
    """Raised inside a parser callback to stop parsing; the refusal is on the protocol."""


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """See the module docstring. State added per connection: the refusal being sent, the bytes
    and header bytes of the head in progress, and one timer for the head or the body."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limits.SERVER_CHECKS_HEAD = True  # the apps need not check the head again
        self.limits = head_limits()
        self.timeout_keep_alive = self.limits.idle_timeout  # type: ignore[assignment]  # uvicorn reads it as seconds for call_later; a float works
        self._refusal: tuple[int, str] | None = None
        self._in_head = False
        self._head_bytes = 0
        self._header_bytes = 0
        self._timer: asyncio.TimerHandle | None = None
        self._running = None  # the cycle whose app task was started last
        self._last_read = 0.0
        self._upgrade = False  # the current request is the realtime websocket handshake

    # --- connection --------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn's own signature
        super().connection_made(transport)
        # Idle before the first request: the same timer uvicorn arms after each response.
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def connection_lost(self, exc: BaseException | None) -> None:
        self._cancel_timer()
        super().connection_lost(exc)  # type: ignore[arg-type]  # asyncio passes BaseException | None; uvicorn annotates Exception | None

    def eof_received(self) -> bool | None:  # type: ignore[override]  # asyncio.Protocol's contract: True keeps the half-open connection
        """The client closed its sending side: its complete requests are still answered (the
        last one with ``Connection: close``), then the connection closes; an incomplete one can
        never be, so the connection closes now, as uvicorn closes on any end of input."""
        cycle = self.cycle
        if (self._refusal is not None or cycle is None or cycle.response_complete or cycle.more_body
                or self.transport.is_closing()):
            return None
        cycle.keep_alive = False  # the latest request: those queued before it are answered first
        self._arm(HALF_CLOSE_GRACE, self.transport.close)
        return True

    def data_received(self, data: bytes) -> None:
        if self._refusal is not None:
            return
        self._last_read = self.loop.time()
        self._feed(data)
        if self._in_head and self._refusal is None and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > self.limits.head_buffer:
                self._refuse(*HEADERS_TOO_LARGE)

    def _feed(self, data: bytes) -> None:
        """uvicorn's ``data_received``, but an upgrade request that is not the realtime
        handshake (one without a body: any other was refused) is served as a plain request and
        the bytes after its head are parsed as the next requests (httptools has resumed)."""
        self._unset_keepalive_if_required()
        while True:
            try:
                self.parser.feed_data(data)
                return
            except httptools.HttpParserError:
                msg = "Invalid HTTP request received."
                self.logger.warning(msg)
                self.send_400_response(msg)
                return
            except httptools.HttpParserUpgrade as exc:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                    return
                data = data[exc.args[0]:]
                if not data or self.transport.is_closing():
                    return

    def _should_upgrade(self) -> bool:
        return self._upgrade and self.ws_protocol_class is not None

    def handle_websocket_upgrade(self) -> None:
        self._cancel_timer()  # the websocket protocol takes the transport over
        super().handle_websocket_upgrade()

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        self._running = cycle  # pipelined requests replace self.cycle while this one runs
        super()._start_asgi_task(cycle, _json_unavailable if app is service_unavailable else app)  # type: ignore[arg-type]  # uvicorn's ASGI types, not this package's aliases

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a parser error: a refusal raised in a callback, or a malformed
        request (bad framing, invalid characters, conflicting lengths)."""
        if self._refusal is None:
            log.info("unparsable request from %s: %s", _ip(self.client), msg)
        self._refuse(*(self._refusal or BAD_REQUEST))

    # --- parser callbacks --------------------------------------------------------------------
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head, self._head_bytes, self._header_bytes = True, 0, 0
        self._arm(self.limits.header_timeout, self._head_timed_out)

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > self.limits.request_line:
            self._stop(LINE_TOO_LONG)

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(self.headers) >= self.limits.header_count:
            self._stop(TOO_MANY_HEADERS)
        self._header_bytes += len(name) + len(value)
        if self._header_bytes > self.limits.header_bytes:
            self._stop(HEADERS_TOO_LARGE)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._cancel_timer()
        hosts = 0
        for name, _ in self.headers:
            if name == b"host":
                hosts += 1
        if hosts != 1 and (hosts or self.parser.get_http_version() == "1.1"):
            self._stop(TWO_HOSTS if hosts else NO_HOST)
        self._upgrade = self.parser.should_upgrade() and self._upgrade_allowed()
        super().on_headers_complete()
        # Cancelled by on_message_complete when there is no body (or it came with the head).
        self._arm(self.limits.body_timeout, self._body_check)

    def on_message_complete(self) -> None:
        self._cancel_timer()
        super().on_message_complete()

    # --- helpers -----------------------------------------------------------------------------
    def _upgrade_allowed(self) -> bool:
        """For a request with ``Connection: upgrade`` and ``Upgrade``: True for the realtime
        websocket handshake, False for an upgrade to ignore (no body, not a websocket); any
        other is refused (400, see the module docstring)."""
        fields = dict(self.headers)  # the last of repeated fields: enough to refuse or ignore
        if fields.get(b"upgrade", b"").strip().lower() == b"websocket":
            if (self.parser.get_method() == b"GET" and self.url.partition(b"?")[0].rstrip(b"/") == REALTIME_PATH
                    and fields.get(b"sec-websocket-key") and fields.get(b"sec-websocket-version") == b"13"):
                return True
            self._stop(BAD_WEBSOCKET)
        if b"transfer-encoding" in fields or fields.get(b"content-length", b"0").strip() not in (b"", b"0"):
            self._stop(UPGRADE_WITH_BODY)
        return False

    def _stop(self, refusal: tuple[int, str]) -> None:
        self._refusal = refusal
        raise _Refused(refusal[1])

    def _refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with the JSON error (unless a response is already under way on this
        connection: then only close) and close the connection."""
        self._refusal = (status, message)
        self._cancel_timer()
        self._in_head = False
        started = False
        # Every request of this connection not yet answered: the one whose app runs (it may be
        # an earlier one than self.cycle when the client pipelines) and those queued behind it.
        # Their apps' later sends are dropped and their receive() ends, so none writes after
        # the refusal (a write after write_eof raised in the app: "Cannot call write() after
        # write_eof()").
        for cycle in {id(c): c for c in (self._running, self.cycle, *(c for c, _ in self.pipeline))
                      if c is not None}.values():
            if not cycle.response_complete:
                started = started or cycle.response_started
                cycle.disconnected = True
                cycle.message_event.set()
        self.pipeline.clear()
        if self.transport.is_closing():
            return
        if started or not self.transport.can_write_eof():
            self.transport.close()
            return
        # Closing a socket with unread bytes makes the kernel reset the connection, which may
        # discard the answer before the client reads it: send it with FIN, read and drop what
        # the client still sends for LINGER_SECONDS, then close (as gunicorn and nginx do).
        self.flow.resume_reading()
        self.transport.write(raw_error(status, message))
        self.transport.write_eof()
        self._timer = self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def _arm(self, delay: float, callback: Any) -> None:
        self._cancel_timer()
        self._timer = self.loop.call_later(delay, callback)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _head_timed_out(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined head behind a response still being sent: its time starts after that.
            self._arm(self.limits.header_timeout, self._head_timed_out)
            return
        log.info("request head from %s not complete after %g s (SERVER_HEADER_TIMEOUT)",
                 _ip(self.client), self.limits.header_timeout)
        self._refuse(*HEAD_TIMEOUT)

    def _body_check(self) -> None:
        self._timer = None
        if self.transport.is_closing() or self.cycle is None or not self.cycle.more_body:
            return
        running = self._running
        if running is not None and running is not self.cycle and not running.response_complete:
            # A pipelined body behind an answer still being sent (its app reads it only then):
            # its time starts after that, as a pipelined head's does.
            self._arm(self.limits.body_timeout, self._body_check)
            return
        quiet = self.loop.time() - self._last_read
        if self.flow.read_paused:
            # Reading is paused while the app has not taken what arrived: not the client's
            # stall, and the client's time starts again when reading resumes.
            self._last_read = self.loop.time()
            quiet = 0.0
        if quiet < self.limits.body_timeout:
            self._arm(self.limits.body_timeout - quiet, self._body_check)
            return
        log.info("request body from %s stalled for %g s (SERVER_BODY_TIMEOUT)", _ip(self.client), quiet)
        self._refuse(*BODY_TIMEOUT)


def _ip(client: Any) -> str:
    """The address of uvicorn's ``(host, port)`` client, as the /v1 protocol logs it."""
    return client[0] if isinstance(client, tuple) and client else str(client or "")
