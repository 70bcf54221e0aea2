"""Removing what unfinished uploads leave behind: rows, part files and stored bytes.

Three sweeps, all safe to run while servers are serving:

1. **Abandoned uploads**: unfinished file rows not touched for ``expiry`` seconds (default
   ``STORAGE_UPLOAD_EXPIRY``) whose writer no longer holds them (``apps.storage.leases``). Each
   is first leased to the cleaner (so no request resumes it meanwhile), then its stored bytes
   and part files are deleted, then its chunk rows and the row itself. A cleaner killed midway
   leaves a row leased to a dead process, which the next run (or a retry of the upload) takes.
2. **Orphan part directories** under ``STORAGE_UPLOAD_DIR`` that no unfinished row owns and that
   are older than the cutoff (parts of a file that became ready just before a crash).
3. **Orphan objects** (local storage only, :func:`remove_orphan_objects`, which
   ``manage.py cleanupuploads`` runs after :func:`uploads_cleanup`): files under ``STORAGE_ROOT`` older than the cutoff that
   no file row names. A row always names its key before any byte is stored under it, so such a
   file is the leftover of an attempt that was replaced or crashed. This walks the whole
   directory, so requests never run it.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import shutil
import time

from django.conf import settings

from apps.core.drivers.db import now
from apps.core.drivers.runtime import run_blocking
from apps.storage import backends, leases
from apps.storage.services.files import discard_bytes

log = logging.getLogger("apps.storage")

KEY_BATCH = 500  # keys looked up per query in the object sweep
_last_cleanup = [0.0]


async def maybe_cleanup(ctx) -> None:
    """Run :func:`uploads_cleanup` (rows and part directories, at most 50 uploads) if this
    process has not for ``STORAGE_CLEANUP_INTERVAL`` seconds."""
    interval = settings.STORAGE_CLEANUP_INTERVAL
    if not interval or time.monotonic() - _last_cleanup[0] < interval:
        return
    _last_cleanup[0] = time.monotonic()
    try:
        await uploads_cleanup(ctx.db, ctx.mode, limit=50)
    except Exception:
        log.exception("upload cleanup failed")


def cutoff_of(expiry: float | None) -> dt.datetime:
    """Now minus ``expiry`` seconds (default ``STORAGE_UPLOAD_EXPIRY``)."""
    return now() - dt.timedelta(seconds=settings.STORAGE_UPLOAD_EXPIRY if expiry is None else expiry)


async def uploads_cleanup(db, mode: str, *, expiry: float | None = None, limit: int = 1000) -> int:
    """Delete unfinished uploads idle for ``expiry`` seconds (default ``STORAGE_UPLOAD_EXPIRY``)
    whose writer is gone: their stored bytes, part files, chunk rows, file tokens and rows; then part
    directories older than the cutoff that no unfinished upload owns. Returns how many uploads
    were removed."""
    cutoff = cutoff_of(expiry)
    stale = await db.fetchall(
        "SELECT id, key, lease_owner, lease_expires FROM storage_file WHERE status <> 'ready' AND updated_at < %s "
        "ORDER BY id LIMIT %s",
        (db.dt(cutoff), limit),
    )
    removed = 0
    for row in stale:
        if leases.held(row):
            continue
        owner = leases.new_owner()
        taken = await db.execute(
            "UPDATE storage_file SET status = 'assembling', lease_owner = %s, lease_expires = %s "
            "WHERE id = %s AND status <> 'ready' AND lease_owner = %s AND key = %s AND updated_at < %s",
            (owner, db.dt(leases.expiry(0)), row["id"], row["lease_owner"], row["key"], db.dt(cutoff)),
        )
        if not taken:  # resumed, replaced or finished meanwhile
            continue
        await run_blocking(mode, discard_bytes, row["key"], row["id"])
        async with db.transaction() as tx:
            await tx.execute("DELETE FROM storage_chunk WHERE file_id = %s", (row["id"],))
            # A token may name an unfinished upload (tokens can be made for a file of any status).
            await tx.execute("DELETE FROM storage_file_token WHERE file_id = %s", (row["id"],))
            removed += await tx.execute("DELETE FROM storage_file WHERE id = %s AND lease_owner = %s",
                                        (row["id"], owner))
    live = {r["id"] for r in await db.fetchall("SELECT id FROM storage_file WHERE status <> 'ready'")}
    await run_blocking(mode, _remove_orphan_dirs, live, cutoff.timestamp())
    return removed


def _remove_orphan_dirs(live: set[int], cutoff_ts: float) -> None:
    root = settings.STORAGE_UPLOAD_DIR
    if not os.path.isdir(root):
        return
    for entry in os.scandir(root):
        if entry.is_dir() and entry.name.isdigit() and int(entry.name) not in live \
                and entry.stat().st_mtime < cutoff_ts:
            shutil.rmtree(entry.path, ignore_errors=True)


def _old_local_keys(cutoff_ts: float) -> list[str]:
    """Keys (``/``-separated paths under ``STORAGE_ROOT``) of stored files last written before
    ``cutoff_ts`` (epoch seconds), outside the upload directory; ``[]`` on S3 (blocking)."""
    if backends.local_path("x") is None:
        return []
    root = os.path.realpath(settings.STORAGE_ROOT)
    uploads = os.path.realpath(settings.STORAGE_UPLOAD_DIR)
    keys = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.join(folder, d) != uploads]
        for name in names:
            path = os.path.join(folder, name)
            try:
                if os.lstat(path).st_mtime < cutoff_ts:
                    keys.append(os.path.relpath(path, root).replace(os.sep, "/"))
            except FileNotFoundError:
                pass
    return keys


async def remove_orphan_objects(db, mode: str, cutoff_ts: float) -> int:
    """Delete local stored files older than ``cutoff_ts`` (epoch seconds) that no
    ``storage_file`` row names; returns how many were deleted."""
    keys = await run_blocking(mode, _old_local_keys, cutoff_ts)
    removed = 0
    for i in range(0, len(keys), KEY_BATCH):
        batch = keys[i:i + KEY_BATCH]
        marks = ", ".join(["%s"] * len(batch))
        known = {r["key"] for r in await db.fetchall(f"SELECT key FROM storage_file WHERE key IN ({marks})", batch)}
        for key in batch:
            if key not in known:
                await run_blocking(mode, backends.delete, key)
                removed += 1
    return removed
