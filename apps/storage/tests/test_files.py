"""File routes: create, list, get, update, delete with bad input and
permissions, as table-driven cases on the live ASGI server."""

from __future__ import annotations

import hashlib
import io

import pytest
import requests

from apps.storage.tests.conftest import make_bucket, new_id, upload
from conftest import EVERY_BUILD

BAD_UPLOADS = [
    # (name, bucket fields, upload kwargs, status, error type)
    ("empty file", {}, {"data": b""}, 400, "storage_file_empty"),
    ("over bucket limit", {"maximumFileSize": 10}, {"data": b"x" * 11}, 400, "storage_invalid_file_size"),
    ("extension not allowed", {"allowedFileExtensions": ["png"]}, {"name": "a.txt"}, 400,
     "storage_file_type_unsupported"),
    ("no extension with allow-list", {"allowedFileExtensions": ["png"]}, {"name": "README"}, 400,
     "storage_file_type_unsupported"),
    ("bad file id", {}, {"file_id": "-bad"}, 400, "general_argument_invalid"),
    ("bad permission", {}, {"permissions": ["read(any)"]}, 400, "general_argument_invalid"),
    ("create is not an item action", {}, {"permissions": ['create("any")']}, 400, "general_argument_invalid"),
    ("bad x-appwrite-id", {}, {"headers": {"x-appwrite-id": "../etc"}}, 400, "storage_invalid_appwrite_id"),
    ("guest without create permission", {"permissions": ['read("any")']}, {"key": False}, 401, "user_unauthorized"),
    ("guest on disabled bucket", {"enabled": False}, {"key": False}, 404, "storage_bucket_not_found"),
]


@pytest.mark.parametrize("name,bucket_fields,kwargs,status,etype", BAD_UPLOADS, ids=[c[0] for c in BAD_UPLOADS])
def test_upload_refused(api, name, bucket_fields, kwargs, status, etype):
    b = make_bucket(api, **bucket_fields)
    kwargs = {"data": b"hello", **kwargs}
    r = upload(api, b["$id"], kwargs.pop("data"), **kwargs)
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert api.call("GET", f"/storage/buckets/{b['$id']}/files", key=True).json()["total"] == 0


RAW_BODIES = [
    # (name, content type, body, status, error type)
    ("missing file part", "multipart/form-data; boundary=XX",
     b'--XX\r\nContent-Disposition: form-data; name="fileId"\r\n\r\nabc\r\n--XX--\r\n', 400,
     "general_argument_invalid"),
    ("truncated multipart", "multipart/form-data; boundary=XX",
     b'--XX\r\nContent-Disposition: form-data; name="fileId"\r\n\r\nabc\r\n--XX\r\n'
     b'Content-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhel', 400, None),
    ("no boundary", "multipart/form-data", b"--XX\r\n\r\n", 400, "general_bad_request"),
    ("json instead of multipart", "application/json", b'{"fileId": "abc", "file": "hello"}', 400,
     "general_argument_invalid"),
]


@pytest.mark.parametrize("name,ctype,body,status,etype", RAW_BODIES, ids=[c[0] for c in RAW_BODIES])
def test_malformed_upload_bodies(api, bucket, name, ctype, body, status, etype):
    r = api.call("POST", f"/storage/buckets/{bucket['$id']}/files", data=body, headers={"Content-Type": ctype},
                 key=True)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
    assert api.call("GET", f"/storage/buckets/{bucket['$id']}/files", key=True).json()["total"] == 0


@pytest.mark.parametrize("raw,expected", [
    ("../../etc/passwd", "passwd"),
    ("..\\..\\windows\\a.txt", "a.txt"),
    ("dir/sub/photo.png", "photo.png"),
    ("na\x00me.txt", "name.txt"),
    ("ünïcødé.txt", "ünïcødé.txt"),
])
def test_file_names_are_sanitised(api, bucket, raw, expected):
    r = upload(api, bucket["$id"], b"data", name=raw)
    assert r.status_code == 201, r.text
    f = r.json()
    assert f["name"] == expected
    assert "/" not in f["name"] and "\x00" not in f["name"]


@EVERY_BUILD  # also on the naive build: one of its smoke tests (conftest.EVERY_BUILD)
def test_single_upload_roundtrip(api, bucket):
    data = b"hello storage\n" * 100
    r = upload(api, bucket["$id"], data, name="hello.txt", file_id="hello1")
    assert r.status_code == 201, r.text
    f = r.json()
    assert f["$id"] == "hello1" and f["bucketId"] == bucket["$id"]
    assert f["sizeOriginal"] == len(data) and f["chunksTotal"] == 1 and f["chunksUploaded"] == 1
    assert f["signature"] == hashlib.md5(data).hexdigest() and f["mimeType"] == "text/plain"
    assert f["$permissions"] == []
    dup = upload(api, bucket["$id"], data, file_id="hello1")
    assert dup.status_code == 409 and dup.json()["type"] == "storage_file_already_exists"
    d = api.call("GET", f"/storage/buckets/{bucket['$id']}/files/hello1/download", key=True)
    assert d.status_code == 200 and d.content == data
    assert d.headers["Content-Disposition"].startswith("attachment;")
    assert api.call("GET", f"/storage/buckets/{bucket['$id']}", key=True).json()["totalSize"] == len(data)


