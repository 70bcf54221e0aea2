"""The /v1 protocol's head reader (apps/core/http/serving/v1_head.py): what it takes, and everything it
leaves to uvicorn's protocol (``None``). A table of heads; no server needed."""

from __future__ import annotations

import pytest

from apps.core.http.serving.limits import HeadLimits
from apps.core.http.serving.v1_head import MAX_BODY, parse_head

LIMITS = HeadLimits(request_line=200, header_count=5, header_bytes=300, header_timeout=30, body_timeout=60,
                    idle_timeout=5)


def _parse(head: bytes):
    return parse_head(head, head.index(b"\r\n\r\n"), LIMITS)


TAKEN = [
    # (name, head, method, target, headers subset, length, close)
    ("a GET", b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n\r\n", "GET", b"/v1/ping", {"host": "x"}, 0, False),
    ("bare /v1", b"GET /v1 HTTP/1.1\r\nHost: x\r\n\r\n", "GET", b"/v1", {}, 0, False),
    ("a query", b"GET /v1?project=p&x=%7B HTTP/1.1\r\nHost: x\r\n\r\n", "GET", b"/v1?project=p&x=%7B", {}, 0, False),
    ("a POST with a length", b"POST /v1/account HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n", "POST", b"/v1/account",
     {"content-length": "17"}, 17, False),
    ("names fold to lower case, values keep theirs", b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-AppWrite-Project: AbC\r\n\r\n",
     "GET", b"/v1/ping", {"x-appwrite-project": "AbC"}, 0, False),
    ("spaces and tabs before a value are not part of it; after it they are, as httptools keeps them",
     b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nA:\t  v w \t\r\n\r\n", "GET", b"/v1/ping", {"a": "v w \t"}, 0, False),
    ("repeated fields are joined", b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nA: 1\r\nA: 2\r\nCookie: c=1\r\nCookie: d=2\r\n\r\n",
     "GET", b"/v1/ping", {"a": "1, 2", "cookie": "c=1; d=2"}, 0, False),
    ("Connection: close", b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n", "GET", b"/v1/ping", {}, 0, True),
    ("Connection: keep-alive", b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n", "GET", b"/v1/ping", {},
     0, False),
    ("a latin-1 value", b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Name: caf\xe9\r\n\r\n", "GET", b"/v1/ping",
     {"x-name": "caf\xe9"}, 0, False),
    ("the largest body", b"PUT /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % MAX_BODY, "PUT", b"/v1/x", {},
     MAX_BODY, False),
]


@pytest.mark.parametrize("name,head,method,target,headers,length,close", TAKEN, ids=[c[0] for c in TAKEN])
def test_heads_it_serves(name, head, method, target, headers, length, close):
    request = _parse(head)
    assert request is not None
    assert (request.method, request.target, request.length, request.close) == (method, target, length, close)
    assert headers.items() <= request.headers.items()


LEFT = [
    ("a path outside /v1", b"GET /admin/ HTTP/1.1\r\n\r\n"),
    ("a /v1 prefix that is not /v1", b"GET /v10/ping HTTP/1.1\r\n\r\n"),
    ("absolute-form", b"GET http://x/v1/ping HTTP/1.1\r\n\r\n"),
    ("HTTP/1.0", b"GET /v1/ping HTTP/1.0\r\n\r\n"),
    ("HTTP/2 in text", b"GET /v1/ping HTTP/2.0\r\n\r\n"),
    ("a lower-case method", b"get /v1/ping HTTP/1.1\r\n\r\n"),
    ("an unusual method", b"TRACE /v1/ping HTTP/1.1\r\n\r\n"),
    ("two spaces", b"GET  /v1/ping HTTP/1.1\r\n\r\n"),
    ("a non-ASCII target", b"GET /v1/p\xc3\xa9 HTTP/1.1\r\n\r\n"),
    ("a NUL in the target", b"GET /v1/p\x00 HTTP/1.1\r\n\r\n"),
    ("a fragment in the target", b"GET /v1/ping#top HTTP/1.1\r\n\r\n"),
    ("a request line over the limit", b"GET /v1/" + b"a" * 200 + b" HTTP/1.1\r\n\r\n"),
    ("a header without a colon", b"GET /v1/ping HTTP/1.1\r\nbroken\r\n\r\n"),
    ("a space before the colon", b"GET /v1/ping HTTP/1.1\r\nHost : x\r\n\r\n"),
    ("obsolete line folding", b"GET /v1/ping HTTP/1.1\r\nA: 1\r\n 2\r\n\r\n"),
    ("a NUL in a value", b"GET /v1/ping HTTP/1.1\r\nA: 1\x002\r\n\r\n"),
    ("a bare CR in a value", b"GET /v1/ping HTTP/1.1\r\nA: 1\r2\r\n\r\n"),
    ("a bare LF line end", b"GET /v1/ping HTTP/1.1\r\nA: 1\nB: 2\r\n\r\n"),
    ("more fields than the limit", b"GET /v1/ping HTTP/1.1\r\n" + b"".join(b"H%d: 1\r\n" % i for i in range(6))
     + b"\r\n"),
    ("more field bytes than the limit", b"GET /v1/ping HTTP/1.1\r\nA: " + b"a" * 301 + b"\r\n\r\n"),
    ("Transfer-Encoding", b"POST /v1/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"),
    ("Transfer-Encoding beside a length", b"POST /v1/x HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked"
     b"\r\n\r\n"),
    ("Expect", b"POST /v1/x HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"),
    ("no Host", b"GET /v1/ping HTTP/1.1\r\nA: 1\r\n\r\n"),
    ("two Host fields", b"GET /v1/ping HTTP/1.1\r\nHost: x\r\nA: 1\r\nhost: y\r\n\r\n"),
    ("Upgrade", b"GET /v1/realtime HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
    ("Connection: upgrade alone", b"GET /v1/ping HTTP/1.1\r\nConnection: upgrade\r\n\r\n"),
    ("a Connection token list", b"GET /v1/ping HTTP/1.1\r\nConnection: keep-alive, close\r\n\r\n"),
    ("two lengths", b"POST /v1/x HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n"),
    ("a signed length", b"POST /v1/x HTTP/1.1\r\nContent-Length: +2\r\n\r\n"),
    ("a length with a space inside", b"POST /v1/x HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n"),
    ("a length in superscript digits", b"POST /v1/x HTTP/1.1\r\nContent-Length: \xb2\r\n\r\n"),
    ("a huge length", b"POST /v1/x HTTP/1.1\r\nContent-Length: 9999999999999999999999\r\n\r\n"),
    ("a body over the limit", b"POST /v1/x HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % (MAX_BODY + 1)),
]


@pytest.mark.parametrize("name,head", LEFT, ids=[c[0] for c in LEFT])
def test_heads_it_leaves_to_uvicorn(name, head):
    assert _parse(head) is None


@pytest.mark.timeout(10)
def test_a_bad_line_after_many_fields_is_refused_at_once():
    """Refusing a head costs time linear in its length: an earlier pattern backtracked
    exponentially in the number of ``name: value`` fields before a bad line (24 fields held the
    event loop for 7 s; 100 would never end). With the limits' 100 fields this returns at once,
    and the pytest timeout turns a regression into a failure instead of a hang."""
    limits = HeadLimits(request_line=32768, header_count=100, header_bytes=32768, header_timeout=30,
                        body_timeout=60, idle_timeout=5)
    for bad in (b"Bad Line", b"A : 1", b"A: 1\x7f", b" folded"):
        head = b"GET /v1/ping HTTP/1.1\r\n" + b"".join(b"H%d: v\r\n" % i for i in range(98)) + bad + b"\r\n\r\n"
        assert parse_head(head, head.index(b"\r\n\r\n"), limits) is None
