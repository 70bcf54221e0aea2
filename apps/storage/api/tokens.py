"""The Tokens service for files: create, list, get, update (expiry) and delete file tokens.

Scopes ``tokens.read`` / ``tokens.write`` (API keys). Creating also needs ``update`` permission
on the bucket, or on the file when the bucket has ``fileSecurity`` (API keys hold every
permission). Model: Appwrite's ``ResourceToken``; ``expire`` and ``accessedAt`` are ``""`` when
unset.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import AfterValidator, StringConstraints

from apps.core.domain import permissions as perms
from apps.core.domain.ids import unique_id
from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_dt, as_json, races
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.core.http.inputs import LooseBool, Strict
from apps.storage import filetokens, selectors
from apps.storage.querysql import plan

IdParam = Annotated[str, StringConstraints(min_length=1, max_length=36)]
TOKEN_COLUMNS = {
    "$id": ("b.uid", "str"), "$createdAt": ("b.created_at", "dt"), "$updatedAt": ("b.updated_at", "dt"),
    "expire": ("b.expire", "dt"),
}


def _future(value: str | None) -> dt.datetime | None:
    if value is None:
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("Value must be valid date in the future.") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    if when <= dt.datetime.now(dt.UTC):
        raise ValueError("Value must be valid date in the future.")
    return when


Expire = Annotated[str | None, AfterValidator(_future)]


class FileTokenCreate(Strict):
    bucketId: IdParam
    fileId: IdParam
    expire: Expire = None


class FileTokenList(Strict):
    bucketId: IdParam
    fileId: IdParam
    queries: list[str] | None = None
    total: LooseBool = True


class TokenRef(Strict):
    tokenId: IdParam


class TokenUpdate(TokenRef):
    expire: Expire = None


def token_model(row: dict, bucket_uid: str, file_uid: str) -> dict:
    return {
        "$id": row["uid"],
        "$createdAt": iso(as_dt(row["created_at"])),
        "resourceId": f"{bucket_uid}:{file_uid}",
        "resourceType": filetokens.RESOURCE_TYPE,
        "expire": iso(as_dt(row["expire"])),
        "secret": filetokens.secret_of(row, bucket_uid, file_uid),
        "accessedAt": iso(as_dt(row["accessed_at"])),
    }


async def _bucket_and_file(ctx) -> tuple[dict, dict]:
    """Appwrite Tokens/Buckets/Files/Action: the bucket (404 when missing, or disabled for
    non-keys), read permission on it (else 401 ``user_unauthorized``), the file (404)."""
    p = ctx.params
    bucket = await selectors.bucket_get_usable(ctx, bucket_uid=p.bucketId)
    if not perms.allows(ctx.auth, as_json(bucket["permissions"]) or [], "read"):
        raise AppwriteError("user_unauthorized")
    file = await selectors.file_get(ctx, bucket=bucket, file_uid=p.fileId)
    return bucket, file


async def token_create(ctx):
    bucket, file = await _bucket_and_file(ctx)
    may_update = perms.allows(ctx.auth, as_json(bucket["permissions"]) or [], "update") or (
        bucket["file_security"] and perms.allows(ctx.auth, as_json(file["permissions"]) or [], "update"))
    if not may_update:
        raise AppwriteError("user_unauthorized")
    now = dt.datetime.now(dt.UTC)
    uid = unique_id()
    with races(missing=lambda: AppwriteError("storage_file_not_found")):  # the file was deleted meanwhile
        await ctx.db.execute(
            "INSERT INTO storage_file_token (project_id, uid, bucket_id, file_id, expire, accessed_at, "
            "created_at, updated_at) VALUES (%s, %s, %s, %s, %s, NULL, %s, %s)",
            (ctx.project["id"], uid, bucket["id"], file["id"], ctx.params.expire, now, now),
        )
    row = await _token_row(ctx, uid)
    return json_response(token_model(row, bucket["uid"], file["uid"]), 201)


async def token_list(ctx):
    bucket, file = await _bucket_and_file(ctx)
    p = plan(ctx.params.queries, TOKEN_COLUMNS, ctx.db)
    total, rows = await selectors._page(
        ctx, "storage_file_token b", "b.*", ["b.file_id = %s", *p.where], [file["id"], *p.params], p,
        cursor_scope=("b.file_id = %s", [file["id"]]))
    return json_response({"total": total if ctx.params.total else 0,
                          "tokens": [token_model(r, bucket["uid"], file["uid"]) for r in rows]})


_ROW = ("SELECT t.*, b.uid AS bucket_uid, f.uid AS file_uid FROM storage_file_token t "
        "JOIN storage_bucket b ON b.id = t.bucket_id JOIN storage_file f ON f.id = t.file_id "
        "WHERE t.project_id = %s AND t.uid = %s")


async def _token_row(ctx, uid: str) -> dict:
    row = await ctx.db.fetchone(_ROW, (ctx.project["id"], uid))
    if row is None:
        raise AppwriteError("token_not_found")
    return row


async def token_get(ctx):
    row = await _token_row(ctx, ctx.params.tokenId)
    return json_response(token_model(row, row["bucket_uid"], row["file_uid"]))


async def token_update(ctx):
    """Sets ``expire`` (``null`` = never); a concurrent delete answers 404."""
    now = dt.datetime.now(dt.UTC)
    updated = await ctx.db.fetchone(
        "UPDATE storage_file_token SET expire = %s, updated_at = %s WHERE project_id = %s AND uid = %s "
        "RETURNING uid", (ctx.params.expire, now, ctx.project["id"], ctx.params.tokenId))
    if updated is None:
        raise AppwriteError("token_not_found")
    row = await _token_row(ctx, ctx.params.tokenId)
    return json_response(token_model(row, row["bucket_uid"], row["file_uid"]))


async def token_delete(ctx):
    deleted = await ctx.db.fetchone(
        "DELETE FROM storage_file_token WHERE project_id = %s AND uid = %s RETURNING uid",
        (ctx.project["id"], ctx.params.tokenId))
    if deleted is None:
        raise AppwriteError("token_not_found")
    return no_content()
