"""Pending sign-ins: the OAuth2 ``state`` parameter.

The browser carries only a random key (256 bits, RFC 6749 §10.12); the server keeps its SHA-256
with what the return trip needs (success and failure URLs, the PKCE verifier, the nonce, who
started it) in ``accounts_oauth2state``. Claiming a state deletes it in the same statement, so a
state works once, for the project and provider it was made for, until ``OAUTH2_STATE_TTL``.
"""

from __future__ import annotations

import datetime as dt
import secrets

from django.conf import settings

from apps.core.drivers.db import as_dt, as_json, now
from apps.projects.services import hash_secret


def new_state_key() -> str:
    """A fresh state key (43 url-safe characters)."""
    return secrets.token_urlsafe(32)


async def state_create(ctx, *, key: str, provider: str, data: dict) -> None:
    """Store ``data`` under the state ``key`` for a sign-in with ``provider``. Expired states
    of the project are removed on the way."""
    created = now()
    await ctx.db.execute("DELETE FROM accounts_oauth2state WHERE project_id = %s AND expire < %s",
                         (ctx.project["id"], ctx.db.dt(created)))
    await ctx.db.execute(
        "INSERT INTO accounts_oauth2state (project_id, key_hash, provider, data, expire) VALUES (%s, %s, %s, %s, %s)",
        (ctx.project["id"], hash_secret(key), provider, ctx.db.json(data),
         ctx.db.dt(created + dt.timedelta(seconds=settings.OAUTH2_STATE_TTL))))


async def state_consume(ctx, *, key: str, provider: str) -> dict | None:
    """The data of the live state ``key`` of this project and ``provider``, deleted as it is
    read; ``None`` for an unknown, used, expired or foreign state."""
    if not key or len(key) > 256:
        return None
    row = await ctx.db.fetchone(
        "DELETE FROM accounts_oauth2state WHERE key_hash = %s AND project_id = %s RETURNING provider, data, expire",
        (hash_secret(key), ctx.project["id"]))
    if row is None or row["provider"] != provider or as_dt(row["expire"]) <= now():
        return None
    return as_json(row["data"])


def binding_cookie_name(key: str) -> str:
    """The cookie that ties a browser sign-in to the browser that started it (see api.oauth2)."""
    return "a_oauth2_" + hash_secret(key)[:16]
