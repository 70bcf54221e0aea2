"""Every body the server cannot take, multipart or JSON, malformed or too large, is refused with
Appwrite's JSON error on every build (ASGI lean, WSGI, ASGI through Django's handler), and
nothing is stored."""

from __future__ import annotations

import pytest

from apps.core.tests.rawhttp import exchange

B = "XyZ123"
MIB = 1024 * 1024


def _part(name: str, value: str) -> str:
    return f'--{B}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'


def _file_part(data: bytes = b"hello", name: str = "a.txt") -> bytes:
    head = f'--{B}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n' \
           "Content-Type: text/plain\r\n\r\n"
    return head.encode() + data + b"\r\n"


GOOD = _part("fileId", "unique()").encode() + _file_part() + f"--{B}--\r\n".encode()
CTYPE = f"multipart/form-data; boundary={B}"

CASES = [
    # (name, content type, body, status, type). Django's multipart parser (both adapters use it)
    # is lenient: a truncated or foreign body yields the parts it could read, so what is missing
    # is reported as a missing parameter (400 general_argument_invalid: Param "file" is not
    # optional), and nothing is stored.
    ("truncated in a part", CTYPE, GOOD[:-40], 400, "general_argument_invalid"),
    ("truncated in a part header", CTYPE, _part("fileId", "unique()").encode() + f"--{B}\r\nContent-Disp".encode(),
     400, "general_argument_invalid"),
    ("no closing boundary", CTYPE, GOOD[: -len(f"--{B}--\r\n")], 400, "general_argument_invalid"),
    ("boundary not in the body", "multipart/form-data; boundary=other", GOOD, 400, "general_argument_invalid"),
    ("missing boundary", "multipart/form-data", GOOD, 400, "general_bad_request"),
    ("empty boundary", "multipart/form-data; boundary=", GOOD, 400, "general_bad_request"),
    ("boundary over 70 characters", "multipart/form-data; boundary=" + "b" * 80, GOOD, 400, "general_argument_invalid"),
    ("garbage", CTYPE, b"\x00\xff" * 500, 400, "general_argument_invalid"),
    ("empty body", CTYPE, b"", 400, "general_argument_invalid"),
    ("1001 fields", CTYPE, "".join(_part(f"f{i}", "1") for i in range(1001)).encode() + GOOD,
     400, "general_argument_invalid"),
    ("101 files", CTYPE, b"".join(_file_part(name=f"{i}.txt") for i in range(101)) + GOOD,
     400, "general_argument_invalid"),
    ("4.5 MiB of form fields", CTYPE, _part("junk", "x" * (9 * MIB // 2)).encode() + GOOD, 413,
     "general_payload_too_large"),
    ("body over MAX_REQUEST_BODY", CTYPE, _file_part(b"x" * (6 * MIB)) + f"--{B}--\r\n".encode(), 413,
     "general_payload_too_large"),
    ("JSON over MAX_JSON_BODY", "application/json", b'{"fileId": "' + b"x" * (4 * MIB + 100) + b'"}', 413,
     "general_payload_too_large"),
    ("JSON that is not JSON", "application/json", b'{"fileId": ', 400, "general_bad_request"),
]


def _request(path: str, project, ctype: str, body: bytes, chunked: bool = False) -> list[bytes]:
    head = (f"POST /v1{path} HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {project.id}\r\n"
            f"X-Appwrite-Key: {project.key}\r\nContent-Type: {ctype}\r\nConnection: close\r\n")
    if not chunked:
        return [f"{head}Content-Length: {len(body)}\r\n\r\n".encode(), body]
    pieces = [f"{head}Transfer-Encoding: chunked\r\n\r\n".encode()]
    for i in range(0, len(body), MIB):
        piece = body[i:i + MIB]
        pieces.append(b"%x\r\n%s\r\n" % (len(piece), piece))
    return [*pieces, b"0\r\n\r\n"]


@pytest.mark.parametrize("name,ctype,body,status,etype", CASES, ids=[c[0] for c in CASES])
def test_bad_bodies_are_json_errors(api, bucket, name, ctype, body, status, etype):
    path = f"/storage/buckets/{bucket['$id']}/files"
    answer = exchange(api.server.port, _request(path, api.project, ctype, body))
    assert answer.status == status, (answer.status, answer.body[:300])
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["type"] == etype and answer.json()["code"] == status
    assert api.call("GET", path, key=True).json()["total"] == 0


@pytest.mark.parametrize("size,status", [(1024, 201), (6 * MIB, 413)])
def test_chunked_bodies_count_like_others(api, bucket, size, status):
    """A body without Content-Length (chunked) is read and capped alike on every build."""
    path = f"/storage/buckets/{bucket['$id']}/files"
    body = _part("fileId", "unique()").encode() + _file_part(b"y" * size) + f"--{B}--\r\n".encode()
    answer = exchange(api.server.port, _request(path, api.project, CTYPE, body, chunked=True))
    assert answer.status == status, (answer.status, answer.body[:300])
    if status == 201:
        assert answer.json()["sizeOriginal"] == size
    else:
        assert answer.json()["type"] == "general_payload_too_large"
