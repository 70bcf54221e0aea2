"""The /v1 HTTP/1.1 protocol of the ASGI build (apps/core/http/serving/v1_protocol.py) on a live server:
keep-alive, pipelining, requests in pieces, Connection: close, HEAD, what it hands over to
uvicorn's protocol (and that the connection keeps working there), and its refusals. Heads that
are too large or malformed are in test_request_heads.py, client timeouts in
test_client_timeouts.py (both run against this protocol too)."""

from __future__ import annotations

import json
import socket
import time

import pytest

from apps.core.tests.rawhttp import exchange

pytestmark = pytest.mark.timeout(60)


def _get(project: str, path: str = "/v1/ping", extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Appwrite-Project: {project}\r\n{extra}\r\n".encode()


def _post(project: str, path: str, body: bytes, extra: str = "") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Appwrite-Project: {project}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra}\r\n").encode() + body


class _Conn:
    """One kept-alive connection: send bytes, read whole answers (Content-Length or chunked)."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.pending = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self) -> bool:
        piece = self.sock.recv(65536)
        self.pending += piece
        return bool(piece)

    def answer(self, head_request: bool = False) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.pending:
            assert self._fill(), f"closed before an answer: {self.pending!r}"
        head, _, self.pending = self.pending.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        status = int(lines[0].split()[1])
        if 100 <= status < 200:  # an interim answer (100 Continue): the real one follows
            return self.answer(head_request)
        if head_request or status in (204, 304):
            return status, headers, b""
        if "content-length" in headers:
            size = int(headers["content-length"])
            while len(self.pending) < size:
                assert self._fill()
            body, self.pending = self.pending[:size], self.pending[size:]
            return status, headers, body
        assert headers.get("transfer-encoding") == "chunked", headers
        body = b""
        while True:
            while b"\r\n" not in self.pending:
                assert self._fill()
            size_line, _, rest = self.pending.partition(b"\r\n")
            size = int(size_line, 16)
            while len(rest) < size + 2:
                assert self._fill()
                size_line, _, rest = self.pending.partition(b"\r\n")
            body, self.pending = body + rest[:size], rest[size + 2:]
            if size == 0:
                return status, headers, body

    def closed(self, wait: float = 5) -> bool:
        self.sock.settimeout(wait)
        try:
            return self._fill() is False
        except (ConnectionResetError, TimeoutError):
            return False

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def conn(asgi_server):
    c = _Conn(asgi_server.port)
    yield c
    c.close()


def test_many_requests_on_one_connection(conn, project):
    for _ in range(20):
        conn.send(_get(project.id))
        status, headers, body = conn.answer()
        assert (status, body) == (200, b"Pong!")
        assert headers["content-length"] == "5" and "date" in headers
        assert "connection" not in headers


def test_pipelined_requests_are_answered_in_order(conn, project, api):
    """Five requests in one write (three reads with different answers and two pings)."""
    missing = "/v1/nothing-here"
    conn.send(_get(project.id) + _get(project.id, missing) + _get(project.id) +
              _get(project.id, "/v1/health/version") + _get(project.id))
    answers = [conn.answer() for _ in range(5)]
    assert [a[0] for a in answers] == [200, 404, 200, 200, 200]
    assert answers[0][2] == answers[2][2] == answers[4][2] == b"Pong!"
    assert json.loads(answers[3][2])["version"]


@pytest.mark.parametrize("cuts", [[5], [30], ["head"], ["body"], ["head", "body"], "every 9 bytes"])
def test_a_request_in_pieces_is_served(conn, project, cuts):
    """A create whose bytes arrive in several writes: cut inside the request line, inside a
    header, right after the head, inside the body, at both, or every few bytes; then a ping on
    the same connection."""
    data = _post(project.id, "/v1/account", json.dumps({"userId": "unique()", "email": f"p{time.time_ns()}@x.io",
                                                        "password": "password-123456"}).encode())
    named = {"head": data.index(b"\r\n\r\n") + 4, "body": len(data) - 7}
    at = list(range(9, len(data), 9)) if cuts == "every 9 bytes" else [named.get(c, c) for c in cuts]
    for start, stop in zip([0, *at], [*at, len(data)], strict=True):
        conn.send(data[start:stop])
        time.sleep(0.01 if cuts == "every 9 bytes" else 0.2)
    status, _, body = conn.answer()
    assert status == 201, body
    conn.send(_get(project.id))
    assert conn.answer()[2] == b"Pong!"


def test_connection_close_is_honoured(conn, project):
    conn.send(_get(project.id, extra="Connection: close\r\n") + _get(project.id))
    status, headers, body = conn.answer()
    assert (status, body, headers["connection"]) == (200, b"Pong!", "close")
    assert conn.closed()  # and the request behind it is not answered


def test_head_has_the_length_but_no_body(conn, project):
    conn.send(_get(project.id).replace(b"GET", b"HEAD", 1) + _get(project.id))
    status, headers, body = conn.answer(head_request=True)
    assert status in (200, 405) and body == b""
    if status == 200:
        assert headers["content-length"] == "5"
    assert conn.answer()[2] == b"Pong!"  # nothing of a body came before the next answer


def test_percent_encoded_paths_are_decoded(conn, project):
    conn.send(_get(project.id, "/v1/p%69ng"))
    assert conn.answer()[2] == b"Pong!"


HANDED_OVER = [
    # (name, request bytes builder, expected status): served by uvicorn's protocol, same answers
    ("a path outside /v1", lambda p: _get(p, "/healthz-nowhere"), 404),
    ("HTTP/1.0", lambda p: _get(p).replace(b"HTTP/1.1", b"HTTP/1.0", 1), 200),
    ("a chunked body", lambda p: (f"POST /v1/account HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {p}\r\n"
                                  "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                                  "2\r\n{}\r\n0\r\n\r\n").encode(), 400),
    ("Expect: 100-continue", lambda p: _post(p, "/v1/account", b"{}", "Expect: 100-continue\r\n"), 400),
    ("a body over 64 KiB", lambda p: _post(p, "/v1/account", b"{" + b" " * (70 * 1024) + b"}"), 400),
    ("two Content-Length fields", lambda p: _post(p, "/v1/account", b"{}", "Content-Length: 2\r\n"), 400),
    ("an obsolete folded header", lambda p: _get(p, extra="X-Folded: a\r\n b\r\n"), 400),
    ("a lower-case method", lambda p: _get(p).replace(b"GET", b"get", 1), 400),
    ("bare LF line ends", lambda p: _get(p).replace(b"\r\n", b"\n"), 400),
]


@pytest.mark.parametrize("name,build,status", HANDED_OVER, ids=[c[0] for c in HANDED_OVER])
def test_what_is_handed_over_gets_the_same_answers(asgi_server, project, name, build, status):
    """Each such request is answered by uvicorn's protocol; a request behind it on the same
    connection (when the connection stays open) is still served."""
    c = _Conn(asgi_server.port)
    try:
        c.send(build(project.id))
        got, headers, body = c.answer()
        assert got == status, (got, body[:300])
        if status >= 400:
            assert json.loads(body)["code"] == status
        if headers.get("connection", "").lower() != "close":
            c.send(_get(project.id))
            assert c.answer()[2] == b"Pong!"
    finally:
        c.close()


def test_websocket_upgrade_on_a_fresh_connection_is_handed_over(asgi_server, project):
    """``/v1/realtime`` goes to uvicorn's websocket protocol (101 Switching Protocols)."""
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    answer = exchange(asgi_server.port, [(
        f"GET /v1/realtime?project={project.id}&channels[]=account HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n").encode()], timeout=2)
    assert answer.status == 101


