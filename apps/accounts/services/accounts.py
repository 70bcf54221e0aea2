"""Writes for users and sessions. Each raises typed :class:`AppwriteError`s."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.hashers import get_hasher

from apps.accounts.credentials.tokens import new_secret
from apps.accounts.selectors import accounts as selectors
from apps.core.domain.ids import unique_id
from apps.core.drivers import cache
from apps.core.drivers.db import UniqueViolation, as_json, now
from apps.core.drivers.runtime import run_blocking
from apps.core.errors import AppwriteError
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
    except (ValueError, KeyError, TypeError, MemoryError):  # unknown algorithm, a malformed stored form
        return False


async def password_hash(ctx, password: str) -> str:
    """The Django hasher string for ``password`` (argon2id; off the event loop under ASGI)."""
    return await run_blocking(ctx.mode, _hash_password, password)


async def password_verify(ctx, password: str, encoded: str) -> bool:
    """Check ``password`` against ``encoded``; an empty ``encoded`` costs a dummy check."""
    return await run_blocking(ctx.mode, _verify_password, password, encoded)


async def password_verify_and_upgrade(ctx, *, user: dict, password: str) -> bool:
    """Check ``password`` against ``user``'s stored hash (any imported algorithm, see
    ``apps.accounts.passwords.hashers``). After a good check of a hash that is not the server's argon2
    (an imported one, or argon2 with other parameters) the password is re-hashed with the
    server's argon2 and stored, unless it changed meanwhile; ``passwordUpdate`` stays as it was
    (the password did not change)."""
    encoded = user["password"] if user else ""
    if not await password_verify(ctx, password, encoded):
        return False
    if _needs_upgrade(encoded):
        upgraded = await password_hash(ctx, password)
        await ctx.db.execute("UPDATE accounts_user SET password = %s WHERE id = %s AND password = %s",
                             (upgraded, user["id"], encoded))
        await cache.invalidate(ctx, selectors.user_tag(user["id"]))
    return True


def _needs_upgrade(encoded: str) -> bool:
    algorithm = encoded.split("$", 1)[0]
    try:
        hasher = get_hasher(algorithm)
    except ValueError:
        return False
    return hasher.algorithm != get_hasher().algorithm or hasher.must_update(encoded)


def unique_error(exc: UniqueViolation, *, email: str = "user_already_exists", phone: str = "user_already_exists",
                 other: str = "user_already_exists") -> AppwriteError:
    """The 409 for a unique clash on ``accounts_user``: ``email``/``phone`` name the error type
    for a taken email / phone number (the constraint tells which), ``other`` for a taken ID."""
    text = exc.constraint or ""
    if "email" in text:
        return AppwriteError(email)
    if "phone" in text:
        return AppwriteError(phone)
    return AppwriteError(other)


async def user_create(ctx, *, user_uid: str, email: str, password: str, name: str, phone: str = "",
                      stored_hash: str = "", db=None, enforce_limit: bool = True) -> dict:
    """Create a user (``email`` already normalised, ``""`` for none; ``phone`` in E.164 or ``""``;
    ``password`` plain or ``""``; or ``stored_hash``, an already stored form from
    ``apps.accounts.passwords.imported``). ``db`` runs it inside the caller's transaction. With
    ``enforce_limit`` the project's user limit applies (Appwrite: every route but ``POST /users``
    and the imports).

    Raises 400 ``user_count_exceeded``; 409 ``user_already_exists`` for a taken ID, email or phone
    (Appwrite's answer for all three on create); 409 ``user_email_already_exists`` for an email
    that another user signs in with through an OAuth2 identity.
    """
    db = db or ctx.db
    reader = ctx if db is ctx.db else _Tx(db)
    limit = ctx.project.get("auth_limit") or 0
    if enforce_limit and limit and await selectors.user_count(reader, project_id=ctx.project["id"], limit=limit) >= limit:
        raise AppwriteError("user_count_exceeded")
    await _refuse_identity_email(ctx, db, email)
    hashed = stored_hash or (await password_hash(ctx, password) if password else "")
    history = [hashed] if hashed and ctx.project.get("auth_password_history") else []
    ts = db.dt(now())
    try:
        row = await db.fetchone(
            "INSERT INTO accounts_user (project_id, uid, email, name, password, status, labels, prefs, "
            "email_verification, phone, phone_verification, registration, password_update, accessed_at, "
            "created_at, updated_at, password_history) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (ctx.project["id"], user_uid, email, name, hashed, True, db.json([]), db.json({}),
             False, phone, False, ts, ts if hashed else None, ts, ts, ts, db.json(history)),
        )
    except UniqueViolation as exc:
        raise unique_error(exc) from None
    return await selectors.user_get(ctx if db is ctx.db else _Tx(db), user_id=row["id"])


async def _refuse_identity_email(ctx, db, email: str, not_user_id: int | None = None) -> None:
    """Appwrite keeps an email that a user's OAuth2 identity reports from being taken by another
    account (Users create/update email, account create/update email): 409
    ``user_email_already_exists``."""
    if not email:
        return
    from apps.accounts.services.identities import identity_email_owner

    owner = await identity_email_owner(ctx if db is ctx.db else _Tx(db), project_id=ctx.project["id"], email=email,
                                       not_user_id=not_user_id)
    if owner is not None:
        raise AppwriteError("user_email_already_exists")


class _Tx:
    """A stand-in context whose ``db`` is a transaction (selectors read through ``ctx.db``)."""

    def __init__(self, db):
        self.db = db


async def session_create(ctx, *, user: dict, provider: str, factors: list[str], provider_uid: str | None = None,
                         provider_tokens: tuple[str, str, int | None] | None = None) -> tuple[dict, str]:
    """Create a session for ``user``; returns ``(session row, secret)``.

    The session lasts the project's session length (``auth_duration``, else ``SESSION_DURATION``).
    OAuth2 sessions pass the provider's user ID and ``provider_tokens`` = (access token, refresh
    token, access token lifetime in seconds or ``None``), stored encrypted.
    With a project limit of sessions per user (``auth_max_sessions``), the user's oldest sessions
    beyond it end (Appwrite: after the new session is made).
    """
    secret = new_secret()
    created = now()
    expire = created + dt.timedelta(seconds=session_duration(ctx.project))
    access, refresh, expiry = "", "", None
    if provider_tokens is not None:
        from apps.accounts.oauth2.crypto import encrypt

        access, refresh = encrypt(provider_tokens[0]), encrypt(provider_tokens[1])
        if provider_tokens[2] is not None:
            expiry = ctx.db.dt(created + dt.timedelta(seconds=provider_tokens[2]))
    row = await ctx.db.fetchone(
        "INSERT INTO accounts_session (project_id, user_id, uid, secret_hash, provider, provider_uid, "
        "provider_access_token, provider_refresh_token, provider_access_token_expiry, "
        "factors, ip, user_agent, expire, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *",
        (ctx.project["id"], user["id"], unique_id(), hash_secret(secret), provider,
         user["email"] if provider_uid is None else provider_uid, access, refresh, expiry,
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
                "phone_verification", "phone", "labels", "password_history", "mfa", "mfa_totp_secret",
                "mfa_totp_verified", "mfa_recovery_codes", "impersonator"}
_JSON_FIELDS = {"prefs", "labels", "password_history", "mfa_recovery_codes"}


async def user_update(ctx, *, user_id: int, **fields) -> dict:
    """Update user columns (``name``, ``email``, ``phone``, ``password`` hash, ``prefs``,
    ``labels``, ``status``, ``password_update``, ``email_verification``,
    ``phone_verification``, ``password_history``, ``mfa``, ``mfa_totp_secret``,
    ``mfa_totp_verified``, ``mfa_recovery_codes``, ``impersonator``); returns the fresh row, or raises 404
    ``user_not_found`` when the user was deleted meanwhile. Every cached session of the user is
    dropped (roles follow labels and verification at once).

    A new ``password`` or ``email`` (any route: account, recovery, Users API) ends the user's
    outstanding links, see
    :func:`apps.accounts.services.tokens.tokens_revoke_after_update`.

    Raises 409 ``user_email_already_exists`` (also for an email another user's OAuth2 identity
    reports) / ``user_phone_already_exists``.
    """
    assert set(fields) <= _USER_FIELDS, fields
    if fields.get("email"):
        await _refuse_identity_email(ctx, ctx.db, fields["email"], not_user_id=user_id)
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
        changed = await ctx.db.execute(f"UPDATE accounts_user SET {', '.join(sets)} WHERE id = %s", (*values, user_id))
    except UniqueViolation as exc:
        raise unique_error(exc, email="user_email_already_exists", phone="user_phone_already_exists") from None
    if changed and ("password" in fields or "email" in fields):
        from apps.accounts.services.tokens import tokens_revoke_after_update

        await tokens_revoke_after_update(ctx, user_id=user_id, email=fields.get("email"))
    await cache.invalidate(ctx, selectors.user_tag(user_id))
    row = await selectors.user_get(ctx, user_id=user_id) if changed else None
    if row is None:
        raise AppwriteError("user_not_found")
    return row


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


async def totp_step_use(ctx, *, user_id: int, step: int) -> bool:
    """Record that a TOTP code of time ``step`` (see ``apps.accounts.services.mfa.totp_step``) completed a
    challenge; False when that step or a later one was already used, so the code is refused
    (one code cannot complete challenges on two sessions: RFC 6238 §5.2). One compare-and-set
    statement, atomic on PostgreSQL and SQLite alike. This server's rule: Appwrite accepts a
    code again within its 30 s."""
    changed = await ctx.db.execute(
        "UPDATE accounts_user SET mfa_totp_step = %s WHERE id = %s AND mfa_totp_step < %s", (step, user_id, step))
    return changed == 1


async def user_delete(ctx, *, user: dict) -> None:
    """Delete a user: gone at once (its ID, email and phone free again, its sessions, tokens and
    memberships no longer accepted or listed: each lookup requires the user to be in its own
    project); the worker then removes every row that refers to the user, and the user row
    (:func:`apps.accounts.tasks.purge_user`; Appwrite's deletes worker does the same). Rows and
    files the user created stay. For ``DELETE /users/{userId}`` (the Users service).

    Raises 404 ``user_not_found`` when a concurrent request deleted it first."""
    from apps.accounts.tasks import purge_user
    from apps.core.tasks.queue import enqueue
    from apps.projects.trash import trash_project_id

    trash = await trash_project_id(ctx)
    async with ctx.db.transaction() as tx:
        moved = await tx.execute(
            "UPDATE accounts_user SET project_id = %s, uid = '~' || id, email = '', phone = '', status = %s "
            "WHERE id = %s AND project_id = %s", (trash, False, user["id"], ctx.project["id"]))
        if moved:
            await enqueue(tx, purge_user, user_id=user["id"])
    await cache.invalidate(ctx, selectors.user_tag(user["id"]))
    if not moved:
        raise AppwriteError("user_not_found")
