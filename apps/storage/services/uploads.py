"""Chunked, resumable uploads.

Each chunk is a full multipart POST with ``Content-Range: bytes <start>-<end>/<total>`` (end
inclusive) of exactly :data:`CHUNK_SIZE` bytes (the last one may be shorter). Chunks may arrive
concurrently and in any order (the SDKs send 8 at a time):

1. the first request to arrive inserts the file row (``pending``; ``INSERT ... ON CONFLICT DO
   NOTHING``, so concurrent first chunks agree on one row);
2. every chunk is written to its own part file (``<STORAGE_UPLOAD_DIR>/<file row id>/<index>``,
   via a temp file and ``os.replace``), then recorded as a ``storage_chunk`` row (unique per
   index, so a retried chunk counts once);
3. the request that sees all chunks recorded claims assembly with ``UPDATE ... SET status =
   'assembling' WHERE status = 'pending'`` (exactly one wins), concatenates the parts while
   computing the MD5 ``signature``, moves the result to the storage backend and marks the row
   ``ready``: only then is it listed and downloadable. Other requests that saw the full set wait
   for ``ready`` and answer with the finished file.

Abandoned uploads (no chunk for ``STORAGE_UPLOAD_EXPIRY`` seconds) are deleted by
:func:`uploads_cleanup`, run by ``manage.py cleanupuploads`` and opportunistically at most every
``STORAGE_CLEANUP_INTERVAL`` seconds per process when an upload starts.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import re
import shutil
import time

from django.conf import settings

from apps.core.db import ForeignKeyViolation, now
from apps.core.errors import AppwriteError
from apps.core.runtime import run_blocking, sleep
from apps.storage import backends, mime
from apps.storage.services.files import (
    COPY_SIZE,
    check_upload,
    clean_name,
    creation_permissions,
    finish,
    part_dir,
    read_roles,
    write_part,
)

log = logging.getLogger("apps.storage")

CHUNK_SIZE = 5 * 1024 * 1024  # bytes (both SDKs)
ASSEMBLY_WAIT = 300.0  # seconds a request that saw the last chunk waits for the assembler
_RANGE = re.compile(r"^bytes (\d{1,15})-(\d{1,15})/(\d{1,15})$")
_last_cleanup = [0.0]


def parse_content_range(header: str) -> tuple[int, int, int]:
    """``(start, end, total)`` of a chunk's Content-Range (end inclusive).

    The chunk must start on a :data:`CHUNK_SIZE` boundary and span a whole chunk (or the rest
    of the file). Raises 400 ``storage_invalid_content_range``.
    """
    found = _RANGE.match(header.strip())
    if not found:
        raise AppwriteError("storage_invalid_content_range")
    start, end, total = (int(g) for g in found.groups())
    if not (start <= end < total) or start % CHUNK_SIZE or end - start + 1 != min(CHUNK_SIZE, total - start):
        raise AppwriteError("storage_invalid_content_range")
    return start, end, total


def _part_path(file_id: int, index: int) -> str:
    return os.path.join(part_dir(file_id), f"{index:06d}.part")


def remove_parts(file_id: int) -> None:
    """Delete the part files of an upload (blocking)."""
    shutil.rmtree(part_dir(file_id), ignore_errors=True)


def _assemble(file_id: int, chunks_total: int, total: int, key: str, name: str) -> tuple[str, int, str, str]:
    """Concatenate the parts in order, hash them, store the result under ``key`` (blocking).

    Returns ``(stored key, size in bytes, md5 hex, MIME type)``.
    """
    out_path = os.path.join(part_dir(file_id), "assembled")
    digest = hashlib.md5(usedforsecurity=False)
    head = b""
    size = 0
    with open(out_path, "wb") as out:
        for index in range(chunks_total):
            with open(_part_path(file_id, index), "rb") as part:
                while piece := part.read(COPY_SIZE):
                    if len(head) < 512:
                        head += piece[: 512 - len(head)]
                    digest.update(piece)
                    out.write(piece)
                    size += len(piece)
    if size != total:
        raise RuntimeError(f"assembled {size} bytes, expected {total}")
    saved = backends.store(key, out_path)
    remove_parts(file_id)
    return saved, size, digest.hexdigest(), mime.detect(head, name)


async def file_upload_chunk(ctx, *, bucket: dict, file_uid: str, part, requested_permissions: list[str] | None,
                            folder: str, content_range: str) -> tuple[dict, int]:
    """Receive one chunk; returns ``(file row, status)``: 201 with the current
    ``chunks_uploaded`` (the finished file once the set is complete), or 200 with the stored
    file when it was already complete.

    Raises 400 ``storage_invalid_content_range``, ``storage_invalid_file_size``,
    ``storage_file_type_unsupported``; 401 ``user_unauthorized``.
    """
    start, end, total = parse_content_range(content_range)
    name = clean_name(part.filename)
    check_upload(bucket, name=name, size=total)
    if part.size != end - start + 1:
        raise AppwriteError("storage_invalid_content_range", "The chunk size does not match the content range.")
    index = start // CHUNK_SIZE
    chunks_total = -(-total // CHUNK_SIZE)
    permissions = creation_permissions(ctx, bucket, requested_permissions)
    row = await _file_row(ctx, bucket, file_uid)
    if row is None:
        ts = ctx.db.dt(now())
        try:
            await ctx.db.execute(
                "INSERT INTO storage_file (project_id, bucket_id, uid, name, folder, permissions, read_roles, key, "
                "signature, mime_type, size_original, size_actual, chunks_total, chunks_uploaded, status, "
                "created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, '', '', %s, 0, %s, 0, 'pending', "
                "%s, %s) ON CONFLICT (bucket_id, uid) DO NOTHING",
                (ctx.project["id"], bucket["id"], file_uid, name, folder, ctx.db.json(permissions),
                 read_roles(permissions), backends.new_key(ctx.project["uid"], bucket["uid"]), total,
                 chunks_total, ts, ts),
            )
        except ForeignKeyViolation:  # the bucket was deleted since it was read
            raise AppwriteError("storage_bucket_not_found") from None
        row = await _file_row(ctx, bucket, file_uid)
        await maybe_cleanup(ctx)
        if row is None:  # deleted again before we read it back
            raise AppwriteError("storage_file_not_found")
    if row["status"] == "ready":
        return row, 200
    if int(row["chunks_total"]) != chunks_total or int(row["size_original"]) != total:
        raise AppwriteError("storage_invalid_content_range", "The content range does not match the upload.")
    if row["status"] == "pending":
        await run_blocking(ctx.mode, write_part, part.file, _part_path(row["id"], index))
        try:
            await ctx.db.execute(
                "INSERT INTO storage_chunk (file_id, idx, size) VALUES (%s, %s, %s) ON CONFLICT (file_id, idx) DO NOTHING",
                (row["id"], index, part.size),
            )
        except ForeignKeyViolation:  # the upload was deleted meanwhile
            raise AppwriteError("storage_file_not_found") from None
    count = int(await ctx.db.fetchval("SELECT COUNT(*) AS n FROM storage_chunk WHERE file_id = %s", (row["id"],)))
    if count < chunks_total:
        await ctx.db.execute(
            "UPDATE storage_file SET chunks_uploaded = %s, updated_at = %s WHERE id = %s AND chunks_uploaded < %s",
            (count, ctx.db.dt(now()), row["id"], count),
        )
        return {**row, "chunks_uploaded": count}, 201
    claimed = await ctx.db.execute(
        "UPDATE storage_file SET status = 'assembling', chunks_uploaded = chunks_total - 1, updated_at = %s "
        "WHERE id = %s AND status = 'pending'",
        (ctx.db.dt(now()), row["id"]),
    )
    if claimed:
        try:
            key, size, signature, mime_type = await run_blocking(
                ctx.mode, _assemble, row["id"], chunks_total, total, row["key"], row["name"]
            )
        except FileNotFoundError:
            # A part file went missing (removed behind the API): forget the chunks whose parts
            # are gone so that re-sending them completes the upload, and say so (not a 500).
            gone = await run_blocking(ctx.mode, _missing_parts, row["id"], chunks_total)
            for index in gone:
                await ctx.db.execute("DELETE FROM storage_chunk WHERE file_id = %s AND idx = %s", (row["id"], index))
            await ctx.db.execute("UPDATE storage_file SET status = 'pending', chunks_uploaded = %s WHERE id = %s",
                                 (chunks_total - len(gone), row["id"]))
            if not gone:
                raise
            raise AppwriteError(
                "storage_file_not_found",
                f"Chunk(s) {', '.join(map(str, gone))} of this upload are missing on the server; send them again.",
            ) from None
        except BaseException:
            await ctx.db.execute("UPDATE storage_file SET status = 'pending' WHERE id = %s", (row["id"],))
            raise
        return await finish(ctx, bucket, row["id"], key=key, size=size, signature=signature, mime_type=mime_type), 201
    return await _wait_ready(ctx, bucket, row), 201


def _missing_parts(file_id: int, chunks_total: int) -> list[int]:
    """Indexes of the chunks whose part files are not on disk (blocking)."""
    return [i for i in range(chunks_total) if not os.path.exists(_part_path(file_id, i))]


async def _file_row(ctx, bucket: dict, file_uid: str) -> dict | None:
    return await ctx.db.fetchone(
        "SELECT * FROM storage_file WHERE bucket_id = %s AND uid = %s", (bucket["id"], file_uid)
    )


async def _wait_ready(ctx, bucket: dict, row: dict) -> dict:
    """Poll until another request finished assembling ``row``; the latest row either way."""
    deadline = time.monotonic() + ASSEMBLY_WAIT
    current = row
    while time.monotonic() < deadline:
        current = await _file_row(ctx, bucket, row["uid"])
        if current is None:
            raise AppwriteError("storage_file_not_found")
        if current["status"] == "ready":
            return current
        await sleep(ctx.mode, 0.1)
    return current


async def maybe_cleanup(ctx) -> None:
    """Run :func:`uploads_cleanup` if this process has not for ``STORAGE_CLEANUP_INTERVAL`` s."""
    interval = settings.STORAGE_CLEANUP_INTERVAL
    if not interval or time.monotonic() - _last_cleanup[0] < interval:
        return
    _last_cleanup[0] = time.monotonic()
    try:
        await uploads_cleanup(ctx.db, ctx.mode, limit=50)
    except Exception:
        log.exception("upload cleanup failed")


async def uploads_cleanup(db, mode: str, *, expiry: float | None = None, limit: int = 1000) -> int:
    """Delete uploads idle for ``expiry`` seconds (default ``STORAGE_UPLOAD_EXPIRY``): their
    rows, chunk rows, file tokens and part files, plus part directories no unfinished upload owns.
    Returns how many uploads were removed."""
    expiry = settings.STORAGE_UPLOAD_EXPIRY if expiry is None else expiry
    cutoff = now() - dt.timedelta(seconds=expiry)
    stale = await db.fetchall(
        "SELECT id FROM storage_file WHERE status <> 'ready' AND updated_at < %s ORDER BY id LIMIT %s",
        (db.dt(cutoff), limit),
    )
    removed = 0
    for row in stale:
        async with db.transaction() as tx:
            gone = await tx.execute(
                "DELETE FROM storage_file WHERE id = %s AND status <> 'ready' AND updated_at < %s",
                (row["id"], db.dt(cutoff)),
            )
            if gone:
                await tx.execute("DELETE FROM storage_chunk WHERE file_id = %s", (row["id"],))
                # A token may name an unfinished upload (tokens can be made for a file of any status).
                await tx.execute("DELETE FROM storage_file_token WHERE file_id = %s", (row["id"],))
        if gone:
            removed += 1
            await run_blocking(mode, remove_parts, row["id"])
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
