"""Account MFA routes (Appwrite ``Modules/Account/Http/Account/MFA``): turn MFA on and off, the
TOTP authenticator, challenges (TOTP, email code, recovery code), recovery codes, the factors.

A session starts with one factor (``password``, ``email``...). With MFA on and a second factor
available, the session must complete a challenge before any other route answers (the gate is in
``apps.accounts.credentials.authn``). Routes marked "recent challenge" need a challenge completed in the last
30 minutes (Appwrite's ``mfaProtected``)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from apps.accounts.api.account import announce_account_update
from apps.accounts.responses import full_user_model, session_model
from apps.accounts.selectors import accounts as selectors
from apps.accounts.services import accounts as services
from apps.accounts.services import mfa
from apps.accounts.services.mails import code_mail
from apps.core.domain.ids import unique_id
from apps.core.domain.mail import require_mail
from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_dt, as_json, now
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import json_response, no_content

CHALLENGE_LIFETIME = 3600  # seconds (Appwrite TOKEN_EXPIRATION_CONFIRM)


def _require_recent_challenge(ctx) -> None:
    """401 ``user_challenge_required`` unless the session completed a challenge recently."""
    stamp = ctx.auth.session.get("mfa_updated_at")
    if stamp is None or stamp + dt.timedelta(seconds=mfa.RECENT_CHALLENGE) < now():
        raise AppwriteError("user_challenge_required")


async def _secrets(ctx) -> dict:
    return await selectors.user_secrets_get(ctx, user_id=ctx.auth.user["id"])


async def _add_factors(ctx, factors: list[str], *, challenged: bool = False) -> list[str]:
    merged = list(dict.fromkeys([*ctx.auth.session["factors"], *factors]))
    await services.session_factors_set(ctx, user_id=ctx.auth.user["id"], session_id=ctx.auth.session["id"],
                                       factors=merged, challenged=challenged)
    return merged


async def mfa_update(ctx):
    """``PATCH /account/mfa``: turn MFA on or off. Turning it on counts every second factor the
    user already has as proved by the current session (Appwrite)."""
    user = ctx.auth.user
    fresh = await services.user_update(ctx, user_id=user["id"], mfa=ctx.params.mfa)
    if ctx.params.mfa:
        available = mfa.factors_of(fresh, await _secrets(ctx))
        await _add_factors(ctx, [f for f in (mfa.TOTP, mfa.EMAIL, mfa.PHONE) if available[f]])
    model = await full_user_model(ctx, fresh)
    await announce_account_update(ctx, model, "mfa")
    return json_response(model)


async def authenticator_create(ctx):
    """``POST /account/mfa/authenticators/totp``: a new TOTP secret and its ``otpauth://`` URI
    (replacing an unverified one). Raises 409 ``user_authenticator_already_verified``."""
    user = ctx.auth.user
    if (await _secrets(ctx))["mfa_totp_verified"]:
        raise AppwriteError("user_authenticator_already_verified")
    secret = mfa.totp_new()
    await services.user_update(ctx, user_id=user["id"], mfa_totp_secret=secret, mfa_totp_verified=False)
    return json_response({"secret": secret, "uri": mfa.totp_uri(secret, account=user["email"],
                                                                   issuer=ctx.project["name"])})


async def authenticator_verify(ctx):
    """``PUT /account/mfa/authenticators/totp``: prove the authenticator with a current code; the
    session gains the ``totp`` factor. Raises 404 ``user_authenticator_not_found``, 409
    ``user_authenticator_already_verified``, 401 ``user_invalid_token``."""
    row = await _secrets(ctx)
    if not row["mfa_totp_secret"]:
        raise AppwriteError("user_authenticator_not_found")
    if row["mfa_totp_verified"]:
        raise AppwriteError("user_authenticator_already_verified")
    if not mfa.totp_check(row["mfa_totp_secret"], ctx.params.otp):
        raise AppwriteError("user_invalid_token")
    fresh = await services.user_update(ctx, user_id=ctx.auth.user["id"], mfa_totp_verified=True)
    await _add_factors(ctx, [mfa.TOTP])
    model = await full_user_model(ctx, fresh)
    await announce_account_update(ctx, model, "mfa")
    return json_response(model)


async def authenticator_delete(ctx):
    """``DELETE /account/mfa/authenticators/totp`` (recent challenge). Raises 401
    ``user_challenge_required``, 404 ``user_authenticator_not_found``."""
    _require_recent_challenge(ctx)
    if not (await _secrets(ctx))["mfa_totp_secret"]:
        raise AppwriteError("user_authenticator_not_found")
    await services.user_update(ctx, user_id=ctx.auth.user["id"], mfa_totp_secret="", mfa_totp_verified=False)
    return no_content()


async def challenge_create(ctx):
    """``POST /account/mfa/challenges``: start a challenge of ``factor`` (``totp``, ``email``,
    ``phone``, ``recoverycode``, any case); an email challenge mails a 6-digit code. Raises 400
    (unknown factor), 503 ``general_smtp_disabled``, 400 ``user_email_not_found`` /
    ``user_email_not_verified``, 503 ``general_phone_disabled`` (no SMS provider), 400
    ``user_phone_not_found`` / ``user_phone_not_verified``."""
    factor = mfa.FACTORS.get(ctx.params.factor.lower())
    if factor is None:
        raise invalid_argument("factor", "Value must be one of (email, phone, totp, recoverycode)")
    user = ctx.auth.user
    code = ""
    if factor == mfa.EMAIL:
        require_mail(ctx.project)
        if not user["email"]:
            raise AppwriteError("user_email_not_found")
        if not user["email_verification"]:
            raise AppwriteError("user_email_not_verified")
        code = f"{secrets.randbelow(1_000_000):06d}"
    elif factor == mfa.PHONE:  # texted through the project's SMS provider (apps.messaging.phone)
        from apps.messaging.phone import challenge_sms

        code, text_code = await challenge_sms(ctx, user)
    created = now()
    expire = created + dt.timedelta(seconds=CHALLENGE_LIFETIME)
    async with ctx.db.transaction() as tx:
        row = await tx.fetchone(
            "INSERT INTO accounts_challenge (project_id, user_id, uid, type, code_hash, expire, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING *",
            (ctx.project["id"], user["id"], unique_id(), factor, hashlib.sha256(code.encode()).hexdigest() if code else "",
             ctx.db.dt(expire), ctx.db.dt(created)),
        )
        if factor == mfa.PHONE:
            await text_code(tx)
        elif code:
            await code_mail(ctx, tx, name="mfa-challenge", user=user, otp=code)
    return json_response({"$id": row["uid"], "$createdAt": iso(as_dt(row["created_at"])), "userId": user["uid"],
                          "expire": iso(as_dt(row["expire"]))}, 201)


async def _challenge_passed(ctx, challenge: dict, otp: str) -> bool:
    kind = challenge["type"]
    if kind == mfa.TOTP:
        row = await _secrets(ctx)
        step = mfa.totp_step(row["mfa_totp_secret"], otp) if row["mfa_totp_verified"] else None
        # A code completes one challenge: its time step (or an older one) is refused afterwards.
        return step is not None and await services.totp_step_use(ctx, user_id=ctx.auth.user["id"], step=step)
    if kind in (mfa.EMAIL, mfa.PHONE):
        return secrets.compare_digest(challenge["code_hash"], hashlib.sha256(otp.encode()).hexdigest())
    if kind == mfa.RECOVERY_CODE:
        return await services.recovery_code_use(ctx, user_id=ctx.auth.user["id"], code=otp)
    return False


async def challenge_confirm(ctx):
    """``PUT /account/mfa/challenges``: complete a challenge with its code (a recovery code is
    used up, and so is a TOTP code's time step); the session gains the factor. Returns the
    Session. Raises 401 ``user_invalid_token`` (unknown or expired challenge, wrong code, a TOTP
    code of a time step that already completed a challenge)."""
    p = ctx.params
    challenge = await selectors.challenge_get(ctx, user_id=ctx.auth.user["id"], challenge_uid=p.challengeId)
    if challenge is None or as_dt(challenge["expire"]) <= now():
        raise AppwriteError("user_invalid_token")
    if not await _challenge_passed(ctx, challenge, p.otp):
        raise AppwriteError("user_invalid_token")
    gone = await ctx.db.fetchone("DELETE FROM accounts_challenge WHERE id = %s RETURNING id", (challenge["id"],))
    if gone is None:  # completed by a concurrent request a moment ago
        raise AppwriteError("user_invalid_token")
    await _add_factors(ctx, [challenge["type"]], challenged=True)
    session = await selectors.session_get(ctx, user_id=ctx.auth.user["id"], session_uid=ctx.auth.session["uid"])
    return json_response(session_model(session, user_uid=ctx.auth.user_id, current_id=session["id"]))


async def factors_list(ctx):
    """``GET /account/mfa/factors``: ``{totp, email, phone, recoveryCode}``."""
    return json_response(mfa.factors_of(ctx.auth.user, await _secrets(ctx)))


async def recovery_codes_create(ctx):
    """``POST /account/mfa/recovery-codes``: the first set of codes, shown this once. Raises 409
    ``user_recovery_codes_already_exists``."""
    if as_json((await _secrets(ctx))["mfa_recovery_codes"]):
        raise AppwriteError("user_recovery_codes_already_exists")
    codes = mfa.recovery_codes_new()
    await services.user_update(ctx, user_id=ctx.auth.user["id"], mfa_recovery_codes=codes)
    return json_response({"recoveryCodes": codes}, 201)


async def recovery_codes_get(ctx):
    """``GET /account/mfa/recovery-codes`` (recent challenge). Raises 401
    ``user_challenge_required``, 404 ``user_recovery_codes_not_found``."""
    _require_recent_challenge(ctx)
    codes = as_json((await _secrets(ctx))["mfa_recovery_codes"])
    if not codes:
        raise AppwriteError("user_recovery_codes_not_found")
    return json_response({"recoveryCodes": codes})


async def recovery_codes_regenerate(ctx):
    """``PATCH /account/mfa/recovery-codes`` (recent challenge): a new set replaces the old one.
    Raises 401 ``user_challenge_required``, 404 ``user_recovery_codes_not_found``."""
    _require_recent_challenge(ctx)
    if not as_json((await _secrets(ctx))["mfa_recovery_codes"]):
        raise AppwriteError("user_recovery_codes_not_found")
    codes = mfa.recovery_codes_new()
    await services.user_update(ctx, user_id=ctx.auth.user["id"], mfa_recovery_codes=codes)
    return json_response({"recoveryCodes": codes})
