"""What every build answers at the edges of HTTP/1.1 (docs/reliability-http.md), raw requests on
live servers: ``asgi`` (the /v1 protocol, which hands upgrades and odd heads to uvicorn's
httptools protocol with the lean adapter), ``naive`` (uvicorn's httptools protocol for every
request) and ``wsgi`` (gunicorn).

* upgrade requests: a websocket handshake (GET /v1/realtime) switches protocols; any other
  ``Upgrade: websocket``, and any upgrade whose request has a body, gets 400 JSON and the
  connection closes at once; another protocol (``h2c``) on a request without a body is ignored
  and the request, and any pipelined behind it, served (RFC 9110 §7.8);
* ``Host``: an HTTP/1.1 request without one, or any request with two, gets 400 (RFC 9112 §3.2);
* a client that half-closes after a complete request gets its answer, then the close.
"""

from __future__ import annotations

import socket
import time

import pytest

from apps.core.tests.rawhttp import RawAnswer, _parse, exchange
from conftest import EVERY_BUILD

pytestmark = pytest.mark.timeout(60)

KEY = "dGhlIHNhbXBsZSBub25jZQ=="
WS = f"Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n"
H2C = "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"


def _req(project: str, method: str = "GET", path: str = "/v1/health/version", extra: str = "",
         body: bytes = b"", host: str | None = "Host: 127.0.0.1\r\n", version: str = "1.1") -> bytes:
    length = f"Content-Length: {len(body)}\r\nContent-Type: application/json\r\n" if body else ""
    return (f"{method} {path} HTTP/{version}\r\n{host or ''}X-Appwrite-Project: {project}\r\n"
            f"{extra}{length}\r\n").encode() + body


def _answers(raw: bytes) -> list[RawAnswer]:
    """Every answer in ``raw``, bodies framed by Content-Length, chunked, or by the close."""
    out = []
    while raw.startswith(b"HTTP/"):
        head, _, rest = raw.partition(b"\r\n\r\n")
        one = _parse(head + b"\r\n\r\n", False, 0)
        if one.headers.get("transfer-encoding") == "chunked":
            one.body = b""
            while True:
                size_line, _, rest = rest.partition(b"\r\n")
                size = int(size_line, 16)
                one.body, rest = one.body + rest[:size], rest[size + 2:]
                if size == 0:
                    break
        elif "content-length" in one.headers:
            size = int(one.headers["content-length"])
            one.body, rest = rest[:size], rest[size:]
        else:  # an HTTP/1.0 answer: the body runs to the close
            one.body, rest = rest, b""
        raw = rest
        out.append(one)
    return out


def _converse(port: int, data: bytes, half_close: bool = False, wait: float = 8) -> tuple[list[RawAnswer], float]:
    """Send ``data`` on a new connection (then shut down its sending side if ``half_close``);
    the answers until the server closes, and the seconds that took."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        raw, seconds = _read_until_closed(sock, wait)
    return _answers(raw), seconds


def _read_until_closed(sock: socket.socket, wait: float) -> tuple[bytes, float]:
    """What the server sends until it closes (or ``wait`` seconds), and the seconds it took."""
    sock.settimeout(wait)
    start, data = time.monotonic(), b""
    try:
        while piece := sock.recv(65536):
            data += piece
    except (TimeoutError, ConnectionResetError):
        pass
    return data, time.monotonic() - start


def _is_bad_request(answer: RawAnswer) -> bool:
    if answer.status != 400 or answer.headers.get("content-type") != "application/json":
        return False
    body = answer.json()
    return body["code"] == 400 and body["type"] == "general_bad_request" and set(body) == {
        "message", "code", "type", "version"}


REFUSED_UPGRADES = [
    # (name, request(project)): 400 JSON and the connection closed at once
    ("POST with Upgrade: websocket and a body",
     lambda p: _req(p, "POST", "/v1/users", "Connection: Upgrade\r\nUpgrade: websocket\r\n", b"hello")),
    ("a websocket handshake on another path", lambda p: _req(p, extra=WS)),
    ("a websocket handshake without a key",
     lambda p: _req(p, path=f"/v1/realtime?project={p}", extra="Connection: Upgrade\r\nUpgrade: websocket\r\n"
                    "Sec-WebSocket-Version: 13\r\n")),
    ("a websocket handshake with PUT", lambda p: _req(p, "PUT", f"/v1/realtime?project={p}", WS)),
    ("h2c on a request with a body", lambda p: _req(p, "POST", "/v1/account", H2C, b"{}")),
]


@pytest.mark.parametrize("name,build", REFUSED_UPGRADES, ids=[c[0] for c in REFUSED_UPGRADES])
def test_upgrades_that_are_not_the_realtime_websocket_are_refused_at_once(server, project, name, build):
    """They held the connection with no answer and no timeout (ASGI), so twenty of them took
    the server's connection limit. gunicorn serves them as plain requests (it never upgrades)."""
    answer = exchange(server.port, [build(project.id)], timeout=10)
    assert answer.seconds < 5, f"held for {answer.seconds:.1f} s: {answer}"
    if server.kind == "wsgi":
        assert answer.status >= 200, answer
        return
    assert _is_bad_request(answer), answer
    assert answer.headers.get("connection") == "close"


