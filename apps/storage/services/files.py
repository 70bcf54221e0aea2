"""Writes for files: single-request create, update, delete, and the checks that
chunked uploads share (``apps.storage.services.uploads``)."""

from __future__ import annotations

import hashlib
import os
import shutil

from apps.core.domain import permissions as perms
from apps.core.domain.events import WriteEvent, announce, announce_all, record
from apps.core.drivers.db import ForeignKeyViolation, UniqueViolation, as_json, now, present, races
from apps.core.drivers.runtime import run_blocking
from apps.core.errors import AppwriteError
from apps.storage import backends, leases, mime
from apps.storage.responses import file_model

COPY_SIZE = 1024 * 1024  # bytes per read while copying an upload to disk
MAX_NAME = 255  # characters of a display name


def clean_name(raw: str) -> str:
    """The display name for a client file name: its basename, without NUL and control
    characters, at most :data:`MAX_NAME` chars (``file`` if nothing is left)."""
    name = raw.replace("\x00", "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch >= " " and ch != "\x7f").strip()
    if name in ("", ".", ".."):
        name = "file"
    return name[-MAX_NAME:]


def extension_of(name: str) -> str:
    return name.rsplit(".", 1)[1].lower() if "." in name else ""


def check_upload(bucket: dict, *, name: str, size: int) -> None:
    """Bucket limits for a file of ``size`` bytes named ``name``.

    Raises 400 ``storage_file_empty`` (0 bytes: empty files are refused, README "Storage"),
    400 ``storage_invalid_file_size`` (over ``maximumFileSize``), 400
    ``storage_file_type_unsupported`` (extension not in ``allowedFileExtensions``).
    """
    allowed = as_json(bucket["allowed_file_extensions"]) or []
    if allowed and extension_of(name) not in [a.lower() for a in allowed]:
        raise AppwriteError("storage_file_type_unsupported")
    if size <= 0:
        raise AppwriteError("storage_file_empty")
    if size > int(bucket["maximum_file_size"]):
        raise AppwriteError("storage_invalid_file_size")


def creation_permissions(ctx, bucket: dict, requested: list[str] | None) -> list[str]:
    """Check the caller may create files in ``bucket`` and resolve the new file's permissions.

    Raises 401 ``user_unauthorized`` (no ``create`` on the bucket, or granting a role the
    caller does not hold), 400 ``general_argument_invalid`` (malformed permission).
    """
    if not perms.allows(ctx.auth, as_json(bucket["permissions"]) or [], "create"):
        raise AppwriteError("user_unauthorized")
    normalized = perms.normalize(requested, perms.ITEM_ACTIONS)
    if normalized is None:
        return perms.default_item_permissions(ctx.auth)
    perms.check_grantable(ctx.auth, normalized)
    return normalized


def read_roles(permissions: list[str]) -> str:
    """The ``|role|role|`` form of the roles granted ``read`` (for filtered listing)."""
    return "|" + "|".join(perms.roles_of(permissions, "read")) + "|"


def can(ctx, bucket: dict, file: dict | None, action: str) -> bool:
    """Bucket permission, or the file's own when the bucket has ``fileSecurity``."""
    if perms.allows(ctx.auth, as_json(bucket["permissions"]) or [], action):
        return True
    return bool(bucket["file_security"]) and file is not None and perms.allows(
        ctx.auth, as_json(file["permissions"]) or [], action
    )


def part_dir(file_id: int) -> str:
    """The local directory holding the parts of the upload of file row ``file_id``."""
    from django.conf import settings

    return os.path.join(settings.STORAGE_UPLOAD_DIR, str(file_id))


def write_part(src, path: str) -> tuple[int, str]:
    """Copy the readable ``src`` to ``path`` atomically; returns ``(bytes, md5 hex)``."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    digest = hashlib.md5(usedforsecurity=False)
    tmp = f"{path}.{os.getpid()}.{id(src)}.tmp"
    size = 0
    src.seek(0)
    with open(tmp, "wb") as out:
        while piece := src.read(COPY_SIZE):
            digest.update(piece)
            out.write(piece)
            size += len(piece)
    os.replace(tmp, path)
    return size, digest.hexdigest()


def _store_single(src, key: str, name: str) -> tuple[str, int, str, str]:
    """Hash ``src`` and store it under ``key`` (blocking); returns ``(stored key, size in bytes,
    md5 hex, MIME type)``.

    ``src`` (Django's in-memory or temporary upload) goes straight to the storage backend: no
    part directory, no second copy, no rename (per upload that saved a mkdir, an rmdir, a
    rename and a reopen). Bytes a failed write left behind are deleted.
    """
    digest = hashlib.md5(usedforsecurity=False)
    head = b""
    size = 0
    src.seek(0)
    while piece := src.read(COPY_SIZE):
        if len(head) < 512:
            head += piece[: 512 - len(head)]
        digest.update(piece)
        size += len(piece)
    src.seek(0)
    try:
        saved = backends.store_file(key, src)
    except BaseException:
        backends.delete_quietly(key)
        raise
    return saved, size, digest.hexdigest(), mime.detect(head, name)


_INSERT_SINGLE = (
    "INSERT INTO storage_file (project_id, bucket_id, uid, name, folder, permissions, read_roles, key, "
    "signature, mime_type, size_original, size_actual, chunks_total, chunks_uploaded, status, lease_owner, "
    "lease_expires, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, '', '', %s, 0, 1, 0, "
    "'assembling', %s, %s, %s, %s) RETURNING id"
)
# Take over an unfinished file for a new single-request upload: only if its lease is still the
# one read (compare-and-set), so of two takers exactly one wins.
_REPLACE_SINGLE = (
    "UPDATE storage_file SET name = %s, folder = %s, permissions = %s, read_roles = %s, key = %s, "
    "signature = '', mime_type = '', size_original = %s, size_actual = 0, chunks_total = 1, chunks_uploaded = 0, "
    "status = 'assembling', lease_owner = %s, lease_expires = %s, created_at = %s, updated_at = %s "
    "WHERE id = %s AND status <> 'ready' AND lease_owner = %s RETURNING id"
)


def discard_bytes(key: str, file_id: int) -> None:
    """Delete what an unfinished upload of file row ``file_id`` may have stored: the object
    under ``key`` (whole or partial) and its part directory (blocking; missing is fine)."""
    if key:
        backends.delete(key)
    shutil.rmtree(part_dir(file_id), ignore_errors=True)


async def file_create_single(ctx, *, bucket: dict, file_uid: str, part, permissions: list[str],
                             folder: str) -> dict:
    """Create a file from one request (no Content-Range); returns its row once ready.

    The row is inserted first (``assembling``, invisible to list and download, leased to this
    request, naming the key the bytes will go to) so a duplicate ID fails before any byte is
    stored. An unfinished file with the same ID whose writer is gone (a crash, an abandoned
    chunked upload) is replaced, as Appwrite continues an unfinished upload instead of refusing
    the ID; its stored bytes are deleted. Raises 409 ``storage_file_already_exists`` (a ready
    file, or one another live request is storing).
    """
    name = clean_name(part.filename)
    check_upload(bucket, name=name, size=part.size)
    key = backends.new_key(ctx.project["uid"], bucket["uid"])
    owner, expires = leases.new_owner(), ctx.db.dt(leases.expiry(part.size))
    ts = ctx.db.dt(now())
    fields = (name, folder, ctx.db.json(permissions), read_roles(permissions), key, part.size)
    row = None
    for _ in range(3):  # insert, or take over an unfinished row; a lost race re-reads
        try:
            row = await ctx.db.fetchone(_INSERT_SINGLE, (ctx.project["id"], bucket["id"], file_uid, *fields,
                                                         owner, expires, ts, ts))
            break
        except UniqueViolation:
            pass
        except ForeignKeyViolation:  # the bucket was deleted since it was read
            raise AppwriteError("storage_bucket_not_found") from None
        old = await ctx.db.fetchone("SELECT * FROM storage_file WHERE bucket_id = %s AND uid = %s",
                                    (bucket["id"], file_uid))
        if old is None:
            continue
        if old["status"] == "ready" or leases.held(old):
            raise AppwriteError("storage_file_already_exists")
        row = await ctx.db.fetchone(_REPLACE_SINGLE, (*fields, owner, expires, ts, ts, old["id"], old["lease_owner"]))
        if row is not None:
            await ctx.db.execute("DELETE FROM storage_chunk WHERE file_id = %s", (old["id"],))
            await run_blocking(ctx.mode, discard_bytes, old["key"], old["id"])
            break
    if row is None:
        raise AppwriteError("storage_file_already_exists")
    try:
        saved, size, signature, mime_type = await run_blocking(ctx.mode, _store_single, part.file, key, name)
    except BaseException:
        await ctx.db.execute("DELETE FROM storage_file WHERE id = %s AND lease_owner = %s", (row["id"], owner))
        raise
    return await finish(ctx, bucket, row["id"], key=saved, size=size, signature=signature, mime_type=mime_type,
                        owner=owner)


async def finish(ctx, bucket: dict, file_id: int, *, key: str, size: int, signature: str, mime_type: str,
                 owner: str | None = None) -> dict:
    """Mark a stored file ready (only while ``owner`` still holds its lease, when given),
    announce it, and return its row. The row flips to ``ready`` only after every byte is under
    ``key``, so a crash before this leaves an unfinished file, never a short one.

    Raises 404 ``storage_file_not_found`` (and deletes the bytes under ``key``) when the row is
    gone (its bucket or the upload was deleted meanwhile) or was taken over by another writer.
    """
    row = await ctx.db.fetchone(
        "UPDATE storage_file SET status = 'ready', key = %s, size_original = %s, size_actual = %s, "
        "signature = %s, mime_type = %s, chunks_uploaded = chunks_total, lease_owner = '', lease_expires = NULL, "
        "updated_at = %s WHERE id = %s AND status <> 'ready'" + (" AND lease_owner = %s" if owner else "")
        + " RETURNING *",
        (key, size, size, signature, mime_type, ctx.db.dt(now()), file_id, *([owner] if owner else [])),
    )
    if row is None:
        # The file row went away while its bytes were stored (its bucket or the upload was
        # deleted meanwhile, or a writer that took it over owns it now): drop the orphaned
        # bytes instead of answering 500.
        await run_blocking(ctx.mode, backends.delete, key)
        raise AppwriteError("storage_file_not_found")
    await _announce(ctx, bucket, row, "create")
    return row


async def file_update(ctx, *, bucket: dict, file: dict, name: str | None, permissions: list[str] | None) -> dict:
    """Rename a file and/or replace its permissions; returns the fresh row.

    Raises 401 ``user_unauthorized`` (no update permission, or an ungrantable role), 404
    ``storage_file_not_found`` when a concurrent request deleted it.
    """
    if not can(ctx, bucket, file, "update"):
        raise AppwriteError("user_unauthorized")
    new_perms = perms.normalize(permissions, perms.ITEM_ACTIONS)
    if new_perms is not None:
        perms.check_grantable(ctx.auth, new_perms)
    else:
        new_perms = as_json(file["permissions"]) or []
    with races(missing=lambda: AppwriteError("storage_file_not_found")):  # deleted meanwhile
        row = present(await ctx.db.fetchone(
            "UPDATE storage_file SET name = %s, permissions = %s, read_roles = %s, updated_at = %s WHERE id = %s "
            "RETURNING *",
            (clean_name(name) if name else file["name"], ctx.db.json(new_perms), read_roles(new_perms),
             ctx.db.dt(now()), file["id"]),
        ))
    if row["status"] == "ready":
        await _announce(ctx, bucket, row, "update")
    return row


async def file_delete(ctx, *, bucket: dict, file: dict) -> None:
    """Delete a file's row, its chunks, its file tokens (their secrets stop working at once) and
    its bytes. Raises 401 ``user_unauthorized``, 404 ``storage_file_not_found`` when a concurrent
    request deleted it first."""
    if not can(ctx, bucket, file, "delete"):
        raise AppwriteError("user_unauthorized")
    with races(missing=lambda: AppwriteError("storage_file_not_found")):  # a concurrent delete came first
        async with ctx.db.transaction() as tx:
            if tx.vendor == "postgresql":
                # A token created meanwhile takes FOR KEY SHARE on the file through its foreign
                # key: locking the file first makes it wait, then fail (404), instead of
                # landing between the token delete and the file delete.
                await tx.execute("SELECT id FROM storage_file WHERE id = %s FOR UPDATE", (file["id"],))
            await tx.execute("DELETE FROM storage_chunk WHERE file_id = %s", (file["id"],))
            # Deleted here, not by the foreign key: the models' cascade is Django's (Python-side)
            # and these deletes are plain SQL.
            await tx.execute("DELETE FROM storage_file_token WHERE file_id = %s", (file["id"],))
            present(await tx.fetchval("DELETE FROM storage_file WHERE id = %s RETURNING id", (file["id"],)))
            events = [_event(ctx, bucket, file, "delete")] if file["status"] == "ready" else []
            await record(ctx, tx, events)
    if file["status"] == "ready":
        await run_blocking(ctx.mode, backends.delete, file["key"])
        await announce_all(ctx, events)
    else:  # an unfinished upload: its part files and whatever it stored under its key
        await run_blocking(ctx.mode, discard_bytes, file["key"], file["id"])


async def _announce(ctx, bucket: dict, row: dict, action: str) -> None:
    await announce(ctx, _event(ctx, bucket, row, action))


def _event(ctx, bucket: dict, row: dict, action: str) -> WriteEvent:
    return WriteEvent(
        project_id=ctx.project["uid"], resource="file", action=action,
        ids={"bucketId": bucket["uid"], "fileId": row["uid"]}, payload=file_model(row, bucket["uid"]),
        extra={"read_roles": perms.item_read_roles(
            as_json(bucket["permissions"]) or [], bool(bucket["file_security"]), as_json(row["permissions"]) or [])},
    )
