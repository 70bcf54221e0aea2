"""Writes for account tokens (Appwrite's ``tokens``): the single-use secrets of links and codes
(verification, recovery, magic URL, email code, OAuth2 hand-off, server-made tokens). Only
``sha256(secret)`` is stored; each raises typed :class:`AppwriteError`s.

Rules beyond Appwrite's (docs/security-accounts.md): a mailed token is bound to the address it
went to; a new password or email ends every recovery link; a new magic URL or email code
replaces the older ones.
"""

from __future__ import annotations

import datetime as dt

from apps.accounts.models import TokenType
from apps.accounts.selectors import accounts as selectors
from apps.core.domain.ids import unique_id
from apps.core.drivers.db import as_dt, now
from apps.core.errors import AppwriteError
from apps.projects.services import hash_secret

# Tokens mailed to an address: they prove control of that mailbox only while it is the user's.
_MAILED = (int(TokenType.VERIFICATION), int(TokenType.MAGIC_URL), int(TokenType.EMAIL))


async def tokens_revoke_after_update(ctx, *, user_id: int, email: str | None) -> int:
    """After a new password or email: delete every outstanding password recovery token of the
    user (a reset link must not outlive a password or address change, nor another reset), and
    with a new ``email`` (``None`` = unchanged) every mailed token (verification, magic URL,
    email code) sent to another address. Returns how many were deleted. This server's rule:
    Appwrite keeps them until they expire."""
    deleted = await ctx.db.execute("DELETE FROM accounts_token WHERE user_id = %s AND type = %s",
                                   (user_id, int(TokenType.RECOVERY)))
    if email is not None:
        marks = ", ".join(["%s"] * len(_MAILED))
        deleted += await ctx.db.execute(
            f"DELETE FROM accounts_token WHERE user_id = %s AND type IN ({marks}) AND email <> %s",
            (user_id, *_MAILED, email))
    return deleted


async def tokens_delete(ctx, *, user_id: int, type: int, db=None) -> int:
    """Delete the user's outstanding tokens of ``type`` (a new sign-in code or link replaces the
    older ones: only the newest works). ``db``: a transaction to write in. Returns how many."""
    return await (db or ctx.db).execute("DELETE FROM accounts_token WHERE user_id = %s AND type = %s",
                                        (user_id, int(type)))


async def token_create(ctx, *, user: dict, type: int, secret: str, lifetime: int, phrase: str = "",
                       email: str = "", db=None) -> dict:
    """Store a token of ``type`` (:class:`apps.accounts.models.TokenType`) for ``user``, valid for
    ``lifetime`` seconds; only ``sha256(secret)`` is kept. ``email``: the address a mailed token
    goes to (it binds the token to that address, see :func:`token_find`). ``db``: a transaction
    to write in (default ``ctx.db``). Returns the token row (``uid``, ``expire``...)."""
    created = now()
    expire = created + dt.timedelta(seconds=lifetime)
    return await (db or ctx.db).fetchone(
        "INSERT INTO accounts_token (project_id, user_id, uid, type, secret_hash, phrase, email, ip, user_agent, "
        "expire, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *",
        (ctx.project["id"], user["id"], unique_id(), type, hash_secret(secret), phrase, email, ctx.client_ip,
         ctx.headers.get("user-agent", "")[:512], ctx.db.dt(expire), ctx.db.dt(created)),
    )


async def token_find(ctx, *, user: dict, secret: str, types: tuple[int, ...], bound: bool = False) -> dict:
    """The unexpired token of one of ``types`` of ``user`` whose secret is ``secret`` (not used
    up yet: see :func:`token_claim`). A token bound to an address (``email``) is valid only while
    that address is the user's email; with ``bound`` the token must carry one (email
    verification: the link proves the mailbox it was sent to, no other).
    Raises 401 ``user_invalid_token``."""
    marks = ", ".join(["%s"] * len(types))
    token = await ctx.db.fetchone(
        f"SELECT * FROM accounts_token WHERE user_id = %s AND secret_hash = %s AND type IN ({marks}) "
        "ORDER BY id DESC LIMIT 1",
        (user["id"], hash_secret(secret), *types),
    )
    if token is None or as_dt(token["expire"]) <= now():
        raise AppwriteError("user_invalid_token")
    address = token.get("email") or ""
    if (bound or address) and address != user["email"]:
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
