"""The Users service: server-side management of a project's users with an API key
(``users.read`` / ``users.write``), Appwrite's ``/v1/users`` routes.

Every write announces its event after it committed (realtime ``account.<userId>`` and
``users.<userId>.*`` events, as Appwrite publishes them; the audit log keeps the ones named by
``extra["audit"]``).
"""

from __future__ import annotations

import orjson

from apps.accounts.credentials.tokens import encode_jwt, encode_session_token
from apps.accounts.passwords import imported as passwords
from apps.accounts.passwords.policy import history_after, password_check
from apps.accounts.responses import session_model, token_model, user_model, with_targets
from apps.accounts.selectors import accounts as selectors
from apps.accounts.selectors import users as users_selectors
from apps.accounts.services import accounts as services
from apps.accounts.services import users as users_services
from apps.core.domain.events import WriteEvent, announce
from apps.core.domain.ids import resolve_id
from apps.core.domain.queries import parse_queries
from apps.core.drivers.db import ForeignKeyViolation, as_json
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import json_response, no_content

MAX_PREFS_BYTES = 65535  # Appwrite's limit on the encoded prefs object


def admin_user_model(row: dict, *, hashes: bool = True) -> dict:
    """The ``User`` model as the Users routes send it: with ``password`` (the stored hash in
    Appwrite's form), ``hash`` and ``hashOptions``, which Appwrite shows to API keys. With
    ``hashes=False`` (an impersonator's ``users.read``, a session) the three are left out."""
    model = user_model(row)
    if hashes:
        model["password"], model["hash"], model["hashOptions"] = passwords.appwrite_form(row["password"])
    return model


async def _announce(ctx, model: dict, action: str, *, detail: str | None = None, audit: str | None = None) -> None:
    extra = {}
    if detail:
        extra["detail"] = detail
    if audit:
        extra["audit"] = audit
    await announce(ctx, WriteEvent(ctx.project_id, "account", action, {"userId": model["$id"]}, model, extra=extra))


async def _user(ctx) -> dict:
    return await users_selectors.user_require(ctx, user_uid=ctx.params.userId)


# --- list, create -------------------------------------------------------------------------------

async def users_list(ctx):
    p = ctx.params
    total, rows = await users_selectors.user_list(ctx, queries=parse_queries(p.queries), search=p.search,
                                                  total=p.total)
    models = await with_targets(ctx, [admin_user_model(r, hashes=ctx.auth.is_key) for r in rows], rows)
    return json_response({"total": total, "users": models})


async def _created(ctx, row: dict):
    model = admin_user_model(row)
    await _announce(ctx, model, "create", audit="user.create")
    return json_response(model, 201)


async def user_create(ctx):
    p = ctx.params
    user_uid = resolve_id(p.userId, "userId")
    if p.password:
        await password_check(ctx, p.password, user_uid=user_uid, email=p.email or "", name=p.name,
                             phone=p.phone or "")
    # Appwrite: the project's user limit binds sign-ups, not the Users service.
    row = await services.user_create(ctx, user_uid=user_uid, email=p.email or "", phone=p.phone or "",
                                     password=p.password or "", name=p.name, enforce_limit=False)
    return await _created(ctx, row)


def _hashed_creator(algorithm: str):
    async def handler(ctx):
        p = ctx.params
        stored = passwords.imported(
            algorithm, p.password,
            version=getattr(p, "passwordVersion", ""),
            scrypt=passwords.ScryptParams(p.passwordSalt, p.passwordCpu, p.passwordMemory, p.passwordParallel,
                                          p.passwordLength) if algorithm == "scrypt" else None,
            scrypt_mod=passwords.ScryptModParams(p.passwordSalt, p.passwordSaltSeparator, p.passwordSignerKey)
            if algorithm == "scryptMod" else None,
        )
        row = await services.user_create(ctx, user_uid=resolve_id(p.userId, "userId"), email=p.email, password="",
                                         name=p.name, stored_hash=stored, enforce_limit=False)
        return await _created(ctx, row)

    handler.__name__ = f"user_create_{algorithm.lower()}"
    return handler


