"""A /v1 protocol connection's state, its one timer, and how it ends (:mod:`.v1_protocol`).

:class:`Connection` holds what a connection knows (buffer, state, timer, writer) and every way
it ends: handed over to uvicorn's protocol for good, closed gently after an answer, or refused
with a JSON error (client timeouts). :class:`~.v1_protocol.V1HttpProtocol` adds reading requests
and answering them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from apps.core.http.serving.limits import BODY_TIMEOUT, HEAD_TIMEOUT, head_limits, raw_error
from apps.core.http.serving.uvicorn_protocol import LINGER_SECONDS, LimitedHttpToolsProtocol
from apps.core.http.serving.v1_head import Request
from apps.core.http.serving.v1_writer import ResponseWriter

log = logging.getLogger("apps.core.http")

# Connection states (what the connection waits for).
IDLE, HEAD, BODY, BUSY = range(4)


class Connection(asyncio.Protocol):
    """The state and endings of one client connection; uvicorn constructs the subclass with its
    ``config``, ``server_state`` and ``app_state``."""

    transport: asyncio.Transport  # set by connection_made, before any other call
    writer: ResponseWriter  # likewise

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any], _loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.config, self.server_state, self.app_state = config, server_state, app_state
        self.loop = _loop or asyncio.get_running_loop()
        self.limits = head_limits()
        self.access_log = config.access_log and logging.getLogger("uvicorn.access").hasHandlers()
        self.peer = self.client = ""
        self.scheme = "http"
        self.buf: bytes | bytearray = b""
        self.pos = 0  # buf[pos:] is what has not been used yet
        self.scanned = 0  # where the search for the end of a head in pieces goes on
        self.paused = False  # reading paused while a pipelining client's answers are pending
        self.state = IDLE
        self.request: Request | None = None  # the head whose body is arriving
        self.since = 0.0  # loop time the current state's clock started (idle, head, last body byte)
        self.timer: asyncio.TimerHandle | None = None
        self.task: asyncio.Task[Any] | None = None
        self.closing = False  # close after the answer in progress
        self.blocked = False  # answers wait until the client reads (see _served)
        self.lost = False
        self.eof = False  # the client closed its sending side: close once its requests are answered

    # --- handing over, refusals, timeouts -------------------------------------------------------
    def _hand_over(self) -> None:
        """Give the connection, with what it has received of the current request, to uvicorn's
        protocol for good."""
        self._disarm()
        self.server_state.connections.discard(self)
        successor = LimitedHttpToolsProtocol(config=self.config, server_state=self.server_state,
                                             app_state=self.app_state, _loop=self.loop)
        transport, pending = self.transport, bytes(self.buf[self.pos:])
        self.buf, self.pos = b"", 0
        self.state = IDLE
        eof, self.eof = self.eof, False  # a half-close read already is the successor's to know
        transport.set_protocol(successor)
        successor.connection_made(transport)
        if self.paused:
            transport.resume_reading()
        if pending:
            successor.data_received(pending)
        if eof and not successor.eof_received():
            transport.close()

    def _close_gently(self) -> None:
        """End the connection after an answer: FIN once everything queued is sent, then read and
        drop what the client still sends for ``LINGER_SECONDS`` (or until it closes too) before
        closing. Closing with unread input makes the kernel reset the connection and drop the
        unsent tail of the answer (megabytes of a download with ``Connection: close`` from a
        client that had pipelined more requests behind it)."""
        transport = self.transport
        self.state = BUSY  # no further request is read from this connection
        if transport.is_closing():
            return
        if not transport.can_write_eof():
            transport.close()
            return
        transport.write_eof()
        self.buf, self.pos = b"", 0
        self.data_received = _drop  # type: ignore[method-assign]
        if self.paused:
            self.paused = False
            transport.resume_reading()
        self.loop.call_later(LINGER_SECONDS, transport.close)

    def _refuse_now(self, status: int, message: str, type: str = "general_bad_request") -> None:
        """Answer ``status`` with the JSON error and ``Connection: close``, send it with FIN,
        drop what the client still sends for a moment, then close (as the uvicorn protocol)."""
        self._disarm()
        self.state, self.closing = BUSY, True
        transport = self.transport
        if transport.is_closing():
            return
        if not transport.can_write_eof():
            transport.write(raw_error(status, message, type))
            transport.close()
            return
        transport.write(raw_error(status, message, type))
        transport.write_eof()
        self.buf, self.pos = b"", 0
        self.data_received = _drop  # type: ignore[method-assign]
        transport.resume_reading()
        self.loop.call_later(LINGER_SECONDS, transport.close)

    def _arm(self, delay: float) -> None:
        self._disarm()
        self.timer = self.loop.call_at(self.since + delay, self._watch)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _watch(self) -> None:
        """The connection's one timer: fires at the earliest time its state may have timed out,
        then re-arms for the state it finds (a request answered meanwhile restarted the idle
        clock without touching the timer)."""
        self.timer = None
        if self.transport.is_closing():
            return
        state, limits = self.state, self.limits
        if state == BUSY:
            return  # re-armed when the answer is complete
        timeout = (limits.idle_timeout if state == IDLE else
                   limits.header_timeout if state == HEAD else limits.body_timeout)
        if self.loop.time() < self.since + timeout:
            self.timer = self.loop.call_at(self.since + timeout, self._watch)
            return
        if state == IDLE:
            self.transport.close()
        elif state == HEAD:
            log.info("request head from %s not complete after %g s (SERVER_HEADER_TIMEOUT)", self.peer, timeout)
            self._refuse_now(*HEAD_TIMEOUT)
        else:
            log.info("request body from %s stalled for %g s (SERVER_BODY_TIMEOUT)", self.peer, timeout)
            self._refuse_now(*BODY_TIMEOUT)




def _drop(data: bytes) -> None:
    """``data_received`` of a refused connection: what the client still sends is discarded."""

