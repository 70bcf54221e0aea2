"""Request-head limits and the JSON answers the HTTP edge gives before any request work.

One set of numbers for every build (settings ``MAX_REQUEST_LINE``, ``MAX_HEADER_COUNT``,
``MAX_HEADER_BYTES``):

* a request line (method, target, version) over ``MAX_REQUEST_LINE`` bytes -> 414;
* more than ``MAX_HEADER_COUNT`` header fields, or more than ``MAX_HEADER_BYTES`` bytes of header
  names plus values -> 431.

Where each is enforced, so that parsing stays bounded in memory and time:

* uvicorn (the product): while the head arrives, in the HTTP protocol
  (:mod:`apps.core.http.serving.uvicorn_protocol`), before anything is buffered past the caps;
* gunicorn (the WSGI build): gunicorn's own bounded parser with its limits set from the same
  settings (``backend/gunicorn_conf.py``), its answers rewritten as JSON
  (:mod:`apps.core.http.serving.gunicorn_worker`), and the total-bytes cap, which gunicorn lacks, in
  :func:`wsgi_limits`;
* any other ASGI server (daphne, granian): :func:`asgi_head_limits` checks the parsed head,
  so the answer is the same, but the server's own parser bounds the memory.

Appwrite's catalogue has no type for these statuses: the body is ``general_bad_request`` with the
HTTP status that says what was wrong (RFC 9110 §15.5.15, RFC 6585 §5, RFC 9110 §15.5.9 for 408).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from http import HTTPStatus
from typing import Any

import orjson
from django.conf import settings

from apps.core.errors import CATALOGUE
from apps.core.http.serving.asgi_types import ASGIApp, Receive, Scope, Send

LINE_TOO_LONG = (414, "The request line is too long.")
TOO_MANY_HEADERS = (431, "The request has too many header fields.")
HEADERS_TOO_LARGE = (431, "The request header fields are too large.")
HEAD_TIMEOUT = (408, "The request head was not received in time.")
BODY_TIMEOUT = (408, "The request body was not received in time.")
BAD_REQUEST = (400, "The request could not be parsed as HTTP/1.1.")
# RFC 9112 §3.2: an HTTP/1.1 request without Host, or any request with two, is answered 400.
NO_HOST = (400, "The request has no Host header field.")
TWO_HOSTS = (400, "The request has more than one Host header field.")
# Upgrades the server refuses (docs/reliability-http.md): websockets exist only as the realtime
# handshake, and a request with a body cannot be framed once it asks to switch protocols.
BAD_WEBSOCKET = (400, "A websocket is opened only by a GET /v1/realtime handshake with Sec-WebSocket-Key "
                      "and Sec-WebSocket-Version: 13.")
UPGRADE_WITH_BODY = (400, "A request asking to switch protocols may not have a body.")


@dataclass(frozen=True, slots=True)
class HeadLimits:
    """The limits in bytes and counts, and the client timeouts in seconds (ASGI under uvicorn)."""

    request_line: int
    header_count: int
    header_bytes: int
    header_timeout: float
    body_timeout: float
    idle_timeout: float

    @property
    def head_buffer(self) -> int:
        """Bytes a request head may occupy on the wire: the caps plus ``: `` and CRLF per field
        and the request line's method, version and CRLF."""
        return self.request_line + self.header_bytes + 4 * self.header_count + 64


@cache
def head_limits() -> HeadLimits:
    """The process's limits, read once from settings."""
    return HeadLimits(settings.MAX_REQUEST_LINE, settings.MAX_HEADER_COUNT, settings.MAX_HEADER_BYTES,
                      settings.SERVER_HEADER_TIMEOUT, settings.SERVER_BODY_TIMEOUT, settings.SERVER_IDLE_TIMEOUT)


def error_body(status: int, message: str, type: str = "general_bad_request") -> bytes:
    """Appwrite's error body ``{message, code, type, version}`` with ``status`` as its code."""
    return orjson.dumps({"message": message, "code": status, "type": type, "version": settings.APPWRITE_VERSION})


def raw_error(status: int, message: str, type: str = "general_bad_request") -> bytes:
    """A whole HTTP/1.1 error response with ``Connection: close``, for servers' own answers."""
    body = error_body(status, message, type)
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\ncache-control: no-cache, no-store, must-revalidate\r\n"
            "connection: close\r\n\r\n")
    return head.encode("ascii") + body


def head_problem(headers: Any, target_length: int = 0) -> tuple[int, str] | None:
    """``(status, message)`` when a parsed head breaks a limit, else ``None``.

    ``headers`` are ``(name, value)`` pairs (bytes or str); ``target_length`` is the length of
    the request target (path and query) in bytes."""
    limits = head_limits()
    if target_length > limits.request_line:
        return LINE_TOO_LONG
    count = size = 0
    for name, value in headers:
        count += 1
        size += len(name) + len(value)
    if count > limits.header_count:
        return TOO_MANY_HEADERS
    if size > limits.header_bytes:
        return HEADERS_TOO_LARGE
    return None


# True once this process serves through a protocol that enforces the head limits while the head
# arrives (``apps.core.http.serving.uvicorn_protocol``): then the ASGI apps skip checking them again.
SERVER_CHECKS_HEAD = False


