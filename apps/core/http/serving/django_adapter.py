"""The Django adapter: serves the /v1 endpoints inside Django's ASGI and WSGI handlers.

:class:`V1Middleware` is the outermost middleware. It answers every ``/v1`` request itself, so
the admin's middleware (sessions, CSRF, messages) never runs there. It is sync- and
async-capable: under ASGI Django gives it an async ``get_response`` and it awaits the pipeline on
the server's loop (no thread hop in this middleware); under WSGI it drives the same pipeline with
:func:`apps.core.drivers.runtime.run_sync` (no event loop, no thread per request).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.request import RawPostDataException
from django.http.response import HttpResponseBase

from apps.core.drivers.runtime import ASYNC, SYNC, run_sync
from apps.core.errors import AppwriteError
from apps.core.http import pipeline
from apps.core.http.clientip import client_ip, client_scheme
from apps.core.http.context import RequestContext, Response, UploadedPart
from apps.core.http.params import body_error, parse_query
from apps.core.http.serving import leave_watch_sync

PREFIX = "/v1/"


def _part(f: Any) -> UploadedPart:
    """An uploaded file of Django's multipart parser as the handlers see it (one file per field)."""
    return UploadedPart(f.name or "", f.content_type or "", f.size or 0, f.file)


def is_v1(path: str) -> bool:
    """True for ``/v1`` and everything under ``/v1/``."""
    return path.startswith(PREFIX) or path == "/v1"


class V1Middleware:
    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[..., Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        if not is_v1(request.path_info):
            return self.get_response(request)
        ctx, early = _context(request, SYNC)
        if early is not None:
            return _to_django(early, SYNC)
        watched = leave_watch_sync.start(request.META)
        try:
            response = run_sync(pipeline.handle(ctx))
        finally:
            if watched:
                leave_watch_sync.finish()
        return _to_django(response, SYNC)

    async def _acall(self, request: HttpRequest) -> Any:
        if not is_v1(request.path_info):
            return await self.get_response(request)
        ctx, early = _context(request, ASYNC)
        response = early or await pipeline.handle(ctx)
        return _to_django(response, ASYNC)


def _connection_scheme(request: HttpRequest) -> str:
    """The scheme of the connection itself: the ASGI scope's, or WSGI's ``wsgi.url_scheme``."""
    scope = getattr(request, "scope", None)
    if scope is not None:
        return scope.get("scheme") or "http"
    return str(request.META.get("wsgi.url_scheme", "http"))


def _context(request: HttpRequest, mode: str) -> tuple[RequestContext, Response | None]:
    """Build the context; returns an early error response for bodies that can't be read."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    peer = request.META.get("REMOTE_ADDR", "") or ""
    ctx = RequestContext(
        mode=mode,
        method=request.method or "GET",
        path=request.path_info[len(PREFIX) - 1:] or "/",
        query=[],
        headers=headers,
        peer_ip=peer,
        # Not request.scheme: Django's SECURE_PROXY_SSL_HEADER believes any peer.
        scheme=client_scheme(peer, _connection_scheme(request), headers.get("x-forwarded-proto")),
    )
    ctx.client_ip = client_ip(peer, headers.get("x-forwarded-for"))
    try:
        ctx.query = parse_query(request.META.get("QUERY_STRING", ""))
        if mode == ASYNC and not request.META.get("CONTENT_LENGTH"):
            _measure_chunked_body(request)
        length = int(request.META.get("CONTENT_LENGTH") or 0)
        if length > settings.MAX_REQUEST_BODY:
            raise AppwriteError("general_payload_too_large")
        if request.content_type == "multipart/form-data":
            try:
                post, files = request.POST, request.FILES
            except Exception as exc:
                raise body_error(exc) from None
            ctx.form = [(k, v) for k, values in post.lists() for v in values]
            ctx.files = {
                name: _part(f)
                for name, f in files.items()
            }
        elif request.method not in ("GET", "HEAD", "OPTIONS") or length:
            ctx.body = request.body
    except AppwriteError as err:
        return ctx, pipeline.error_response(err)
    except RawPostDataException:
        return ctx, pipeline.error_response(AppwriteError("general_bad_request"))
    except Exception as exc:  # RequestDataTooBig, bad Content-Length...
        return ctx, pipeline.error_response(body_error(exc))
    return ctx, None


def _measure_chunked_body(request: HttpRequest) -> None:
    """Give a body sent without ``Content-Length`` (chunked) its length. Django's ASGI handler
    has read it whole (within the outer cap) into the request's stream, but its parsers read
    ``CONTENT_LENGTH`` bytes, none when it is missing, so an upload would arrive empty. (The
    WSGI build does the same in ``apps.core.http.serving.limits.wsgi_limits``.)"""
    stream = getattr(request, "_stream", None)
    if stream is None or not hasattr(stream, "seek"):
        return
    size = stream.seek(0, 2)
    stream.seek(0)
    if size:
        request.META["CONTENT_LENGTH"] = str(size)


def _to_django(response: Response, mode: str) -> HttpResponseBase:
    if response.stream is not None:
        out: HttpResponseBase = StreamingHttpResponse(
            # Django tries iter() before aiter(): an object with both would be taken as sync and,
            # under ASGI, read whole into memory first. Hand over only the
            # async iterator under ASGI.
            aiter(response.stream) if mode == ASYNC else iter(response.stream),
            status=response.status,
            content_type=response.content_type,
        )
    else:
        out = HttpResponse(response.body, status=response.status, content_type=response.content_type)
    for name, value in response.headers:
        out.headers[name] = value
    # The pipeline logs its own failures (with the request id); without this Django's handler
    # would add one django.request line per 5xx answer, e.g. per 503 while Redis is down.
    out._has_been_logged = True  # type: ignore[attr-defined]  # Django's private flag (django.utils.log.log_response)
    for c in response.cookies:
        out.set_cookie(
            c.name, c.value, expires=_http_date(c.expires), path=c.path,
            secure=c.secure, httponly=c.httponly, samesite=c.samesite,  # type: ignore[arg-type]  # "Lax"/"Strict"/"None" or None
        )
        # Send the token as is: base64 padding would make SimpleCookie quote it.
        out.cookies[c.name].set(c.name, c.value, c.value)
    return out


def _http_date(ts: int) -> str:
    from django.utils.http import http_date

    return http_date(ts)
