"""Chunked, resumable uploads over raw HTTP on both builds."""

from __future__ import annotations

import hashlib
import io
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from apps.storage.tests.conftest import CHUNK, make_bucket, new_id, upload, upload_chunk

TOTAL = 23 * 1024 * 1024  # 5 chunks, the last one short


@pytest.fixture(scope="module")
def blob() -> bytes:
    return os.urandom(TOTAL)


def test_concurrent_out_of_order_chunks_assemble_once(api, blob):
    b = make_bucket(api, maximumFileSize=50_000_000)
    fid = new_id("c")
    order = [3, 1, 4, 0, 2]
    random.shuffle(order)
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda i: upload_chunk(api, b["$id"], blob, i, "big.bin", fid, upload_id=fid), order))
    assert all(r.status_code == 201 for r in replies), [r.text for r in replies]
    bodies = [r.json() for r in replies]
    assert all(isinstance(x["chunksUploaded"], int) and x["chunksTotal"] == 5 for x in bodies)
    done = [x for x in bodies if x["chunksUploaded"] >= x["chunksTotal"]]
    assert done, bodies
    assert {x["signature"] for x in done} == {hashlib.md5(blob).hexdigest()}
    assert done[0]["sizeOriginal"] == TOTAL
    d = api.call("GET", f"/storage/buckets/{b['$id']}/files/{fid}/download", key=True)
    assert d.status_code == 200 and hashlib.sha256(d.content).digest() == hashlib.sha256(blob).digest()
    again = upload_chunk(api, b["$id"], blob, 2, "big.bin", fid, upload_id=fid)
    assert again.status_code == 200 and again.json()["chunksUploaded"] == 5
    whole = upload(api, b["$id"], b"small", file_id=fid)
    assert whole.status_code == 409 and whole.json()["type"] == "storage_file_already_exists"


def test_partial_upload_is_invisible_until_complete(api, blob):
    b = make_bucket(api, maximumFileSize=50_000_000)
    fid = new_id("p")
    first = upload_chunk(api, b["$id"], blob, 0, "big.bin", fid)
    assert first.status_code == 201 and first.json()["chunksUploaded"] == 1
    retry = upload_chunk(api, b["$id"], blob, 0, "big.bin", "unique()", upload_id=fid)
    assert retry.status_code == 201 and retry.json()["chunksUploaded"] == 1  # a retried chunk counts once
    base = f"/storage/buckets/{b['$id']}/files"
    got = api.call("GET", f"{base}/{fid}", key=True).json()
    assert got["chunksUploaded"] == 1 and got["chunksTotal"] == 5
    assert api.call("GET", base, key=True).json()["total"] == 0
    assert api.call("GET", f"{base}/{fid}/download", key=True).status_code == 404
    for i in (1, 2, 3, 4):
        r = upload_chunk(api, b["$id"], blob, i, "big.bin", fid, upload_id=fid)
        assert r.status_code == 201
    assert r.json()["chunksUploaded"] == 5
    assert api.call("GET", base, key=True).json()["total"] == 1


def test_unique_header_is_lenient(api):
    """The Python SDK sends ``x-appwrite-id: unique()`` when the caller typed the literal."""
    b = make_bucket(api)
    data = b"q" * (CHUNK + 10)
    r = upload_chunk(api, b["$id"], data, 0, "a.bin", "unique()", upload_id="unique()")
    assert r.status_code == 201, r.text
    fid = r.json()["$id"]
    assert len(fid) == 20
    r = upload_chunk(api, b["$id"], data, 1, "a.bin", "unique()", upload_id=fid)
    assert r.status_code == 201 and r.json()["chunksUploaded"] == 2


def _range_case(api, blob_len, content_range, part_len, bucket_fields=None):
    b = make_bucket(api, **(bucket_fields or {}))
    headers = {"Content-Range": content_range}
    return api.call("POST", f"/storage/buckets/{b['$id']}/files", data={"fileId": "unique()"},
                    files={"file": ("a.bin", io.BytesIO(b"r" * part_len))}, key=True, headers=headers)


M = CHUNK
RANGE_CASES = [
    # (name, content-range, part length, bucket fields, status, error type)
    ("garbage", "bytes=0-10/20", 11, None, 400, "storage_invalid_content_range"),
    ("end before start", f"bytes 10-5/{3 * M}", 6, None, 400, "storage_invalid_content_range"),
    ("not on a chunk boundary", f"bytes 100-{M + 99}/{3 * M}", M, None, 400, "storage_invalid_content_range"),
    ("overlapping short chunk", f"bytes 0-99/{3 * M}", 100, None, 400, "storage_invalid_content_range"),
    ("end past total", f"bytes 0-{M - 1}/{M - 10}", M, None, 400, "storage_invalid_content_range"),
    ("chunk index past the total", f"bytes {3 * M}-{4 * M - 1}/{2 * M}", M, None, 400,
     "storage_invalid_content_range"),
    ("body shorter than range", f"bytes 0-{M - 1}/{3 * M}", 1000, None, 400, "storage_invalid_content_range"),
    ("total over bucket limit", f"bytes 0-{M - 1}/{3 * M}", M, {"maximumFileSize": 2 * M}, 400,
     "storage_invalid_file_size"),
]


@pytest.mark.parametrize("name,crange,part_len,fields,status,etype", RANGE_CASES, ids=[c[0] for c in RANGE_CASES])
def test_bad_content_range(api, name, crange, part_len, fields, status, etype):
    r = _range_case(api, 0, crange, part_len, fields)
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype


