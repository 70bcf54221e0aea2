"""OAuth2 sign-in endpoints (Appwrite's routes and redirect sequence).

1. ``GET /account/sessions/oauth2/{provider}`` (browser) or ``/account/tokens/oauth2/{provider}``
   (server-side rendering, mobile): checks the provider and the ``success``/``failure`` URLs,
   stores a pending sign-in and answers 301 to the provider's authorization URL.
2. The provider sends the browser to ``/account/sessions/oauth2/callback/{provider}/{projectId}``
   (GET, or POST for ``form_post`` providers such as Apple), which answers 301 to
   ``/account/sessions/oauth2/{provider}/redirect`` with the same parameters and ``project``.
3. The redirect route claims the state, exchanges the code, finds or creates the user and the
   identity, then answers 301 to ``success`` with session cookies (browser flow) or with
   ``userId`` and ``secret`` for ``POST /account/sessions/token`` (token flow). Anything that goes
   wrong after the state is claimed sends the browser to ``failure`` with ``error`` =
   ``{"message", "type", "code"}``.

The browser flow also sets a cookie that ties the sign-in to the browser that started it, so a
callback URL forwarded to someone else signs nobody in (RFC 6749 §10.12).
"""

from __future__ import annotations

import secrets
from typing import Annotated
from urllib.parse import urlencode, urlsplit

import orjson
from django.conf import settings
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema

from apps.accounts.api.cookies import set_session_cookies
from apps.accounts.credentials.tokens import encode_session_token
from apps.accounts.models import TokenType
from apps.accounts.oauth2 import client, flow, handoff, takeover
from apps.accounts.oauth2.config import provider_config_get
from apps.accounts.oauth2.providers import APPWRITE_PROVIDERS, SPECS
from apps.accounts.oauth2.state import binding_cookie_name, new_state_key, state_consume, state_create
from apps.accounts.selectors.accounts import user_tag
from apps.accounts.services import accounts as services
from apps.accounts.services import tokens as token_services
from apps.accounts.services.links import redirect_allowed, url_with
from apps.core.domain.events import WriteEvent, announce
from apps.core.drivers import cache
from apps.core.drivers.db import as_dt
from apps.core.errors import CATALOGUE, AppwriteError, invalid_argument, unregistered_client
from apps.core.http.context import Cookie, Response
from apps.core.http.inputs import Strict
from apps.projects.selectors import session_duration
from apps.projects.services import hash_secret

_NO_STORE = [("Cache-Control", "no-store, no-cache, must-revalidate, max-age=0"), ("Pragma", "no-cache")]
CALLBACK = "/v1/account/sessions/oauth2/callback/{provider}/{project}"


def _provider(value: str) -> str:
    if value not in APPWRITE_PROVIDERS:
        raise ValueError(f"Value must be one of ({', '.join(sorted(APPWRITE_PROVIDERS))})")
    return value


Provider = Annotated[str, AfterValidator(_provider),
                     WithJsonSchema({"type": "string", "enum": sorted(APPWRITE_PROVIDERS)})]
Text2048 = Annotated[str, StringConstraints(max_length=2048)]


class OAuth2Start(Strict):
    provider: Provider
    success: Text2048 = ""
    failure: Text2048 = ""
    scopes: Annotated[list[Annotated[str, StringConstraints(max_length=4096)]], Field(max_length=100)] = []
    state: Text2048 = ""  # sent by the Python SDK 27; Appwrite 1.9 ignores it, so do we


class OAuth2Return(BaseModel):
    """What a provider sends back. Providers add parameters of their own (``scope``,
    ``session_state``, ``authuser``...), so unknown ones are ignored, not refused."""

    model_config = ConfigDict(extra="ignore")
    provider: Provider
    code: Text2048 = ""
    state: Text2048 = ""
    error: Text2048 = ""
    error_description: Text2048 = ""
    iss: Text2048 = ""
    user: Annotated[str, StringConstraints(max_length=4096)] = ""  # Apple, first sign-in only


class OAuth2Callback(OAuth2Return):
    projectId: Annotated[str, StringConstraints(min_length=1, max_length=1024)]


