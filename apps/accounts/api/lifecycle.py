"""Email verification and password recovery (Appwrite ``account.php``): a link with a single-use
secret is mailed; the app sends ``userId`` + ``secret`` back. Phone verification needs an SMS
provider, which this server does not have: it answers Appwrite's 503 for it."""

from __future__ import annotations

import secrets

from apps.accounts.api.account import announce_account_update
from apps.accounts.models import TokenType
from apps.accounts.passwords.policy import history_after, password_check
from apps.accounts.responses import token_model, user_model
from apps.accounts.selectors import accounts as selectors
from apps.accounts.services import accounts as services
from apps.accounts.services import tokens as token_services
from apps.accounts.services.links import redirect_check, url_with
from apps.accounts.services.mails import link_mail
from apps.core.domain.mail import require_mail
from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_dt, as_json, now
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response

# Appwrite: TOKEN_EXPIRATION_CONFIRM / TOKEN_EXPIRATION_RECOVERY (seconds), TOKEN_LENGTH_* (chars).
LINK_LIFETIME = 3600
LINK_SECRET_HEX = 256


async def _mail_link_token(ctx, *, user: dict, type: int, url: str, name: str) -> tuple[dict, str]:
    """Store a link token for ``user``, bound to the address it is mailed to, and queue the mail
    that carries it, in one transaction; returns ``(token row, secret)``."""
    secret = secrets.token_hex(LINK_SECRET_HEX // 2)
    async with ctx.db.transaction() as tx:
        token = await token_services.token_create(ctx, user=user, type=type, secret=secret, lifetime=LINK_LIFETIME,
                                                  email=user["email"], db=tx)
        link = url_with(url, {"userId": user["uid"], "secret": secret, "expire": iso(as_dt(token["expire"]))})
        await link_mail(ctx, tx, name=name, user=user, url=link)
    return token, secret


def _token_response(ctx, token: dict, user: dict, secret: str, status: int):
    # The secret is sensitive (Appwrite): only API-key callers see it.
    return json_response(token_model(token, user_uid=user["uid"], secret=secret if ctx.auth.is_key else ""), status)


async def _user_by_id(ctx, user_uid: str) -> dict:
    user = await selectors.user_get_by_uid(ctx, project_id=ctx.project["id"], user_uid=user_uid)
    if user is None:
        raise AppwriteError("user_not_found")
    return user


async def verification_create(ctx):
    """``POST /account/verifications/email``: mail the signed-in user a verification link.
    Raises 400 (url off the platforms), 503 ``general_smtp_disabled``, 400
    ``user_email_not_found``, 409 ``user_email_already_verified``."""
    await redirect_check(ctx, ctx.params.url)
    require_mail(ctx.project)
    user = ctx.auth.user
    if not user["email"]:
        raise AppwriteError("user_email_not_found")
    if user["email_verification"]:
        raise AppwriteError("user_email_already_verified")
    token, secret = await _mail_link_token(ctx, user=user, type=TokenType.VERIFICATION, url=ctx.params.url,
                                           name="verification")
    return _token_response(ctx, token, user, secret, 201)


async def verification_confirm(ctx):
    """``PUT /account/verifications/email``: the link's ``userId`` + ``secret`` mark the email
    verified. The link verifies only the address it was mailed to: once the user's email is
    another one, its secret is refused. Raises 404 ``user_not_found``, 401 ``user_invalid_token``."""
    p = ctx.params
    user = await _user_by_id(ctx, p.userId)
    token = await token_services.token_find(ctx, user=user, secret=p.secret, types=(TokenType.VERIFICATION,),
                                            bound=True)
    await token_services.token_claim(ctx, token=token)
    fresh = await services.user_update(ctx, user_id=user["id"], email_verification=True)
    await announce_account_update(ctx, user_model(fresh), "verification")
    return _token_response(ctx, token, user, "", 200)


async def recovery_create(ctx):
    """``POST /account/recovery``: mail a password reset link to the account with ``email``.
    Raises 400 (url), 503 ``general_smtp_disabled``, 404 ``user_not_found``, 403 ``user_blocked``."""
    p = ctx.params
    await redirect_check(ctx, p.url)
    require_mail(ctx.project)
    user = await selectors.user_get_by_email(ctx, project_id=ctx.project["id"], email=p.email)
    if user is None:
        raise AppwriteError("user_not_found")
    if not user["status"]:
        raise AppwriteError("user_blocked")
    token, secret = await _mail_link_token(ctx, user=user, type=TokenType.RECOVERY, url=p.url, name="recovery")
    return _token_response(ctx, token, user, secret, 201)


async def recovery_confirm(ctx):
    """``PUT /account/recovery``: set a new password with the link's ``userId`` + ``secret``. The
    email counts as verified (the link proved it); with the project's ``auth_invalidate_sessions``
    every session of the user ends. A password the policy refuses leaves the link usable; a
    reset ends the user's other recovery links too (``services.user_update``).
    Raises 404 ``user_not_found``, 401 ``user_invalid_token``, 400 (password policy)."""
    p = ctx.params
    user = await _user_by_id(ctx, p.userId)
    token = await token_services.token_find(ctx, user=user, secret=p.secret, types=(TokenType.RECOVERY,))
    history = as_json((await selectors.user_secrets_get(ctx, user_id=user["id"]))["password_history"]) or []
    await password_check(ctx, p.password, user_uid=user["uid"], email=user["email"], name=user["name"],
                         phone=user["phone"], history=history)
    hashed = await services.password_hash(ctx, p.password)
    await token_services.token_claim(ctx, token=token)
    fresh = await services.user_update(ctx, user_id=user["id"], password=hashed, password_update=now(),
                                       email_verification=True, password_history=history_after(ctx, history, hashed))
    if ctx.project.get("auth_invalidate_sessions"):
        await services.sessions_delete_all(ctx, user_id=user["id"])
    await announce_account_update(ctx, user_model(fresh), "password")
    return _token_response(ctx, token, user, "", 200)


async def phone_verification_create(ctx):
    """``POST /account/verifications/phone``: texts a code through the project's SMS provider
    (``apps.messaging.phone``). Raises 501 ``user_auth_method_unsupported`` (phone sign-in off),
    503 ``general_phone_disabled`` (no SMS provider)."""
    from apps.messaging.phone import phone_verification_create as text_code

    services.auth_method_check(ctx, "phone")
    return await text_code(ctx)


async def phone_verification_confirm(ctx):
    """``PUT /account/verifications/phone``: a phone token's ``userId`` + ``secret`` mark the
    phone verified. Without an SMS provider this server never sends one, so in practice every
    secret is refused. Raises 404 ``user_not_found``, 401 ``user_invalid_token``."""
    p = ctx.params
    user = await _user_by_id(ctx, p.userId)
    token = await token_services.token_find(ctx, user=user, secret=p.secret, types=(TokenType.PHONE,))
    await token_services.token_claim(ctx, token=token)
    fresh = await services.user_update(ctx, user_id=user["id"], phone_verification=True)
    await announce_account_update(ctx, user_model(fresh), "verification")
    return _token_response(ctx, token, user, "", 200)
