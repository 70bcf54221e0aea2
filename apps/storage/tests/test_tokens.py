"""File tokens: the Tokens routes (table-driven bad input) and ``?token=`` on view, download and
preview, for guests, on the three builds; the Python SDK drives every operation."""

from __future__ import annotations

import datetime as dt
import io
import time
from urllib.parse import quote

import jwt
import pytest
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.query import Query
from appwrite.services.tokens import Tokens
from PIL import Image

from apps.storage.tests.conftest import make_bucket, upload


def _future(seconds: int = 3600) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)).isoformat()


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (40, 30), (1, 2, 3)).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def private(api):
    """A bucket nobody may read without a key, with two files."""
    bucket = make_bucket(api, permissions=[])
    a = upload(api, bucket["$id"], _png(), "a.png").json()
    b = upload(api, bucket["$id"], b"second file", "b.txt").json()
    return bucket, a, b


def _count(sql, file_uid):
    return sql("SELECT COUNT(*) FROM storage_file_token t JOIN storage_file f ON f.id = t.file_id "
               "WHERE f.uid = %s", (file_uid,))[0][0]


CASES = [
    # (id, method, path, body, status, type)
    ("create", "POST", "/tokens/buckets/{b}/files/{a}", {}, 201, None),
    ("create with expiry", "POST", "/tokens/buckets/{b}/files/{a}", {"expire": "FUTURE"}, 201, None),
    ("create null expiry", "POST", "/tokens/buckets/{b}/files/{a}", {"expire": None}, 201, None),
    ("create past expiry", "POST", "/tokens/buckets/{b}/files/{a}", {"expire": "2001-01-01T00:00:00Z"}, 400,
     "general_argument_invalid"),
    ("create bad expiry", "POST", "/tokens/buckets/{b}/files/{a}", {"expire": "tomorrow"}, 400,
     "general_argument_invalid"),
    ("create expiry wrong type", "POST", "/tokens/buckets/{b}/files/{a}", {"expire": 5}, 400,
     "general_argument_invalid"),
    ("create undeclared field ignored", "POST", "/tokens/buckets/{b}/files/{a}", {"secret": "x"}, 201,
     None),
    ("create malformed json", "POST", "/tokens/buckets/{b}/files/{a}", b"{nope", 400, "general_bad_request"),
    ("create unknown bucket", "POST", "/tokens/buckets/nope/files/{a}", {}, 404, "storage_bucket_not_found"),
    ("create unknown file", "POST", "/tokens/buckets/{b}/files/nope", {}, 404, "storage_file_not_found"),
    ("create bad id", "POST", "/tokens/buckets/{b}/files/" + "x" * 40, {}, 400, "general_argument_invalid"),
    ("list", "GET", "/tokens/buckets/{b}/files/{a}", None, 200, None),
    ("list query", "GET", "/tokens/buckets/{b}/files/{a}?queries[]=" + quote(Query.limit(1)), None, 200, None),
    ("list bad query", "GET", "/tokens/buckets/{b}/files/{a}?queries[]=" + quote(Query.equal("secret", ["x"])), None, 400,
     "general_query_invalid"),
    ("list unknown file", "GET", "/tokens/buckets/{b}/files/nope", None, 404, "storage_file_not_found"),
    ("get unknown", "GET", "/tokens/nope", None, 404, "token_not_found"),
    ("update unknown", "PATCH", "/tokens/nope", {"expire": None}, 404, "token_not_found"),
    ("delete unknown", "DELETE", "/tokens/nope", None, 404, "token_not_found"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_routes(api, sql, private, case):
    _, method, path, body, status, etype = case
    bucket, a, _ = private
    path = path.replace("{b}", bucket["$id"]).replace("{a}", a["$id"])
    if isinstance(body, dict):
        body = {k: _future() if v == "FUTURE" else v for k, v in body.items()}
    before = _count(sql, a["$id"])
    if isinstance(body, bytes):
        r = api.call(method, path, data=body, headers={"Content-Type": "application/json"}, key=True)
    else:
        r = api.call(method, path, json=body, key=True)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        assert _count(sql, a["$id"]) == before, "a refused request stored a token"
    guest = api.call(method, path, json=body if isinstance(body, dict) else None)
    assert guest.status_code == 401 and guest.json()["type"] == "general_unauthorized_scope"


def _url(api, bucket, file, what="view"):
    return f"/storage/buckets/{bucket['$id']}/files/{file['$id']}/{what}"


def test_token_grants_its_file_to_guests(api, private):
    bucket, a, b = private
    token = api.call("POST", f"/tokens/buckets/{bucket['$id']}/files/{a['$id']}", json={}, key=True).json()
    assert token["resourceId"] == f"{bucket['$id']}:{a['$id']}" and token["resourceType"] == "files"
    assert token["expire"] == "" and token["accessedAt"] == ""
    secret = token["secret"]
    assert jwt.get_unverified_header(secret)["alg"] == "HS256"
    assert jwt.decode(secret, options={"verify_signature": False})["tokenId"] == token["$id"]
    for what in ("view", "download", "preview"):
        assert api.call("GET", _url(api, bucket, a, what)).status_code == 401  # no token
        r = api.call("GET", _url(api, bucket, a, what), params={"token": secret})
        assert r.status_code == 200, (what, r.text)
    assert api.call("GET", _url(api, bucket, a), params={"token": secret}).content == _png()
    # Another file of the same bucket: 401 even with the token.
    r = api.call("GET", _url(api, bucket, b), params={"token": secret})
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    # The metadata route is not opened by a token.
    assert api.call("GET", f"/storage/buckets/{bucket['$id']}/files/{a['$id']}", params={"token": secret}
                    ).status_code in (400, 401)
    got = api.call("GET", f"/tokens/{token['$id']}", key=True).json()
    assert got["secret"] == secret and got["accessedAt"] != ""


def test_a_token_never_opens_another_bucket(api, private):
    bucket, a, _ = private
    other = make_bucket(api, permissions=['read("any")'])
    public = upload(api, other["$id"], b"public", "p.txt").json()
    secret = api.call("POST", f"/tokens/buckets/{bucket['$id']}/files/{a['$id']}", json={}, key=True).json()["secret"]
    # Appwrite: a live token names one file; anywhere else it is refused, even on a public file.
    r = api.call("GET", _url(api, other, public), params={"token": secret})
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    assert api.call("GET", _url(api, other, public)).status_code == 200


@pytest.mark.parametrize("spoil", ["forged", "garbage", "deleted", "expired"])
def test_bad_tokens_are_ignored(api, private, spoil):
    bucket, a, _ = private
    other = make_bucket(api, permissions=['read("any")'])
    public = upload(api, other["$id"], b"public", "p.txt").json()
    token = api.call("POST", f"/tokens/buckets/{bucket['$id']}/files/{a['$id']}",
                     json={"expire": _future(2)} if spoil == "expired" else {}, key=True).json()
    secret = token["secret"]
    if spoil == "forged":
        claims = jwt.decode(secret, options={"verify_signature": False})
        secret = jwt.encode(claims, "not-the-server-key-but-32-bytes-long!", algorithm="HS256")
    elif spoil == "garbage":
        secret = "not.a.jwt"
    elif spoil == "deleted":
        assert api.call("DELETE", f"/tokens/{token['$id']}", key=True).status_code == 204
    else:
        time.sleep(3)
    r = api.call("GET", _url(api, bucket, a), params={"token": secret})
    assert r.status_code == 401 and r.json()["type"] == "user_unauthorized"
    # Ignored means normal permissions: the public file still opens.
    assert api.call("GET", _url(api, other, public), params={"token": secret}).status_code == 200


@pytest.mark.parametrize("readable", [False, True], ids=["private bucket", "bucket guests may read"])
def test_deleting_a_file_deletes_its_tokens(api, sql, readable):
    bucket = make_bucket(api, permissions=['read("any")'] if readable else [])
    a = upload(api, bucket["$id"], _png(), "a.png").json()
    b = upload(api, bucket["$id"], b"second file", "b.txt").json()
    made = [api.call("POST", f"/tokens/buckets/{bucket['$id']}/files/{f['$id']}", json=body, key=True).json()
            for f, body in ((a, {}), (a, {"expire": _future()}), (b, {}))]
    assert api.call("GET", _url(api, bucket, a), params={"token": made[0]["secret"]}).status_code == 200
    r = api.call("DELETE", f"/storage/buckets/{bucket['$id']}/files/{a['$id']}", key=True)
    assert r.status_code == 204, r.text
    assert _count(sql, a["$id"]) == 0
    # A dead token grants nothing, and the caller's own permissions apply (as for a deleted
    # token): 401 where the caller may not read the bucket, else the file is not found.
    status, etype = (404, "storage_file_not_found") if readable else (401, "user_unauthorized")
    for token in made[:2]:
        for what in ("view", "download", "preview"):
            r = api.call("GET", _url(api, bucket, a, what), params={"token": token["secret"]})
            assert r.status_code == status and r.json()["type"] == etype, (what, r.text)
        r = api.call("GET", f"/tokens/{token['$id']}", key=True)
        assert r.status_code == 404 and r.json()["type"] == "token_not_found"
    r = api.call("GET", _url(api, bucket, a), key=True)
    assert r.status_code == 404 and r.json()["type"] == "storage_file_not_found"
    # The other file's token is untouched.
    assert api.call("GET", _url(api, bucket, b), params={"token": made[2]["secret"]}).content == b"second file"
    assert api.call("GET", f"/tokens/{made[2]['$id']}", key=True).status_code == 200


def test_update_expiry_takes_effect(api, private):
    bucket, a, _ = private
    token = api.call("POST", f"/tokens/buckets/{bucket['$id']}/files/{a['$id']}", json={}, key=True).json()
    new = _future(2)
    upd = api.call("PATCH", f"/tokens/{token['$id']}", json={"expire": new}, key=True).json()
    assert upd["expire"].startswith(new[:19]) and upd["secret"] != token["secret"]
    assert api.call("GET", _url(api, bucket, a), params={"token": upd["secret"]}).status_code == 200
    time.sleep(3)
    assert api.call("GET", _url(api, bucket, a), params={"token": upd["secret"]}).status_code == 401
    # The old secret names the same token, whose row now says it has expired.
    assert api.call("GET", _url(api, bucket, a), params={"token": token["secret"]}).status_code == 401


def test_python_sdk(server, project, api, private):
    bucket, a, _ = private
    tokens = Tokens(Client().set_endpoint(server.endpoint).set_project(project.id).set_key(project.key))
    created = tokens.create_file_token(bucket["$id"], a["$id"], expire=_future())
    assert created.resourceid == f"{bucket['$id']}:{a['$id']}" and created.secret
    tokens.create_file_token(bucket["$id"], a["$id"])
    listed = tokens.list(bucket["$id"], a["$id"])
    assert listed.total == 2 and {t.id for t in listed.tokens} >= {created.id}
    assert tokens.list(bucket["$id"], a["$id"], queries=[Query.is_null("expire")]).total == 1
    assert tokens.get(created.id).secret == created.secret
    assert tokens.update(created.id, expire=None).expire == ""
    tokens.delete(created.id)
    with pytest.raises(AppwriteException) as err:
        tokens.get(created.id)
    assert err.value.code == 404 and err.value.type == "token_not_found"
