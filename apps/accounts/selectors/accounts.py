"""Reads for users and sessions (raw SQL on the hot path, see apps.core.drivers.db)."""

from __future__ import annotations

from apps.core.http.auth import memberships_sql

_USER_COLUMNS = (
    "u.id, u.project_id, u.uid, u.email, u.name, u.password, u.status, u.labels, u.prefs, "
    "u.email_verification, u.phone, u.phone_verification, u.registration, u.password_update, "
    "u.accessed_at, u.created_at, u.updated_at, u.mfa, u.mfa_totp_verified, u.impersonator"
)
# The session columns carried with its user on every authenticated request (the MFA gate reads
# the factors from here: no extra query).
_SESSION_COLUMNS = "s.id AS s_id, s.uid AS s_uid, s.expire AS s_expire, s.factors AS s_factors, " \
    "s.mfa_updated_at AS s_mfa_updated_at"


def user_tag(user_id: int) -> str:
    """The cache invalidation tag (``apps.core.drivers.cache``) of a user and all of their sessions."""
    return f"user:{user_id}"


async def session_with_user_get(ctx, *, project_id: int, secret_hash: str) -> dict | None:
    """The session (``s_id``, ``s_uid``, ``s_expire``) joined with its user's columns and the
    user's confirmed memberships (``memberships``, JSON text, see
    :func:`apps.core.http.auth.memberships_sql`), by the hash of the session secret, or ``None``.
    One query: the caller's roles come with the lookup."""
    return await ctx.db.fetchone(
        f"SELECT {_SESSION_COLUMNS}, {_USER_COLUMNS}, "
        f"{memberships_sql(ctx.db.vendor)} AS memberships "
        "FROM accounts_session s JOIN accounts_user u ON u.id = s.user_id AND u.project_id = s.project_id "
        "WHERE s.secret_hash = %s AND s.project_id = %s",
        (secret_hash, project_id),
    )


async def session_with_user_by_uid(ctx, *, project_id: int, user_uid: str, session_uid: str) -> dict | None:
    """Like :func:`session_with_user_get`, by user and session IDs (JWT claims); ``None`` when
    that user has no such session."""
    return await ctx.db.fetchone(
        f"SELECT {_SESSION_COLUMNS}, {_USER_COLUMNS}, "
        f"{memberships_sql(ctx.db.vendor)} AS memberships "
        "FROM accounts_session s JOIN accounts_user u ON u.id = s.user_id AND u.project_id = s.project_id "
        "WHERE s.project_id = %s AND s.uid = %s AND u.uid = %s",
        (project_id, session_uid, user_uid),
    )


# Who an impersonator may name: by ID, by (lower-cased) email or by phone.
_TARGET_COLUMN = {"id": "u.uid", "email": "u.email", "phone": "u.phone"}


async def user_with_memberships_by(ctx, *, project_id: int, by: str, value: str) -> dict | None:
    """The user whose ``by`` (``"id"``, ``"email"`` or ``"phone"``) is ``value``, with their
    confirmed memberships (``memberships``, as in :func:`session_with_user_get`), or ``None``.
    The target of an impersonated request: one query, their roles with them."""
    return await ctx.db.fetchone(
        f"SELECT {_USER_COLUMNS}, {memberships_sql(ctx.db.vendor)} AS memberships "
        f"FROM accounts_user u WHERE u.project_id = %s AND {_TARGET_COLUMN[by]} = %s LIMIT 1",
        (project_id, value),
    )


async def user_get_by_email(ctx, *, project_id: int, email: str) -> dict | None:
    """The user with this (lower-cased) email, or ``None``."""
    return await ctx.db.fetchone(
        f"SELECT {_USER_COLUMNS} FROM accounts_user u WHERE u.project_id = %s AND u.email = %s",
        (project_id, email),
    )


async def user_get_by_uid(ctx, *, project_id: int, user_uid: str) -> dict | None:
    """The user with this public ID, or ``None``."""
    return await ctx.db.fetchone(
        f"SELECT {_USER_COLUMNS} FROM accounts_user u WHERE u.project_id = %s AND u.uid = %s",
        (project_id, user_uid),
    )


async def user_get(ctx, *, user_id: int) -> dict | None:
    """The user by internal id, or ``None``."""
    return await ctx.db.fetchone(f"SELECT {_USER_COLUMNS} FROM accounts_user u WHERE u.id = %s", (user_id,))


async def session_list(ctx, *, user_id: int) -> list[dict]:
    """The user's sessions, oldest first."""
    return await ctx.db.fetchall(
        "SELECT * FROM accounts_session WHERE user_id = %s ORDER BY id", (user_id,)
    )


async def session_get(ctx, *, user_id: int, session_uid: str) -> dict | None:
    """One of the user's sessions by its ID, or ``None``."""
    return await ctx.db.fetchone(
        "SELECT * FROM accounts_session WHERE user_id = %s AND uid = %s", (user_id, session_uid)
    )


async def user_secrets_get(ctx, *, user_id: int) -> dict | None:
    """The user's password history, TOTP secret and recovery codes (never cached, never sent
    except where a route returns them), or ``None``."""
    return await ctx.db.fetchone(
        "SELECT password_history, mfa_totp_secret, mfa_totp_verified, mfa_recovery_codes FROM accounts_user "
        "WHERE id = %s", (user_id,))


async def user_count(ctx, *, project_id: int, limit: int) -> int:
    """How many users the project has, counting at most ``limit`` (enough to compare with it)."""
    return await ctx.db.fetchval(
        "SELECT count(*) AS n FROM (SELECT 1 FROM accounts_user WHERE project_id = %s LIMIT %s) t",
        (project_id, limit))


async def challenge_get(ctx, *, user_id: int, challenge_uid: str) -> dict | None:
    """One of the user's MFA challenges by its ID, or ``None``."""
    return await ctx.db.fetchone(
        "SELECT * FROM accounts_challenge WHERE user_id = %s AND uid = %s", (user_id, challenge_uid))
