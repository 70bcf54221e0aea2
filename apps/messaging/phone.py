"""Phone sign-in and verification codes through the project's SMS provider.

The account routes that text a code (``POST /account/tokens/phone``, ``POST
/account/verifications/phone``, ``POST /account/mfa/challenges`` with ``phone``, a team invitation to a phone number) call in
here: they answer 503 ``general_phone_disabled`` only
while the project has no enabled SMS provider (Appwrite answers the same without one). A number
in the project's mock list (the Project service's ``/project/mock-phones``) gets its fixed code
and no SMS, with or without a provider (sign-in and verification codes; Appwrite's rule). The code
travels in a ``send_sms`` task (queue ``messaging``), enqueued in the transaction that stores
its token, so a token exists only with its SMS queued. A provider's refusal fails the task (the
worker retries it, then keeps it failed); the API call that queued it has already answered 201.

``PATCH /account/phone`` changes the signed-in user's number (the password must match when the
account has one) and marks it unverified; as in Appwrite it sends nothing. Rate limits are the
abuse rules ``account.token.phone`` and ``account.verification.phone*`` (10 per hour).
"""

from __future__ import annotations

import logging
import secrets

import orjson
from django.db import connection
from django.tasks import task

from apps.core.domain.ids import resolve_id
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response
from apps.core.tasks.queue import enqueue

log = logging.getLogger("apps.messaging")
CODE_LIFETIME = 900  # seconds (Appwrite TOKEN_EXPIRATION_OTP)


async def require_sms_provider(ctx, db=None) -> str:
    """The uid of the project's first enabled SMS provider (read through ``db``, default
    ``ctx.db``). Raises 503 ``general_phone_disabled``."""
    row = await (db or ctx.db).fetchone("SELECT uid FROM messaging_provider WHERE project_id = %s AND provider_type = 'sms' "
                                "AND enabled ORDER BY id LIMIT 1", (ctx.project["id"],))
    if row is None:
        raise AppwriteError("general_phone_disabled")
    return row["uid"]


def code_text(ctx, code: str) -> str:
    return f"{code} is your {ctx.project.get('name') or 'Appwrite'} verification code."


def mock_code(ctx, phone: str) -> str | None:
    """The fixed code of ``phone`` when it is one of the project's mock numbers (the Project
    service's ``/project/mock-phones``, ``auth_mock_numbers``), else ``None``."""
    for entry in ctx.project.get("auth_mock_numbers") or ():
        if isinstance(entry, dict) and entry.get("phone") == phone and entry.get("otp"):
            return str(entry["otp"])
    return None


async def _code_token(ctx, user: dict, provider: str, mock: str | None = None):
    """Store a phone token for ``user`` and queue its SMS through ``provider``; a mock number
    (``mock``: its fixed code) gets that code and no SMS."""
    from apps.accounts.models import TokenType
    from apps.accounts.services import tokens as token_services

    code = mock or f"{secrets.randbelow(1_000_000):06d}"
    async with ctx.db.transaction() as tx:
        await token_services.tokens_delete(ctx, user_id=user["id"], type=TokenType.PHONE, db=tx)
        token = await token_services.token_create(ctx, user=user, type=TokenType.PHONE, secret=code,
                                                  lifetime=CODE_LIFETIME, db=tx)
        if mock is None:
            await enqueue(tx, send_sms, project_id=ctx.project["id"], provider=provider, phone=user["phone"],
                          text=code_text(ctx, code))
    return token, code


async def challenge_sms(ctx, user: dict):
    """For an MFA phone challenge: ``(code, text_code)``, where ``await text_code(tx)`` queues
    the SMS in the transaction that stores the challenge. Raises 503 ``general_phone_disabled``,
    400 ``user_phone_not_found`` / ``user_phone_not_verified``."""
    provider = await require_sms_provider(ctx)
    if not user["phone"]:
        raise AppwriteError("user_phone_not_found")
    if not user["phone_verification"]:
        raise AppwriteError("user_phone_not_verified")
    code = f"{secrets.randbelow(1_000_000):06d}"

    async def text_code(tx) -> None:
        await enqueue(tx, send_sms, project_id=ctx.project["id"], provider=provider, phone=user["phone"],
                      text=code_text(ctx, code))

    return code, text_code


