"""The Avatars routes over HTTP on the three builds: images are decoded and measured; remote
images and favicons come from a local origin server (``AVATARS_FETCH_ALLOW_NETWORKS`` lets the
test servers reach 127.0.0.1 only)."""

from __future__ import annotations

import io
import time
import zlib

import pytest
from PIL import Image

from conftest import Api


def png_bytes(size=(64, 48), colour=(200, 30, 30), fmt="PNG") -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, format=fmt)
    return buf.getvalue()


def bomb_png(side: int = 30000) -> bytes:
    """A valid PNG header declaring side x side pixels (a decompression bomb's shape), a few KB."""
    import struct

    def chunk(kind, data):
        return struct.pack("!I", len(data)) + kind + data + struct.pack("!I", zlib.crc32(kind + data))

    raw = zlib.compress(b"\0" * 1024)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack("!IIBBBBB", side, side, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


def image_of(r) -> Image.Image:
    assert r.status_code == 200, r.text
    img = Image.open(io.BytesIO(r.content))
    img.load()
    return img


ICON_CASES = [
    # (id, path, status, type, size)
    ("flag", "/avatars/flags/de", 200, None, (100, 100)),
    ("flag upper case", "/avatars/flags/DE?width=40&height=30", 200, None, (40, 30)),
    ("flag width only", "/avatars/flags/fr?width=80&height=0", 200, None, (80, 60)),
    ("flag unknown", "/avatars/flags/xx", 400, "general_argument_invalid", None),
    ("flag too wide", "/avatars/flags/de?width=2001", 400, "general_argument_invalid", None),
    ("flag negative", "/avatars/flags/de?height=-1", 400, "general_argument_invalid", None),
    ("flag quality", "/avatars/flags/de?quality=101", 400, "general_argument_invalid", None),
    ("flag not int", "/avatars/flags/de?width=wide", 400, "general_argument_invalid", None),
    ("flag undeclared param ignored", "/avatars/flags/de?colour=red&key=x", 200, None, (100, 100)),
    ("browser", "/avatars/browsers/ch", 200, None, (100, 100)),
    ("browser edge", "/avatars/browsers/ps?width=64&height=64", 200, None, (64, 64)),
    ("browser unknown", "/avatars/browsers/zz", 400, "general_argument_invalid", None),
    ("browser not in the set", "/avatars/browsers/aa", 404, "avatar_not_found", None),
    ("credit card", "/avatars/credit-cards/visa", 200, None, (100, 100)),
    ("credit card mastercard", "/avatars/credit-cards/mastercard?width=120&height=80", 200, None, (120, 80)),
    ("credit card unknown", "/avatars/credit-cards/bitcoin", 400, "general_argument_invalid", None),
    ("credit card not in the set", "/avatars/credit-cards/rupay", 404, "avatar_not_found", None),
    ("initials", "/avatars/initials?name=Ada%20Lovelace", 200, None, (500, 500)),
    ("initials sized", "/avatars/initials?name=x&width=120&height=60&background=112233", 200, None, (120, 60)),
    ("initials bad colour", "/avatars/initials?name=x&background=red", 400, "general_argument_invalid", None),
    ("initials name too long", "/avatars/initials?name=" + "n" * 129, 400, "general_argument_invalid", None),
    ("initials too big", "/avatars/initials?width=2001", 400, "general_argument_invalid", None),
    ("qr", "/avatars/qr?text=hello", 200, None, (400, 400)),
    ("qr sized", "/avatars/qr?text=hello&size=150&margin=4", 200, None, (150, 150)),
    ("qr missing text", "/avatars/qr", 400, "general_argument_invalid", None),
    ("qr text too long", "/avatars/qr?text=" + "t" * 513, 400, "general_argument_invalid", None),
    ("qr size 0", "/avatars/qr?text=a&size=0", 400, "general_argument_invalid", None),
    ("qr margin 11", "/avatars/qr?text=a&margin=11", 400, "general_argument_invalid", None),
    ("qr bad bool", "/avatars/qr?text=a&download=perhaps", 400, "general_argument_invalid", None),
    *[(f"qr download={v}", f"/avatars/qr?text=a&download={v}", 400, "general_argument_invalid", None)
      for v in ("off", "yes", "2", "on", "True")],
    *[(f"qr download={v}", f"/avatars/qr?text=a&size=50&download={v}", 200, None, (50, 50)) for v in ("0", "false")],
    ("image missing url", "/avatars/image", 400, "general_argument_invalid", None),
    ("image ftp", "/avatars/image?url=ftp://127.0.0.1/x.png", 400, "general_argument_invalid", None),
    ("favicon missing url", "/avatars/favicon", 400, "general_argument_invalid", None),
]


@pytest.mark.parametrize("case", ICON_CASES, ids=[c[0] for c in ICON_CASES])
def test_routes(svc_server, project, case):
    _, path, status, etype, size = case
    api = Api(svc_server, project)
    r = api.call("GET", path)  # as a guest: avatars.read is a guest scope
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        return
    assert r.headers["Content-Type"] == "image/png"
    assert r.headers["Cache-Control"].startswith("private, max-age=")
    assert image_of(r).size == size


def test_initials_look_like_appwrites(svc_api: Api):
    img = image_of(svc_api.call("GET", "/avatars/initials?name=Ada%20Lovelace&width=100&height=100"))
    assert img.mode == "RGBA"
    assert img.getpixel((2, 2)) == (0xFE, 0x95, 0x67, 255)  # 65 + 76 = 141: last digit 1 -> orange
    alphas = {img.getpixel((x, 50))[3] for x in range(100)}
    assert 0 in alphas and 255 in alphas  # the letters are cut out
    same = svc_api.call("GET", "/avatars/initials?name=Ada%20Lovelace&width=100&height=100")
    assert same.content == svc_api.call("GET", "/avatars/initials?name=Ada%20Lovelace&width=100&height=100").content
    other = image_of(svc_api.call("GET", "/avatars/initials?name=x&width=10&height=10&background=%23102030"))
    assert other.getpixel((0, 0)) == (0x10, 0x20, 0x30, 255)
    r = svc_api.call("GET", "/avatars/initials?width=50&height=50")
    assert r.status_code == 200 and r.headers["Cache-Control"] == "private, max-age=3888000"


def test_initials_default_to_the_signed_in_user(svc_api: Api):
    user, token = svc_api.signup(name="Grace Hopper")
    mine = svc_api.call("GET", "/avatars/initials?width=64&height=64", session=token).content
    named = svc_api.call("GET", "/avatars/initials?name=Grace%20Hopper&width=64&height=64").content
    anonymous = svc_api.call("GET", "/avatars/initials?width=64&height=64").content
    assert mine == named != anonymous


def test_qr_is_decodable_and_downloadable(svc_api: Api):
    r = svc_api.call("GET", "/avatars/qr?text=hello&size=200&download=true")
    assert r.headers["Content-Disposition"] == 'attachment; filename="qr.png"'
    img = image_of(r).convert("L")
    assert img.size == (200, 200) and set(img.tobytes()) == {0, 255}
    assert "Content-Disposition" not in svc_api.call("GET", "/avatars/qr?text=hello").headers
    # download is a loose boolean (Appwrite's docs say "Pass 0 for no header, or 1 for otherwise")
    assert svc_api.call("GET", "/avatars/qr?text=hello&download=1").headers["Content-Disposition"].startswith("attach")
    assert "Content-Disposition" not in svc_api.call("GET", "/avatars/qr?text=hello&download=0").headers


def test_remote_image(svc_server, project, origin):
    api = Api(svc_server, project)
    origin.routes["/a.png"] = (200, {"Content-Type": "image/png"}, png_bytes((300, 200)))
    origin.routes["/a.jpg"] = (200, {"Content-Type": "image/jpeg"}, png_bytes((120, 90), fmt="JPEG"))
    r = api.call("GET", "/avatars/image", params={"url": origin.url + "/a.png"})
    assert image_of(r).size == (400, 400) and r.headers["Cache-Control"] == "private, max-age=2592000"
    assert image_of(api.call("GET", "/avatars/image", params={"url": origin.url + "/a.jpg", "width": 60,
                                                                 "height": 0})).size == (60, 45)


def _slow(handler):
    handler.send_response(200)
    handler.send_header("Content-Type", "image/png")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    for _ in range(100):
        handler.wfile.write(b"\0" * 10)
        handler.wfile.flush()
        time.sleep(0.1)


REMOTE_CASES = [
    # (id, route, status, type)
    ("missing", None, 404, "avatar_image_not_found"),
    ("server error", (500, {}, b"oops"), 404, "avatar_image_not_found"),
    ("not an image", (200, {"Content-Type": "text/html"}, b"<html>hello</html>"), 404, "avatar_image_not_found"),
    ("decompression bomb", (200, {"Content-Type": "image/png"}, bomb_png()), 404, "avatar_image_not_found"),
    ("too large", (200, {"Content-Type": "image/png"}, b"\0" * (3 * 1024 * 1024)), 404, "avatar_remote_url_failed"),
    ("redirect not followed", (302, {"Location": "/a.png"}, b""), 404, "avatar_image_not_found"),
    ("slow", _slow, 404, "avatar_remote_url_failed"),
]


@pytest.mark.parametrize("case", REMOTE_CASES, ids=[c[0] for c in REMOTE_CASES])
def test_remote_image_failures(svc_server, project, origin, case):
    _, route, status, etype = case
    api = Api(svc_server, project)
    origin.routes["/a.png"] = (200, {"Content-Type": "image/png"}, png_bytes())
    if route is not None:
        origin.routes["/x"] = route
    started = time.monotonic()
    r = api.call("GET", "/avatars/image", params={"url": origin.url + "/x"})
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert time.monotonic() - started < 15  # AVATARS_FETCH_TIMEOUT is 3 s here


@pytest.mark.parametrize("url", [
    "http://127.0.0.2:{port}/a.png",  # loopback outside the allowed 127.0.0.1/32
    "http://[::ffff:127.0.0.2]:{port}/a.png",
    "http://0.0.0.0:{port}/a.png",
])
def test_non_public_addresses_are_refused(svc_api: Api, origin, url):
    origin.routes["/a.png"] = (200, {"Content-Type": "image/png"}, png_bytes())
    r = svc_api.call("GET", "/avatars/image", params={"url": url.format(port=origin.port)})
    assert r.status_code == 404 and r.json()["type"] == "avatar_remote_url_failed", r.text
    assert origin.hits == []


def test_plain_servers_refuse_loopback(api: Api, origin):
    """Without AVATARS_FETCH_ALLOW_NETWORKS even 127.0.0.1 is refused, before any connection."""
    origin.routes["/a.png"] = (200, {"Content-Type": "image/png"}, png_bytes())
    r = api.call("GET", "/avatars/image", params={"url": origin.url + "/a.png"})
    assert r.status_code == 404 and r.json()["type"] == "avatar_remote_url_failed"
    assert origin.hits == []


def test_favicon(svc_server, project, origin):
    api = Api(svc_server, project)
    page = (b'<html><head><link rel="icon" href="/small.png" sizes="16x16">'
            b'<link rel="icon" href="/logo.svg"><link rel="shortcut icon" href="/big.png" sizes="64x64">'
            b'</head></html>')
    origin.routes["/start"] = (301, {"Location": "/page"}, b"")
    origin.routes["/page"] = (200, {"Content-Type": "text/html"}, page)
    origin.routes["/big.png"] = (200, {"Content-Type": "image/png"}, png_bytes((64, 64)))
    r = api.call("GET", "/avatars/favicon", params={"url": origin.url + "/start"})
    assert image_of(r).size == (56, 56) and r.headers["Content-Type"] == "image/png"
    assert "/big.png" in origin.hits and "/small.png" not in origin.hits and "/logo.svg" not in origin.hits


def test_favicon_ico_fallback_and_failures(svc_api: Api, origin):
    ico = io.BytesIO()
    Image.new("RGBA", (32, 32), (1, 2, 3, 255)).save(ico, format="ICO")
    origin.routes["/page"] = (200, {"Content-Type": "text/html"}, b"<html>no icons</html>")
    origin.routes["/favicon.ico"] = (200, {"Content-Type": "image/x-icon"}, ico.getvalue())
    r = svc_api.call("GET", "/avatars/favicon", params={"url": origin.url + "/page"})
    assert r.status_code == 200 and r.headers["Content-Type"] == "image/x-icon" and r.content == ico.getvalue()
    origin.routes["/favicon.ico"] = (200, {"Content-Type": "text/html"}, b"<!doctype html><p>not found</p>")
    r = svc_api.call("GET", "/avatars/favicon", params={"url": origin.url + "/page"})
    assert r.status_code == 404 and r.json()["type"] == "avatar_icon_not_found"
    del origin.routes["/favicon.ico"]
    r = svc_api.call("GET", "/avatars/favicon", params={"url": origin.url + "/page"})
    assert r.status_code == 404 and r.json()["type"] == "avatar_icon_not_found"


def test_favicon_redirects_are_checked_each_hop(svc_api: Api, origin):
    origin.routes["/page"] = (302, {"Location": f"http://127.0.0.2:{origin.port}/page"}, b"")
    r = svc_api.call("GET", "/avatars/favicon", params={"url": origin.url + "/page"})
    assert r.status_code == 404 and r.json()["type"] == "avatar_remote_url_failed"
    assert origin.hits == ["/page"]
    origin.hits.clear()
    origin.routes["/loop"] = (302, {"Location": "/loop"}, b"")
    r = svc_api.call("GET", "/avatars/favicon", params={"url": origin.url + "/loop"})
    assert r.status_code == 404 and r.json()["type"] == "avatar_remote_url_failed"
    assert len(origin.hits) == 6  # the first request and five redirects


def _http10(content_type: str, body: bytes):
    def handler(request):
        request.close_connection = True
        request.wfile.write(f"HTTP/1.0 200 OK\r\nContent-Type: {content_type}\r\n\r\n".encode() + body)
    return handler


def test_servers_that_close_after_answering(svc_api: Api, origin):
    """Regression (was a 500): an HTTP/1.0 origin whose body ends with the connection."""
    origin.routes["/a.png"] = _http10("image/png", png_bytes((80, 60)))
    origin.routes["/page"] = _http10("text/html", b'<html><head><link rel="icon" href="/a.png"></head></html>')
    r = svc_api.call("GET", "/avatars/image", params={"url": origin.url + "/a.png", "width": 80, "height": 60})
    assert r.status_code == 200 and image_of(r).size == (80, 60)
    r = svc_api.call("GET", "/avatars/favicon", params={"url": origin.url + "/page"})
    assert r.status_code == 200 and image_of(r).size == (56, 56)  # the default favicon size