def test_total_must_match_the_started_upload(api, blob):
    b = make_bucket(api, maximumFileSize=50_000_000)
    fid = new_id("m")
    assert upload_chunk(api, b["$id"], blob, 0, "big.bin", fid).status_code == 201
    r = upload_chunk(api, b["$id"], blob[: 3 * CHUNK], 1, "big.bin", fid, upload_id=fid)
    assert r.status_code == 400 and r.json()["type"] == "storage_invalid_content_range"


def test_oversized_body_refused_before_buffering(api, bucket):
    big = b"x" * (6 * 1024 * 1024)
    r = upload(api, bucket["$id"], big)
    assert r.status_code == 413 and r.json()["type"] == "general_payload_too_large"

    def body():  # no Content-Length: chunked transfer encoding
        yield b"--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n"
        for _ in range(6):
            yield b"y" * (1024 * 1024)
        yield b"\r\n--XX--\r\n"

    r = api.call("POST", f"/storage/buckets/{bucket['$id']}/files", data=body(), key=True,
                 headers={"Content-Type": "multipart/form-data; boundary=XX"})
    # ASGI: the outer body cap cuts the stream at MAX_REQUEST_BODY; WSGI: the WSGI wrapper reads a
    # chunked body up to the same cap (apps.core.http.serving.limits.wsgi_limits).
    assert r.status_code == 413 and r.json()["type"] == "general_payload_too_large", r.text
    assert api.call("GET", f"/storage/buckets/{bucket['$id']}/files", key=True).json()["total"] == 0


def test_cleanupuploads_removes_abandoned_uploads(api, live_env, blob, sql):
    b = make_bucket(api, maximumFileSize=50_000_000)
    fid = new_id("a")
    assert upload_chunk(api, b["$id"], blob, 0, "big.bin", fid).status_code == 201
    (pk,) = sql("SELECT f.id FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
                "WHERE b.uid = %s AND f.uid = %s", (b["$id"], fid))[0]
    part_dir = os.path.join(live_env["STORAGE_ROOT"], ".uploads", str(pk))
    assert os.path.isdir(part_dir)
    # A token may name an unfinished upload; it goes with it.
    assert api.call("POST", f"/tokens/buckets/{b['$id']}/files/{fid}", json={}, key=True).status_code == 201
    keep = subprocess.run([sys.executable, "manage.py", "cleanupuploads"], env=live_env, capture_output=True,
                          text=True)
    assert keep.returncode == 0 and "removed 0" in keep.stdout, keep.stdout + keep.stderr[-2000:]
    out = subprocess.run([sys.executable, "manage.py", "cleanupuploads", "--expiry", "0"], env=live_env,
                         capture_output=True, text=True)
    assert out.returncode == 0 and "removed" in out.stdout, out.stdout + out.stderr[-2000:]
    assert not os.path.exists(part_dir)
    r = api.call("GET", f"/storage/buckets/{b['$id']}/files/{fid}", key=True)
    assert r.status_code == 404
    assert sql("SELECT count(*) FROM storage_file_token WHERE file_id = %s", (pk,)) == [(0,)]


def test_abandoned_uploads_are_cleaned_up_opportunistically(live_env, project, tmp_path_factory, blob):
    """With STORAGE_UPLOAD_EXPIRY=1 and STORAGE_CLEANUP_INTERVAL=1, starting a new upload
    removes one idle for more than a second (ASGI server of its own)."""
    import time

    from conftest import Api, start_server

    env = {**live_env, "STORAGE_ROOT": str(tmp_path_factory.mktemp("cleanup")), "STORAGE_UPLOAD_EXPIRY": "1",
           "STORAGE_CLEANUP_INTERVAL": "1"}
    server = start_server("asgi", env)
    try:
        api = Api(server, project)
        b = make_bucket(api, maximumFileSize=50_000_000)
        assert upload_chunk(api, b["$id"], blob, 0, "old.bin", "old").status_code == 201
        time.sleep(2.2)
        assert upload_chunk(api, b["$id"], blob, 0, "new.bin", "new").status_code == 201
        assert api.call("GET", f"/storage/buckets/{b['$id']}/files/old", key=True).status_code == 404
        assert api.call("GET", f"/storage/buckets/{b['$id']}/files/new", key=True).status_code == 200
        assert os.listdir(os.path.join(env["STORAGE_ROOT"], ".uploads")) != []
    finally:
        server.stop()


def test_a_part_removed_before_assembly_is_asked_for_again(api, live_env, blob, sql):
    """A part file deleted behind the API: the last chunk gets a 4xx naming the missing chunk
    (not a 500), and re-sending that chunk completes the upload with the right bytes."""
    data = blob[: 2 * CHUNK + 100]
    b = make_bucket(api, maximumFileSize=50_000_000)
    fid = new_id("p")
    assert upload_chunk(api, b["$id"], data, 0, "big.bin", fid).status_code == 201
    (pk,) = sql("SELECT f.id FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
                "WHERE b.uid = %s AND f.uid = %s", (b["$id"], fid))[0]
    os.remove(os.path.join(live_env["STORAGE_ROOT"], ".uploads", str(pk), "000000.part"))
    assert upload_chunk(api, b["$id"], data, 1, "big.bin", fid, upload_id=fid).status_code == 201
    last = upload_chunk(api, b["$id"], data, 2, "big.bin", fid, upload_id=fid)
    assert last.status_code == 404 and last.json()["type"] == "storage_file_not_found", last.text
    assert "Chunk(s) 0 " in last.json()["message"]
    again = upload_chunk(api, b["$id"], data, 0, "big.bin", fid, upload_id=fid)
    assert again.status_code == 201 and again.json()["chunksUploaded"] == 3, again.text
    got = api.call("GET", f"/storage/buckets/{b['$id']}/files/{fid}/download", key=True)
    assert got.status_code == 200 and got.content == data
