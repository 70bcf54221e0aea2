"""Bucket endpoints: API keys only (scopes ``buckets.read``/``buckets.write``)."""

from __future__ import annotations

from django.conf import settings

from apps.core.domain import permissions as perms
from apps.core.domain.ids import resolve_id
from apps.core.drivers.db import as_json
from apps.core.http.context import json_response, no_content
from apps.storage import selectors
from apps.storage.responses import bucket_model
from apps.storage.services import buckets as services


def _fields(p) -> dict:
    return {
        "name": p.name,
        "permissions": perms.normalize(p.permissions, perms.CONTAINER_ACTIONS) or [],
        "file_security": p.fileSecurity,
        "enabled": p.enabled,
        "maximum_file_size": p.maximumFileSize or settings.STORAGE_LIMIT,
        "allowed_file_extensions": p.allowedFileExtensions,
        "compression": p.compression,
        "encryption": p.encryption,
        "antivirus": p.antivirus,
        "transformations": p.transformations,
    }


async def bucket_create(ctx):
    p = ctx.params
    row = await services.bucket_create(ctx, bucket_uid=resolve_id(p.bucketId, "bucketId"), **_fields(p))
    return json_response(bucket_model(row), 201)


async def bucket_list(ctx):
    p = ctx.params
    total, rows = await selectors.bucket_list(ctx, queries=p.queries, search=p.search)
    return json_response({"total": total if p.total else 0, "buckets": [bucket_model(r) for r in rows]})


async def bucket_get(ctx):
    return json_response(bucket_model(await selectors.bucket_get(ctx, bucket_uid=ctx.params.bucketId)))


async def bucket_update(ctx):
    """PUT semantics as in Appwrite: omitted settings return to their defaults, except
    ``permissions``, which are kept when omitted."""
    p = ctx.params
    fields = _fields(p)
    if p.permissions is None:
        fields["permissions"] = as_json((await selectors.bucket_get(ctx, bucket_uid=p.bucketId))["permissions"]) or []
    row = await services.bucket_update(ctx, bucket_uid=p.bucketId, **fields)
    return json_response(bucket_model(row))


async def bucket_delete(ctx):
    await services.bucket_delete(ctx, bucket_uid=ctx.params.bucketId)
    return no_content()
