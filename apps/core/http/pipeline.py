"""The /v1 request pipeline, shared by every adapter.

Order: error funnel -> CORS -> route -> project -> auth -> scope ->
abuse check -> parameters -> handler. The project, auth and abuse steps are strategies named in
settings (``V1_PROJECT_RESOLVER``, ``V1_AUTHENTICATOR``, ``V1_ABUSE_CHECK``), so ``core`` imports
no domain app.
"""

from __future__ import annotations

import logging
import os
import time
from functools import cache
from typing import Any

import orjson
from django.conf import settings
from django.utils.module_loading import import_string

from apps.core.drivers.db import get_database, refused_value
from apps.core.drivers.db.faults import DatabaseUnavailable
from apps.core.drivers.kv import get_kv
from apps.core.errors import CATALOGUE, AppwriteError, unregistered_client
from apps.core.http import cors, formats, hosts, requestlog
from apps.core.http.auth import USER_SCOPES
from apps.core.http.context import RequestContext, Response
from apps.core.http.endpoint import Router
from apps.core.http.params import collect, validate
from apps.core.http.routes import v1_router

log = logging.getLogger("apps.core.http")

_ERROR_HEADERS = [
    ("Cache-Control", "no-cache, no-store, must-revalidate"),
    ("Expires", "0"),
    ("Pragma", "no-cache"),
]


# On every /v1 answer: no MIME sniffing (a JSON or text body is never run as script or style), and
# no Referer sent onwards from an answer (OAuth2 redirects carry codes and secrets in their URLs).
SECURITY_HEADERS = [("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer")]
# On answers a browser would render as a document that can run script (HTML, SVG, XML): nothing
# may load or run, the document is sandboxed, and no page may frame it.
DOCUMENT_CSP = ("Content-Security-Policy",
                "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox")
_DOCUMENT_TYPES = ("text/html", "image/svg", "application/xhtml", "text/xml", "application/xml", "text/xsl")


def security_headers(response: Response) -> None:
    """Add :data:`SECURITY_HEADERS`, and :data:`DOCUMENT_CSP` when the answer's content type is
    one a browser renders as a scriptable document."""
    response.headers.extend(SECURITY_HEADERS)
    kind = response.content_type
    if kind and kind.startswith(_DOCUMENT_TYPES):
        response.headers.append(DOCUMENT_CSP)


_UNAUTHORIZED = CATALOGUE["user_unauthorized"][1]
_RATE_LIMITED = CATALOGUE["general_rate_limit_exceeded"][1]
_GUEST_HINT = (" No session, JWT or API key came with the request, so it was made as a guest: a session "
               "created without an API key has an empty secret in its answer (send the session's cookie, "
               "or create it with a key).")


# A guest calling a route only API keys may call (a server SDK without ``set_key``): Appwrite's
# message names the scope; this says where it comes from.
_KEY_HINT = (" No API key came with the request: this route needs a key with that scope in the "
             "X-Appwrite-Key header (set_key / setKey in the SDKs; manage.py createapikey makes one).")


def _explained(err: AppwriteError, ctx: RequestContext) -> AppwriteError:
    """The error with what the caller needs to act on it: a refused permission names the role
    the request was seen as (a guest gets the usual cause), and in development a rate limit says
    how to turn the limits off. Other errors are returned as they are."""
    if err.type == "user_unauthorized" and err.message == _UNAUTHORIZED:
        role = ctx.auth.role_label
        err.message = f"{_UNAUTHORIZED} (role: {role})" + (_GUEST_HINT if role == "guests" else "")
    elif err.type == "general_rate_limit_exceeded" and err.message == _RATE_LIMITED and not settings.PRODUCTION:
        err.message = (f"{_RATE_LIMITED} (Development server: set ABUSE_ENABLED=false to turn the rate "
                       "limits off, or raise them with ABUSE_LIMIT_MULTIPLIER.)")
    return err


def error_response(err: AppwriteError) -> Response:
    """Appwrite's error body ``{message, code, type, version}`` with the error's status."""
    body = orjson.dumps({
        "message": err.message,
        "code": err.status,
        "type": err.type,
        "version": settings.APPWRITE_VERSION,
    })
    return Response(status=err.status, body=body, headers=[*_ERROR_HEADERS, *err.headers.items()])


@cache
def _router() -> Router:
    return v1_router()


@cache
def _strategy(name: str) -> Any:
    path = getattr(settings, name, None)
    return import_string(path) if path else None


def switched_off_check(ctx: RequestContext, endpoint: Any) -> None:
    """Refuse a request without an API key to a protocol or service the project switched off:
    403 ``general_api_disabled`` (protocol ``rest``, or ``graphql`` for /v1/graphql and its
    fields) or 503 ``general_service_disabled`` (the endpoint's service: the first part of its
    name, lower-cased: ``account``, ``tablesdb``...). The project row carries both as sets
    (``protocols_disabled``, ``services_disabled``); the pipeline calls this only when one of
    them is non-empty, so the hot path pays two dict reads."""
    service = endpoint.name.partition(".")[0].lower()
    protocol = "graphql" if service == "graphql" else ctx.protocol
    project = ctx.project or {}
    if protocol in project.get("protocols_disabled", ()):
        raise AppwriteError("general_api_disabled")
    if service in project.get("services_disabled", ()):
        raise AppwriteError("general_service_disabled")


