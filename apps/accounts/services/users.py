"""Writes of the Users service (API keys): server-made sessions and tokens.

Creating, updating and deleting users go through ``apps.accounts.services.accounts`` (``user_create``,
``user_update``, ``user_delete``), shared with the account routes.
"""

from __future__ import annotations

import math
import secrets

from apps.accounts.models import TokenType
from apps.accounts.services import accounts as services
from apps.accounts.services import tokens as token_services
from apps.core.drivers.db import ForeignKeyViolation
from apps.core.errors import AppwriteError


def token_secret(length: int) -> str:
    """A fresh secret of ``length`` hex characters (Appwrite's server-made tokens)."""
    return secrets.token_hex(math.ceil(length / 2))[:length]


async def token_create_generic(ctx, *, user: dict, length: int, expire: int) -> tuple[dict, str]:
    """A server-made sign-in token (Appwrite ``TOKEN_TYPE_GENERIC``) valid for ``expire``
    seconds; its secret becomes a session through ``POST /account/sessions/token``. Returns
    ``(token row, secret)``."""
    secret = token_secret(length)
    try:
        row = await token_services.token_create(ctx, user=user, type=TokenType.GENERIC, secret=secret, lifetime=expire)
    except ForeignKeyViolation:  # the user was deleted by a concurrent request
        raise AppwriteError("user_not_found") from None
    return row, secret


async def session_delete_any(ctx, *, user: dict, session_uid: str) -> dict:
    """Delete the session ``session_uid`` of ``user``. Raises 404 ``user_session_not_found``
    (also for another user's session)."""
    return await services.session_delete(ctx, user_id=user["id"], session_uid=session_uid)
