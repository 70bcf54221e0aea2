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
   'assembling', key = <fresh key>, lease_owner = <this attempt> WHERE status = 'pending' AND
   key = <key read>`` (exactly one wins), concatenates the parts while computing the MD5
   ``signature``, moves the result to the storage backend under the fresh key and marks the row
   ``ready`` (only if its lease is still this attempt's): only then is it listed and
   downloadable, and only then are the parts removed. Other requests that saw the full set wait
   for ``ready`` and answer with the finished file.

Crashes: a process killed during an assembly leaves the row ``assembling`` with a lease naming a
dead process (``apps.storage.leases``). The next chunk request for that upload (a client
resuming from ``chunksUploaded`` re-sends the last chunk) or a waiting request sees the lease is
not held, puts the row back to ``pending`` and assembles again from the parts, which were kept;
bytes the dead attempt stored under its key are deleted by the new claim. Nothing waits for a
dead owner.

Abandoned uploads (no chunk for ``STORAGE_UPLOAD_EXPIRY`` seconds) are deleted by
:func:`apps.storage.services.cleanup.uploads_cleanup`, run by ``manage.py cleanupuploads`` and
opportunistically at most every ``STORAGE_CLEANUP_INTERVAL`` seconds per process when an upload
starts.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time

from apps.core.drivers.db import ForeignKeyViolation, now
from apps.core.drivers.runtime import run_blocking, sleep
from apps.core.errors import AppwriteError
from apps.storage import backends, leases, mime
from apps.storage.services.cleanup import maybe_cleanup
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

CHUNK_SIZE = 5 * 1024 * 1024  # bytes (both SDKs)
ASSEMBLY_WAIT = 300.0  # seconds a request that saw the last chunk waits for the assembler
_RANGE = re.compile(r"^bytes (\d{1,15})-(\d{1,15})/(\d{1,15})$")


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

    The parts stay until the row is ready (:func:`file_upload_chunk` removes them), so an
    assembly cut short by a crash can simply run again. The concatenation goes to a file named
    after ``key``, so two attempts never write the same file. Returns ``(stored key, size in
    bytes, md5 hex, MIME type)``. Raises ``FileNotFoundError`` when a part is missing.
    """
    out_path = os.path.join(part_dir(file_id), f"assembled-{key.rsplit('/', 1)[-1]}")
    digest = hashlib.md5(usedforsecurity=False)
    head = b""
    size = 0
    try:
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
    except BaseException:
        if os.path.exists(out_path):
            os.unlink(out_path)
        backends.delete_quietly(key)
        raise
    return saved, size, digest.hexdigest(), mime.detect(head, name)


async def file_upload_chunk(ctx, *, bucket: dict, file_uid: str, part, requested_permissions: list[str] | None,
                            folder: str, content_range: str) -> tuple[dict, int]:
    """Receive one chunk; returns ``(file row, status)``: 201 with the current
    ``chunks_uploaded`` (the finished file once the set is complete), or 200 with the stored
    file when it was already complete.

    An upload left ``assembling`` by a writer that is gone (``apps.storage.leases``) goes back
    to ``pending`` first, so re-sending any chunk resumes it (Appwrite resumes an unfinished
    upload with the same file ID).

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
    if row["status"] == "assembling" and not leases.held(row):
        row = await _release(ctx, bucket, row)
    if row["status"] == "pending":
        await run_blocking(ctx.mode, write_part, part.file, _part_path(row["id"], index))
        try:
            await ctx.db.execute(
                "INSERT INTO storage_chunk (file_id, idx, size) VALUES (%s, %s, %s) ON CONFLICT (file_id, idx) DO NOTHING",
                (row["id"], index, part.size),
            )
        except ForeignKeyViolation:  # the upload was deleted meanwhile
            raise AppwriteError("storage_file_not_found") from None
    return await _complete(ctx, bucket, row["uid"], chunks_total, total)


async def _release(ctx, bucket: dict, row: dict) -> dict:
    """Put an upload whose assembler is gone back to ``pending`` (if no one did meanwhile);
    the current row. Raises 404 ``storage_file_not_found`` when it was deleted."""
    await ctx.db.execute(
        "UPDATE storage_file SET status = 'pending', lease_owner = '', lease_expires = NULL "
        "WHERE id = %s AND status = 'assembling' AND lease_owner = %s",
        (row["id"], row["lease_owner"]),
    )
    current = await _file_row(ctx, bucket, row["uid"])
    if current is None:
        raise AppwriteError("storage_file_not_found")
    return current


async def _complete(ctx, bucket: dict, file_uid: str, chunks_total: int, total: int) -> tuple[dict, int]:
    """After a chunk was recorded: ``(row, 201)`` with the count while chunks are missing, else
    assemble the file (one request claims it; the others wait for it, or take over from an
    assembler that died) and answer with the ready row. Waits at most :data:`ASSEMBLY_WAIT`
    seconds for a live assembler (then answers with the unfinished row)."""
    deadline = time.monotonic() + ASSEMBLY_WAIT
    while True:
        row = await _file_row(ctx, bucket, file_uid)
        if row is None:
            raise AppwriteError("storage_file_not_found")
        if row["status"] == "ready":
            return row, 201
        if row["status"] == "assembling":
            if not leases.held(row):
                await _release(ctx, bucket, row)
            elif time.monotonic() > deadline:
                return row, 201
            else:
                await sleep(ctx.mode, 0.1)
            continue
        count = int(await ctx.db.fetchval("SELECT COUNT(*) AS n FROM storage_chunk WHERE file_id = %s", (row["id"],)))
        if count < chunks_total:
            await ctx.db.execute(
                "UPDATE storage_file SET chunks_uploaded = %s, updated_at = %s WHERE id = %s AND chunks_uploaded < %s",
                (count, ctx.db.dt(now()), row["id"], count),
            )
            return {**row, "chunks_uploaded": count}, 201
        # Claim the assembly with a fresh key and a lease: exactly one request wins (the row
        # must still be pending with the key read); a loser loops and waits or takes over.
        key, owner = backends.new_key(ctx.project["uid"], bucket["uid"]), leases.new_owner()
        claimed = await ctx.db.execute(
            "UPDATE storage_file SET status = 'assembling', key = %s, lease_owner = %s, lease_expires = %s, "
            "chunks_uploaded = chunks_total - 1, updated_at = %s WHERE id = %s AND status = 'pending' AND key = %s",
            (key, owner, ctx.db.dt(leases.expiry(total)), ctx.db.dt(now()), row["id"], row["key"]),
        )
        if claimed:
            return await _assemble_claimed(ctx, bucket, row, key, owner, chunks_total, total), 201


async def _assemble_claimed(ctx, bucket: dict, row: dict, key: str, owner: str, chunks_total: int,
                            total: int) -> dict:
    """Assemble the upload this request claimed under ``owner``; the ready row."""
    # Bytes an earlier, interrupted attempt stored under the previous key (a crashed assembly or
    # single-request upload of this ID) are no longer named by the row: delete them.
    await run_blocking(ctx.mode, backends.delete_quietly, row["key"])
    try:
        key, size, signature, mime_type = await run_blocking(
            ctx.mode, _assemble, row["id"], chunks_total, total, key, row["name"]
        )
    except FileNotFoundError:
        # A part file went missing (removed behind the API): forget the chunks whose parts
        # are gone so that re-sending them completes the upload, and say so (not a 500).
        gone = await run_blocking(ctx.mode, _missing_parts, row["id"], chunks_total)
        for index in gone:
            await ctx.db.execute("DELETE FROM storage_chunk WHERE file_id = %s AND idx = %s", (row["id"], index))
        await _unclaim(ctx, row["id"], owner, chunks_total - len(gone))
        if not gone:
            raise
        raise AppwriteError(
            "storage_file_not_found",
            f"Chunk(s) {', '.join(map(str, gone))} of this upload are missing on the server; send them again.",
        ) from None
    except BaseException:
        await _unclaim(ctx, row["id"], owner, chunks_total - 1)
        raise
    ready = await finish(ctx, bucket, row["id"], key=key, size=size, signature=signature, mime_type=mime_type,
                         owner=owner)
    await run_blocking(ctx.mode, remove_parts, row["id"])  # after ready: a crash before keeps them
    return ready


async def _unclaim(ctx, file_id: int, owner: str, uploaded: int) -> None:
    await ctx.db.execute(
        "UPDATE storage_file SET status = 'pending', chunks_uploaded = %s, lease_owner = '', lease_expires = NULL "
        "WHERE id = %s AND lease_owner = %s",
        (uploaded, file_id, owner),
    )


def _missing_parts(file_id: int, chunks_total: int) -> list[int]:
    """Indexes of the chunks whose part files are not on disk (blocking)."""
    return [i for i in range(chunks_total) if not os.path.exists(_part_path(file_id, i))]


async def _file_row(ctx, bucket: dict, file_uid: str) -> dict | None:
    return await ctx.db.fetchone(
        "SELECT * FROM storage_file WHERE bucket_id = %s AND uid = %s", (bucket["id"], file_uid)
    )
