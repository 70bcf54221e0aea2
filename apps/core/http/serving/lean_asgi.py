"""The lean ASGI adapter: serves /v1 straight from the ASGI scope, without Django's handler.

Django's ASGI handler costs two OS threads and several sync<->async hops per request
(its sync middleware chain runs in a thread); the /v1 endpoints need none of it. This adapter builds the
:class:`RequestContext` from the ASGI scope, runs the same pipeline as the Django adapter and
writes the :class:`Response` back. Multipart bodies go through Django's own ``MultiPartParser``
so both adapters parse uploads identically. Selected with ``V1_ADAPTER=lean``.
"""

from __future__ import annotations

import asyncio
import io
import logging
import tempfile
from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import MemoryFileUploadHandler, TemporaryFileUploadHandler
from django.http.multipartparser import MultiPartParser
from django.utils.http import http_date

from apps.core.drivers.runtime import ASYNC, current_task
from apps.core.errors import AppwriteError
from apps.core.http import pipeline
from apps.core.http.clientip import client_ip, client_scheme
from apps.core.http.context import RequestContext, Response, ShortBody, UploadedPart
from apps.core.http.params import body_error, parse_query
from apps.core.http.serving import limits
from apps.core.http.serving.asgi_types import ASGIApp, Receive, Scope, Send
from apps.core.http.serving.leave_watch import leave_watch
from apps.core.http.serving.limits import refuse_admission, send_413

log = logging.getLogger("apps.core.http")


def _part(f: Any) -> UploadedPart:
    """An uploaded file of Django's multipart parser as the handlers see it (one file per field)."""
    return UploadedPart(f.name or "", f.content_type or "", f.size or 0, f.file)


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if name in out:
            out[name] = out[name] + ("; " if name == "cookie" else ", ") + value
        else:
            out[name] = value
    return out


_OVER = "over"  # _read_body: the body passed the cap


async def _read_body(receive: Receive, limit: int) -> Any:
    """The body as a file and its size in bytes: a body that came in one message as an in-memory
    file (no copy), a longer one spooled (in memory up to ``FILE_UPLOAD_MAX_MEMORY_SIZE`` bytes,
    then on disk, like Django's own ASGI handler). ``None`` if the client left, :data:`_OVER`
    as soon as more than ``limit`` bytes arrived (nothing more is read)."""
    message = await receive()
    if message["type"] == "http.disconnect":
        return None
    chunk = message.get("body", b"")
    if len(chunk) > limit:
        return _OVER
    if not message.get("more_body", False):
        return io.BytesIO(chunk), len(chunk)
    body = tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE)
    body.write(chunk)
    size = len(chunk)
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            body.close()
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            body.close()
            return _OVER
        if chunk:
            body.write(chunk)
        if not message.get("more_body", False):
            body.seek(0)
            return body, size


def load_body(ctx: RequestContext, body: Any, size: int) -> None:
    """Put a request body of ``size`` bytes on ``ctx``: multipart parts in ``ctx.form`` and
    ``ctx.files``, anything else as bytes in ``ctx.body``. ``body`` is the body's bytes or a
    readable binary file positioned at 0. Raises 413 ``general_payload_too_large`` over
    ``MAX_REQUEST_BODY`` (any body) or ``MAX_JSON_BODY`` (not multipart), 400 for a malformed
    multipart body. Shared by both of the lean /v1 paths (ASGI and :mod:`v1_protocol`)."""
    if size > settings.MAX_REQUEST_BODY:
        raise AppwriteError("general_payload_too_large")
    if ctx.content_type.split(";", 1)[0].strip().lower() == "multipart/form-data":
        _parse_multipart(ctx, io.BytesIO(body) if isinstance(body, bytes) else body, size)
    elif size > settings.MAX_JSON_BODY:
        raise AppwriteError("general_payload_too_large", "The request's parameters are too large.")
    else:
        ctx.body = body if isinstance(body, bytes) else body.read()


def _parse_multipart(ctx: RequestContext, body: Any, size: int) -> None:
    meta = {"CONTENT_TYPE": ctx.headers.get("content-type", ""), "CONTENT_LENGTH": str(size)}
    handlers = [MemoryFileUploadHandler(), TemporaryFileUploadHandler()]
    try:
        post, files = MultiPartParser(meta, body, handlers, "utf-8").parse()
    except Exception as exc:  # MultiPartParserError, SuspiciousOperation (too many/large), ValueError...
        raise body_error(exc) from None
    ctx.form = [(k, v) for k, values in post.lists() for v in values]
    ctx.files = {name: _part(f) for name, f in files.items()}