def project_id_of(ctx: RequestContext) -> str:
    """The project id: the ``project`` query param, else the ``X-Appwrite-Project`` header."""
    for name, value in ctx.query:
        if name == "project" and value:
            return value
    return ctx.headers.get("x-appwrite-project", "")


async def _handle(ctx: RequestContext) -> Response:
    """Run one /v1 request through the pipeline; never raises."""
    ctx.request_id = os.urandom(8).hex()
    ctx.db = get_database(ctx.mode)
    ctx.kv = get_kv(ctx.mode)
    origin = ctx.headers.get("origin", "")
    try:
        hosts.host_check(ctx.host)
        if ctx.method == "OPTIONS":
            response = await cors.preflight(ctx, origin, _strategy("V1_ORIGIN_CHECKER"))
        else:
            try:
                response = await _dispatch(ctx, origin)
            except DatabaseUnavailable as err:
                # A read whose connection broke (PostgreSQL restarted under it) runs once more
                # on a new connection: it has written nothing and sent nothing yet.
                if not err.lost or ctx.method not in ("GET", "HEAD"):
                    raise
                log.info("%s %s lost its database connection; running it again (request id %s)",
                         ctx.method, ctx.path, ctx.request_id)
                await ctx.db.recover()
                ctx.response_headers.clear()  # the first run's (rate limit headers...) are set again
                ctx.cache_hits.clear()
                response = await _dispatch(ctx, origin)
    except AppwriteError as err:
        response = error_response(_explained(err, ctx))
    except Exception as exc:
        # A value PostgreSQL refused (NUL in text, a number or date out of range) that reached it
        # through Django's ORM rather than the drivers, which answer it themselves: the request's
        # fault (400), and the statement PostgreSQL refused wrote nothing.
        refused = refused_value(exc)
        if refused is None:
            log.exception("unhandled error in %s %s (request id %s)", ctx.method, ctx.path, ctx.request_id)
        response = error_response(refused or AppwriteError("general_unknown"))
    formats.finish(ctx, response)  # older SDKs get older model shapes (X-Appwrite-Response-Format)
    response.headers.extend(ctx.response_headers)
    response.headers.append(("X-Request-Id", ctx.request_id))
    security_headers(response)
    if origin and ctx.origin_allowed:
        response.headers.extend(cors.grant_headers(origin))
    return response


async def _handle_logged(ctx: RequestContext) -> Response:
    """:func:`_handle`, then the request buffered for the request log (``REQUEST_LOG``)."""
    started = time.perf_counter()
    response = await _handle(ctx)
    requestlog.record(ctx, response, started)
    return response


# Run one /v1 request through the pipeline; never raises. Chosen once at start: with the request
# log off (the default) it is the plain pipeline, with no test or call of the log's on the way.
handle = _handle_logged if requestlog.ENABLED else _handle


async def _dispatch(ctx: RequestContext, origin: str) -> Response:
    endpoint, path_params = _router().match(ctx.method, ctx.path)
    ctx.endpoint = endpoint
    ctx.path_params = path_params
    if origin and cors.same_origin(ctx, origin):
        ctx.origin_allowed = True

    if endpoint.needs_project:
        project_id = project_id_of(ctx)
        if not project_id:
            raise AppwriteError("project_id_missing")
        ctx.project = await _strategy("V1_PROJECT_RESOLVER")(ctx, project_id)
        if ctx.project is None:
            raise AppwriteError("project_not_found")
        if origin and not ctx.origin_allowed:
            ctx.origin_allowed = await _strategy("V1_ORIGIN_CHECKER")(ctx, origin, ctx.project)
        ctx.auth = await _strategy("V1_AUTHENTICATOR")(ctx)
        if origin and not ctx.origin_allowed and not ctx.auth.is_key:
            raise AppwriteError("general_unknown_origin", unregistered_client("Origin", origin, ctx.project_id))
        if (ctx.project.get("services_disabled") or ctx.project.get("protocols_disabled")) and not ctx.auth.is_key:
            switched_off_check(ctx, endpoint)
        if endpoint.scope not in ctx.auth.scopes:
            who = (ctx.auth.user or {}).get("email") or "User"
            hint = _KEY_HINT if ctx.auth.kind == "guest" and endpoint.scope not in USER_SCOPES else ""
            raise AppwriteError(
                "general_unauthorized_scope",
                f'{who} (role: {ctx.auth.role_label}) missing scopes (["{endpoint.scope}"])' + hint,
            )
        if endpoint.session_forbidden and ctx.auth.kind in ("session", "jwt"):
            raise AppwriteError("user_session_already_exists")
    elif origin:
        ctx.origin_allowed = True  # public, project-less routes (version, OpenAPI) are readable anywhere

    raw, texts = collect(ctx)
    raw.update(path_params)
    ctx.raw_params = raw
    abuse = _strategy("V1_ABUSE_CHECK")
    after = await abuse(ctx) if abuse is not None and endpoint.abuse else None
    if endpoint.input is not None:
        ctx.params = validate(endpoint.input, raw, texts)
    response: Response = await endpoint.handler(ctx)
    if after is not None:
        await after(response)
    return response
