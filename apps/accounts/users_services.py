"""Writes of the Users service (API keys): delete a user, server-made sessions and tokens.

Creating and updating users go through ``apps.accounts.services`` (``user_create``,
``user_update``), shared with the account routes.
"""

from __future__ import annotations

import math
import secrets

from apps.accounts import selectors, services
from apps.accounts.models import TokenType
from apps.core import cache
from apps.core.db import ForeignKeyViolation
from apps.core.errors import AppwriteError
from apps.core.runtime import SYNC, run_blocking


def _orm_delete(user_pk: int, close: bool) -> bool:
    from django.db import connection, transaction

    from apps.accounts.models import User

    try:
        with transaction.atomic():
            # The row lock holds off rows that would refer to the user (a membership being
            # added) until it is gone; their foreign key check then fails instead of this commit.
            if not User.objects.select_for_update().filter(pk=user_pk).exists():
                return False
            deleted, _ = User.objects.filter(pk=user_pk).delete()
        return deleted > 0
    finally:
        if close:  # an executor thread: give its connection back
            connection.close()


async def user_delete(ctx, *, user: dict) -> None:
    """Delete ``user`` with everything that belongs to the account: sessions (they stop working
    at once), tokens, memberships, log entries. Rows and files the user created stay, as in
    Appwrite. Goes through the ORM so that every table referring to users is cleaned, whichever
    app owns it.

    Raises 404 ``user_not_found`` when a concurrent request deleted it first.
    """
    deleted = await run_blocking(ctx.mode, _orm_delete, user["id"], ctx.mode != SYNC)
    await cache.invalidate(ctx, selectors.user_tag(user["id"]))
    if not deleted:
        raise AppwriteError("user_not_found")


def token_secret(length: int) -> str:
    """A fresh secret of ``length`` hex characters (Appwrite's server-made tokens)."""
    return secrets.token_hex(math.ceil(length / 2))[:length]


async def token_create_generic(ctx, *, user: dict, length: int, expire: int) -> tuple[dict, str]:
    """A server-made sign-in token (Appwrite ``TOKEN_TYPE_GENERIC``) valid for ``expire``
    seconds; its secret becomes a session through ``POST /account/sessions/token``. Returns
    ``(token row, secret)``."""
    secret = token_secret(length)
    try:
        row = await services.token_create(ctx, user=user, type=TokenType.GENERIC, secret=secret, lifetime=expire)
    except ForeignKeyViolation:  # the user was deleted by a concurrent request
        raise AppwriteError("user_not_found") from None
    return row, secret


async def session_delete_any(ctx, *, user: dict, session_uid: str) -> dict:
    """Delete the session ``session_uid`` of ``user``. Raises 404 ``user_session_not_found``
    (also for another user's session)."""
    return await services.session_delete(ctx, user_id=user["id"], session_uid=session_uid)
