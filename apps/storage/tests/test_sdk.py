"""Conformance with the unmodified Python SDK (appwrite==27.0.0), on ASGI and WSGI."""

from __future__ import annotations

import hashlib
import io
import os

import pytest
import requests
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.input_file import InputFile
from appwrite.permission import Permission
from appwrite.query import Query
from appwrite.role import Role
from appwrite.services.storage import Storage
from PIL import Image

from apps.storage.tests.conftest import CHUNK

BIG = 23 * 1024 * 1024  # 5 chunks


@pytest.fixture
def storage(server, project) -> Storage:
    client = Client().set_endpoint(server.endpoint).set_project(project.id).set_key(project.key)
    return Storage(client)


@pytest.fixture
def sdk_bucket(storage):
    b = storage.create_bucket(ID.unique(), "sdk", permissions=[Permission.read(Role.any())],
                              maximum_file_size=50_000_000)
    assert b.name == "sdk" and b.maximumfilesize == 50_000_000 and b.totalsize == 0
    return b


def _png(fmt: str) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (80, 60), (10, 120, 200)).save(buf, format=fmt)
    return buf.getvalue()


def test_single_upload_download_view_update_delete(storage, sdk_bucket):
    data = b"hello from the sdk\n" * 50
    f = storage.create_file(sdk_bucket.id, ID.unique(), InputFile.from_bytes(data, "hello.txt"),
                            permissions=[Permission.read(Role.any())])
    assert f.name == "hello.txt" and f.sizeoriginal == len(data) and f.chunksuploaded == f.chunkstotal == 1
    assert f.signature == hashlib.md5(data).hexdigest() and f.mimetype == "text/plain"
    assert storage.get_file_download(sdk_bucket.id, f.id) == data
    assert storage.get_file_view(sdk_bucket.id, f.id) == data
    got = storage.get_file(sdk_bucket.id, f.id)
    assert got.id == f.id and got.permissions == ['read("any")']
    upd = storage.update_file(sdk_bucket.id, f.id, name="renamed.txt")
    assert upd.name == "renamed.txt"
    listed = storage.list_files(sdk_bucket.id, queries=[Query.equal("name", ["renamed.txt"])])
    assert listed.total == 1 and listed.files[0].id == f.id
    assert storage.list_files(sdk_bucket.id, search="renamed").total == 1
    assert storage.list_files(sdk_bucket.id, queries=[Query.limit(1), Query.order_desc("$createdAt")]).total == 1
    storage.delete_file(sdk_bucket.id, f.id)
    with pytest.raises(AppwriteException) as err:
        storage.get_file(sdk_bucket.id, f.id)
    assert err.value.code == 404 and err.value.type == "storage_file_not_found"


def test_chunked_upload_concurrent(storage, sdk_bucket, tmp_path):
    data = os.urandom(BIG)
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    progress = []
    f = storage.create_file(sdk_bucket.id, ID.unique(), InputFile.from_path(str(path)),
                            on_progress=progress.append)
    assert f.chunkstotal == 5 and f.chunksuploaded == 5 and f.sizeoriginal == BIG
    assert f.signature == hashlib.md5(data).hexdigest()
    assert len(progress) == 5
    down = storage.get_file_download(sdk_bucket.id, f.id)
    assert hashlib.sha256(down).hexdigest() == hashlib.sha256(data).hexdigest()
    assert storage.get_bucket(sdk_bucket.id).totalsize == BIG


def test_interrupted_upload_resumed_by_the_sdk(storage, sdk_bucket, server, project, tmp_path):
    data = os.urandom(BIG)
    path = tmp_path / "resume.bin"
    path.write_bytes(data)
    file_id = ID.unique()
    # Two chunks by hand, exactly as the SDK sends them, then the "connection drops".
    for index in (0, 1):
        start, end = index * CHUNK, (index + 1) * CHUNK
        r = requests.post(
            f"{server.endpoint}/storage/buckets/{sdk_bucket.id}/files",
            headers={"X-Appwrite-Project": project.id, "X-Appwrite-Key": project.key,
                     "content-range": f"bytes {start}-{end - 1}/{BIG}", "x-appwrite-id": file_id},
            data={"fileId": file_id}, files={"file": ("resume.bin", data[start:end])}, timeout=30,
        )
        assert r.status_code == 201 and r.json()["chunksUploaded"] == index + 1
    assert storage.get_file(sdk_bucket.id, file_id).chunksuploaded == 2
    progress = []
    f = storage.create_file(sdk_bucket.id, file_id, InputFile.from_path(str(path)), on_progress=progress.append)
    assert [p["chunksUploaded"] for p in progress][0] == 3  # resumed after the two stored chunks
    assert f.chunksuploaded == 5 and f.signature == hashlib.md5(data).hexdigest()
    assert hashlib.sha256(storage.get_file_download(sdk_bucket.id, file_id)).digest() == hashlib.sha256(data).digest()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_preview(storage, sdk_bucket, fmt):
    f = storage.create_file(sdk_bucket.id, ID.unique(), InputFile.from_bytes(_png(fmt), f"pic.{fmt.lower()}"))
    assert f.mimetype == Image.MIME[fmt]
    out = storage.get_file_preview(sdk_bucket.id, f.id, width=40, output="webp", quality=80)
    img = Image.open(io.BytesIO(out))
    assert img.format == "WEBP" and img.size == (40, 30)
    same = storage.get_file_preview(sdk_bucket.id, f.id, height=30)
    assert Image.open(io.BytesIO(same)).format == fmt


def test_bucket_crud(storage):
    b = storage.create_bucket("sdk-crud-" + ID.unique()[:8], "crud", file_security=True, enabled=True,
                              allowed_file_extensions=["png"], compression="gzip", encryption=False,
                              antivirus=False, transformations=True)
    assert b.filesecurity is True and b.compression == "gzip" and b.allowedfileextensions == ["png"]
    assert storage.update_bucket(b.id, "renamed", enabled=False).enabled is False
    assert b.id in [x.id for x in storage.list_buckets(search="renamed").buckets]
    storage.delete_bucket(b.id)
    with pytest.raises(AppwriteException) as err:
        storage.get_bucket(b.id)
    assert err.value.type == "storage_bucket_not_found"
    with pytest.raises(AppwriteException) as err:
        storage.create_file("missing-bucket", ID.unique(), InputFile.from_bytes(b"x", "a.txt"))
    assert err.value.code == 404