user_create_argon2 = _hashed_creator("argon2")
user_create_bcrypt = _hashed_creator("bcrypt")
user_create_md5 = _hashed_creator("md5")
user_create_sha = _hashed_creator("sha")
user_create_phpass = _hashed_creator("phpass")
user_create_scrypt = _hashed_creator("scrypt")
user_create_scrypt_modified = _hashed_creator("scryptMod")


# --- one user -----------------------------------------------------------------------------------

async def user_get(ctx):
    user = await _user(ctx)
    return json_response((await with_targets(ctx, [admin_user_model(user, hashes=ctx.auth.is_key)], [user]))[0])


async def user_delete(ctx):
    user = await _user(ctx)
    await services.user_delete(ctx, user=user)
    await _announce(ctx, admin_user_model(user), "delete")
    return no_content()


async def _update(ctx, detail: str, audit: str = "user.update", **fields):
    user = await _user(ctx)
    fresh = await services.user_update(ctx, user_id=user["id"], **fields)
    model = (await with_targets(ctx, [admin_user_model(fresh)], [fresh]))[0]
    await _announce(ctx, model, "update", detail=detail, audit=audit)
    return model, user


async def user_update_name(ctx):
    model, _ = await _update(ctx, "name", name=ctx.params.name)
    return json_response(model)


async def user_update_email(ctx):
    # A new address is not verified yet; "" removes the email (Appwrite).
    model, _ = await _update(ctx, "email", email=ctx.params.email, email_verification=False)
    return json_response(model)


async def user_update_phone(ctx):
    model, _ = await _update(ctx, "phone", phone=ctx.params.number, phone_verification=False)
    return json_response(model)


async def user_update_password(ctx):
    from apps.core.drivers.db import now

    password = ctx.params.password
    fields = {"password": "", "password_update": now()}
    if password:  # "" removes the password (Appwrite)
        user = await _user(ctx)
        history = as_json((await selectors.user_secrets_get(ctx, user_id=user["id"]))["password_history"]) or []
        await password_check(ctx, password, user_uid=user["uid"], email=user["email"], name=user["name"],
                             phone=user["phone"], history=history)
        fields["password"] = await services.password_hash(ctx, password)
        fields["password_history"] = history_after(ctx, history, fields["password"])
    model, user = await _update(ctx, "password", **fields)
    if password and ctx.project.get("auth_invalidate_sessions"):
        await services.sessions_delete_all(ctx, user_id=user["id"])
    return json_response(model)


async def user_update_status(ctx):
    # A blocked user's sessions are refused from the next request on (403 user_blocked); the
    # session cache is dropped by user_update, so no process keeps serving them.
    model, _ = await _update(ctx, "status", status=ctx.params.status)
    return json_response(model)


async def user_update_impersonator(ctx):
    # Whether the user may act as other users of the project (Appwrite 1.9); their cached
    # sessions are dropped by user_update, so the next request sees the new flag.
    model, _ = await _update(ctx, "impersonator", impersonator=ctx.params.impersonator)
    return json_response(model)


async def user_update_labels(ctx):
    labels = list(dict.fromkeys(ctx.params.labels))
    model, _ = await _update(ctx, "labels", labels=labels)
    return json_response(model)


async def user_update_email_verification(ctx):
    model, _ = await _update(ctx, "verification", audit="verification.update",
                             email_verification=ctx.params.emailVerification)
    return json_response(model)


async def user_update_phone_verification(ctx):
    model, _ = await _update(ctx, "verification", audit="verification.update",
                             phone_verification=ctx.params.phoneVerification)
    return json_response(model)


async def user_get_prefs(ctx):
    return json_response(user_model(await _user(ctx))["prefs"])


