"""Writing /v1 answers on a transport for :mod:`apps.core.http.serving.v1_protocol`.

An answer with a body in memory leaves in one ``write``: the status line, uvicorn's current
``date`` (and ``server``) fields, the answer's fields with lower-case names (as the ASGI
adapters send them), ``content-length``, then the body. A streamed answer (file downloads)
writes its pieces as they come, waiting whenever the transport's buffer is over its high-water
mark, with ``Transfer-Encoding: chunked`` when it declared no length; a stream that ends short
of the length it declared leaves the answer unfinished, so the connection is closed. Field
values are checked for CR, LF and NUL before anything is written (response splitting).
"""

from __future__ import annotations

import asyncio
import logging
import os
from http import HTTPStatus
from typing import Any

from django.conf import settings

from apps.core.drivers.runtime import current_task
from apps.core.errors import AppwriteError
from apps.core.http import pipeline
from apps.core.http.context import Response, ShortBody
from apps.core.http.serving.lean_asgi import _SendWatch, cookie_header
from apps.core.http.serving.limits import error_body

log = logging.getLogger("apps.core.http")

_STATUS_LINES = {s.value: f"HTTP/1.1 {s.value} {s.phrase}\r\n".encode("ascii") for s in HTTPStatus}
_NO_BODY = (204, 304)
_UNSAFE = ("\r", "\n", "\x00")
_SENDFILE_MAX = 1024 * 1024  # bytes per sendfile call: one large download does not hog the loop
_WAIT_PIECE = 16 * 1024  # bytes sent through the transport when the socket is full


def _status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    return line if line is not None else f"HTTP/1.1 {status} \r\n".encode("ascii")


def _field(name: str, value: Any) -> bytes:
    text = value if type(value) is str else str(value)
    if any(c in text or c in name for c in _UNSAFE):
        raise ValueError(f"invalid character in the {name!r} response field")
    return f"{name.lower()}: {text}\r\n".encode("latin-1")


