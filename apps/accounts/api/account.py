"""Account endpoints: create, get, name, password, email, prefs, status."""

from __future__ import annotations

from apps.accounts.api.cookies import clear_session_cookies
from apps.accounts.passwords.policy import history_after, password_check
from apps.accounts.responses import full_user_model, user_model
from apps.accounts.selectors import accounts as selectors
from apps.accounts.services import accounts as services
from apps.core.domain.events import WriteEvent, announce
from apps.core.domain.ids import resolve_id
from apps.core.drivers.db import as_json, now
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response

MAX_PREFS_BYTES = 65535  # Appwrite's limit on the encoded prefs object


async def announce_account_update(ctx, model: dict, detail: str) -> None:
    """Announce an account update (realtime channel ``account.<userId>``, event
    ``users.<userId>.update.<detail>``), after the write committed."""
    await announce(ctx, WriteEvent(ctx.project_id, "account", "update", {"userId": model["$id"]}, model,
                                   extra={"detail": detail, "audit": "user.update"}))


async def account_create(ctx):
    services.auth_method_check(ctx, "email-password")
    p = ctx.params
    user_uid = resolve_id(p.userId, "userId")
    await password_check(ctx, p.password, user_uid=user_uid, email=p.email, name=p.name)
    user = await services.user_create(ctx, user_uid=user_uid, email=p.email, password=p.password, name=p.name)
    model = user_model(user)
    await announce(ctx, WriteEvent(ctx.project_id, "account", "create", {"userId": model["$id"]}, model,
                                   extra={"audit": "user.create"}))
    return json_response(model, 201)


async def account_get(ctx):
    model = await full_user_model(ctx, ctx.auth.user)
    if ctx.auth.impersonator is not None:  # Appwrite 1.9: who is acting as this account
        model["impersonatorUserId"] = ctx.auth.impersonator["uid"]
    return json_response(model)


async def account_update_name(ctx):
    user = await services.user_update(ctx, user_id=ctx.auth.user["id"], name=ctx.params.name)
    model = await full_user_model(ctx, user)
    await announce_account_update(ctx, model, "name")
    return json_response(model)


async def account_update_password(ctx):
    user = ctx.auth.user
    p = ctx.params
    if user["password"] and not await services.password_verify(ctx, p.oldPassword, user["password"]):
        raise AppwriteError("user_invalid_credentials", "Invalid credentials. Please check the old password.")
    history = (await selectors.user_secrets_get(ctx, user_id=user["id"]))["password_history"]
    history = as_json(history) or []
    await password_check(ctx, p.password, user_uid=user["uid"], email=user["email"], name=user["name"],
                         phone=user["phone"], history=history)
    hashed = await services.password_hash(ctx, p.password)
    fresh = await services.user_update(ctx, user_id=user["id"], password=hashed, password_update=now(),
                                       password_history=history_after(ctx, history, hashed))
    if ctx.project.get("auth_invalidate_sessions"):  # Appwrite: the other sessions end
        await services.sessions_delete_all(ctx, user_id=user["id"], keep_session_id=ctx.auth.session["id"])
    model = await full_user_model(ctx, fresh)
    await announce_account_update(ctx, model, "password")
    return json_response(model)


async def account_update_email(ctx):
    user = ctx.auth.user
    p = ctx.params
    fields = {"email": p.email}
    if p.email != user["email"]:
        fields["email_verification"] = False  # the new address is not proved yet (Appwrite)
    if user["password"]:
        if not await services.password_verify(ctx, p.password, user["password"]):
            raise AppwriteError("user_invalid_credentials")
    else:  # an anonymous account becomes an email account (Appwrite behaviour)
        await password_check(ctx, p.password, user_uid=user["uid"], email=p.email, name=user["name"],
                             phone=user["phone"])
        fields["password"] = await services.password_hash(ctx, p.password)
        fields["password_update"] = now()
    fresh = await services.user_update(ctx, user_id=user["id"], **fields)
    model = await full_user_model(ctx, fresh)
    await announce_account_update(ctx, model, "email")
    return json_response(model)


async def account_get_prefs(ctx):
    return json_response(user_model(ctx.auth.user)["prefs"])


async def account_update_prefs(ctx):
    import orjson

    prefs = ctx.params.prefs
    if len(orjson.dumps(prefs)) > MAX_PREFS_BYTES:
        raise AppwriteError("general_argument_invalid", f"Invalid `prefs` param: Value must be a valid object no larger than {MAX_PREFS_BYTES} bytes")
    user = await services.user_update(ctx, user_id=ctx.auth.user["id"], prefs=prefs)
    model = await full_user_model(ctx, user)
    await announce_account_update(ctx, model, "prefs")
    return json_response(model)


async def account_update_status(ctx):
    user_id = ctx.auth.user["id"]
    user = await services.user_update(ctx, user_id=user_id, status=False)
    await services.sessions_delete_all(ctx, user_id=user_id)
    model = await full_user_model(ctx, user)
    await announce_account_update(ctx, model, "status")
    response = json_response(model)
    clear_session_cookies(ctx, response)
    return response