async def user_update_prefs(ctx):
    prefs = ctx.params.prefs
    if len(orjson.dumps(prefs)) > MAX_PREFS_BYTES:
        raise invalid_argument("prefs", f"Value must be a valid object no larger than {MAX_PREFS_BYTES} bytes")
    model, _ = await _update(ctx, "prefs", prefs=prefs)
    return json_response(model["prefs"])


# --- sessions, tokens, JWTs ---------------------------------------------------------------------

async def user_sessions_list(ctx):
    user = await _user(ctx)
    rows = await selectors.session_list(ctx, user_id=user["id"])
    sessions = [session_model(r, user_uid=user["uid"], current_id=None, provider_tokens=ctx.auth.is_key)
                for r in rows]
    return json_response({"total": len(sessions) if ctx.params.total else 0, "sessions": sessions})


def _session_event(ctx, user: dict, session_uid: str, action: str, payload: dict) -> WriteEvent:
    return WriteEvent(ctx.project_id, "session", action, {"userId": user["uid"], "sessionId": session_uid},
                      payload, extra={"audit": f"session.{action}"})


async def user_session_create(ctx):
    """A server-made session (``provider: "server"``, ``factors: ["server"]``); its ``secret``
    is the full session token (for ``client.set_session``); no cookies."""
    user = await _user(ctx)
    if not user["status"]:
        raise AppwriteError("user_blocked")
    try:
        session, secret = await services.session_create(ctx, user=user, provider="server", factors=["server"])
    except ForeignKeyViolation:  # the user was deleted by a concurrent request
        raise AppwriteError("user_not_found") from None
    model = session_model(session, user_uid=user["uid"], current_id=None,
                          secret=encode_session_token(user["uid"], secret))
    await announce(ctx, _session_event(ctx, user, session["uid"], "create", {**model, "secret": ""}))
    return json_response(model, 201)


async def user_sessions_delete(ctx):
    user = await _user(ctx)
    await services.sessions_delete_all(ctx, user_id=user["id"])
    await announce(ctx, _session_event(ctx, user, "", "delete", admin_user_model(user)))
    return no_content()


async def user_session_delete(ctx):
    user = await _user(ctx)
    deleted = await users_services.session_delete_any(ctx, user=user, session_uid=ctx.params.sessionId)
    await announce(ctx, _session_event(ctx, user, deleted["uid"], "delete", {"$id": deleted["uid"]}))
    return no_content()


async def user_token_create(ctx):
    p = ctx.params
    user = await _user(ctx)
    row, secret = await users_services.token_create_generic(ctx, user=user, length=p.length, expire=p.expire)
    model = token_model(row, user_uid=user["uid"], secret=secret)
    await announce(ctx, WriteEvent(ctx.project_id, "token", "create", {"userId": user["uid"], "tokenId": row["uid"]},
                                   {**model, "secret": ""}, extra={"audit": "tokens.create"}))
    return json_response(model, 201)


async def user_jwt_create(ctx):
    """A JWT for the user, bound to ``sessionId`` (``recent``, the default: the newest session).
    An unknown or missing session gives, as in Appwrite, a JWT bound to no session; unlike
    Appwrite, such a JWT is refused when used (401 ``user_jwt_invalid``,
    :func:`apps.accounts.credentials.authn.authenticate`): a JWT only ever acts for a live session."""
    p = ctx.params
    user = await _user(ctx)
    sessions = await selectors.session_list(ctx, user_id=user["id"])
    if p.sessionId == "recent":
        session_uid = sessions[-1]["uid"] if sessions else ""
    else:
        session_uid = next((s["uid"] for s in sessions if s["uid"] == p.sessionId), "")
    token = encode_jwt(project_uid=ctx.project_id, user_uid=user["uid"], session_uid=session_uid,
                       duration=p.duration or 900)
    await announce(ctx, WriteEvent(ctx.project_id, "jwt", "create", {"userId": user["uid"]}, {},
                                   extra={"audit": "jwt.create"}))
    return json_response({"jwt": token}, 201)
