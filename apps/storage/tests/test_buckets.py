"""Bucket routes: table-driven cases on the live ASGI server."""

from __future__ import annotations

import json

import pytest

from apps.storage.tests.conftest import make_bucket, new_id

CREATE_CASES = [
    # (name, body overrides, status, error type)
    ("defaults", {}, 201, None),
    ("all fields", {"fileSecurity": True, "enabled": False, "maximumFileSize": 1000,
                    "allowedFileExtensions": ["PNG", ".jpg"], "compression": "gzip", "encryption": False,
                    "antivirus": False, "transformations": False}, 201, None),
    ("unique id", {"bucketId": "unique()"}, 201, None),
    ("bad id", {"bucketId": "_bad"}, 400, "general_argument_invalid"),
    ("missing name", {"name": None}, 400, "general_argument_invalid"),
    ("bad compression", {"compression": "lz4"}, 400, "general_argument_invalid"),
    ("size zero", {"maximumFileSize": 0}, 400, "general_argument_invalid"),
    ("bad permission", {"permissions": ["read(any)"]}, 400, "general_argument_invalid"),
    ("undeclared param ignored", {"color": "red"}, 201, None),
    # booleans follow Appwrite's validator, not pydantic's lax bool (which took "off" as false)
    ("enabled 'off'", {"enabled": "off"}, 400, "general_argument_invalid"),
    ("fileSecurity 'yes'", {"fileSecurity": "yes"}, 400, "general_argument_invalid"),
    ("encryption 2", {"encryption": 2}, 400, "general_argument_invalid"),
    ("antivirus 'on'", {"antivirus": "on"}, 400, "general_argument_invalid"),
    ("transformations 'n'", {"transformations": "n"}, 400, "general_argument_invalid"),
    ("stripMetadata 'true' (strict)", {"stripMetadata": "true"}, 400, "general_argument_invalid"),
    # Appwrite declares the bucket's five switches loose: "true"/"false"/"1"/"0"/1/0 pass in JSON too
    ("loose switches", {"enabled": "false", "fileSecurity": 1, "encryption": "0", "antivirus": 0,
                        "transformations": "true"}, 201, None),
]


@pytest.mark.parametrize("name,overrides,status,etype", CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_bucket_create(api, name, overrides, status, etype):
    body = {"bucketId": new_id("b"), "name": "photos", **overrides}
    body = {k: v for k, v in body.items() if v is not None}
    r = api.call("POST", "/storage/buckets", json=body, key=True)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        if body.get("bucketId", "").startswith("b"):
            gone = api.call("GET", f"/storage/buckets/{body['bucketId']}", key=True)
            assert gone.json()["type"] == "storage_bucket_not_found", "a refused create wrote a bucket"
        return
    b = r.json()
    assert set(b) >= {"$id", "$createdAt", "$updatedAt", "$permissions", "fileSecurity", "name", "enabled",
                      "maximumFileSize", "allowedFileExtensions", "compression", "encryption", "antivirus",
                      "transformations", "totalSize"}
    assert b["maximumFileSize"] == overrides.get("maximumFileSize", 30000000)
    if name == "all fields":
        assert b["allowedFileExtensions"] == ["png", "jpg"] and b["compression"] == "gzip"
        assert b["enabled"] is False and b["fileSecurity"] is True
    if name == "loose switches":
        assert (b["enabled"], b["fileSecurity"], b["encryption"], b["antivirus"], b["transformations"]) == (
            False, True, False, False, True)


def test_bucket_crud_and_errors(api):
    b = make_bucket(api, name="first")
    bid = b["$id"]
    assert api.call("POST", "/storage/buckets", json={"bucketId": bid, "name": "again"}, key=True).json()["type"] \
        == "storage_bucket_already_exists"
    got = api.call("GET", f"/storage/buckets/{bid}", key=True).json()
    assert got["name"] == "first" and got["totalSize"] == 0
    r = api.call("PUT", f"/storage/buckets/{bid}", json={"name": "renamed", "maximumFileSize": 10}, key=True)
    assert r.status_code == 200 and r.json()["name"] == "renamed" and r.json()["maximumFileSize"] == 10
    assert r.json()["$permissions"] == b["$permissions"]  # kept when omitted
    r = api.call("PUT", f"/storage/buckets/{bid}", json={"name": "renamed", "maximumFileSize": 10,
                                                          "permissions": []}, key=True)
    assert r.json()["$permissions"] == []
    listed = api.call("GET", "/storage/buckets", params={"search": "renam"}, key=True).json()
    assert [x["$id"] for x in listed["buckets"]] == [bid] and listed["total"] == 1
    q = '{"method":"equal","attribute":"name","values":["renamed"]}'
    assert api.call("GET", "/storage/buckets", params={"queries[0]": q}, key=True).json()["total"] == 1
    bad = '{"method":"equal","attribute":"color","values":["x"]}'
    assert api.call("GET", "/storage/buckets", params={"queries[0]": bad}, key=True).json()["type"] \
        == "general_query_invalid"
    assert api.call("DELETE", f"/storage/buckets/{bid}", key=True).status_code == 204
    for method in ("GET", "DELETE"):
        r = api.call(method, f"/storage/buckets/{bid}", key=True)
        assert r.status_code == 404 and r.json()["type"] == "storage_bucket_not_found"


@pytest.mark.parametrize("method,path", [("GET", "/storage/buckets"), ("POST", "/storage/buckets"),
                                         ("GET", "/storage/buckets/x"), ("DELETE", "/storage/buckets/x")])
def test_bucket_routes_need_a_key(api, method, path):
    r = api.call(method, path, json={"bucketId": "x", "name": "x"} if method == "POST" else None)
    assert r.status_code == 401 and r.json()["type"] == "general_unauthorized_scope"


def test_bucket_list_pagination(api):
    ids = [make_bucket(api, name=f"page-{i}")["$id"] for i in range(3)]
    first = api.call("GET", "/storage/buckets", params={"queries[0]": '{"method":"limit","values":[2]}',
                                                         "search": "page-"}, key=True).json()
    assert first["total"] == 3 and [b["$id"] for b in first["buckets"]] == ids[:2]
    after = json.dumps({"method": "cursorAfter", "values": [ids[1]]})
    rest = api.call("GET", "/storage/buckets", params={"queries[0]": after, "search": "page-"}, key=True).json()
    assert [b["$id"] for b in rest["buckets"]] == ids[2:]


@pytest.mark.parametrize("value,status", [("false", 200), ("0", 200), ("true", 200), ("1", 200), ("off", 400),
                                          ("yes", 400), ("2", 400), ("False", 400)])
def test_list_total_takes_appwrites_loose_booleans(api, value, status):
    """``total`` comes in the query string (a string): Appwrite's loose rule, nothing more."""
    bucket = make_bucket(api, name="counted")
    for path in ("/storage/buckets", f"/storage/buckets/{bucket['$id']}/files"):
        r = api.call("GET", path, params={"total": value}, key=True)
        assert r.status_code == status, r.text
        if status == 400:
            assert r.json()["type"] == "general_argument_invalid" and "`total`" in r.json()["message"]
        elif path == "/storage/buckets":
            assert (r.json()["total"] > 0) is (value in ("true", "1"))
