"""Storage test helpers: buckets and uploads through the live servers' HTTP API."""

from __future__ import annotations

import hashlib
import io
import itertools

import pytest

CHUNK = 5 * 1024 * 1024
_ids = itertools.count()


def new_id(prefix: str = "x") -> str:
    return f"{prefix}{next(_ids)}-{hashlib.md5(str(id(_ids)).encode()).hexdigest()[:6]}"


def make_bucket(api, **fields) -> dict:
    """Create a bucket with an API key; ``fields`` override the defaults."""
    body = {"bucketId": new_id("b"), "name": "test bucket", "permissions": ['read("any")', 'create("any")',
            'update("any")', 'delete("any")'], **fields}
    r = api.call("POST", "/storage/buckets", json=body, key=True)
    assert r.status_code == 201, r.text
    return r.json()


def upload(api, bucket_id: str, data: bytes, name: str = "a.txt", *, file_id: str = "unique()",
           key: bool = True, session: str | None = None, permissions: list[str] | None = None,
           headers: dict | None = None):
    """POST one multipart upload (Python SDK field layout: ``permissions[N]``)."""
    form = {"fileId": file_id}
    for i, p in enumerate(permissions or []):
        form[f"permissions[{i}]"] = p
    return api.call("POST", f"/storage/buckets/{bucket_id}/files", data=form,
                    files={"file": (name, io.BytesIO(data))}, key=key, session=session, headers=headers)


def upload_chunk(api, bucket_id: str, data: bytes, index: int, name: str, file_id: str, *,
                 upload_id: str | None = None, key: bool = True, content_range: str | None = None):
    """POST chunk ``index`` of ``data`` with the SDKs' ``Content-Range``."""
    start = index * CHUNK
    end = min(start + CHUNK, len(data))
    headers = {"Content-Range": content_range or f"bytes {start}-{end - 1}/{len(data)}"}
    if upload_id:
        headers["x-appwrite-id"] = upload_id
    return api.call("POST", f"/storage/buckets/{bucket_id}/files", data={"fileId": file_id},
                    files={"file": (name, io.BytesIO(data[start:end]))}, key=key, headers=headers)


@pytest.fixture
def bucket(api) -> dict:
    return make_bucket(api)


@pytest.fixture
def api(server, project):
    """The API client on the ASGI and on the WSGI build (every storage test runs on both)."""
    from conftest import Api

    return Api(server, project)
