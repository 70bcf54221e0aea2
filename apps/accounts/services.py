"""Writes for users and sessions. Each raises typed :class:`AppwriteError`s."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.hashers import get_hasher

from apps.accounts import selectors
from apps.accounts.tokens import new_secret
from apps.core import cache
from apps.core.db import UniqueViolation, as_dt, as_json, now
from apps.core.errors import AppwriteError
from apps.core.ids import unique_id
from apps.core.runtime import run_blocking
from apps.projects.selectors import session_duration
from apps.projects.services import hash_secret

# A real hash of a random password: verifying against it costs what a real check costs, so an
# unknown email answers as slowly as a wrong password.
_DUMMY_HASH: str | None = None


def _hash_password(password: str) -> str:
    return get_hasher().encode(password, get_hasher().salt())


def _verify_password(password: str, encoded: str) -> bool:
    global _DUMMY_HASH
    if not encoded:
        if _DUMMY_HASH is None:
            _DUMMY_HASH = _hash_password(new_secret())
        get_hasher().verify(password, _DUMMY_HASH)
        return False
    algorithm = encoded.split("$", 1)[0]
    try:
        return get_hasher(algorithm).verify(password, encoded)
    except ValueError:
        return False


async def password_hash(ctx, password: str) -> str:
    """The Django hasher string for ``password`` (argon2id; off the event loop under ASGI)."""
    return await run_blocking(ctx.mode, _hash_password, password)


async def password_verify(ctx, password: str, encoded: str) -> bool:
    """Check ``password`` against ``encoded``; an empty ``encoded`` costs a dummy check."""
    return await run_blocking(ctx.mode, _verify_password, password, encoded)


async def user_create(ctx, *, user_uid: str, email: str, password: str, name: str,
                      enforce_limit: bool = True) -> dict:
    """Create a user (``email`` already normalised; ``password`` plain or ``""``).

    With ``enforce_limit`` the project's user limit applies (Appwrite: every route but
    ``POST /users``). Raises 400 ``user_count_exceeded``, 409 ``user_already_exists`` for a taken
    ID or email.
    """
    limit = ctx.project.get("auth_limit") or 0
    if enforce_limit and limit and await selectors.user_count(ctx, project_id=ctx.project["id"], limit=limit) >= limit:
        raise AppwriteError("user_count_exceeded")
    hashed = await password_hash(ctx, password) if password else ""
    history = [hashed] if hashed and ctx.project.get("auth_password_history") else []
    ts = ctx.db.dt(now())
    try:
        row = await ctx.db.fetchone(
            "INSERT INTO accounts_user (project_id, uid, email, name, password, status, labels, prefs, "
            "email_verification, phone, phone_verification, registration, password_update, accessed_at, "
            "created_at, updated_at, password_history) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, '', %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (ctx.project["id"], user_uid, email, name, hashed, True, ctx.db.json([]), ctx.db.json({}),
             False, False, ts, ts if hashed else None, ts, ts, ts, ctx.db.json(history)),
        )
    except UniqueViolation:
        raise AppwriteError("user_already_exists") from None
    return await selectors.user_get(ctx, user_id=row["id"])


async def session_create(ctx, *, user: dict, provider: str, factors: list[str]) -> tuple[dict, str]:
    """Create a session for ``user``; returns ``(session row, secret)``.

    The session lasts the project's session length (``auth_duration``, else ``SESSION_DURATION``).
    With a project limit of sessions per user (``auth_max_sessions``), the user's oldest sessions
    beyond it end (Appwrite: after the new session is made).
    """
    secret = new_secret()
    created = now()
    expire = created + dt.timedelta(seconds=session_duration(ctx.project))
    row = await ctx.db.fetchone(
        "INSERT INTO accounts_session (project_id, user_id, uid, secret_hash, provider, provider_uid, "
        "factors, ip, user_agent, expire, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *",
        (ctx.project["id"], user["id"], unique_id(), hash_secret(secret), provider, user["email"],
         ctx.db.json(factors), ctx.client_ip, ctx.headers.get("user-agent", "")[:512],
         ctx.db.dt(expire), ctx.db.dt(created), ctx.db.dt(created)),
    )
    await ctx.db.execute(
        "UPDATE accounts_user SET accessed_at = %s WHERE id = %s", (ctx.db.dt(created), user["id"])
    )
    limit = ctx.project.get("auth_max_sessions") or 0
    if limit:
        await ctx.db.execute(
            "DELETE FROM accounts_session WHERE user_id = %s AND id NOT IN "
            "(SELECT id FROM accounts_session WHERE user_id = %s ORDER BY id DESC LIMIT %s)",
            (user["id"], user["id"], limit),
        )
    await cache.invalidate(ctx, selectors.user_tag(user["id"]))  # accessedAt of cached sessions
    return row, secret


async def session_extend(ctx, *, user_id: int, session_id: int) -> None:
    """``PATCH /account/sessions/{id}``: the session now ends the project's session length from
    now (Appwrite's behaviour)."""
    moment = now()
    expire = moment + dt.timedelta(seconds=session_duration(ctx.project))
    await ctx.db.execute("UPDATE accounts_session SET expire = %s, updated_at = %s WHERE id = %s",
                         (ctx.db.dt(expire), ctx.db.dt(moment), session_id))
    await cache.invalidate(ctx, selectors.user_tag(user_id))


async def session_factors_set(ctx, *, user_id: int, session_id: int, factors: list[str],
                              challenged: bool = False) -> None:
    """Store the factors a session has proved; ``challenged`` also stamps ``mfa_updated_at``
    (a challenge was just completed)."""
    if challenged:
        await ctx.db.execute("UPDATE accounts_session SET factors = %s, mfa_updated_at = %s, updated_at = %s "
                             "WHERE id = %s", (ctx.db.json(factors), ctx.db.dt(now()), ctx.db.dt(now()), session_id))
    else:
        await ctx.db.execute("UPDATE accounts_session SET factors = %s, updated_at = %s WHERE id = %s",
                             (ctx.db.json(factors), ctx.db.dt(now()), session_id))
    await cache.invalidate(ctx, selectors.user_tag(user_id))


async def session_delete(ctx, *, user_id: int, session_uid: str) -> dict:
    """Delete one of the user's sessions; returns the deleted row.

    Raises 404 ``user_session_not_found``.
    """
    row = await ctx.db.fetchone(
        "DELETE FROM accounts_session WHERE user_id = %s AND uid = %s RETURNING id, uid",
        (user_id, session_uid),
    )
    if row is None:
        raise AppwriteError("user_session_not_found")
    await cache.invalidate(ctx, selectors.user_tag(user_id))
    return row


async def sessions_delete_all(ctx, *, user_id: int, keep_session_id: int | None = None) -> int:
    """Delete every session of the user (but ``keep_session_id``); returns how many."""
    if keep_session_id is None:
        count = await ctx.db.execute("DELETE FROM accounts_session WHERE user_id = %s", (user_id,))
    else:
        count = await ctx.db.execute("DELETE FROM accounts_session WHERE user_id = %s AND id <> %s",
                                     (user_id, keep_session_id))
    await cache.invalidate(ctx, selectors.user_tag(user_id))
    return count


_USER_FIELDS = {"name", "email", "password", "prefs", "status", "password_update", "email_verification",
                "phone_verification", "password_history", "mfa", "mfa_totp_secret", "mfa_totp_verified",
                "mfa_recovery_codes"}
_JSON_FIELDS = {"prefs", "password_history", "mfa_recovery_codes"}


async def user_update(ctx, *, user_id: int, **fields) -> dict:
    """Update user columns (``name``, ``email``, ``password`` hash, ``prefs``, ``status``,
    ``password_update``, ``email_verification``, ``phone_verification``, ``password_history``,
    ``mfa``, ``mfa_totp_secret``, ``mfa_totp_verified``, ``mfa_recovery_codes``); returns the fresh
    row. Raises 409 ``user_email_already_exists``."""
    assert set(fields) <= _USER_FIELDS, fields
    sets, values = [], []
    for name, value in fields.items():
        sets.append(f"{name} = %s")
        if name in _JSON_FIELDS:
            value = ctx.db.json(value)
        elif name == "password_update":
            value = ctx.db.dt(value)
        values.append(value)
    sets.append("updated_at = %s")
    values.append(ctx.db.dt(now()))
    try:
        await ctx.db.execute(f"UPDATE accounts_user SET {', '.join(sets)} WHERE id = %s", (*values, user_id))
    except UniqueViolation:
        raise AppwriteError("user_email_already_exists") from None
    await cache.invalidate(ctx, selectors.user_tag(user_id))
    return await selectors.user_get(ctx, user_id=user_id)


async def token_create(ctx, *, user: dict, type: int, secret: str, lifetime: int, phrase: str = "",
                       db=None) -> dict:
    """Store a token of ``type`` (:class:`apps.accounts.models.TokenType`) for ``user``, valid for
    ``lifetime`` seconds; only ``sha256(secret)`` is kept. ``db``: a transaction to write in
    (default ``ctx.db``). Returns the token row (``uid``, ``expire``...). Older unused tokens stay
    valid until they expire (Appwrite's behaviour)."""
    created = now()
    expire = created + dt.timedelta(seconds=lifetime)
    return await (db or ctx.db).fetchone(
        "INSERT INTO accounts_token (project_id, user_id, uid, type, secret_hash, phrase, ip, user_agent, expire, "
        "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *",
        (ctx.project["id"], user["id"], unique_id(), type, hash_secret(secret), phrase, ctx.client_ip,
         ctx.headers.get("user-agent", "")[:512], ctx.db.dt(expire), ctx.db.dt(created)),
    )


async def token_find(ctx, *, user: dict, secret: str, types: tuple[int, ...]) -> dict:
    """The unexpired token of one of ``types`` of ``user`` whose secret is ``secret`` (not used
    up yet: see :func:`token_claim`). Raises 401 ``user_invalid_token``."""
    marks = ", ".join(["%s"] * len(types))
    token = await ctx.db.fetchone(
        f"SELECT * FROM accounts_token WHERE user_id = %s AND secret_hash = %s AND type IN ({marks}) "
        "ORDER BY id DESC LIMIT 1",
        (user["id"], hash_secret(secret), *types),
    )
    if token is None or as_dt(token["expire"]) <= now():
        raise AppwriteError("user_invalid_token")
    return token


async def token_claim(ctx, *, token: dict) -> None:
    """Use up ``token`` (delete it); raises 401 ``user_invalid_token`` when a concurrent request
    used it a moment ago, so two requests racing with one secret cannot both succeed."""
    claimed = await ctx.db.fetchone("DELETE FROM accounts_token WHERE id = %s RETURNING id", (token["id"],))
    if claimed is None:
        raise AppwriteError("user_invalid_token")


async def token_consume(ctx, *, user_uid: str, secret: str, types: tuple[int, ...]) -> tuple[dict, dict]:
    """Use up the token of one of ``types`` whose secret is ``secret``, of the user ``user_uid``;
    returns ``(user row, token row)``. The token is deleted in the same statement that claims it.

    Raises 401 ``user_invalid_token`` for an unknown user, a wrong, used or expired secret or a
    token of another type (Appwrite answers all of these alike).
    """
    user = await selectors.user_get_by_uid(ctx, project_id=ctx.project["id"], user_uid=user_uid)
    if user is None:
        raise AppwriteError("user_invalid_token")
    token = await token_find(ctx, user=user, secret=secret, types=types)
    await token_claim(ctx, token=token)
    return user, token


# Appwrite's sign-in methods (route label ``auth.type``) -> (project setting, name in the refusal).
AUTH_METHODS = {
    "email-password": ("auth_email_password", "Email / Password"),
    "magic-url": ("auth_magic_url", "Magic URL"),
    "email-otp": ("auth_email_otp", "Email OTP"),
    "anonymous": ("auth_anonymous", "Anonymous"),
    "phone": ("auth_phone", "Phone"),
    "jwt": ("auth_jwt", "JWT"),
    "invites": ("auth_invites", "Invites"),
}


def auth_method_check(ctx, method: str) -> None:
    """Refuse a sign-in ``method`` (a key of :data:`AUTH_METHODS`) the project turned off, except
    for API keys (Appwrite: ``app/controllers/shared/api/auth.php``). Raises 501
    ``user_auth_method_unsupported``."""
    field, label = AUTH_METHODS[method]
    if not ctx.auth.is_key and ctx.project.get(field) is False:
        raise AppwriteError("user_auth_method_unsupported", f"{label} authentication is disabled for this project")


async def recovery_code_use(ctx, *, user_id: int, code: str) -> bool:
    """Use up one of the user's MFA recovery codes; False when ``code`` is not one of them (or a
    concurrent request used it a moment ago)."""
    row = await selectors.user_secrets_get(ctx, user_id=user_id)
    codes = (as_json(row["mfa_recovery_codes"]) or []) if row else []
    if code not in codes:
        return False
    left = [c for c in codes if c != code]
    # Compare-and-set on the old list: two requests with the same code cannot both succeed.
    changed = await ctx.db.execute(
        "UPDATE accounts_user SET mfa_recovery_codes = %s WHERE id = %s AND mfa_recovery_codes = %s",
        (ctx.db.json(left), user_id, ctx.db.json(codes)),
    )
    await cache.invalidate(ctx, selectors.user_tag(user_id))
    return changed == 1


async def user_delete(ctx, *, user: dict) -> None:
    """Delete a user: gone at once (its ID and email free again, its sessions no longer
    accepted); the worker then removes its sessions, tokens and challenges in batches, and the
    user row (:func:`apps.accounts.tasks.purge_user`; Appwrite's deletes worker does the same).
    For ``DELETE /users/{userId}`` (the Users service)."""
    from apps.accounts.tasks import purge_user
    from apps.core.queue import enqueue
    from apps.projects.trash import trash_project_id

    trash = await trash_project_id(ctx)
    async with ctx.db.transaction() as tx:
        await tx.execute(
            "UPDATE accounts_user SET project_id = %s, uid = '~' || id, email = '', phone = '', status = %s "
            "WHERE id = %s", (trash, False, user["id"]))
        await enqueue(tx, purge_user, user_id=user["id"])
    await cache.invalidate(ctx, selectors.user_tag(user["id"]))
