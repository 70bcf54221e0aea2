"""Deployments: code upload (single request or chunked, as storage uploads are), activation,
cancel, duplicate, delete.

A chunked upload (``Content-Range: bytes <start>-<end>/<total>``, :data:`CHUNK_SIZE` chunks,
the storage app's rules and parser) creates the row on its first chunk with status
``uploading`` (shown as ``waiting``); later chunks name it in ``x-appwrite-id``. Each chunk is a
part file under ``FUNCTIONS_ROOT/.uploads``; the request that records the last missing chunk
claims the assembly with one conditional ``UPDATE`` (exactly one wins), concatenates the parts,
checks the archive and queues the build. An invalid archive deletes the row and answers 403
``storage_invalid_file``: nothing of it is left behind.
"""

from __future__ import annotations

import os
import shutil

from django.conf import settings

from apps.core.domain.events import WriteEvent, announce
from apps.core.domain.ids import is_valid_id, unique_id
from apps.core.drivers.db import now
from apps.core.drivers.runtime import run_blocking
from apps.core.errors import AppwriteError
from apps.core.tasks.queue import enqueue
from apps.functions import code, selectors
from apps.functions.responses import deployment_model
from apps.storage.services.files import write_part
from apps.storage.services.uploads import CHUNK_SIZE, parse_content_range


def _check_size(part, total: int) -> None:
    name = (part.filename or "").lower()
    if not name.endswith((".tar.gz", ".tgz")):
        raise AppwriteError("storage_file_type_unsupported", "The code must be a .tar.gz archive.")
    if total <= 0:
        raise AppwriteError("storage_file_empty")
    if total > settings.FUNCTIONS_SIZE_LIMIT:
        raise AppwriteError("storage_invalid_file_size")


async def _insert(ctx, function: dict, *, entrypoint: str, commands: str, activate: bool, status: str,
                  size: int, chunks_total: int, template: dict | None = None) -> dict:
    ts = ctx.db.dt(now())
    uid = unique_id()
    await ctx.db.execute(
        "INSERT INTO functions_deployment (project_id, function_id, uid, entrypoint, commands, activate, status, "
        "source_size, build_size, build_logs, build_duration, chunks_total, chunks_uploaded, template, created_at, "
        "updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 0, '', 0, %s, 0, %s, %s, %s)",
        (ctx.project["id"], function["id"], uid, entrypoint, commands, activate, status, size, chunks_total,
         ctx.db.json(template or {}), ts, ts))
    return await selectors.deployment_get(ctx, function, uid)


