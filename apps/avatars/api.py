"""Avatars endpoints: icons of installed sets, initials, QR codes, remote images and favicons.

Every answer is an image (``image/png``; a favicon may be ``image/x-icon``) with Appwrite's cache
headers. Scope ``avatars.read`` (guests hold it). Drawing and decoding run on the blocking
executor, at most :data:`RENDER_CONCURRENCY` per ASGI process at a time.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from apps.avatars import favicon, icons, images
from apps.avatars.fetch import FetchRefused, fetch
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import Response
from apps.core.imaging import ImageRefused
from apps.core.runtime import SYNC, run_blocking

RENDER_CONCURRENCY = 2
_gate: list[asyncio.Semaphore] = []
ICON_CACHE = "private, max-age=2592000"  # 30 days (Appwrite)
DRAWN_CACHE = "private, max-age=3888000"  # 45 days (Appwrite: initials, QR)

Side = Annotated[int, Field(ge=0, le=2000)]
Quality = Annotated[int, Field(ge=-1, le=100)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=2048)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class IconParams(Strict):
    code: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    width: Side = 100
    height: Side = 100
    quality: Quality = -1


class ImageParams(Strict):
    url: Url
    width: Side = 400
    height: Side = 400


class FaviconParams(Strict):
    url: Url


class InitialsParams(Strict):
    name: Annotated[str, StringConstraints(max_length=128)] = ""
    width: Side = 500
    height: Side = 500
    background: Annotated[str, StringConstraints(pattern=r"^(#?[0-9a-fA-F]{6}|#?[0-9a-fA-F]{3})?$")] = ""


class QrParams(Strict):
    text: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    size: Annotated[int, Field(ge=1, le=1000)] = 400
    margin: Annotated[int, Field(ge=0, le=10)] = 1
    download: bool = False


async def _render(mode: str, fn, *args):
    if mode == SYNC:
        return fn(*args)
    if not _gate:
        _gate.append(asyncio.Semaphore(RENDER_CONCURRENCY))
    async with _gate[0]:
        return await run_blocking(mode, fn, *args)


def _png(body: bytes, cache: str, content_type: str = "image/png", extra=()) -> Response:
    return Response(body=body, content_type=content_type,
                    headers=[("Cache-Control", cache), *extra])


def _icon_route(kind: str):
    async def handler(ctx):
        p = ctx.params
        code = p.code.lower()
        valid = icons.codes(kind)
        if code not in valid:
            raise invalid_argument("code", f"Value must be one of ({', '.join(sorted(valid))})")
        path = icons.icon_path(kind, code)
        if path is None:
            if not icons.installed(kind):
                raise AppwriteError("avatar_not_found", f"The {kind} icon set is not installed on this server "
                                    "(npm ci in apps/avatars/assets, or AVATARS_ICONS_DIR).")
            raise AppwriteError("avatar_not_found", f"The installed icon set has no image for `{code}`.")
        return _png(await _render(ctx.mode, images.render_icon, path, p.width, p.height, p.quality), ICON_CACHE)

    handler.__name__ = f"get_{kind.replace('-', '_')}"
    return handler


get_browser = _icon_route("browsers")
get_credit_card = _icon_route("credit-cards")
get_flag = _icon_route("flags")


def _url(value: str) -> str:
    if not value.lower().startswith(("http://", "https://")):
        raise invalid_argument("url", "Value must be a valid URL with following schemes (http, https)")
    return value


async def _fetch(ctx, url: str, max_redirects: int):
    try:
        return await run_blocking(ctx.mode, lambda: fetch(url, max_redirects=max_redirects))
    except FetchRefused as exc:
        raise AppwriteError("avatar_remote_url_failed", str(exc)) from None


async def get_image(ctx):
    """The image at ``url`` (no redirects, as Appwrite), fitted to width x height, as PNG:
    404 ``avatar_remote_url_failed`` for refused or failed fetches, 404
    ``avatar_image_not_found`` for a non-200 answer or a body that is not an acceptable image."""
    p = ctx.params
    fetched = await _fetch(ctx, _url(p.url), 0)
    if fetched.status != 200:
        raise AppwriteError("avatar_image_not_found")
    try:
        body = await _render(ctx.mode, images.render_remote, fetched.body, p.width, p.height)
    except ImageRefused:
        raise AppwriteError("avatar_image_not_found") from None
    return _png(body, ICON_CACHE)


async def get_favicon(ctx):
    """The favicon of the page at ``url`` (redirects followed up to 5 hops, each re-checked):
    ICO files as they are, other raster icons as a 56 x 56 PNG. 404 ``avatar_icon_not_found``
    when there is none or it is not an image."""
    page = await _fetch(ctx, _url(ctx.params.url), 5)
    html = page.body.decode("utf-8", "replace") if page.status == 200 else ""
    icon_url, ext = favicon.pick_icon(page.url, html)
    icon = await _fetch(ctx, icon_url, 5)
    if icon.status != 200 or not icon.body:
        raise AppwriteError("avatar_icon_not_found")
    if ext == "ico":
        try:
            await _render(ctx.mode, lambda: images.open_bounded(icon.body, max_pixels=images.MAX_SOURCE_PIXELS,
                                                                formats=("ICO", "PNG", "BMP")))
        except ImageRefused:
            raise AppwriteError("avatar_icon_not_found", "Favicon not found") from None
        return _png(icon.body, ICON_CACHE, content_type="image/x-icon")
    try:
        body = await _render(ctx.mode, images.render_remote, icon.body, 56, 56)
    except ImageRefused:
        raise AppwriteError("avatar_icon_not_found") from None
    return _png(body, ICON_CACHE)


async def get_initials(ctx):
    """Initials of ``name``, else of the signed-in user's name or email (Appwrite's rule)."""
    p = ctx.params
    name = p.name
    if not name and ctx.auth.user:
        name = ctx.auth.user.get("name") or ctx.auth.user.get("email") or ""
    body = await _render(ctx.mode, images.render_initials, name, p.width, p.height, p.background)
    return _png(body, DRAWN_CACHE)


async def get_qr(ctx):
    p = ctx.params
    extra = [("Content-Disposition", 'attachment; filename="qr.png"')] if p.download else []
    return _png(await _render(ctx.mode, images.render_qr, p.text, p.size, p.margin), DRAWN_CACHE, extra=extra)
