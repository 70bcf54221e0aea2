"""Session and JWT endpoints."""

from __future__ import annotations

from apps.accounts.api.cookies import clear_session_cookies, set_session_cookies
from apps.accounts.credentials.tokens import encode_jwt, encode_session_token
from apps.accounts.models import TokenType
from apps.accounts.oauth2.handoff import unwrap as unwrap_oauth2_secret
from apps.accounts.oauth2.sessions import session_refresh_provider_tokens
from apps.accounts.responses import session_model
from apps.accounts.selectors import accounts as selectors
from apps.accounts.services import accounts as services
from apps.accounts.services import tokens as token_services
from apps.core.domain.events import WriteEvent, announce
from apps.core.domain.ids import unique_id
from apps.core.drivers.db import as_dt
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content


async def announce_session(ctx, user_uid: str, session_uid: str, action: str, payload: dict | None = None) -> None:
    """The event of a session created or ended (the audit log's sign-ins and sign-outs)."""
    await announce(ctx, WriteEvent(ctx.project_id, "session", action, {"userId": user_uid, "sessionId": session_uid},
                                   payload or {}, extra={"audit": f"session.{action}"}))


async def _session_response(ctx, user: dict, session: dict, secret: str):
    token = encode_session_token(user["uid"], secret)
    model = session_model(
        session, user_uid=user["uid"], current_id=session["id"], secret=token if ctx.auth.is_key else ""
    )
    response = json_response(model, 201)
    set_session_cookies(ctx, response, token, int(as_dt(session["expire"]).timestamp()))
    await announce_session(ctx, user["uid"], session["uid"], "create", {**model, "secret": ""})
    return response


async def session_create_email(ctx):
    services.auth_method_check(ctx, "email-password")
    p = ctx.params
    user = await selectors.user_get_by_email(ctx, project_id=ctx.project["id"], email=p.email)
    ok = await services.password_verify_and_upgrade(ctx, user=user, password=p.password)
    if user is None or not ok:
        raise AppwriteError("user_invalid_credentials")
    if not user["status"]:
        raise AppwriteError("user_blocked")
    session, secret = await services.session_create(ctx, user=user, provider="email", factors=["password"])
    return await _session_response(ctx, user, session, secret)


async def session_create_anonymous(ctx):
    services.auth_method_check(ctx, "anonymous")
    user = await services.user_create(ctx, user_uid=unique_id(), email="", password="", name="")
    session, secret = await services.session_create(ctx, user=user, provider="anonymous", factors=["anonymous"])
    return await _session_response(ctx, user, session, secret)


# Token type -> (session provider, factors, the verification flag the token proves). Appwrite's
# ``POST /account/sessions/token``: magic URLs and email codes prove the email, phone codes the
# phone; a server-made token proves nothing. Verification, recovery and invitation tokens are
# never exchanged for a session.
TOKEN_SESSIONS: dict[int, tuple[str, list[str], str | None]] = {
    TokenType.MAGIC_URL: ("magic-url", ["email"], "email_verification"),
    TokenType.EMAIL: ("token", ["email"], "email_verification"),
    TokenType.PHONE: ("phone", ["phone"], "phone_verification"),
    TokenType.GENERIC: ("token", ["token"], None),
    # OAuth2 token flow: the session is named after the provider, which travels with the secret
    # (apps.accounts.oauth2.handoff); the provider already said whether the email is verified.
    TokenType.OAUTH2: ("oauth2", ["email"], None),
}


_PLAIN_TYPES = tuple(t for t in TOKEN_SESSIONS if t != TokenType.OAUTH2)


async def session_create_token(ctx):
    """``POST /account/sessions/token``: exchange ``userId`` + ``secret`` of a sign-in token for a
    session (201 Session + cookies). Raises 401 ``user_invalid_token`` (unknown user, wrong, used
    or expired secret), 403 ``user_blocked``."""
    p = ctx.params
    # An OAuth2 token is accepted only inside its hand-off JWT, and the JWT only for an OAuth2 token.
    handoff = unwrap_oauth2_secret(p.secret)
    secret, types = (handoff[0], (TokenType.OAUTH2,)) if handoff else (p.secret, _PLAIN_TYPES)
    user, token = await token_services.token_consume(ctx, user_uid=p.userId, secret=secret, types=types)
    if not user["status"]:
        raise AppwriteError("user_blocked")
    provider, factors, proves = TOKEN_SESSIONS[token["type"]]
    if handoff:
        provider = handoff[1]
    if proves and not user[proves]:
        user = await services.user_update(ctx, user_id=user["id"], **{proves: True})
    session, secret = await services.session_create(ctx, user=user, provider=provider, factors=factors)
    return await _session_response(ctx, user, session, secret)


def _session_uid(ctx, value: str) -> str:
    return ctx.auth.session["uid"] if value == "current" else value


async def sessions_list(ctx):
    rows = await selectors.session_list(ctx, user_id=ctx.auth.user["id"])
    current = ctx.auth.session["id"]
    own = ctx.auth.impersonator is None
    sessions = [session_model(r, user_uid=ctx.auth.user_id, current_id=current, provider_tokens=own) for r in rows]
    return json_response({"total": len(sessions) if ctx.params.total else 0, "sessions": sessions})


async def session_get(ctx):
    uid = _session_uid(ctx, ctx.params.sessionId)
    row = await selectors.session_get(ctx, user_id=ctx.auth.user["id"], session_uid=uid)
    if row is None:
        raise AppwriteError("user_session_not_found")
    return json_response(session_model(row, user_uid=ctx.auth.user_id, current_id=ctx.auth.session["id"],
                                       provider_tokens=ctx.auth.impersonator is None))


async def session_update(ctx):
    uid = _session_uid(ctx, ctx.params.sessionId)
    row = await selectors.session_get(ctx, user_id=ctx.auth.user["id"], session_uid=uid)
    if row is None:
        raise AppwriteError("user_session_not_found")
    await session_refresh_provider_tokens(ctx, session=row)  # OAuth2 sessions with a refresh token
    await services.session_extend(ctx, user_id=ctx.auth.user["id"], session_id=row["id"])
    row = await selectors.session_get(ctx, user_id=ctx.auth.user["id"], session_uid=uid)
    return json_response(session_model(row, user_uid=ctx.auth.user_id, current_id=ctx.auth.session["id"]))


async def session_delete(ctx):
    uid = _session_uid(ctx, ctx.params.sessionId)
    deleted = await services.session_delete(ctx, user_id=ctx.auth.user["id"], session_uid=uid)
    await announce_session(ctx, ctx.auth.user_id, deleted["uid"], "delete")
    response = no_content()
    if deleted["id"] == ctx.auth.session["id"]:
        clear_session_cookies(ctx, response)
    return response


async def sessions_delete(ctx):
    await services.sessions_delete_all(ctx, user_id=ctx.auth.user["id"])
    await announce_session(ctx, ctx.auth.user_id, "", "delete")
    response = no_content()
    clear_session_cookies(ctx, response)
    return response


async def jwt_create(ctx):
    services.auth_method_check(ctx, "jwt")
    token = encode_jwt(
        project_uid=ctx.project_id, user_uid=ctx.auth.user_id, session_uid=ctx.auth.session["uid"], duration=ctx.params.duration or 900
    )
    await announce(ctx, WriteEvent(ctx.project_id, "jwt", "create", {"userId": ctx.auth.user_id}, {},
                                   extra={"audit": "jwt.create"}))
    return json_response({"jwt": token}, 201)
