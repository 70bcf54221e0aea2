"""``/avatars/screenshots`` through the installed headless Chromium against a local page: the
picture, its size and format, the parameter table, the SSRF rules (only the page's own host is
reachable) and the answer without a browser."""

from __future__ import annotations

import asyncio
import io
from types import SimpleNamespace

import pytest
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.services.avatars import Avatars
from PIL import Image

from apps.avatars import api as avatars_api
from apps.avatars import screenshot
from apps.core.errors import AppwriteError
from conftest import Api

# Drives Chromium: the browser lane (tests/lanes.py reads the reason).
needs_chromium = pytest.mark.skipif(screenshot.browser() is None, reason="chromium is not installed")

RED_PAGE = b'<html><body style="margin:0;background:#d02020"><p>shot</p></body></html>'


def picture(r) -> Image.Image:
    assert r.status_code == 200, r.text[:300]
    return Image.open(io.BytesIO(r.content))


@needs_chromium
def test_a_local_page_as_png(svc_api: Api, origin):
    origin.routes["/page"] = (200, {"Content-Type": "text/html"}, RED_PAGE)
    r = svc_api.call("GET", "/avatars/screenshots",
                     params={"url": origin.url + "/page", "viewportWidth": 320, "viewportHeight": 200})
    img = picture(r)
    assert r.headers["Content-Type"] == "image/png" and img.format == "PNG" and img.size == (320, 200)
    assert img.convert("RGB").getpixel((300, 190)) == (0xD0, 0x20, 0x20)


@needs_chromium
def test_only_the_pages_own_host_is_reached(svc_api: Api, origin):
    """A resource of another host (``localhost``, same port) is never requested."""
    origin.routes["/page"] = (200, {"Content-Type": "text/html"},
                              RED_PAGE.replace(b"<p>", f'<img src="http://localhost:{origin.port}/other.png"><p>'.encode()))
    r = svc_api.call("GET", "/avatars/screenshots",
                     params={"url": origin.url + "/page", "viewportWidth": 100, "viewportHeight": 100,
                             "width": 50, "height": 40, "output": "jpeg"})
    img = picture(r)
    assert r.headers["Content-Type"] == "image/jpeg" and img.format == "JPEG" and img.size == (50, 40)
    assert "/page" in origin.hits and "/other.png" not in origin.hits


CASES = [
    # (id, params, status, type)
    ("no url", {"url": None}, 400, "general_argument_invalid"),
    ("ftp url", {"url": "ftp://example.com/"}, 400, "general_argument_invalid"),
    ("viewport too wide", {"viewportWidth": 1921}, 400, "general_argument_invalid"),
    ("scale too small", {"scale": 0.05}, 400, "general_argument_invalid"),
    ("bad theme", {"theme": "blue"}, 400, "general_argument_invalid"),
    ("bad timezone", {"timezone": "Mars/Olympus"}, 400, "general_argument_invalid"),
    ("sleep too long", {"sleep": 11}, 400, "general_argument_invalid"),
    ("forbidden header", {"headers[Cookie]": "a=b"}, 400, "general_argument_invalid"),
    ("bad output", {"output": "bmp"}, 400, "general_argument_invalid"),
    ("fullpage", {"fullpage": "true"}, 400, "general_feature_unsupported"),
    ("private address", {"url": "http://127.0.0.2:{port}/page"}, 404, "avatar_remote_url_failed"),
    ("unresolvable host", {"url": "http://nowhere.invalid/"}, 404, "avatar_remote_url_failed"),
]


@needs_chromium
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_refusals(svc_api: Api, origin, case):
    _, params, status, etype = case
    params = {"url": origin.url + "/page", **params}
    params = {k: v.format(port=origin.port) if isinstance(v, str) else v for k, v in params.items() if v is not None}
    r = svc_api.call("GET", "/avatars/screenshots", params=params)
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert "/page" not in origin.hits


@needs_chromium
def test_python_sdk(svc_asgi, project, origin):
    origin.routes["/page"] = (200, {"Content-Type": "text/html"}, RED_PAGE)
    avatars = Avatars(Client().set_endpoint(svc_asgi.endpoint).set_project(project.id))
    data = avatars.get_screenshot(origin.url + "/page", viewport_width=200, viewport_height=120, scale=2,
                                  theme="dark", locale="fr-FR", timezone="Europe/Paris", sleep=1)
    assert Image.open(io.BytesIO(data)).size == (400, 240)
    with pytest.raises(AppwriteException) as err:
        avatars.get_screenshot(origin.url + "/page", fullpage=True)
    assert err.value.type == "general_feature_unsupported"


def test_without_a_browser_the_route_says_so(settings):
    settings.AVATARS_SCREENSHOT_BROWSER = ""
    ctx = SimpleNamespace(mode="sync", params=avatars_api.ScreenshotParams(url="https://example.com/"))
    with pytest.raises(AppwriteError) as err:
        asyncio.run(avatars_api.get_screenshot(ctx))
    assert err.value.status == 503 and err.value.type == "general_service_disabled"
    assert "Chromium" in err.value.message
