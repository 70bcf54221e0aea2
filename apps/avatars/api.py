"""Avatars endpoints: icons of installed sets, initials, QR codes, remote images and favicons.

Every answer is an image (``image/png``; a favicon may be ``image/x-icon``) with Appwrite's cache
headers. Scope ``avatars.read`` (guests hold it). Drawing and decoding run on the blocking
executor, at most :data:`RENDER_CONCURRENCY` per ASGI process at a time.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal
from zoneinfo import available_timezones

from pydantic import Field, StringConstraints, field_validator

from apps.avatars import favicon, icons, images, screenshot
from apps.avatars.fetch import FetchRefused, fetch
from apps.core.domain.imaging import ImageRefused
from apps.core.drivers.runtime import SYNC, run_blocking
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import Response
from apps.core.http.inputs import LooseBool, Strict

RENDER_CONCURRENCY = 2
_gate: list[asyncio.Semaphore] = []
# Browsers run beside the renders, not in their slots: a slow page must not hold up initials.
SCREENSHOT_CONCURRENCY = 2
_shot_gate: list[asyncio.Semaphore] = []
ICON_CACHE = "private, max-age=2592000"  # 30 days (Appwrite)
DRAWN_CACHE = "private, max-age=3888000"  # 45 days (Appwrite: initials, QR)

Side = Annotated[int, Field(ge=0, le=2000)]
Quality = Annotated[int, Field(ge=-1, le=100)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=2048)]


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


class ScreenshotParams(Strict):
    """Appwrite's ``avatars.getScreenshot`` parameters, ranges and defaults."""
    url: Url
    headers: dict[str, str] = {}
    viewportWidth: Annotated[int, Field(ge=1, le=1920)] = 1280
    viewportHeight: Annotated[int, Field(ge=1, le=1080)] = 720
    scale: Annotated[float, Field(ge=0.1, le=3)] = 1
    theme: Literal["light", "dark"] = "light"
    userAgent: Annotated[str, StringConstraints(max_length=512)] = ""
    fullpage: LooseBool = False
    locale: Annotated[str, StringConstraints(max_length=35, pattern=r"^([A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*)?$")] = ""
    timezone: str = ""
    latitude: Annotated[float, Field(ge=-90, le=90)] = 0
    longitude: Annotated[float, Field(ge=-180, le=180)] = 0
    accuracy: Annotated[float, Field(ge=0, le=100000)] = 0
    touch: LooseBool = False
    permissions: list[str] = []
    sleep: Annotated[int, Field(ge=0, le=10)] = 0
    width: Side = 0
    height: Side = 0
    quality: Quality = -1
    output: Literal["", "jpeg", "jpg", "png", "gif", "webp"] = ""

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        lowered = {k.lower(): v for k, v in value.items()}
        if set(lowered) - {"accept", "accept-language"}:
            raise ValueError("Only Accept and Accept-Language headers are allowed")
        return lowered

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        if value and value not in available_timezones():
            raise ValueError("Value must be a valid IANA timezone identifier")
        return value


class InitialsParams(Strict):
    name: Annotated[str, StringConstraints(max_length=128)] = ""
    width: Side = 500
    height: Side = 500
    background: Annotated[str, StringConstraints(pattern=r"^(#?[0-9a-fA-F]{6}|#?[0-9a-fA-F]{3})?$")] = ""


class QrParams(Strict):
    text: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    size: Annotated[int, Field(ge=1, le=1000)] = 400
    margin: Annotated[int, Field(ge=0, le=10)] = 1
    download: LooseBool = False


async def _render(mode: str, fn, *args, gate: list | None = None, limit: int = RENDER_CONCURRENCY):
    if mode == SYNC:
        return fn(*args)
    gate = _gate if gate is None else gate
    if not gate:
        gate.append(asyncio.Semaphore(limit))
    async with gate[0]:
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


async def get_screenshot(ctx):
    """A screenshot of the page at ``url`` through headless Chromium (:mod:`apps.avatars.screenshot`),
    as PNG or ``output``: 503 ``general_service_disabled`` without a browser, 400
    ``general_feature_unsupported`` for ``fullpage``, 404 ``avatar_remote_url_failed`` for a
    refused URL or a page that did not render in time."""
    p = ctx.params
    url = _url(p.url)
    if screenshot.browser() is None:
        raise AppwriteError("general_service_disabled", "Screenshots need a headless browser on the server: "
                            "install Chromium (Debian: apt-get install chromium) or set AVATARS_SCREENSHOT_BROWSER.")
    if p.fullpage:
        raise AppwriteError("general_feature_unsupported", "Full-page screenshots are not supported by this "
                            "server; the viewport is captured (leave fullpage unset).")
    try:
        host, address = await run_blocking(ctx.mode, screenshot.target, url)
        body = await _render(ctx.mode, screenshot.capture, url, host, address, p, gate=_shot_gate,
                             limit=SCREENSHOT_CONCURRENCY)
    except (FetchRefused, screenshot.ShotFailed) as exc:
        raise AppwriteError("avatar_remote_url_failed", str(exc)) from None
    except ImageRefused:
        raise AppwriteError("avatar_remote_url_failed", "The browser's picture could not be read.") from None
    return _png(body, ICON_CACHE, content_type=screenshot.CONTENT_TYPES[p.output])


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