def _hostname(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def api_base(ctx) -> str:
    """This API's public ``scheme://host[:port]`` for provider callbacks: ``OAUTH2_CALLBACK_BASE``,
    else ``PUBLIC_URL`` (never the request's Host)."""
    return settings.OAUTH2_CALLBACK_BASE or settings.PUBLIC_URL


def _redirect(location: str) -> Response:
    return Response(status=301, content_type="text/html; charset=utf-8", headers=[("Location", location), *_NO_STORE])


async def oauth2_session_start(ctx):
    """``GET /account/sessions/oauth2/{provider}``: 301 to the provider (browser flow)."""
    return await _start(ctx, token=False)


async def oauth2_token_start(ctx):
    """``GET /account/tokens/oauth2/{provider}``: 301 to the provider (token flow)."""
    return await _start(ctx, token=True)


async def _start(ctx, *, token: bool) -> Response:
    """Raises 400 ``general_argument_invalid`` (a ``success``/``failure`` URL off the project's
    platforms), 400 ``project_provider_unsupported``, 412 ``project_provider_disabled``, 424
    ``user_oauth2_provider_error`` (discovery document unreachable or unusable)."""
    p = ctx.params
    base = api_base(ctx)
    for name in ("success", "failure"):
        value = getattr(p, name)
        if value and not await redirect_allowed(ctx, value, _hostname(base)):
            raise invalid_argument(name, unregistered_client("URI", _hostname(value) or value[:64], ctx.project_id))
    cfg = await provider_config_get(ctx, p.provider)
    spec = SPECS[p.provider]
    redirect_uri = base + CALLBACK.format(provider=p.provider, project=ctx.project_id)
    key = new_state_key()
    try:
        url, verifier, nonce = await client.authorization_url(ctx, cfg, spec, redirect_uri=redirect_uri, state=key,
                                                              scopes=p.scopes)
    except client.ProviderError as err:
        raise AppwriteError(err.type, err.message) from None
    data = {
        "success": p.success or f"{base}/console/auth/oauth2/success",
        "failure": p.failure or f"{base}/console/auth/oauth2/failure",
        "token": token, "verifier": verifier, "nonce": nonce, "redirect_uri": redirect_uri,
        "user": ctx.auth.user["id"] if ctx.auth.kind == "session" else None,
    }
    response = _redirect(url)
    if not token:
        binding = secrets.token_urlsafe(24)
        data["binding"] = hash_secret(binding)
        response.cookies.append(Cookie(binding_cookie_name(key), binding, _expires(settings.OAUTH2_STATE_TTL),
                                       samesite="Lax", secure=ctx.scheme == "https", path="/v1/account/sessions/oauth2"))
    await state_create(ctx, key=key, provider=p.provider, data=data)
    return response


def _expires(seconds: int) -> int:
    import time

    return int(time.time()) + seconds


async def oauth2_callback(ctx):
    """``GET|POST /account/sessions/oauth2/callback/{provider}/{projectId}``: 301 to the
    redirect route with the provider's parameters and ``project``."""
    params = {k: v for k, v in ctx.raw_params.items() if isinstance(v, str) and k not in ("projectId", "provider")}
    params["project"] = ctx.params.projectId
    target = f"{api_base(ctx)}/v1/account/sessions/oauth2/{ctx.params.provider}/redirect?{urlencode(params)}"
    return _redirect(target)


def _failure_response(failure: str, err: AppwriteError | client.ProviderError) -> Response:
    status = err.status if isinstance(err, AppwriteError) else CATALOGUE[err.type][0]
    error = orjson.dumps({"message": err.message, "type": err.type, "code": status}).decode()
    return _redirect(url_with(failure, {"error": error}))


async def oauth2_redirect(ctx):
    """``GET /account/sessions/oauth2/{provider}/redirect``: finish the sign-in.

    Raises (as a JSON error, there being nowhere safe to send the browser) 400
    ``general_bad_request`` for a missing, forged, used or expired state, 400
    ``project_invalid_success_url``/``project_invalid_failure_url`` when the stored URLs are no
    longer on the project's platforms. Everything else goes to ``failure``.
    """
    p = ctx.params
    state = await state_consume(ctx, key=p.state, provider=p.provider)
    if state is None:
        raise AppwriteError("general_bad_request", "The sign-in state is missing, expired or was already used. "
                            "Please start the sign-in again.")
    base = api_base(ctx)
    if not await redirect_allowed(ctx, state["success"], _hostname(base)):
        raise AppwriteError("project_invalid_success_url")
    if not await redirect_allowed(ctx, state["failure"], _hostname(base)):
        raise AppwriteError("project_invalid_failure_url")
    try:
        response = await _finish(ctx, p, state)
    except (AppwriteError, client.ProviderError) as err:
        response = _failure_response(state["failure"], err)
    if state.get("binding"):
        response.cookies.append(Cookie(binding_cookie_name(p.state), "", 0, samesite="Lax",
                                       secure=ctx.scheme == "https", path="/v1/account/sessions/oauth2"))
    return response


async def _finish(ctx, p: OAuth2Return, state: dict) -> Response:
    from apps.accounts.credentials.authn import parse_cookies

    spec = SPECS.get(p.provider)
    if state.get("binding"):
        cookie = parse_cookies(ctx.headers.get("cookie", "")).get(binding_cookie_name(p.state), "")
        if not cookie or hash_secret(cookie) != state["binding"]:
            raise AppwriteError("general_bad_request", "This sign-in was started in another browser. "
                                "Please start the sign-in again.")
    cfg = await provider_config_get(ctx, p.provider)
    title = spec.title if spec else p.provider
    if p.error:
        detail = f"{p.error}: {p.error_description}" if p.error_description else p.error
        raise AppwriteError("user_oauth2_provider_error", f"The {title} OAuth2 provider returned an error: {detail}")
    if not p.code:
        raise AppwriteError("user_oauth2_provider_error", "Missing OAuth2 code.")
    linking = None
    if state.get("user") is not None:
        if ctx.auth.kind != "session" or ctx.auth.user["id"] != state["user"]:
            raise AppwriteError("general_bad_request", "The account that started this sign-in is no longer "
                                "signed in here.")
        linking = ctx.auth.user
    profile, token = await client.sign_in(ctx, cfg, spec, code=p.code, verifier=state["verifier"],
                                          nonce=state["nonce"], redirect_uri=state["redirect_uri"],
                                          form={"user": p.user}, iss=p.iss)
    db = ctx.db
    session = None
    async with db.transaction() as tx:
        ctx.db = tx
        try:
            user, taken_over = await flow.sign_in_user(ctx, provider=p.provider, profile=profile, token=token,
                                                       linking_user=linking)
            if state["token"]:
                secret = secrets.token_hex(32)
                await token_services.token_create(ctx, user=user, type=TokenType.OAUTH2, secret=secret,
                                                  lifetime=session_duration(ctx.project))
            else:
                if linking is not None:  # Appwrite replaces the session that asked for the link
                    await services.session_delete(ctx, user_id=linking["id"], session_uid=ctx.auth.session["uid"])
                expires_in = token.get("expires_in")
                session, secret = await services.session_create(
                    ctx, user=user, provider=p.provider, factors=["email", "oauth2"], provider_uid=profile.uid,
                    provider_tokens=(str(token.get("access_token") or ""), str(token.get("refresh_token") or ""),
                                     int(expires_in) if str(expires_in).isdigit() else None))
        finally:
            ctx.db = db
    if taken_over:
        await _announce_takeover(ctx, user)
    if session is None:
        return _redirect(url_with(state["success"], {"userId": user["uid"], "secret": handoff.wrap(secret, p.provider)}))
    response = _redirect(state["success"])
    set_session_cookies(ctx, response, encode_session_token(user["uid"], secret),
                        int(as_dt(session["expire"]).timestamp()))
    return response


async def _announce_takeover(ctx, user: dict) -> None:
    """After the takeover committed: drop every cached session of the user (a request between
    the takeover and its commit may have cached one again) and log it (audit event
    ``user.takeover``, ``apps.accounts.oauth2.takeover``)."""
    await cache.invalidate(ctx, user_tag(user["id"]))
    await announce(ctx, WriteEvent(ctx.project_id, "user", "takeover", {"userId": user["uid"]}, {},
                                   extra={"audit": takeover.AUDIT_EVENT}))