def test_unknown_bucket_and_file(api, bucket):
    base = f"/storage/buckets/{bucket['$id']}/files"
    for path, etype in [("/storage/buckets/nope/files", "storage_bucket_not_found"),
                        ("/storage/buckets/nope/files/x", "storage_bucket_not_found"),
                        (base + "/nope", "storage_file_not_found"),
                        (base + "/nope/download", "storage_file_not_found"),
                        (base + "/nope/view", "storage_file_not_found"),
                        (base + "/nope/preview", "storage_file_not_found")]:
        r = api.call("GET", path, key=True)
        assert r.status_code == 404 and r.json()["type"] == etype, path
    assert api.call("DELETE", base + "/nope", key=True).json()["type"] == "storage_file_not_found"


def test_missing_auth_and_project(api, bucket):
    base = api.server.endpoint + f"/storage/buckets/{bucket['$id']}/files"
    r = requests.post(base, data={"fileId": "unique()"}, files={"file": ("a.txt", io.BytesIO(b"x"))})
    assert r.status_code == 400 and r.json()["type"] == "project_id_missing"
    r = api.call("POST", f"/storage/buckets/{bucket['$id']}/files", data={"fileId": "unique()"},
                 files={"file": ("a.txt", io.BytesIO(b"x"))}, headers={"X-Appwrite-Key": "wrong"})
    assert r.status_code == 401


def test_list_queries_update_delete(api, bucket):
    bid = bucket["$id"]
    for i, (name, size) in enumerate([("alpha.txt", 10), ("beta.png", 20), ("gamma.txt", 30)]):
        assert upload(api, bid, b"z" * size, name=name, file_id=f"f{i}").status_code == 201
    base = f"/storage/buckets/{bid}/files"

    def ids(**params):
        body = api.call("GET", base, params=params, key=True).json()
        assert "files" in body, body
        return [f["$id"] for f in body["files"]]

    assert ids() == ["f0", "f1", "f2"]
    assert ids(search="GAM") == ["f2"]
    assert ids(**{"queries[0]": '{"method":"greaterThan","attribute":"sizeOriginal","values":[15]}'}) == ["f1", "f2"]
    assert ids(**{"queries[0]": '{"method":"orderDesc","attribute":"name"}'}) == ["f2", "f1", "f0"]
    assert ids(**{"queries[0]": '{"method":"endsWith","attribute":"name","values":[".txt"]}',
                  "queries[1]": '{"method":"limit","values":[1]}',
                  "queries[2]": '{"method":"offset","values":[1]}'}) == ["f2"]
    assert ids(**{"queries[0]": '{"method":"equal","attribute":"$id","values":["f0","f2"]}'}) == ["f0", "f2"]
    bad = api.call("GET", base, params={"queries[0]": '{"method":"equal","attribute":"key","values":["x"]}'}, key=True)
    assert bad.status_code == 400 and bad.json()["type"] == "general_query_invalid"

    r = api.call("PUT", f"{base}/f0", json={"name": "renamed.txt", "permissions": ['read("any")']}, key=True)
    assert r.status_code == 200 and r.json()["name"] == "renamed.txt"
    assert r.json()["$permissions"] == ['read("any")']
    assert api.call("DELETE", f"{base}/f0", key=True).status_code == 204
    assert ids() == ["f1", "f2"]
    assert api.call("GET", f"{base}/f0/download", key=True).status_code == 404


def test_permissions_with_file_security(api):
    """Users get read/update/delete on their own files; others see nothing (fileSecurity)."""
    b = make_bucket(api, permissions=['create("users")'], fileSecurity=True)
    base = f"/storage/buckets/{b['$id']}/files"
    alice, alice_token = api.signup()
    _, bob_token = api.signup()
    api.http.cookies.clear()  # the shared requests.Session keeps the last login's cookie; use headers
    r = upload(api, b["$id"], b"secret", key=False, session=alice_token, file_id="own")
    assert r.status_code == 201, r.text
    uid = alice["$id"]
    assert sorted(r.json()["$permissions"]) == sorted(
        [f'read("user:{uid}")', f'update("user:{uid}")', f'delete("user:{uid}")'])
    assert api.call("GET", f"{base}/own/download", session=alice_token).content == b"secret"
    assert api.call("GET", base, session=alice_token).json()["total"] == 1
    assert api.call("GET", base, session=bob_token).json()["total"] == 0
    r = api.call("GET", f"{base}/own", session=bob_token)
    assert r.status_code == 404 and r.json()["type"] == "storage_file_not_found"
    assert api.call("DELETE", f"{base}/own", session=bob_token).status_code == 404
    # Users may only grant roles they hold.
    r = upload(api, b["$id"], b"x", key=False, session=alice_token, permissions=['read("user:someone-else")'])
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    r = api.call("PUT", f"{base}/own", json={"permissions": ['read("any")']}, session=alice_token)
    assert r.status_code == 200 and r.json()["$permissions"] == ['read("any")']
    # Now readable by bob but not deletable.
    assert api.call("GET", f"{base}/own", session=bob_token).status_code == 200
    r = api.call("DELETE", f"{base}/own", session=bob_token)
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    # Guests: no create permission on the bucket.
    r = upload(api, b["$id"], b"x", key=False)
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"


def test_bucket_read_denied_without_file_security(api):
    b = make_bucket(api, permissions=['create("any")'])
    assert upload(api, b["$id"], b"x", key=False, file_id="g1").status_code == 201
    base = f"/storage/buckets/{b['$id']}/files"
    for path in (base, base + "/g1", base + "/g1/download"):
        r = api.call("GET", path)
        assert r.status_code == 401 and r.json()["type"] == "user_unauthorized", path


def test_new_id_helper_is_unique():
    assert new_id() != new_id()