async def text_in_transaction(ctx, db, *, phone: str, text: str) -> None:
    """Queue ``text`` to ``phone`` in transaction ``db`` (a team invitation's link). Raises 503
    ``general_phone_disabled``."""
    provider = await require_sms_provider(ctx, db)
    await enqueue(db, send_sms, project_id=ctx.project["id"], provider=provider, phone=phone, text=text)


def _token_response(ctx, token: dict, user: dict, code: str):
    from apps.accounts.responses import token_model

    return json_response(token_model(token, user_uid=user["uid"], secret=code if ctx.auth.is_key else ""), 201)


async def phone_token_create(ctx):
    """``POST /account/tokens/phone``: text a 6-digit sign-in code (15 minutes) to ``phone``; the
    account with that number, or a new one (``userId``). Raises 503 ``general_phone_disabled``,
    400 ``user_count_exceeded``, 409 ``user_already_exists``."""
    from apps.accounts.selectors.users import user_by_phone
    from apps.accounts.services import accounts as services

    p = ctx.params
    mock = mock_code(ctx, p.phone)
    provider = "" if mock else await require_sms_provider(ctx)
    user = await user_by_phone(ctx, phone=p.phone)
    if user is None:
        user = await services.user_create(ctx, user_uid=resolve_id(p.userId, "userId"), email="", password="",
                                          name="", phone=p.phone)
    token, code = await _code_token(ctx, user, provider, mock)
    return _token_response(ctx, token, user, code)


async def phone_verification_create(ctx):
    """``POST /account/verifications/phone``: text a code proving the signed-in user's number.
    Raises 503 ``general_phone_disabled``, 400 ``user_phone_not_found``, 409
    ``user_phone_already_verified``."""
    user = ctx.auth.user
    mock = mock_code(ctx, user["phone"]) if user["phone"] else None
    provider = "" if mock else await require_sms_provider(ctx)
    if not user["phone"]:
        raise AppwriteError("user_phone_not_found")
    if user["phone_verification"]:
        raise AppwriteError("user_phone_already_verified")
    token, code = await _code_token(ctx, user, provider, mock)
    return _token_response(ctx, token, user, code)


async def account_update_phone(ctx):
    """``PATCH /account/phone``: set the signed-in user's number (unverified). Raises 401
    ``user_invalid_credentials`` (wrong password), 409 ``user_phone_already_exists``."""
    from apps.accounts.api.account import announce_account_update
    from apps.accounts.responses import full_user_model
    from apps.accounts.services import accounts as services

    user, p = ctx.auth.user, ctx.params
    if user["password"] and not await services.password_verify(ctx, p.password, user["password"]):
        raise AppwriteError("user_invalid_credentials")
    fields = {"phone": p.phone}
    if p.phone != user["phone"]:
        fields["phone_verification"] = False
    model = await full_user_model(ctx, await services.user_update(ctx, user_id=user["id"], **fields))
    await announce_account_update(ctx, model, "phone")
    return json_response(model)


@task(queue_name="messaging", priority=10)
def send_sms(*, project_id: int, provider: str, phone: str, text: str) -> None:
    """Text ``text`` to ``phone`` through provider ``provider`` (uid) of project ``project_id``.
    Raises :class:`apps.messaging.senders.DeliveryError` (the worker retries) when the provider
    is gone, disabled or refuses."""
    from apps.messaging import crypto
    from apps.messaging.senders import DeliveryError, make_sender

    with connection.cursor() as cur:
        cur.execute("SELECT provider, enabled, credentials, options FROM messaging_provider WHERE project_id = %s "
                    "AND uid = %s", [project_id, provider])
        row = cur.fetchone()
    if row is None or not row[1]:  # removed or disabled since: the project's current SMS provider
        other = _fallback(project_id)
        if other is None:
            raise DeliveryError(f"SMS provider {provider} is gone or disabled")
        provider, row = other
    options = orjson.loads(row[3]) if isinstance(row[3], str) else row[3] or {}
    sender = make_sender(row[0], crypto.unseal(row[2], bound_to=f"{project_id}/{provider}"), options)
    try:
        sender.send(phone, {"content": text})
    finally:
        sender.close()
    log.info("sms code sent to %s*** through %s", phone[:5], provider)


def _fallback(project_id: int):
    with connection.cursor() as cur:
        cur.execute("SELECT uid, provider, enabled, credentials, options FROM messaging_provider WHERE project_id = %s "
                    "AND provider_type = 'sms' AND enabled ORDER BY id LIMIT 1", [project_id])
        row = cur.fetchone()
    return (row[0], row[1:]) if row else None
