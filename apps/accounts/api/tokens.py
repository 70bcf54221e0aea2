"""Passwordless sign-in tokens (Appwrite ``account.php``): a magic URL or a 6-digit code is mailed,
and ``POST /account/sessions/token`` (or the deprecated ``PUT /account/sessions/magic-url``)
turns ``userId`` + ``secret`` into a session. The account is found by email or created
(``userId`` or a new ID, no password; the project's user limit applies). Phone tokens need an
SMS provider, which this server does not have.

A new link or code replaces the user's older ones of the same kind (only the newest works), and
is bound to the address it is mailed to. For an email that already has an account the token
names that account's ID whatever ``userId`` was sent: Appwrite does the same (its ``userId``
parameter is "ignored" then), and SDK clients need that ID for the exchange. Where Appwrite
hides an account (the email-code route, an email another user's OAuth2 identity reports) this
route hides it too. See docs/security-accounts.md."""

from __future__ import annotations

import secrets

from django.conf import settings

from apps.accounts.models import TokenType
from apps.accounts.responses import token_model
from apps.accounts.selectors import accounts as selectors
from apps.accounts.services import accounts as services
from apps.accounts.services import tokens as token_services
from apps.accounts.services.links import redirect_check, url_with
from apps.accounts.services.mails import code_mail, link_mail
from apps.core.domain.ids import resolve_id
from apps.core.domain.mail import require_mail
from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_dt
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response

MAGIC_URL_LIFETIME = 3600  # seconds (Appwrite TOKEN_EXPIRATION_CONFIRM)
MAGIC_URL_SECRET_HEX = 64  # characters (TOKEN_LENGTH_MAGIC_URL)
EMAIL_CODE_LIFETIME = 900  # seconds (TOKEN_EXPIRATION_OTP)

# Security phrases ("Adjective noun"): shown by the app and printed in the mail, so the user can
# tell that the mail answers their own request.
_ADJECTIVES = ("Amber", "Brave", "Calm", "Clever", "Crimson", "Gentle", "Golden", "Happy", "Hidden", "Jolly",
               "Lucky", "Misty", "Noble", "Quiet", "Rapid", "Silver", "Sunny", "Swift", "Velvet", "Wise")
_NOUNS = ("Badger", "Canyon", "Comet", "Falcon", "Forest", "Fox", "Harbor", "Island", "Lantern", "Meadow",
          "Otter", "Panda", "Pebble", "Raven", "River", "Sparrow", "Summit", "Tiger", "Willow", "Wolf")


def security_phrase() -> str:
    """A random ``Adjective Noun`` phrase, e.g. ``Golden Fox``."""
    return f"{secrets.choice(_ADJECTIVES)} {secrets.choice(_NOUNS)}"


async def _user_for_email(ctx, *, user_id: str, email: str) -> dict:
    """The account with ``email``, or a new one with ID ``user_id`` (``unique()`` = generated).
    Raises 400 (bad ID), 400 ``user_count_exceeded``, 409 ``user_already_exists`` (the ID is
    taken by another account)."""
    user_uid = resolve_id(user_id, "userId")
    user = await selectors.user_get_by_email(ctx, project_id=ctx.project["id"], email=email)
    if user is None:
        user = await services.user_create(ctx, user_uid=user_uid, email=email, password="", name="")
    return user


def _response(ctx, token: dict, user: dict, secret: str):
    # The phrase is visible to every caller, the secret only to API keys (Appwrite).
    return json_response(token_model(token, user_uid=user["uid"], secret=secret if ctx.auth.is_key else ""), 201)


async def magic_url_create(ctx):
    """``POST /account/tokens/magic-url``: mail a sign-in link (valid one hour); the user's older
    links stop working. Raises 501
    (magic URL sign-in off), 400 (url off the platforms), 503 ``general_smtp_disabled``."""
    services.auth_method_check(ctx, "magic-url")
    p = ctx.params
    if p.url:
        await redirect_check(ctx, p.url)
    require_mail(ctx.project)
    user = await _user_for_email(ctx, user_id=p.userId, email=p.email)
    phrase = security_phrase() if p.phrase else ""
    base = p.url or f"{settings.PUBLIC_URL}/console/auth/magic-url"
    secret = secrets.token_hex(MAGIC_URL_SECRET_HEX // 2)
    async with ctx.db.transaction() as tx:
        await token_services.tokens_delete(ctx, user_id=user["id"], type=TokenType.MAGIC_URL, db=tx)
        token = await token_services.token_create(ctx, user=user, type=TokenType.MAGIC_URL, secret=secret,
                                                  lifetime=MAGIC_URL_LIFETIME, phrase=phrase, email=user["email"],
                                                  db=tx)
        link = url_with(base, {"userId": user["uid"], "secret": secret, "expire": iso(as_dt(token["expire"])),
                               "project": ctx.project_id})
        await link_mail(ctx, tx, name="magic-url", user=user, url=link, phrase=phrase)
    return _response(ctx, token, user, secret)


async def email_token_create(ctx):
    """``POST /account/tokens/email``: mail a 6-digit sign-in code (valid 15 minutes); the user's
    older codes stop working. Raises 501
    (email code sign-in off), 503 ``general_smtp_disabled``, 400 ``general_bad_request`` (a new
    account for an email another user's OAuth2 identity reports)."""
    services.auth_method_check(ctx, "email-otp")
    p = ctx.params
    require_mail(ctx.project)
    try:
        user = await _user_for_email(ctx, user_id=p.userId, email=p.email)
    except AppwriteError as err:
        if err.type != "user_email_already_exists":
            raise
        # A new account for an email that another user's OAuth2 identity reports: Appwrite's
        # email-code route answers this with its generic 400, message included, so that the
        # answer does not reveal an account (its magic-URL route answers the 409).
        raise AppwriteError("general_bad_request") from None
    phrase = security_phrase() if p.phrase else ""
    code = f"{secrets.randbelow(1_000_000):06d}"
    async with ctx.db.transaction() as tx:
        await token_services.tokens_delete(ctx, user_id=user["id"], type=TokenType.EMAIL, db=tx)
        token = await token_services.token_create(ctx, user=user, type=TokenType.EMAIL, secret=code,
                                                  lifetime=EMAIL_CODE_LIFETIME, phrase=phrase, email=user["email"],
                                                  db=tx)
        await code_mail(ctx, tx, name="email-code", user=user, otp=code, phrase=phrase)
    return _response(ctx, token, user, code)


async def phone_token_create(ctx):
    """``POST /account/tokens/phone``: texts a sign-in code through the project's SMS provider
    (``apps.messaging.phone``). Raises 501 (phone sign-in off), 503 ``general_phone_disabled``
    (no SMS provider)."""
    from apps.messaging.phone import phone_token_create as text_code

    services.auth_method_check(ctx, "phone")
    return await text_code(ctx)
