"""download / view / preview: Range (RFC 9110 §14), ETag/If-None-Match, MIME types, Pillow
previews; on both builds."""

from __future__ import annotations

import io
import os

import pytest
from PIL import Image

from apps.storage.tests.conftest import make_bucket, upload

DATA = os.urandom(100_000)


@pytest.fixture
def stored(api):
    b = make_bucket(api)
    r = upload(api, b["$id"], DATA, name="blob.bin", file_id="blob")
    assert r.status_code == 201, r.text
    return f"/storage/buckets/{b['$id']}/files/blob", r.json()


RANGES = [
    # (Range header, status, expected slice, Content-Range)
    ("bytes=0-99", 206, slice(0, 100), "bytes 0-99/100000"),
    ("bytes=99990-", 206, slice(99990, None), "bytes 99990-99999/100000"),
    ("bytes=-10", 206, slice(-10, None), "bytes 99990-99999/100000"),
    ("bytes=99000-200000", 206, slice(99000, None), "bytes 99000-99999/100000"),
    ("bytes=-200000", 206, slice(0, None), "bytes 0-99999/100000"),
    ("bytes=5-4", 200, slice(None), None),  # invalid syntax: ignored
    ("items=0-1", 200, slice(None), None),
    ("bytes=0-1,5-6", 200, slice(None), None),  # multiple ranges: served whole
    ("bytes=100000-", 416, None, "bytes */100000"),
    ("bytes=-0", 416, None, "bytes */100000"),
    ("bytes=99990-" + "9" * 5000, 206, slice(99990, None), "bytes 99990-99999/100000"),  # past int's digit limit
    ("bytes=-" + "9" * 5000, 206, slice(0, None), "bytes 0-99999/100000"),
    ("bytes=" + "9" * 5000 + "-", 416, None, "bytes */100000"),
]


@pytest.mark.parametrize("what", ["download", "view"])
@pytest.mark.parametrize("header,status,part,content_range", RANGES, ids=[r[0][:40] for r in RANGES])
def test_ranges(api, stored, what, header, status, part, content_range):
    path, _ = stored
    r = api.call("GET", f"{path}/{what}", headers={"Range": header}, key=True)
    assert r.status_code == status, r.text[:200]
    assert r.headers.get("Content-Range") == content_range
    if status == 416:
        assert r.json()["type"] == "storage_invalid_range"
        return
    assert r.headers["Accept-Ranges"] == "bytes"
    assert r.content == DATA[part]
    assert int(r.headers["Content-Length"]) == len(r.content)


def test_etag_and_if_none_match(api, stored):
    path, f = stored
    r = api.call("GET", f"{path}/download", key=True)
    etag = r.headers["ETag"]
    assert etag == f'"{f["signature"]}"'
    for header in (etag, f"W/{etag}", f'"other", {etag}', "*"):
        again = api.call("GET", f"{path}/view", headers={"If-None-Match": header}, key=True)
        assert again.status_code == 304 and again.content == b""
        if api.server.kind == "asgi":  # the lean adapter's own framing (RFC 9110 §8.6)
            assert "content-length" not in {k.lower() for k in again.headers}
    assert api.call("GET", f"{path}/view", headers={"If-None-Match": '"nope"'}, key=True).status_code == 200


def _image(fmt: str, mode: str = "RGB", size=(64, 48)) -> bytes:
    img = Image.new(mode, size, (200, 30, 30, 128) if mode == "RGBA" else (200, 30, 30))
    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return buf.getvalue()


