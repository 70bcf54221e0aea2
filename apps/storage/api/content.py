"""File bytes endpoints: download (attachment), view (inline), preview (Pillow).

download/view stream the stored object with Range and ETag support (``apps.storage.streaming``).
"""

from __future__ import annotations

import asyncio
import hashlib
from urllib.parse import quote

from django.conf import settings

from apps.core.drivers.runtime import SYNC, run_blocking
from apps.core.errors import AppwriteError
from apps.core.http.context import Response
from apps.storage import backends, mime, preview
from apps.storage.api.files import readable_file
from apps.storage.streaming import etag_matches, file_response

# Renders at once per ASGI process (executor threads they may occupy); their memory is bounded
# inside apps.storage.preview (decoded-pixel budget, draft/reduce). WSGI workers render one
# request at a time anyway.
PREVIEW_CONCURRENCY = 2
_render_gate: list[asyncio.Semaphore] = []


async def render_limited(mode: str, fn, *args):
    """``run_blocking(mode, fn, *args)``, at most :data:`PREVIEW_CONCURRENCY` at a time."""
    if mode == SYNC:
        return fn(*args)
    if not _render_gate:
        _render_gate.append(asyncio.Semaphore(PREVIEW_CONCURRENCY))
    async with _render_gate[0]:
        return await run_blocking(mode, fn, *args)


def _disposition(kind: str, name: str) -> str:
    """RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 ``filename*``."""
    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in name) or "file"
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


async def file_download(ctx):
    _, file = await readable_file(ctx, ready=True, tokens=True)
    return await file_response(ctx, file, content_type=file["mime_type"] or "application/octet-stream",
                         disposition=_disposition("attachment", file["name"]))


async def file_view(ctx):
    _, file = await readable_file(ctx, ready=True, tokens=True)
    content_type = mime.inline_type(file["mime_type"] or "application/octet-stream")
    return await file_response(ctx, file, content_type=content_type, disposition=_disposition("inline", file["name"]))


async def file_preview(ctx):
    """A transformed image. Buckets with ``transformations`` off answer 403
    ``storage_bucket_transformations_disabled`` (API keys excepted, as in Appwrite); non-image
    files 400 ``storage_file_type_unsupported``; images over ``STORAGE_PREVIEW_MAX_SIZE`` 400
    ``storage_invalid_file_size`` (README "Storage")."""
    p = ctx.params
    bucket, file = await readable_file(ctx, ready=True, tokens=True)
    if not bucket["transformations"] and not ctx.auth.is_key:
        raise AppwriteError("storage_bucket_transformations_disabled")
    if file["mime_type"] not in preview.PREVIEWABLE:
        raise AppwriteError("storage_file_type_unsupported", "Previews are available for image files only.")
    if int(file["size_actual"]) > settings.STORAGE_PREVIEW_MAX_SIZE:
        raise AppwriteError("storage_invalid_file_size", "The file is too large for a preview.")
    options = hashlib.md5(repr(sorted(p.model_dump().items())).encode(), usedforsecurity=False).hexdigest()[:12]
    etag = f'"{file["signature"]}-{options}"'
    headers = [("ETag", etag), ("Cache-Control", "private, max-age=0, must-revalidate")]
    if etag_matches(ctx.headers.get("if-none-match", ""), etag):
        return Response(status=304, content_type=None, headers=headers)
    data = await run_blocking(ctx.mode, backends.read_head, file["key"], int(file["size_actual"]))
    try:
        body, content_type = await render_limited(ctx.mode, _render, data, file["mime_type"], p)
    except ValueError:
        raise AppwriteError("storage_invalid_file", "The image could not be decoded.") from None
    return Response(status=200, body=body, content_type=content_type, headers=headers)


def _render(data: bytes, source_mime: str, p) -> tuple[bytes, str]:
    return preview.render(
        data, source_mime, width=p.width, height=p.height, gravity=p.gravity, quality=p.quality,
        output=p.output, background=p.background or "", rotation=p.rotation, opacity=p.opacity,
        border_width=p.borderWidth, border_color=p.borderColor or "",
    )
