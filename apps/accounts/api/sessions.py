"""Session and JWT endpoints (contract §1.4, §3)."""

from __future__ import annotations

from apps.accounts import selectors, services
from apps.accounts.api.cookies import clear_session_cookies, set_session_cookies
from apps.accounts.models import TokenType
from apps.accounts.responses import session_model
from apps.accounts.tokens import encode_jwt, encode_session_token
from apps.core.db import as_dt
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.core.ids import unique_id


async def _session_response(ctx, user: dict, session: dict, secret: str):
    token = encode_session_token(user["uid"], secret)
    model = session_model(
        session, user_uid=user["uid"], current_id=session["id"], secret=token if ctx.auth.is_key else ""
    )
    response = json_response(model, 201)
    set_session_cookies(ctx, response, token, int(as_dt(session["expire"]).timestamp()))
    return response


async def session_create_email(ctx):
    services.auth_method_check(ctx, "email-password")
    p = ctx.params
    user = await selectors.user_get_by_email(ctx, project_id=ctx.project["id"], email=p.email)
    ok = await services.password_verify(ctx, p.password, user["password"] if user else "")
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
}


async def session_create_token(ctx):
    """``POST /account/sessions/token``: exchange ``userId`` + ``secret`` of a sign-in token for a
    session (201 Session + cookies). Raises 401 ``user_invalid_token`` (unknown user, wrong, used
    or expired secret), 403 ``user_blocked``."""
    p = ctx.params
    user, token = await services.token_consume(ctx, user_uid=p.userId, secret=p.secret, types=tuple(TOKEN_SESSIONS))
    if not user["status"]:
        raise AppwriteError("user_blocked")
    provider, factors, proves = TOKEN_SESSIONS[token["type"]]
    if proves and not user[proves]:
        user = await services.user_update(ctx, user_id=user["id"], **{proves: True})
    session, secret = await services.session_create(ctx, user=user, provider=provider, factors=factors)
    return await _session_response(ctx, user, session, secret)


def _session_uid(ctx, value: str) -> str:
    return ctx.auth.session["uid"] if value == "current" else value


async def sessions_list(ctx):
    rows = await selectors.session_list(ctx, user_id=ctx.auth.user["id"])
    current = ctx.auth.session["id"]
    sessions = [session_model(r, user_uid=ctx.auth.user_id, current_id=current) for r in rows]
    return json_response({"total": len(sessions) if ctx.params.total else 0, "sessions": sessions})


async def session_get(ctx):
    uid = _session_uid(ctx, ctx.params.sessionId)
    row = await selectors.session_get(ctx, user_id=ctx.auth.user["id"], session_uid=uid)
    if row is None:
        raise AppwriteError("user_session_not_found")
    return json_response(session_model(row, user_uid=ctx.auth.user_id, current_id=ctx.auth.session["id"]))


async def session_update(ctx):
    uid = _session_uid(ctx, ctx.params.sessionId)
    row = await selectors.session_get(ctx, user_id=ctx.auth.user["id"], session_uid=uid)
    if row is None:
        raise AppwriteError("user_session_not_found")
    await services.session_extend(ctx, user_id=ctx.auth.user["id"], session_id=row["id"])
    row = await selectors.session_get(ctx, user_id=ctx.auth.user["id"], session_uid=uid)
    return json_response(session_model(row, user_uid=ctx.auth.user_id, current_id=ctx.auth.session["id"]))


async def session_delete(ctx):
    uid = _session_uid(ctx, ctx.params.sessionId)
    deleted = await services.session_delete(ctx, user_id=ctx.auth.user["id"], session_uid=uid)
    response = no_content()
    if deleted["id"] == ctx.auth.session["id"]:
        clear_session_cookies(ctx, response)
    return response


async def sessions_delete(ctx):
    await services.sessions_delete_all(ctx, user_id=ctx.auth.user["id"])
    response = no_content()
    clear_session_cookies(ctx, response)
    return response


async def jwt_create(ctx):
    services.auth_method_check(ctx, "jwt")
    token = encode_jwt(
        user_uid=ctx.auth.user_id, session_uid=ctx.auth.session["uid"], duration=ctx.params.duration or 900
    )
    return json_response({"jwt": token}, 201)
