"""Writes for buckets (contract §9). API keys only (scope ``buckets.write``)."""

from __future__ import annotations

from apps.core.db import UniqueViolation, now
from apps.core.errors import AppwriteError
from apps.core.runtime import run_blocking
from apps.storage import backends, selectors

_FIELDS = ("name", "permissions", "file_security", "enabled", "maximum_file_size", "allowed_file_extensions",
           "compression", "encryption", "antivirus", "transformations")


async def bucket_create(ctx, *, bucket_uid: str, **fields) -> dict:
    """Create a bucket with ``fields`` (the :data:`_FIELDS` columns, already validated);
    returns the row. Raises 409 ``storage_bucket_already_exists``."""
    ts = ctx.db.dt(now())
    values = [_adapt(ctx, k, fields[k]) for k in _FIELDS]
    try:
        await ctx.db.execute(
            f"INSERT INTO storage_bucket (project_id, uid, {', '.join(_FIELDS)}, created_at, updated_at) "
            f"VALUES (%s, %s, {', '.join(['%s'] * len(_FIELDS))}, %s, %s)",
            (ctx.project["id"], bucket_uid, *values, ts, ts),
        )
    except UniqueViolation:
        raise AppwriteError("storage_bucket_already_exists") from None
    return await selectors.bucket_get(ctx, bucket_uid=bucket_uid)


async def bucket_update(ctx, *, bucket_uid: str, **fields) -> dict:
    """Replace the bucket's settings (PUT semantics); returns the fresh row.

    Raises 404 ``storage_bucket_not_found``.
    """
    sets = ", ".join(f"{k} = %s" for k in _FIELDS)
    count = await ctx.db.execute(
        f"UPDATE storage_bucket SET {sets}, updated_at = %s WHERE project_id = %s AND uid = %s",
        (*[_adapt(ctx, k, fields[k]) for k in _FIELDS], ctx.db.dt(now()), ctx.project["id"], bucket_uid),
    )
    if not count:
        raise AppwriteError("storage_bucket_not_found")
    return await selectors.bucket_get(ctx, bucket_uid=bucket_uid)


async def bucket_delete(ctx, *, bucket_uid: str) -> None:
    """Delete the bucket, its file rows and their bytes on the storage backend.

    Raises 404 ``storage_bucket_not_found``.
    """
    bucket = await selectors.bucket_get(ctx, bucket_uid=bucket_uid)
    async with ctx.db.transaction() as tx:
        if ctx.db.vendor == "postgresql":
            # Uploads racing the delete hold FOR KEY SHARE on the bucket through the file's
            # foreign key: locking it first makes them wait and then fail (404) instead of the
            # final DELETE failing on a file row that committed meanwhile (500).
            await tx.execute("SELECT id FROM storage_bucket WHERE id = %s FOR UPDATE", (bucket["id"],))
        keys = [r["key"] for r in await tx.fetchall(
            "SELECT key FROM storage_file WHERE bucket_id = %s AND status = 'ready'", (bucket["id"],)
        )]
        ids = [r["id"] for r in await tx.fetchall(
            "SELECT id FROM storage_file WHERE bucket_id = %s AND status <> 'ready'", (bucket["id"],)
        )]
        await tx.execute(
            "DELETE FROM storage_chunk WHERE file_id IN (SELECT id FROM storage_file WHERE bucket_id = %s)",
            (bucket["id"],),
        )
        await tx.execute("DELETE FROM storage_file WHERE bucket_id = %s", (bucket["id"],))
        await tx.execute("DELETE FROM storage_bucket WHERE id = %s", (bucket["id"],))
    await run_blocking(ctx.mode, _delete_objects, keys, ids)


def _delete_objects(keys: list[str], pending_ids: list[int]) -> None:
    from apps.storage.services.uploads import remove_parts

    for key in keys:
        backends.delete(key)
    for file_id in pending_ids:
        remove_parts(file_id)


def _adapt(ctx, name: str, value):
    if name in ("permissions", "allowed_file_extensions"):
        return ctx.db.json(value)
    return value
