"""File tokens (Appwrite's Tokens service for files): the secret, and reading one on a request.

The secret is an HS256 JWT with Appwrite's claims (``tokenId``, ``resourceId`` =
``<bucketId>:<fileId>``, ``resourceType`` = ``files``, ``resourceInternalId``, ``iat``, and
``exp`` when the token expires), signed with a key derived from ``SECRET_KEY`` for this purpose
only, so neither an account JWT nor a file token can stand in for the other. It is derived from
the stored row, so every read of the token returns the same secret; the row's existence and
``expire`` are checked on every use, so deleting or shortening a token takes effect at once.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from functools import cache

import jwt
from django.conf import settings

from apps.core.drivers.db import as_dt

RESOURCE_TYPE = "files"
ACCESS_REFRESH = dt.timedelta(days=1)  # Appwrite updates accessedAt at most daily


@cache
def _key() -> bytes:
    return hashlib.sha256(b"file-tokens\0" + settings.SECRET_KEY.encode()).digest()


def secret_of(row: dict, bucket_uid: str, file_uid: str) -> str:
    """The JWT for a ``storage_file_token`` row."""
    created = as_dt(row["created_at"])
    claims = {
        "tokenId": row["uid"],
        "resourceId": f"{bucket_uid}:{file_uid}",
        "resourceType": RESOURCE_TYPE,
        "resourceInternalId": f"{row['bucket_id']}:{row['file_id']}",
        "iat": int(created.timestamp()),
    }
    if row["expire"] is not None:
        claims["exp"] = int(as_dt(row["expire"]).timestamp())
    return jwt.encode(claims, _key(), algorithm="HS256")


async def token_for_request(ctx, secret: str) -> dict | None:
    """The live token row named by ``secret`` in this project, or ``None`` when the secret is
    not one of ours, has expired, or its token was deleted (Appwrite then ignores it and the
    normal permissions apply)."""
    try:
        claims = jwt.decode(secret, _key(), algorithms=["HS256"], options={"require": ["tokenId", "iat"]},
                            leeway=0)
    except jwt.PyJWTError:
        return None
    if claims.get("resourceType") != RESOURCE_TYPE or not isinstance(claims.get("tokenId"), str):
        return None
    row = await ctx.db.fetchone(
        "SELECT * FROM storage_file_token WHERE project_id = %s AND uid = %s", (ctx.project["id"], claims["tokenId"])
    )
    if row is None:
        return None
    now = dt.datetime.now(dt.UTC)
    expire = as_dt(row["expire"])
    if expire is not None and expire <= now:
        return None
    accessed = as_dt(row["accessed_at"])
    if accessed is None or accessed < now - ACCESS_REFRESH:
        await ctx.db.execute("UPDATE storage_file_token SET accessed_at = %s WHERE id = %s", (now, row["id"]))
    return row