def cookie_header(c: Any) -> bytes:
    """The ``Set-Cookie`` value of :class:`~apps.core.http.context.Cookie` ``c``."""
    parts = [f"{c.name}={c.value}", f"expires={http_date(c.expires)}", f"Path={c.path}"]
    if c.httponly:
        parts.append("HttpOnly")
    if c.secure:
        parts.append("Secure")
    if c.samesite:
        parts.append(f"SameSite={c.samesite}")
    return "; ".join(parts).encode("latin-1")


# Whether streamed pieces may go to ``send`` as memoryviews (see :func:`note_server`).
SEND_BUFFERS = False


def note_server(lifespan_send: Send) -> None:
    """Decide, from the server's lifespan ``send`` callable, how streamed pieces (``bytes`` or
    ``memoryview``, see ``apps.storage.streaming``) are sent: as they are under uvicorn, whose
    body ``send`` hands them to its transport's ``write()`` (asyncio and uvloop take any buffer,
    so a 256 KiB piece is not copied once more), as ``bytes`` everywhere else. The ASGI spec's
    ``body`` is ``bytes``: daphne (Twisted: "Data must be bytes") refuses a memoryview, and granian
    2.8 converts one through pyo3's sequence extraction, item by item (read in its source). Deciding from the server actually running, not from the
    ``ASGI_SERVER`` setting, keeps ``manage.py runserver`` (daphne) and servers started by hand
    correct; a server without a lifespan gets ``bytes``."""
    global SEND_BUFFERS
    owner = getattr(lifespan_send, "__self__", None)
    SEND_BUFFERS = type(owner).__module__.startswith("uvicorn.")


async def _send_response(receive: Receive, send: Send, response: Response, head: bool) -> None:
    headers = []
    if response.content_type:
        headers.append((b"content-type", response.content_type.encode("latin-1")))
    for name, value in response.headers:
        headers.append((name.lower().encode("latin-1"), str(value).encode("latin-1")))
    for cookie in response.cookies:
        headers.append((b"set-cookie", cookie_header(cookie)))
    if response.stream is None:
        # HEAD answers keep theirs; 204 and 304 carry none (RFC 9110 §8.6)
        if response.status not in (204, 304) and not any(name == b"content-length" for name, _ in headers):
            headers.append((b"content-length", str(len(response.body)).encode()))
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if head else response.body})
        return
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    if not head and not await _stream_body(receive, send, response.stream):
        return  # the client left: nothing more to send
    await send({"type": "http.response.body", "body": b""})


class _SendWatch:
    """Cancels the current task when no piece has gone out for ``timeout`` seconds (0: never).
    One timer per stream, re-armed only when it fires: each piece costs one clock read."""

    def __init__(self, timeout: float):
        self.timeout, self.fired = timeout, False
        self._handle: asyncio.TimerHandle | None = None
        if timeout > 0:
            self._loop = asyncio.get_running_loop()
            self._task = current_task()
            self.last = self._loop.time()
            self._handle = self._loop.call_at(self.last + timeout, self._check)

    def progress(self) -> None:
        if self._handle is not None:
            self.last = self._loop.time()

    def _check(self) -> None:
        due = self.last + self.timeout
        if self._loop.time() < due:
            self._handle = self._loop.call_at(due, self._check)
            return
        self.fired, self._handle = True, None
        self._task.cancel()

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


async def _stream_body(receive: Receive, send: Send, stream: Any) -> bool:
    """Send ``stream``'s pieces as body messages; False when the client disconnected first.

    The request body is already read, so the next ``receive()`` returns only when the client
    leaves (``http.disconnect``). It is watched while the body streams: uvicorn drops the sends
    of a gone client without an error, so without the watch a client that leaves right after
    the head would still have the whole file read (and a stream slot held) for nobody. The
    check runs when the stream has yielded to the loop (``apps.storage.streaming`` does so at
    least every few pieces), which is when a reset connection is noticed. Once the stream has
    its slot, a client that takes no byte for ``STORAGE_SEND_TIMEOUT`` seconds is cut off
    (the response is left unfinished, so the server closes the connection)."""
    raw = SEND_BUFFERS
    gone = asyncio.ensure_future(receive())
    pieces = aiter(stream)
    stall = first = None
    try:
        # The first piece may wait for a stream slot (STORAGE_STREAMS_MAX): a client that leaves
        # meanwhile gives up its place (and the file it holds open) at once.
        first = asyncio.ensure_future(anext(pieces, None))
        await asyncio.wait((first, gone), return_when=asyncio.FIRST_COMPLETED)
        if not first.done():
            first.cancel()
            await asyncio.wait((first,))  # unwound: its place in the queue is given up
            return False
        chunk = first.result()
        stall = _SendWatch(settings.STORAGE_SEND_TIMEOUT)  # from the slot on: queueing is not stalling
        while chunk is not None:
            if gone.done():
                return False
            if chunk:
                body = chunk if raw or type(chunk) is bytes else bytes(chunk)
                await send({"type": "http.response.body", "body": body, "more_body": True})
                stall.progress()
            chunk = await anext(pieces, None)
        return not gone.done()
    except asyncio.CancelledError:
        if stall is None or not stall.fired or current_task().uncancel() > 0:
            raise
        log.info("download cut off: its client took no byte for %g s (STORAGE_SEND_TIMEOUT)", stall.timeout)
        return False
    except ShortBody:
        # Fewer bytes than the head promised: leave the response unfinished. uvicorn then closes
        # the connection; Twisted (daphne) keeps it open but answers nothing more on it (both
        # tested). Finishing it would let the next response on the connection be read as file bytes.
        return False
    finally:
        if stall is not None:
            stall.stop()
        if first is not None and not first.done():  # cancelled from outside while queued
            first.cancel()
            await asyncio.wait((first,))
        if not gone.done():
            gone.cancel()
        elif not gone.cancelled():
            gone.exception()  # retrieved: a failing receive() only means the client is gone
        close = getattr(pieces, "aclose", None)
        if close is not None:
            await close()  # the file is closed now, not when the generator is collected