def scope_head_problem(scope: Scope) -> tuple[int, str] | None:
    """:func:`head_problem` of an ASGI HTTP scope (its headers, raw path and query string)."""
    target = len(scope.get("raw_path") or scope["path"].encode()) + len(scope.get("query_string", b""))
    return head_problem(scope.get("headers", ()), target)


async def send_head_error(send: Send, problem: tuple[int, str]) -> None:
    """Answer an ASGI request with the JSON error of ``problem`` and ``Connection: close``."""
    body = error_body(*problem)
    await send({"type": "http.response.start", "status": problem[0], "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def asgi_head_limits(app: ASGIApp) -> ASGIApp:
    """Wrap an ASGI app so HTTP requests whose head breaks a limit get the JSON error."""

    async def limited(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not SERVER_CHECKS_HEAD:
            problem = scope_head_problem(scope)
            if problem is not None:
                return await send_head_error(send, problem)
        return await app(scope, receive, send)

    return limited


def _wsgi_error(start_response: Callable[..., Any], status: int, message: str, type: str = "general_bad_request") -> list[bytes]:
    body = error_body(status, message, type)
    start_response(f"{status} {HTTPStatus(status).phrase}", [
        ("Content-Type", "application/json"), ("Content-Length", str(len(body))), ("Connection", "close")])
    return [body]


def _spool_chunked(environ: dict[str, Any]) -> bool:
    """Read a chunked body (no ``Content-Length``; gunicorn decodes the chunks) into a spooled
    file and give it a ``CONTENT_LENGTH``: Django reads no body without one, so an upload would
    arrive empty. False when it passes ``MAX_REQUEST_BODY`` (nothing more is read)."""
    spool = tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE)
    size, stream = 0, environ["wsgi.input"]
    while piece := stream.read(64 * 1024):
        size += len(piece)
        if size > settings.MAX_REQUEST_BODY:
            spool.close()
            return False
        spool.write(piece)
    spool.seek(0)
    environ["wsgi.input"], environ["CONTENT_LENGTH"] = spool, str(size)
    return True


def wsgi_limits(app: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a WSGI app with the request-line cap (gunicorn's own stops at 8190 bytes), the
    header-bytes cap (gunicorn enforces the count and each field), the 400 for an HTTP/1.1
    request without ``Host`` (RFC 9112 §3.2; gunicorn accepts it) and
    the body cap for chunked bodies (413 ``general_payload_too_large``).

    Header bytes are counted from the environ (``HTTP_*``, ``CONTENT_TYPE``, ``CONTENT_LENGTH``):
    names without ``HTTP_``, repeated fields joined, so within a few bytes of the wire count."""

    def limited(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        target = environ.get("RAW_URI") or environ.get("PATH_INFO", "") + "?" + environ.get("QUERY_STRING", "")
        if len(target) > head_limits().request_line:
            return _wsgi_error(start_response, *LINE_TOO_LONG)
        size = 0
        for key, value in environ.items():
            if key.startswith("HTTP_"):
                size += len(key) - 5 + len(value)
            elif key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                size += len(key) + len(value)
        if size > head_limits().header_bytes:
            return _wsgi_error(start_response, *HEADERS_TOO_LARGE)
        if "HTTP_HOST" not in environ and environ.get("SERVER_PROTOCOL") == "HTTP/1.1":
            return _wsgi_error(start_response, *NO_HOST)  # gunicorn refuses two Host fields itself
        if "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower() and not environ.get("CONTENT_LENGTH"):
            if not _spool_chunked(environ):
                return _wsgi_error(start_response, 413, "The request body is too large.", "general_payload_too_large")
        return app(environ, start_response)

    return limited


# ASGI answers sent before any request work (the body cap, the admission limit), shared by the
# outer ASGI application (asgi_app) and the lean adapter (lean_asgi).


async def send_error(send: Send, type: str, message: str, extra_headers: Any = ()) -> None:
    """Answer with the Appwrite JSON error ``type`` (status from the catalogue)
    and ``Connection: close`` unless ``extra_headers`` is given; for answers sent before any
    request work (413 cap, 503 admission)."""
    status = CATALOGUE[type][0]
    body = orjson.dumps({"message": message, "code": status, "type": type, "version": settings.APPWRITE_VERSION})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers.extend(extra_headers or [(b"connection", b"close")])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def send_413(send: Send) -> None:
    """The body cap's answer: 413 ``general_payload_too_large``."""
    await send_error(send, "general_payload_too_large", "The request body is too large.")


_RETRY = [(b"retry-after", b"1")]
_RETRY_CLOSE = [*_RETRY, (b"connection", b"close")]


async def refuse_admission(scope: Scope, send: Send) -> None:
    """The admission limit's answer: 503 ``general_service_unavailable`` with ``Retry-After: 1``,
    and ``Connection: close`` when the request has a body (it is still on the wire, unread)."""
    has_body = any(name in (b"content-length", b"transfer-encoding") and value not in (b"0", b"")
                   for name, value in scope.get("headers", ()))
    await send_error(send, "general_service_unavailable",
                     "The server is at its limit of requests in progress. Please retry shortly.",
                     _RETRY_CLOSE if has_body else _RETRY)
