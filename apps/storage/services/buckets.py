"""Writes for buckets. API keys only (scope ``buckets.write``)."""

from __future__ import annotations

from apps.core.drivers.db import UniqueViolation, now, present, races
from apps.core.errors import AppwriteError
from apps.storage import selectors

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
    with races(missing=_bucket_not_found):  # deleted right after the update
        return present(await selectors.bucket_get(ctx, bucket_uid=bucket_uid))


async def bucket_delete(ctx, *, bucket_uid: str) -> None:
    """Delete the bucket: it is gone at once (its ID free again); the worker then removes its
    files' bytes and rows (apps.storage.tasks.purge_bucket; Appwrite deletes a bucket's files in
    its deletes worker too).

    Raises 404 ``storage_bucket_not_found``.
    """
    from apps.core.tasks.queue import enqueue
    from apps.projects.trash import trash_project_id
    from apps.storage.tasks import purge_bucket

    bucket = await selectors.bucket_get(ctx, bucket_uid=bucket_uid)
    if bucket is None:  # deleted by a concurrent request a moment ago
        raise _bucket_not_found()
    trash = await trash_project_id(ctx)
    async with ctx.db.transaction() as tx:
        if ctx.db.vendor == "postgresql":
            # Uploads racing the delete hold FOR KEY SHARE on the bucket through the file's
            # foreign key: locking it first makes them wait; they then land in the trashed
            # bucket (removed with it) or, once it is gone, fail with 404.
            await tx.execute("SELECT id FROM storage_bucket WHERE id = %s FOR UPDATE", (bucket["id"],))
        moved = await tx.execute(
            "UPDATE storage_bucket SET project_id = %s, uid = '~' || id, permissions = %s, enabled = %s "
            "WHERE id = %s AND project_id = %s",
            (trash, tx.json([]), False, bucket["id"], ctx.project["id"]))
        if not moved:  # deleted by a concurrent request a moment ago
            raise AppwriteError("storage_bucket_not_found")
        await enqueue(tx, purge_bucket, bucket_id=bucket["id"])


def _bucket_not_found() -> AppwriteError:
    return AppwriteError("storage_bucket_not_found")


def _adapt(ctx, name: str, value):
    if name in ("permissions", "allowed_file_extensions"):
        return ctx.db.json(value)
    return value