async def deployment_create(ctx, function: dict, *, part, entrypoint: str, commands: str, activate: bool) -> dict:
    """One upload request; returns the deployment row (status ``uploading`` while chunks are
    missing). Raises 400 ``storage_file_type_unsupported``, ``storage_file_empty``,
    ``storage_invalid_file_size``, ``storage_invalid_content_range``, ``storage_invalid_file``;
    404 ``deployment_not_found`` (an ``x-appwrite-id`` naming no upload in progress)."""
    content_range = ctx.headers.get("content-range", "")
    if not content_range:
        _check_size(part, part.size)
        row = await _insert(ctx, function, entrypoint=entrypoint, commands=commands, activate=activate,
                            status="uploading", size=part.size, chunks_total=1)
        path = os.path.join(code.upload_dir(row["id"]), "000000.part")
        await run_blocking(ctx.mode, write_part, part.file, path)
        return await _finish(ctx, function, row)
    start, end, total = parse_content_range(content_range)
    _check_size(part, total)
    if part.size != end - start + 1:
        raise AppwriteError("storage_invalid_content_range", "The chunk size does not match the content range.")
    chunks_total = -(-total // CHUNK_SIZE)
    upload_id = ctx.headers.get("x-appwrite-id", "").strip()
    if upload_id and upload_id != "unique()":
        if not is_valid_id(upload_id):
            raise AppwriteError("storage_invalid_appwrite_id")
        row = await selectors.deployment_get(ctx, function, upload_id)
        if row["status"] != "uploading":
            return row
        if int(row["chunks_total"]) != chunks_total or int(row["source_size"]) != total:
            raise AppwriteError("storage_invalid_content_range", "The content range does not match the upload.")
    else:
        row = await _insert(ctx, function, entrypoint=entrypoint, commands=commands, activate=activate,
                            status="uploading", size=total, chunks_total=chunks_total)
    index = start // CHUNK_SIZE
    await run_blocking(ctx.mode, write_part, part.file, os.path.join(code.upload_dir(row["id"]), f"{index:06d}.part"))
    count = await run_blocking(ctx.mode, _count_parts, row["id"])
    if count < chunks_total:
        await ctx.db.execute("UPDATE functions_deployment SET chunks_uploaded = %s WHERE id = %s AND "
                             "chunks_uploaded < %s", (count, row["id"], count))
        return {**row, "chunks_uploaded": count}
    return await _finish(ctx, function, row)


def _count_parts(deployment_id: int) -> int:
    try:
        return sum(1 for n in os.listdir(code.upload_dir(deployment_id)) if n.endswith(".part"))
    except FileNotFoundError:
        return 0


def _assemble(deployment_id: int) -> int:
    """Concatenate the parts into the source archive and check it; the unpacked size (blocking).
    On an invalid archive everything of the upload is removed and the error raised."""
    folder = code.upload_dir(deployment_id)
    os.makedirs(code.deployment_dir(deployment_id), exist_ok=True)
    target = code.source_path(deployment_id)
    with open(target + ".tmp", "wb") as out:
        for name in sorted(n for n in os.listdir(folder) if n.endswith(".part")):
            with open(os.path.join(folder, name), "rb") as part:
                shutil.copyfileobj(part, out, 1024 * 1024)
    os.replace(target + ".tmp", target)
    shutil.rmtree(folder, ignore_errors=True)
    try:
        return code.check_archive(target)
    except AppwriteError:
        code.remove(deployment_id)
        raise


async def _finish(ctx, function: dict, row: dict) -> dict:
    """All chunks are in: one request claims the assembly, checks the archive, queues the build."""
    from apps.functions.tasks import build_deployment

    claimed = await ctx.db.execute(
        "UPDATE functions_deployment SET chunks_uploaded = chunks_total, status = 'waiting', updated_at = %s "
        "WHERE id = %s AND status = 'uploading' AND chunks_uploaded < chunks_total",
        (ctx.db.dt(now()), row["id"]))
    if not claimed:
        return await selectors.deployment_get(ctx, function, row["uid"])
    try:
        await run_blocking(ctx.mode, _assemble, row["id"])
    except AppwriteError:
        await ctx.db.execute("DELETE FROM functions_deployment WHERE id = %s", (row["id"],))
        raise
    await enqueue(ctx.db, build_deployment, deployment_id=row["id"])
    fresh = await selectors.deployment_get(ctx, function, row["uid"])
    await deployment_event(ctx, function, fresh, "create")
    return fresh


async def deployment_event(ctx, function: dict, row: dict, action: str) -> None:
    await announce(ctx, WriteEvent(project_id=ctx.project_id, resource="deployment", action=action,
                                   ids={"functionId": function["uid"], "deploymentId": row["uid"]},
                                   payload=deployment_model(row, function["uid"])))


async def deployment_activate(ctx, function: dict, deployment_uid: str) -> None:
    """Make a ready deployment the active one. Raises 404 ``deployment_not_found``,
    400 ``build_not_ready``."""
    from apps.functions.services import set_active

    row = await selectors.deployment_get(ctx, function, deployment_uid)
    if row["status"] != "ready":
        raise AppwriteError("build_not_ready")
    await set_active(ctx, function, row["id"])


async def deployment_cancel(ctx, function: dict, deployment_uid: str) -> dict:
    """Cancel a build not finished yet. Raises 400 ``build_already_completed``."""
    row = await selectors.deployment_get(ctx, function, deployment_uid)
    done = await ctx.db.execute(
        "UPDATE functions_deployment SET status = 'canceled', updated_at = %s WHERE id = %s "
        "AND status IN ('uploading', 'waiting', 'processing', 'building')", (ctx.db.dt(now()), row["id"]))
    if not done:
        raise AppwriteError("build_already_completed")
    fresh = await selectors.deployment_get(ctx, function, deployment_uid)
    await deployment_event(ctx, function, fresh, "update")
    return fresh


async def deployment_delete(ctx, function: dict, deployment_uid: str) -> None:
    from apps.functions.tasks import remove_code

    row = await selectors.deployment_get(ctx, function, deployment_uid)
    async with ctx.db.transaction() as tx:
        await tx.execute("UPDATE functions_function SET deployment_id = NULL WHERE id = %s AND deployment_id = %s",
                         (function["id"], row["id"]))
        if not await tx.execute("DELETE FROM functions_deployment WHERE id = %s", (row["id"],)):
            raise AppwriteError("deployment_not_found")
        await enqueue(tx, remove_code, deployment_ids=[row["id"]])
    await deployment_event(ctx, function, row, "delete")


async def deployment_duplicate(ctx, function: dict, deployment_uid: str) -> dict:
    """A new deployment with the same source, built again (Appwrite's redeploy)."""
    from apps.functions.tasks import build_deployment

    src = await selectors.deployment_get(ctx, function, deployment_uid)
    if not os.path.exists(code.source_path(src["id"])):
        raise AppwriteError("deployment_not_found", "The deployment's code is not available.")
    row = await _insert(ctx, function, entrypoint=src["entrypoint"], commands=src["commands"], activate=True,
                        status="waiting", size=int(src["source_size"]), chunks_total=1)
    await run_blocking(ctx.mode, _copy_source, src["id"], row["id"])
    await ctx.db.execute("UPDATE functions_deployment SET chunks_uploaded = 1 WHERE id = %s", (row["id"],))
    await enqueue(ctx.db, build_deployment, deployment_id=row["id"])
    fresh = await selectors.deployment_get(ctx, function, row["uid"])
    await deployment_event(ctx, function, fresh, "create")
    return fresh


def _copy_source(src_id: int, dst_id: int) -> None:
    os.makedirs(code.deployment_dir(dst_id), exist_ok=True)
    shutil.copyfile(code.source_path(src_id), code.source_path(dst_id))


async def deployment_template(ctx, function: dict, *, template: dict, entrypoint: str, commands: str,
                              activate: bool) -> dict:
    """A deployment of a template repository's directory (Appwrite's createTemplateDeployment):
    the row, status ``waiting``; the worker downloads the archive, then builds it
    (``apps.functions.tasks.build_deployment``, ``apps.functions.templates``). A download that
    fails fails the deployment, with the reason in its build log (as Appwrite's clone does)."""
    from apps.functions.tasks import build_deployment

    row = await _insert(ctx, function, entrypoint=entrypoint, commands=commands, activate=activate,
                        status="waiting", size=0, chunks_total=1, template=template)
    await ctx.db.execute("UPDATE functions_deployment SET chunks_uploaded = 1 WHERE id = %s", (row["id"],))
    await enqueue(ctx.db, build_deployment, deployment_id=row["id"])
    fresh = await selectors.deployment_get(ctx, function, row["uid"])
    await deployment_event(ctx, function, fresh, "create")
    return fresh