MIME_CASES = [
    # (name, bytes, detected MIME, view Content-Type)
    ("photo.png", _image("PNG"), "image/png", "image/png"),
    ("photo.jpg", _image("JPEG"), "image/jpeg", "image/jpeg"),
    ("not-really.txt", _image("PNG"), "image/png", "image/png"),  # magic bytes win
    ("doc.pdf", b"%PDF-1.7\n...", "application/pdf", "application/pdf"),
    ("notes.txt", "héllo\n".encode(), "text/plain", "text/plain"),
    ("page.html", b"<html><script>alert(1)</script></html>", "text/html", "text/plain"),
    ("pic.svg", b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml", "text/plain"),
    ("data.bin", b"\x00\x01\x02\x03", "application/octet-stream", "application/octet-stream"),
]


@pytest.mark.parametrize("name,data,detected,served", MIME_CASES, ids=[c[0] for c in MIME_CASES])
def test_mime_detection_and_view(api, name, data, detected, served):
    b = make_bucket(api)
    f = upload(api, b["$id"], data, name=name).json()
    assert f["mimeType"] == detected
    r = api.call("GET", f"/storage/buckets/{b['$id']}/files/{f['$id']}/view", key=True)
    assert r.status_code == 200 and r.content == data
    assert r.headers["Content-Type"].split(";")[0] == served
    assert r.headers["Content-Disposition"].startswith("inline;")
    assert r.headers["X-Content-Type-Options"] == "nosniff"


PREVIEWS = [
    # (source format, params, expected output format, expected size)
    ("PNG", {}, "PNG", (64, 48)),
    ("PNG", {"width": 32}, "PNG", (32, 24)),
    ("JPEG", {"height": 24}, "JPEG", (32, 24)),
    ("JPEG", {"width": 20, "height": 20, "gravity": "top-left"}, "JPEG", (20, 20)),
    ("PNG", {"output": "jpg", "quality": 50}, "JPEG", (64, 48)),
    ("JPEG", {"output": "webp", "width": 10}, "WEBP", (10, 8)),
    ("JPEG", {"output": "gif"}, "GIF", (64, 48)),
    ("PNG", {"output": "png", "rotation": 90}, "PNG", (48, 64)),
]


@pytest.mark.parametrize("src,params,fmt,size", PREVIEWS, ids=[f"{p[0]}-{p[1]}" for p in PREVIEWS])
def test_preview(api, src, params, fmt, size):
    b = make_bucket(api)
    f = upload(api, b["$id"], _image(src), name="img." + src.lower()).json()
    r = api.call("GET", f"/storage/buckets/{b['$id']}/files/{f['$id']}/preview", params=params, key=True)
    assert r.status_code == 200, r.text
    img = Image.open(io.BytesIO(r.content))
    assert img.format == fmt and img.size == size
    assert r.headers["Content-Type"] == Image.MIME[fmt]


@pytest.mark.parametrize("mode,src,params", [
    ("L", "PNG", {"borderWidth": 2, "borderColor": "ff0000"}),
    ("1", "PNG", {"borderWidth": 2}),
    ("LA", "PNG", {"borderWidth": 2, "output": "jpg"}),
    ("P", "GIF", {"borderWidth": 2, "background": "00ff00"}),
    ("CMYK", "JPEG", {"output": "png"}),
    ("CMYK", "JPEG", {"output": "gif", "rotation": 45}),
    ("I;16", "PNG", {}),
    ("I;16", "PNG", {"borderWidth": 1, "output": "webp"}),
    ("F", "TIFF", {"output": "png"}),
], ids=lambda v: str(v))
def test_preview_of_any_pixel_mode(api, mode, src, params):
    """Grayscale, palette, CMYK, 16-bit and float images took colour tuples or PNG output badly:
    a TypeError/OSError (500) instead of a preview."""
    b = make_bucket(api)
    buf = io.BytesIO()
    Image.new(mode, (64, 48)).save(buf, format=src)
    f = upload(api, b["$id"], buf.getvalue(), name="img." + src.lower()).json()
    r = api.call("GET", f"/storage/buckets/{b['$id']}/files/{f['$id']}/preview", params=params, key=True)
    assert r.status_code == 200, r.text
    assert Image.open(io.BytesIO(r.content)).mode in ("RGB", "RGBA", "P")


def test_preview_refuses_images_over_max_pixels_before_decoding(api):
    """7000x7000 (49 Mpx) is over MAX_PIXELS (40 Mpx) but under Pillow's own bomb error (2x):
    it was decoded (and converted) in full."""
    b = make_bucket(api)
    buf = io.BytesIO()
    Image.new("1", (7000, 7000)).save(buf, format="PNG")
    assert len(buf.getvalue()) < 100_000
    f = upload(api, b["$id"], buf.getvalue(), name="bomb.png").json()
    r = api.call("GET", f"/storage/buckets/{b['$id']}/files/{f['$id']}/preview", key=True)
    assert r.json()["type"] == "storage_invalid_file", r.text


def test_preview_transparent_png_background(api):
    b = make_bucket(api)
    f = upload(api, b["$id"], _image("PNG", "RGBA"), name="t.png").json()
    r = api.call("GET", f"/storage/buckets/{b['$id']}/files/{f['$id']}/preview",
                 params={"background": "00ff00", "output": "png"}, key=True)
    img = Image.open(io.BytesIO(r.content))
    assert img.mode == "RGB" and img.getpixel((0, 0))[1] > 100  # green shows through


@pytest.mark.parametrize("params,etype", [
    ({"width": 5000}, "general_argument_invalid"),
    ({"output": "bmp"}, "general_argument_invalid"),
    ({"background": "zzz"}, "general_argument_invalid"),
])
def test_preview_bad_params(api, params, etype):
    b = make_bucket(api)
    f = upload(api, b["$id"], _image("PNG"), name="a.png").json()
    r = api.call("GET", f"/storage/buckets/{b['$id']}/files/{f['$id']}/preview", params=params, key=True)
    assert r.status_code == 400 and r.json()["type"] == etype


def test_preview_of_non_image_is_a_clear_error(api):
    b = make_bucket(api)
    f = upload(api, b["$id"], b"just text", name="a.txt").json()
    r = api.call("GET", f"/storage/buckets/{b['$id']}/files/{f['$id']}/preview", key=True)
    assert r.status_code == 400 and r.json()["type"] == "storage_file_type_unsupported"
    broken = upload(api, b["$id"], b"\x89PNG\r\n\x1a\n" + b"garbage" * 10, name="b.png").json()
    r = api.call("GET", f"/storage/buckets/{b['$id']}/files/{broken['$id']}/preview", key=True)
    assert r.status_code == 403 and r.json()["type"] == "storage_invalid_file"


def test_preview_needs_transformations_for_non_keys(api):
    b = make_bucket(api, transformations=False)
    f = upload(api, b["$id"], _image("PNG"), name="a.png").json()
    path = f"/storage/buckets/{b['$id']}/files/{f['$id']}/preview"
    r = api.call("GET", path)
    assert r.status_code == 403 and r.json()["type"] == "storage_bucket_transformations_disabled"
    assert api.call("GET", path, key=True).status_code == 200
    assert api.call("GET", path.replace("/preview", "/view")).status_code == 200


def test_web_sdk_permission_fields(api, bucket):
    """The web SDK repeats ``permissions[]``."""
    r = api.call("POST", f"/storage/buckets/{bucket['$id']}/files",
                 data=[("fileId", "unique()"), ("permissions[]", 'read("any")'), ("permissions[]", 'update("any")')],
                 files={"file": ("w.txt", io.BytesIO(b"web"), "text/plain")}, key=True)
    assert r.status_code == 201, r.text
    assert r.json()["$permissions"] == ['read("any")', 'update("any")']


def test_head_sends_headers_only(api, stored):
    path, _ = stored
    r = api.call("HEAD", f"{path}/download", key=True)
    assert r.status_code == 200 and r.content == b""
    assert r.headers["Content-Length"] == str(len(DATA)) and r.headers["Accept-Ranges"] == "bytes"
    r = api.call("HEAD", f"{path}/view", headers={"Range": "bytes=0-9"}, key=True)
    assert r.status_code == 206 and r.headers["Content-Range"] == "bytes 0-9/100000"


@pytest.mark.parametrize("size", [1, 1024, 64 * 1024, 64 * 1024 + 1])
def test_bodies_around_the_small_body_bound_arrive_whole(api, bucket, size):
    """Up to SMALL_BODY (64 KiB) the answer is one read, above it a stream: same bytes, same
    headers."""
    data = os.urandom(size)
    r = upload(api, bucket["$id"], data, name="s.bin")
    assert r.status_code == 201, r.text
    got = api.call("GET", f"/storage/buckets/{bucket['$id']}/files/{r.json()['$id']}/download", key=True)
    assert got.status_code == 200 and got.content == data
    assert int(got.headers["Content-Length"]) == size


def test_a_file_whose_bytes_are_gone_is_not_found(api, bucket, live_env, sql):
    """Bytes removed behind the API's back (an operator, a lost volume): 404, never a 500."""
    r = upload(api, bucket["$id"], b"soon gone", name="gone.txt")
    assert r.status_code == 201, r.text
    (key,) = sql("SELECT f.key FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
                 "WHERE b.uid = %s AND f.uid = %s", (bucket["$id"], r.json()["$id"]))[0]
    os.remove(os.path.join(live_env["STORAGE_ROOT"], key))
    got = api.call("GET", f"/storage/buckets/{bucket['$id']}/files/{r.json()['$id']}/view", key=True)
    assert got.status_code == 404 and got.json()["type"] == "storage_file_not_found", got.text


def test_a_single_upload_leaves_no_part_files(api, bucket, live_env):
    uploads = os.path.join(live_env["STORAGE_ROOT"], ".uploads")

    def parts() -> set[str]:
        return set(os.listdir(uploads)) if os.path.isdir(uploads) else set()

    before = parts()  # other tests' unfinished chunked uploads may be there
    r = upload(api, bucket["$id"], b"x" * 2048, name="one.txt")
    assert r.status_code == 201, r.text
    assert parts() <= before


@pytest.mark.parametrize("size", [1000, 200_000])
def test_a_truncated_file_is_not_served(api, bucket, live_env, sql, size):
    """Stored bytes shorter than the recorded size (a damaged volume), small body or stream: 404
    before any byte, never a truncated 200/206 under the whole file's ETag."""
    data = os.urandom(size)
    r = upload(api, bucket["$id"], data, name="cut.bin")
    assert r.status_code == 201, r.text
    (key,) = sql("SELECT f.key FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
                 "WHERE b.uid = %s AND f.uid = %s", (bucket["$id"], r.json()["$id"]))[0]
    os.truncate(os.path.join(live_env["STORAGE_ROOT"], key), 10)
    path = f"/storage/buckets/{bucket['$id']}/files/{r.json()['$id']}"
    for method, what, headers in [("GET", "download", {}), ("GET", "view", {"Range": "bytes=0-99"}),
                                  ("HEAD", "download", {})]:
        got = api.call(method, f"{path}/{what}", headers=headers, key=True)
        assert got.status_code == 404, (method, what, got.status_code)
        if method == "GET":
            assert got.json()["type"] == "storage_file_not_found"


def test_a_large_file_whose_bytes_are_gone_is_not_found(api, bucket, live_env, sql):
    r = upload(api, bucket["$id"], os.urandom(200_000), name="big.bin")
    assert r.status_code == 201, r.text
    (key,) = sql("SELECT f.key FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
                 "WHERE b.uid = %s AND f.uid = %s", (bucket["$id"], r.json()["$id"]))[0]
    os.remove(os.path.join(live_env["STORAGE_ROOT"], key))
    got = api.call("GET", f"/storage/buckets/{bucket['$id']}/files/{r.json()['$id']}/download", key=True)
    assert got.status_code == 404 and got.json()["type"] == "storage_file_not_found", got.text[:200]
