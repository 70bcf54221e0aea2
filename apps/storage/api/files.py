"""File metadata endpoints: create (single or chunked), list, get, update,
delete. Scopes ``files.read``/``files.write``; then bucket and file permissions decide (§7)."""

from __future__ import annotations

from apps.core.domain import permissions as perms
from apps.core.domain.ids import is_valid_id, resolve_id
from apps.core.drivers.db import as_json
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import UploadedPart, json_response, no_content
from apps.storage import filetokens, selectors
from apps.storage.responses import file_model
from apps.storage.services import files as services
from apps.storage.services.uploads import file_upload_chunk


def _upload_id(ctx, file_id_param: str) -> str:
    """The file ID of an upload: ``x-appwrite-id`` (later chunks), else ``fileId``.

    ``unique()`` in the header is treated as absent: the Python SDK sends the ``fileId`` it
    was given on the first chunk. Raises 400 ``storage_invalid_appwrite_id``.
    """
    header = ctx.headers.get("x-appwrite-id", "").strip()
    if header and header != "unique()":
        if not is_valid_id(header):
            raise AppwriteError("storage_invalid_appwrite_id")
        return header
    return resolve_id(file_id_param, "fileId")


async def file_create(ctx):
    p = ctx.params
    part = p.file
    if not isinstance(part, UploadedPart):
        raise invalid_argument("file", "Value must be a file upload (multipart/form-data)")
    bucket = await selectors.bucket_get_usable(ctx, bucket_uid=p.bucketId)
    content_range = ctx.headers.get("content-range", "")
    file_uid = _upload_id(ctx, p.fileId)
    if content_range:
        row, status = await file_upload_chunk(
            ctx, bucket=bucket, file_uid=file_uid, part=part, requested_permissions=p.permissions,
            folder=p.folder, content_range=content_range,
        )
        return json_response(file_model(row, bucket["uid"]), status)
    permissions = services.creation_permissions(ctx, bucket, p.permissions)
    row = await services.file_create_single(
        ctx, bucket=bucket, file_uid=file_uid, part=part, permissions=permissions, folder=p.folder,
    )
    return json_response(file_model(row, bucket["uid"]), 201)


def _read_roles_filter(ctx, bucket: dict) -> list[str] | None:
    """``None`` when the bucket grants read (list everything), else the caller's roles for the
    per-file filter. Raises 401 ``user_unauthorized`` when neither level can grant it."""
    if perms.allows(ctx.auth, as_json(bucket["permissions"]) or [], "read"):
        return None
    if not bucket["file_security"]:
        raise AppwriteError("user_unauthorized")
    return list(ctx.auth.roles)


async def file_list(ctx):
    p = ctx.params
    bucket = await selectors.bucket_get_usable(ctx, bucket_uid=p.bucketId)
    total, rows = await selectors.file_list(
        ctx, bucket=bucket, queries=p.queries, search=p.search, roles=_read_roles_filter(ctx, bucket)
    )
    return json_response({"total": total if p.total else 0, "files": [file_model(r, bucket["uid"]) for r in rows]})


async def readable_file(ctx, *, ready: bool, tokens: bool = False) -> tuple[dict, dict]:
    """``(bucket, file)`` the caller may read (Appwrite Files/Get.php): 401 ``user_unauthorized``
    when the bucket denies read and has no ``fileSecurity``; 404 ``storage_file_not_found`` when
    the file is missing, unreadable, or (``ready``) not assembled yet.

    With ``tokens`` (view, download, preview), a live file token in ``?token=`` grants read of
    its own file to anyone; a live token for another file of any bucket answers 401
    ``user_unauthorized``; a bad, expired or deleted one is ignored (Appwrite's
    resource-token rule). Without ``?token=`` nothing extra happens."""
    p = ctx.params
    token = await filetokens.token_for_request(ctx, p.token) if tokens and p.token else None
    bucket = await selectors.bucket_get_usable(ctx, bucket_uid=p.bucketId)
    bucket_read = perms.allows(ctx.auth, as_json(bucket["permissions"]) or [], "read")
    by_token = token is not None and token["bucket_id"] == bucket["id"]
    if not bucket_read and not bucket["file_security"] and not by_token:
        raise AppwriteError("user_unauthorized")
    file = await selectors.file_get(ctx, bucket=bucket, file_uid=p.fileId)
    if token is not None and token["file_id"] != file["id"]:
        raise AppwriteError("user_unauthorized")
    if not bucket_read and not by_token and not selectors.can_read_file(
            ctx.auth, bucket, as_json(file["permissions"]) or []):
        raise AppwriteError("storage_file_not_found")
    if ready and file["status"] != "ready":
        raise AppwriteError("storage_file_not_found")
    return bucket, file


async def file_get(ctx):
    bucket, file = await readable_file(ctx, ready=False)
    return json_response(file_model(file, bucket["uid"]))


async def file_update(ctx):
    p = ctx.params
    bucket, file = await readable_file(ctx, ready=False)
    row = await services.file_update(ctx, bucket=bucket, file=file, name=p.name, permissions=p.permissions)
    return json_response(file_model(row, bucket["uid"]))


async def file_delete(ctx):
    bucket, file = await readable_file(ctx, ready=False)
    await services.file_delete(ctx, bucket=bucket, file=file)
    return no_content()
