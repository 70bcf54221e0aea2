"""The Users service's MFA routes (API keys; Appwrite ``Modules/Users/Http/Users/MFA``): an
operator turns a user's MFA on or off, sees their factors, removes their authenticator, and
reads, creates or regenerates their recovery codes (e.g. for a user who lost their device)."""

from __future__ import annotations

from apps.accounts.responses import full_user_model
from apps.accounts.selectors import accounts as selectors
from apps.accounts.services import accounts as services
from apps.accounts.services import mfa
from apps.core.domain.events import WriteEvent, announce
from apps.core.drivers.db import as_json
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content


async def _user(ctx) -> dict:
    user = await selectors.user_get_by_uid(ctx, project_id=ctx.project["id"], user_uid=ctx.params.userId)
    if user is None:
        raise AppwriteError("user_not_found")
    return user


async def user_mfa_update(ctx):
    """``PATCH /users/{userId}/mfa``. Raises 404 ``user_not_found``."""
    user = await _user(ctx)
    fresh = await services.user_update(ctx, user_id=user["id"], mfa=ctx.params.mfa)
    model = await full_user_model(ctx, fresh)
    await announce(ctx, WriteEvent(ctx.project_id, "account", "update", {"userId": model["$id"]}, model,
                                   extra={"detail": "mfa"}))
    return json_response(model)


async def user_factors_list(ctx):
    """``GET /users/{userId}/mfa/factors``. Raises 404 ``user_not_found``."""
    user = await _user(ctx)
    return json_response(mfa.factors_of(user, await selectors.user_secrets_get(ctx, user_id=user["id"])))


async def user_authenticator_delete(ctx):
    """``DELETE /users/{userId}/mfa/authenticators/totp``. Raises 404 ``user_not_found``,
    ``user_authenticator_not_found``."""
    user = await _user(ctx)
    if not (await selectors.user_secrets_get(ctx, user_id=user["id"]))["mfa_totp_secret"]:
        raise AppwriteError("user_authenticator_not_found")
    await services.user_update(ctx, user_id=user["id"], mfa_totp_secret="", mfa_totp_verified=False)
    return no_content()


async def _codes(ctx, user: dict) -> list[str]:
    return as_json((await selectors.user_secrets_get(ctx, user_id=user["id"]))["mfa_recovery_codes"]) or []


async def user_recovery_codes_get(ctx):
    """``GET /users/{userId}/mfa/recovery-codes``. Raises 404 ``user_not_found``,
    ``user_recovery_codes_not_found``."""
    user = await _user(ctx)
    codes = await _codes(ctx, user)
    if not codes:
        raise AppwriteError("user_recovery_codes_not_found")
    return json_response({"recoveryCodes": codes})


async def user_recovery_codes_create(ctx):
    """``PATCH /users/{userId}/mfa/recovery-codes``: the first set (Appwrite answers 200 here).
    Raises 404 ``user_not_found``, 409 ``user_recovery_codes_already_exists``."""
    user = await _user(ctx)
    if await _codes(ctx, user):
        raise AppwriteError("user_recovery_codes_already_exists")
    codes = mfa.recovery_codes_new()
    await services.user_update(ctx, user_id=user["id"], mfa_recovery_codes=codes)
    return json_response({"recoveryCodes": codes})


async def user_recovery_codes_regenerate(ctx):
    """``PUT /users/{userId}/mfa/recovery-codes``: a new set replaces the old one. Raises 404
    ``user_not_found``, ``user_recovery_codes_not_found``."""
    user = await _user(ctx)
    if not await _codes(ctx, user):
        raise AppwriteError("user_recovery_codes_not_found")
    codes = mfa.recovery_codes_new()
    await services.user_update(ctx, user_id=user["id"], mfa_recovery_codes=codes)
    return json_response({"recoveryCodes": codes})