class InFlight:
    """Requests of this process between their body's arrival and their answer's start (the
    admission limit, :func:`lean_v1`; the /v1 protocol counts its requests here too)."""

    count = 0


def lean_v1(max_body: int, max_in_flight: int) -> ASGIApp:
    """The ASGI app serving /v1 HTTP requests on the lean adapter, with the outer checks that
    ``apps.core.http.serving.asgi_app`` wraps around Django's handler done in one step (the same
    answers, without three wrappers of ``receive`` and ``send`` per request):

    * the head limits (:func:`apps.core.http.serving.limits.asgi_head_limits`), unless the server's
      protocol enforced them while the head arrived (uvicorn with
      ``apps.core.http.serving.uvicorn_protocol``);
    * the admission limit (``asgi_app.admission_limit``): at most ``max_in_flight`` requests
      (0 = no limit) counted from their body's arrival to their answer's start; one more gets
      503 ``general_service_unavailable`` with ``Retry-After: 1`` before any work;
    * the body cap (``asgi_app.body_limit``): a ``Content-Length`` over ``max_body`` bytes gets
      413 before a byte is read, a body without one as soon as it passes the cap.
    """
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if not limits.SERVER_CHECKS_HEAD:
            problem = limits.scope_head_problem(scope)
            if problem is not None:
                return await limits.send_head_error(send, problem)
        if max_in_flight and InFlight.count >= max_in_flight:
            return await refuse_admission(scope, send)
        await serve_v1(scope, receive, send, max_body, bool(max_in_flight))

    return app


async def serve_v1(scope: Scope, receive: Receive, send: Send, max_body: int, admit: bool) -> None:
    """Serve one /v1 HTTP request (ASGI ``http`` scope whose path starts with ``/v1``).

    ``max_body`` (bytes) caps the body: more gets 413 with
    ``Connection: close``. With ``admit`` the request counts towards :func:`lean_v1`'s admission
    limit from its body's arrival until its answer starts."""
    headers = _headers(scope)
    declared = headers.get("content-length")
    if declared is not None:
        try:
            too_long = int(declared.split(",", 1)[0]) > max_body
        except ValueError:
            too_long = False
        if too_long:
            return await send_413(send)
    peer = (scope.get("client") or ("", 0))[0] or ""
    path = scope["path"][3:] or "/"
    ctx = RequestContext(mode=ASYNC, method=scope["method"], path=path, query=[], headers=headers,
                         peer_ip=peer, scheme=client_scheme(peer, scope.get("scheme", "http"),
                                                            headers.get("x-forwarded-proto")))
    ctx.client_ip = client_ip(peer, headers.get("x-forwarded-for"))
    counted = False
    try:
        read = await _read_body(receive, max_body)
        if read is None:
            return
        if read is _OVER:
            return await send_413(send)
        if admit:
            InFlight.count += 1
            counted = True
        body, size = read
        try:
            ctx.query = parse_query(scope.get("query_string", b""))
            with body:
                load_body(ctx, body, size)
        except AppwriteError as err:
            response = pipeline.error_response(err)
        else:
            watch = leave_watch(receive)
            try:
                response = await pipeline.handle(ctx)
            except asyncio.CancelledError:
                if watch.fired and current_task().uncancel() == 0:
                    log.info("client left during %s %s: its work was cancelled", scope["method"], scope["path"])
                    return
                raise
            finally:
                watch.stop()
    finally:
        if counted:  # the answer starts now (or never): the slot is free
            InFlight.count -= 1
    try:
        await _send_response(receive, send, response, scope["method"] == "HEAD")
    except OSError:
        log.info("client went away during %s %s", scope["method"], scope["path"])