def test_an_unsafe_response_field_becomes_a_500_not_a_split():
    """A field value with CR/LF never reaches the wire (response splitting): the writer answers
    500 instead. Exercised on the writer itself with a transport that keeps what is written."""
    import asyncio

    from apps.core.http.context import Response
    from apps.core.http.serving.v1_writer import ResponseWriter

    class Transport:
        def __init__(self):
            self.out = b""

        def write(self, data):
            self.out += bytes(data)

    class State:
        default_headers = [(b"date", b"Thu, 01 Jan 2026 00:00:00 GMT")]

    transport = Transport()
    writer = ResponseWriter(transport, State())
    response = Response(status=302, headers=[("Location", "https://x.test/\r\nSet-Cookie: evil=1")])
    assert asyncio.run(writer.send(response, False, False))
    assert transport.out.startswith(b"HTTP/1.1 500 ") and b"evil" not in transport.out


def _pump_without_reading(port: int, data: bytes, seconds: float) -> int:
    """Send ``data`` over and over on one connection for ``seconds`` without reading any answer;
    the number of bytes the server took (sending blocks once it stops reading)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.settimeout(0.5)
    sent, deadline = 0, time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            try:
                sent += sock.send(data)
            except TimeoutError:
                continue
            except OSError:
                break
    finally:
        sock.close()
    return sent


def test_a_client_that_never_reads_its_answers_is_not_read_either(asgi_server, project):
    """Pipelined requests from a client that reads no answer: once the unsent answers pass the
    transport's high-water mark the server stops reading, so what it takes stays bounded by the
    kernel's socket buffers instead of growing for as long as the client sends (it took 14 MB
    in 25 s before, answering all of it into memory)."""
    batch = _get(project.id) * 1000
    early = _pump_without_reading(asgi_server.port, batch, 4)
    late = _pump_without_reading(asgi_server.port, batch, 8)
    assert late < 2 * early + 2 * 1024 * 1024, (early, late)  # twice as long: not twice as much
    assert late < 16 * 1024 * 1024, late


def test_a_handed_over_connection_pipelining_without_reading_raises_nothing(asgi_server, project):
    """A connection handed to uvicorn's protocol (a chunked body) that then pipelines megabytes
    without reading: refused when the unread heads pass the head buffer, without an app writing
    after the refusal (which raised 'Cannot call write() after write_eof()')."""
    chunked = (f"POST /v1/account HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {project.id}\r\n"
               "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").encode()
    before = asgi_server.log.read_text()
    _pump_without_reading(asgi_server.port, chunked + _get(project.id) * 20000, 4)
    time.sleep(0.5)
    after = asgi_server.log.read_text()[len(before):]
    assert "Traceback" not in after and "Exception in ASGI application" not in after, after[-3000:]


def test_the_access_log_names_each_request(live_env, project):
    """``SERVER_ACCESS_LOG=true``: one uvicorn access line per request the /v1 protocol serves."""
    import sys

    from conftest import free_port, start_server

    port = free_port()
    server = start_server("asgi", {**live_env, "SERVER_ACCESS_LOG": "true", "PORT": str(port)}, port=port,
                          command=[sys.executable, "-m", "backend.serve"])
    try:
        c = _Conn(port)
        c.send(_get(project.id, "/v1/ping?x=1"))
        assert c.answer()[0] == 200
        c.close()
        time.sleep(0.3)
        log = server.log.read_text()
        assert '"GET /v1/ping?x=1 HTTP/1.1" 200' in log, log[-2000:]
        assert "Logging error" not in log
    finally:
        server.stop()


def _stored_file(api, size: int) -> tuple[str, bytes]:
    """A file of ``size`` random bytes in a new bucket; its download path (with ``/v1``)."""
    import os

    from apps.storage.tests.conftest import make_bucket, upload

    data = os.urandom(size)
    bucket = make_bucket(api)
    r = upload(api, bucket["$id"], data, "big.bin")
    assert r.status_code == 201, r.text
    return f"/v1/storage/buckets/{bucket['$id']}/files/{r.json()['$id']}/download", data


def _read_all(sock: socket.socket, pause: float = 0.0) -> tuple[bytes, bool]:
    """Everything the server sends until it closes; whether it ended with a reset."""
    out = b""
    try:
        while True:
            piece = sock.recv(65536)
            if not piece:
                return out, False
            out += piece
            if pause:
                time.sleep(pause)
    except ConnectionResetError:
        return out, True


def test_a_download_with_connection_close_is_delivered_whole_behind_pipelined_bytes(api, project):
    """``Connection: close`` on a download from a client that pipelined 460 KB more behind it:
    the connection ends with FIN after the last byte (a close with that input unread made the
    kernel reset it, dropping megabytes of the file)."""
    path, data = _stored_file(api, 5_000_000)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    sock.connect(("127.0.0.1", api.server.port))
    sock.settimeout(20)
    request = (f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {project.id}\r\n"
               f"X-Appwrite-Key: {project.key}\r\nConnection: close\r\n\r\n").encode()
    sock.sendall(request + _get(project.id, "/v1/health/version") * 7000)
    out, reset = _read_all(sock, pause=0.002)
    sock.close()
    head, _, body = out.partition(b"\r\n\r\n")
    assert not reset and body == data, (len(body), len(data), reset)
    assert b"connection: close" in head


def test_a_client_that_leaves_while_its_answers_wait_leaves_no_log(asgi_server, project):
    """Answers held for a client that reads nothing, then a reset: nothing is logged for it
    (a future nobody waited on was logged as 'exception was never retrieved')."""
    import struct

    before = asgi_server.log.read_text()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", asgi_server.port))
    sock.settimeout(2)
    try:
        sock.sendall(_get(project.id, "/v1/health/version") * 20000)
    except TimeoutError:
        pass
    time.sleep(1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
    sock.close()
    time.sleep(0.5)
    after = asgi_server.log.read_text()[len(before):]
    assert "never retrieved" not in after and "Traceback" not in after, after[-2000:]


def test_a_handed_over_pipelined_body_waits_its_turn_for_the_body_timeout(live_env, project):
    """On a connection handed to uvicorn's protocol: a download, then a pipelined request whose
    body stops short. The body's clock starts once the download's answer is complete (it used to
    run during the download and cut it off at SERVER_BODY_TIMEOUT); the download arrives whole,
    then the 408."""
    from conftest import Api, free_port, start_server

    port = free_port()
    server = start_server("asgi", {**live_env, "SERVER_BODY_TIMEOUT": "1"}, port=port)
    try:
        path, data = _stored_file(Api(server, project), 5_000_000)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        sock.connect(("127.0.0.1", port))
        sock.settimeout(20)
        sock.sendall(_get(project.id, "/v1/health/version", "Connection: keep-alive, foo\r\n"))  # handed over
        first = sock.recv(65536)
        while first.startswith(b"HTTP/1.1 200") and not first.endswith(b"}"):  # head and body may come apart
            first += sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200"), first
        sock.sendall((f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {project.id}\r\n"
                      f"X-Appwrite-Key: {project.key}\r\n\r\n").encode())
        sock.sendall(f"PUT /v1/storage/buckets/none HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {project.id}\r\n"
                     "Content-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"a\":".encode())
        out, _ = _read_all(sock, pause=0.05)  # about 1 MB/s: the download takes seconds
        sock.close()
        head, _, rest = out.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and rest[:len(data)] == data, len(rest)
        assert rest[len(data):].startswith(b"HTTP/1.1 408"), rest[len(data):len(data) + 200]
    finally:
        server.stop()