def test_h2c_without_a_body_is_ignored_and_pipelined_requests_are_served(server, project):
    """``Upgrade: h2c`` (curl --http2 on http://) with a request behind it: both answered (the
    second was dropped without a word). gunicorn's sync worker answers one request per
    connection, with Connection: close."""
    answers, seconds = _converse(server.port, _req(project.id, extra=H2C) +
                                 _req(project.id, "GET", "/v1/ping", "Connection: close\r\n"))
    assert seconds < 5 and answers and answers[0].status == 200 and answers[0].json()["version"], answers
    if server.kind == "wsgi":
        assert answers[0].headers.get("connection") == "close"
        return
    assert [a.status for a in answers] == [200, 200] and answers[1].body == b"Pong!", answers


@EVERY_BUILD  # also on the naive build: one of its smoke tests (conftest.EVERY_BUILD)
def test_the_realtime_handshake_still_switches_protocols(server, project):
    if server.kind == "wsgi":
        pytest.skip("the WSGI build has no websockets")
    answer = exchange(server.port, [_req(project.id, path=f"/v1/realtime?project={project.id}&channels[]=account",
                                         extra=WS)], timeout=2)
    assert answer.status == 101, answer


HOSTS = [
    # (name, request(project), status)
    ("HTTP/1.1 without Host", lambda p: _req(p, host=None), 400),
    ("HTTP/1.1 with two Host fields", lambda p: _req(p, host="Host: 127.0.0.1\r\nHost: evil.test\r\n"), 400),
    ("HTTP/1.1 with two Host fields apart",
     lambda p: _req(p, host="Host: 127.0.0.1\r\n", extra="Host: 127.0.0.1\r\n"), 400),
    ("HTTP/1.0 with two Host fields",
     lambda p: _req(p, host="Host: 127.0.0.1\r\nHost: evil.test\r\n", version="1.0"), 400),
    ("HTTP/1.0 without Host", lambda p: _req(p, host=None, version="1.0"), 200),
    ("HTTP/1.1 with one Host", lambda p: _req(p), 200),
]


@pytest.mark.parametrize("name,build,status", HOSTS, ids=[c[0] for c in HOSTS])
def test_host_rules(server, project, name, build, status):
    """With a ping pipelined behind: after a 400 the connection closes and the ping is not read."""
    answers, seconds = _converse(server.port, build(project.id) + _req(project.id, "GET", "/v1/ping",
                                                                      "Connection: close\r\n"))
    assert seconds < 5 and answers and answers[0].status == status, answers
    if status == 400:
        assert _is_bad_request(answers[0]) and len(answers) == 1, answers
    else:
        assert answers[0].json()["version"]


HALF_CLOSED = [
    # (name, request(project) -> bytes, how many answers (gunicorn's sync worker: one per connection))
    ("the version", lambda p: _req(p.id), 1),
    ("three pipelined", lambda p: _req(p.id) * 3, 3),
    ("a list read from PostgreSQL", lambda p: _req(p.id, path="/v1/users", extra=f"X-Appwrite-Key: {p.key}\r\n"), 1),
    ("a version behind a list", lambda p: _req(p.id, path="/v1/users", extra=f"X-Appwrite-Key: {p.key}\r\n") +
     _req(p.id), 2),
]


@pytest.mark.parametrize("name,build,count", HALF_CLOSED, ids=[c[0] for c in HALF_CLOSED])
def test_a_half_closed_client_gets_its_answers(server, project, name, build, count):
    """Whole requests, then shutdown(SHUT_WR): every answer arrives, then the close (the /v1
    protocol closed without a word once a request had to wait, as for PostgreSQL)."""
    answers, seconds = _converse(server.port, build(project), half_close=True)
    assert seconds < 5, f"held for {seconds:.1f} s"
    want = 1 if server.kind == "wsgi" else count
    assert [a.status for a in answers] == [200] * want, answers
    assert all(a.json() for a in answers)
