"""The S3 backend (django-storages + boto3) against a real S3-compatible server process:
moto's server mode, started here on a free port, with ASGI and WSGI servers pointed at it."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import time

import boto3
import pytest
import requests
from appwrite.client import Client
from appwrite.id import ID
from appwrite.input_file import InputFile
from appwrite.services.storage import Storage
from PIL import Image

from apps.storage.tests.conftest import make_bucket, upload
from conftest import Api, free_port, start_server

S3_BUCKET = "appwrite-files"


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    """``moto_server`` as a subprocess; yields its endpoint URL."""
    exe = shutil.which("moto_server", path=os.path.dirname(sys.executable)) or shutil.which("moto_server")
    assert exe, "moto[server] is in requirements-dev.txt"
    port = free_port()
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=1)
            break
        except requests.RequestException:
            time.sleep(0.2)
    else:
        proc.kill()
        raise RuntimeError(log.read_text())
    s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="test",
                      aws_secret_access_key="test")
    s3.create_bucket(Bucket=S3_BUCKET)
    yield url, s3
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module", params=["asgi", "wsgi"])
def s3_server(request, moto, live_env, tmp_path_factory):
    url, _ = moto
    env = {**live_env, "STORAGE_BACKEND": "s3", "STORAGE_S3_BUCKET": S3_BUCKET, "STORAGE_S3_ENDPOINT_URL": url,
           "STORAGE_S3_REGION": "us-east-1", "STORAGE_S3_ACCESS_KEY_ID": "test",
           "STORAGE_S3_SECRET_ACCESS_KEY": "test", "STORAGE_S3_PREFIX": "files",
           "STORAGE_ROOT": str(tmp_path_factory.mktemp("s3-local"))}
    server = start_server(request.param, env)
    yield server
    server.stop()


@pytest.fixture
def s3_api(s3_server, project):
    return Api(s3_server, project)


def _keys(s3) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=S3_BUCKET).get("Contents", [])]


def test_s3_roundtrip(s3_api, moto, project, tmp_path):
    _, s3 = moto
    b = make_bucket(s3_api, maximumFileSize=50_000_000)
    data = os.urandom(200_000)
    r = upload(s3_api, b["$id"], data, name="../secret name.bin", file_id="s3single")
    assert r.status_code == 201, r.text
    keys = [k for k in _keys(s3) if k.startswith(f"files/{project.id}/{b['$id']}/")]
    assert len(keys) == 1 and "secret" not in keys[0]
    base = f"/storage/buckets/{b['$id']}/files/s3single"
    assert s3_api.call("GET", f"{base}/download", key=True).content == data
    part = s3_api.call("GET", f"{base}/view", headers={"Range": "bytes=1000-1999"}, key=True)
    assert part.status_code == 206 and part.content == data[1000:2000]
    tail = s3_api.call("GET", f"{base}/download", headers={"Range": "bytes=-5"}, key=True)
    assert tail.content == data[-5:]

    # A chunked upload through the SDK lands as one object.
    big = os.urandom(12 * 1024 * 1024)
    path = tmp_path / "big.bin"
    path.write_bytes(big)
    client = Client().set_endpoint(s3_api.server.endpoint).set_project(project.id).set_key(project.key)
    storage = Storage(client)
    f = storage.create_file(b["$id"], ID.unique(), InputFile.from_path(str(path)))
    assert f.chunksuploaded == 3 and f.signature == hashlib.md5(big).hexdigest()
    assert hashlib.sha256(storage.get_file_download(b["$id"], f.id)).digest() == hashlib.sha256(big).digest()

    buf = io.BytesIO()
    Image.new("RGB", (30, 20), (1, 2, 3)).save(buf, format="PNG")
    img = storage.create_file(b["$id"], ID.unique(), InputFile.from_bytes(buf.getvalue(), "p.png"))
    out = Image.open(io.BytesIO(storage.get_file_preview(b["$id"], img.id, width=15)))
    assert out.size == (15, 10)

    before = len(_keys(s3))
    assert s3_api.call("DELETE", base, key=True).status_code == 204
    assert len(_keys(s3)) == before - 1
