"""The websocket handshake: project, origin, connection rate limit, credential.

The handshake builds a :class:`~apps.core.http.context.RequestContext` from the ASGI scope and
reuses what /v1 requests use: ``apps.projects.selectors.project_resolve``/``origin_allowed``,
``apps.core.http.cors.same_origin`` and ``apps.accounts.credentials.authn.authenticate``. Credentials:
cookie ``a_session_<project>`` (and ``_legacy``), ``X-Appwrite-Session``, ``X-Fallback-Cookies``, or the ``jwt`` query parameter
(sent as ``X-Appwrite-JWT``). API keys are not a realtime credential and are ignored.

Order as Appwrite's ``app/realtime.php`` onOpen: project (1008), origin (1008), connection rate
limit (1013, ``REALTIME_CONNECTIONS_PER_MINUTE`` per client IP per 60 s), auth.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from django.conf import settings

from apps.accounts.credentials.authn import authenticate, more_factors_required
from apps.core.drivers.db import get_database
from apps.core.drivers.kv import KVUnavailable, get_kv
from apps.core.errors import AppwriteError, unregistered_client
from apps.core.http import cors, hosts
from apps.core.http.auth import Auth
from apps.core.http.clientip import client_ip, client_scheme
from apps.core.http.context import RequestContext
from apps.core.http.pipeline import project_id_of
from apps.projects.selectors import origin_allowed, project_resolve

log = logging.getLogger("apps.realtime")

POLICY_VIOLATION = 1008  # realtime_policy_violation
FORMAT_INVALID = 1003  # realtime_message_format_invalid
TOO_MANY = 1013  # realtime_too_many_messages
CREDENTIAL_HEADERS = ("cookie", "x-appwrite-session", "x-fallback-cookies")


class HandshakeError(Exception):
    """Refuse the connection: an ``error`` frame with ``code``/``message``, then close(code)."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(slots=True)
class Handshake:
    """A connection that passed the handshake."""

    ctx: RequestContext
    auth: Auth
    channels: list[str] = field(default_factory=list)


def context_from_scope(scope: dict) -> RequestContext:
    """A request context for the upgrade request (``mode="async"``, drivers attached)."""
    headers: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        headers[key] = f"{headers[key]}; {text}" if key == "cookie" and key in headers else text
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    peer = (scope.get("client") or ("", 0))[0] or ""
    ctx = RequestContext(
        mode="async", method="GET", path=scope.get("path", ""), query=query, headers=headers, peer_ip=peer,
        scheme=client_scheme(peer, "https" if scope.get("scheme") == "wss" else "http",
                             headers.get("x-forwarded-proto")),
    )
    ctx.client_ip = client_ip(peer, headers.get("x-forwarded-for"))
    ctx.db = get_database("async")
    ctx.kv = get_kv("async")
    return ctx


def credential_headers(ctx: RequestContext) -> dict[str, str]:
    """The headers that carry the caller's credential (the ``jwt`` param becomes a header)."""
    out = {name: ctx.headers[name] for name in CREDENTIAL_HEADERS if ctx.headers.get(name)}
    jwt = next((value for name, value in ctx.query if name == "jwt" and value), "")
    if jwt:
        out["x-appwrite-jwt"] = jwt
    return out


async def resolve_auth(ctx: RequestContext, headers: dict[str, str]) -> Auth:
    """``authenticate`` over only ``headers`` (a copy of ``ctx``: the socket's reader and writer
    may re-check at the same time); raises :class:`AppwriteError` like it does.

    A session still waiting for its second MFA factor counts as a guest here: it receives only
    what guests may read until the challenge is completed (Appwrite's realtime server applies no
    MFA rule; HTTP routes answer 401 ``user_more_factors_required`` instead)."""
    auth = await authenticate(dataclasses.replace(ctx, headers=headers))
    return Auth() if more_factors_required(auth) else auth


async def _over_connection_limit(ctx: RequestContext) -> bool:
    limit = settings.REALTIME_CONNECTIONS_PER_MINUTE
    if limit <= 0:
        return False
    try:
        ((count, _),) = await ctx.kv.hit_windows([f"rt:conn:{ctx.client_ip}"], 60)
    except KVUnavailable:
        log.warning("realtime connection limit skipped: key-value store unavailable")
        return False
    return count > limit


async def handshake(scope: dict) -> Handshake:
    """Check the upgrade request; raises :class:`HandshakeError` to refuse it."""
    ctx = context_from_scope(scope)
    if not hosts.host_allowed(ctx.host):
        raise HandshakeError(POLICY_VIOLATION, "Invalid Host header")
    project_uid = project_id_of(ctx)
    project = await project_resolve(ctx, project_uid) if project_uid else None
    if project is None:
        raise HandshakeError(POLICY_VIOLATION, "Missing or unknown project ID")
    ctx.project = project
    origin = ctx.headers.get("origin", "")
    if origin and not cors.same_origin(ctx, origin):
        if not await origin_allowed(ctx, origin, project):
            raise HandshakeError(POLICY_VIOLATION, unregistered_client("Origin", origin, ctx.project_id))
    if await _over_connection_limit(ctx):
        raise HandshakeError(TOO_MANY, "Too many requests")
    try:
        auth = await resolve_auth(ctx, credential_headers(ctx))
    except AppwriteError as err:
        raise HandshakeError(POLICY_VIOLATION, err.message) from None
    if "websocket" in project.get("protocols_disabled", ()) and not auth.is_key:
        # the Project service switched the websocket protocol off (Appwrite: general_api_disabled)
        raise HandshakeError(POLICY_VIOLATION, AppwriteError("general_api_disabled").message)
    channels = [value for name, value in ctx.query if name in ("channels[]", "channels") and value]
    return Handshake(ctx=ctx, auth=auth, channels=channels)