class ResponseWriter:
    """Writes answers on ``transport``; ``server_state.default_headers`` supplies the fields
    uvicorn adds to every answer. ``broken`` is True once an answer was left unfinished,
    ``stalled`` when that was because its client stopped reading."""

    __slots__ = ("_defaults", "_defaults_src", "_drained", "_lost", "broken", "server_state", "stalled", "transport")

    def __init__(self, transport: asyncio.Transport, server_state: Any) -> None:
        self.transport, self.server_state = transport, server_state
        self._defaults_src = None
        self._defaults = b""
        self._drained: asyncio.Future[Any] | None = None  # set while writing is paused
        self._lost = False
        self.broken = False  # an answer was left unfinished: the connection must end
        self.stalled = False  # ... because its client took no byte for STORAGE_SEND_TIMEOUT

    def _socket_fd(self) -> int | None:
        """The socket's descriptor when bytes may be sent on it directly (plain TCP), else None."""
        transport = self.transport
        if transport.get_extra_info("sslcontext") is not None:
            return None
        sock = transport.get_extra_info("socket")
        fileno = getattr(sock, "fileno", None)
        return fileno() if fileno is not None else None

    # --- transport flow control ---------------------------------------------------------------
    @property
    def paused(self) -> bool:
        """Whether the transport holds more than its high-water mark of unsent answers."""
        return self._drained is not None

    def pause(self) -> None:
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()

    def resume(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def lost(self) -> None:
        self._lost = True
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_exception(ConnectionResetError("the client closed the connection"))
            drained.exception()  # nobody may be waiting (answers held for a client that left): no log

    async def _emptied(self) -> None:
        """Wait until the transport has written everything it buffered (with the high-water
        mark at 0, ``resume_writing`` says so; polled in the rare case it never paused)."""
        while self.transport.get_write_buffer_size():
            if self._lost:
                raise ConnectionResetError("the client closed the connection")
            if self._drained is not None:
                await self._drained
            else:
                await asyncio.sleep(0.005)

    async def _drain(self) -> None:
        if self._drained is not None:
            await self._drained
        elif self._lost:
            raise ConnectionResetError("the client closed the connection")

    # --- answers ------------------------------------------------------------------------------
    def _default_fields(self) -> bytes:
        current = self.server_state.default_headers
        if current is not self._defaults_src:  # uvicorn replaces the list once a second
            self._defaults_src = current
            self._defaults = b"".join(name + b": " + value + b"\r\n" for name, value in current)
        return self._defaults

    def _head(self, response: Response, close: bool) -> tuple[bytearray, bool]:
        """The head of ``response`` (without its final CRLF) and whether it declared a length."""
        head = bytearray(_status_line(response.status))
        head += self._default_fields()
        if response.content_type:
            head += _field("content-type", response.content_type)
        sized = False
        for name, value in response.headers:
            head += _field(name, value)
            if not sized and name.lower() == "content-length":
                sized = True
        for cookie in response.cookies:
            head += b"set-cookie: " + cookie_header(cookie) + b"\r\n"
        if close:
            head += b"connection: close\r\n"
        return head, sized

    def error(self, status: int, type: str, message: str, extra: list[tuple[bytes, bytes]], head_only: bool) -> None:
        """A JSON error answer written at once (before any request work), as the ASGI edge's
        ``send_error`` writes it."""
        body = error_body(status, message, type)
        out = bytearray(_status_line(status))
        out += self._default_fields()
        out += b"content-type: application/json\r\ncontent-length: %d\r\n" % len(body)
        for name, value in extra:
            out += name + b": " + value + b"\r\n"
        out += b"\r\n"
        if not head_only:
            out += body
        self.transport.write(out)

    async def send(self, response: Response, head_only: bool, close: bool) -> bool:
        """Write ``response`` (only its head for a HEAD request; ``close`` adds
        ``Connection: close``). False when the answer was left unfinished (a stream failed or
        ended short, or the client left during it): the caller closes the connection."""
        try:
            head, sized = self._head(response, close)
        except (ValueError, UnicodeEncodeError) as exc:
            log.error("answer not sent (%s); 500 instead", exc)
            response = pipeline.error_response(AppwriteError("general_unknown"))
            head, sized = self._head(response, close)
        status = response.status
        if response.stream is None:
            body = response.body
            if status not in _NO_BODY and not sized:
                head += b"content-length: %d\r\n" % len(body)
            head += b"\r\n"
            if not head_only and status not in _NO_BODY:
                head += body
            self.transport.write(head)
            return True
        chunked = not sized and status not in _NO_BODY and not head_only
        if chunked:
            head += b"transfer-encoding: chunked\r\n"
        head += b"\r\n"
        self.transport.write(head)
        if head_only:
            close_stream = getattr(response.stream, "aclose", None)
            if close_stream is not None:
                await close_stream()
            return True
        return await self._stream(response.stream, chunked)

    async def _stream(self, stream: Any, chunked: bool) -> bool:
        opener = getattr(stream, "local_file", None)
        if opener is not None and not chunked and self._socket_fd() is not None:
            async with opener() as source:
                if source is not None:
                    return await self._sendfile(*source)
        write = self.transport.write
        pieces = aiter(stream)
        stall = None
        try:
            chunk = await anext(pieces, None)  # may wait for a stream slot (STORAGE_STREAMS_MAX)
            stall = _SendWatch(settings.STORAGE_SEND_TIMEOUT)  # from the slot on: queueing is not stalling
            while chunk is not None:
                if chunk:
                    if chunked:
                        write(b"%x\r\n" % len(chunk))
                        write(chunk)
                        write(b"\r\n")
                    else:
                        write(chunk)
                    await self._drain()
                    stall.progress()
                chunk = await anext(pieces, None)
            if chunked:
                write(b"0\r\n\r\n")
            return True
        except asyncio.CancelledError:
            if stall is None or not stall.fired or current_task().uncancel() > 0:
                raise
            log.info("download cut off: its client took no byte for %g s (STORAGE_SEND_TIMEOUT)", stall.timeout)
            self.stalled = True
        except ShortBody:
            pass  # fewer bytes than the head promised: the connection must end unfinished
        except ConnectionResetError:
            pass  # the client left during the stream
        finally:
            if stall is not None:
                stall.stop()
            close = getattr(pieces, "aclose", None)
            if close is not None:
                await close()  # the file is closed now, not when the generator is collected
        self.broken = True
        return False

    async def _sendfile(self, fd: int, start: int, length: int) -> bool:
        """Send bytes ``[start, start + length)`` of the open file ``fd`` with ``sendfile(2)``:
        the kernel copies from the page cache to the socket, so neither a read into Python nor
        a second copy happens (a copy through Python was most of a large download's CPU).

        The transport must not have bytes of its own pending when the socket is written
        directly, and uvloop lets no one else wait for the socket to be writable: so when the
        socket is full, one small piece goes through the transport instead, with the
        transport's high-water mark at 0, and the transport's ``resume_writing`` (its buffer is
        empty again) says when to go on. False when the answer was left unfinished (the file
        ended short, the client left or took no byte for ``STORAGE_SEND_TIMEOUT``)."""
        transport = self.transport
        sock = self._socket_fd()
        if sock is None:  # the caller sends files this way only on a socket
            return False
        limits = transport.get_write_buffer_limits()
        transport.set_write_buffer_limits(high=0, low=0)
        offset, end = start, start + length
        stall = _SendWatch(settings.STORAGE_SEND_TIMEOUT)
        try:
            while offset < end:
                if transport.get_write_buffer_size():
                    await self._emptied()
                    stall.progress()
                try:
                    sent = os.sendfile(sock, fd, offset, min(end - offset, _SENDFILE_MAX))
                except BlockingIOError:  # the socket is full: one piece through the transport
                    piece = os.pread(fd, min(end - offset, _WAIT_PIECE), offset)
                    if not piece:
                        raise ShortBody(f"stored file ended at byte {offset}") from None
                    transport.write(piece)  # buffered if the socket is still full: pause_writing
                    sent = len(piece)
                if sent == 0:
                    raise ShortBody(f"stored file ended at byte {offset}, {end - offset} byte(s) short")
                offset += sent
                stall.progress()
                # A fast reader takes every call's megabyte at once: let the other requests run
                # between two calls, or one large download holds the event loop until it ends.
                await asyncio.sleep(0)
            return True
        except asyncio.CancelledError:
            if not stall.fired or current_task().uncancel() > 0:
                raise
            log.info("download cut off: its client took no byte for %g s (STORAGE_SEND_TIMEOUT)", stall.timeout)
            self.stalled = True
        except ShortBody as exc:
            log.error("download stopped: %s", exc)
        except (ConnectionResetError, BrokenPipeError):
            pass  # the client left during the stream
        finally:
            stall.stop()
            if not self._lost:
                transport.set_write_buffer_limits(*reversed(limits))
        self.broken = True
        return False
