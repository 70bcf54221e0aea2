"""The /v1 HTTP/1.1 protocol (apps/core/http/serving/v1_protocol.py, with its hand-over to uvicorn's
httptools protocol) against a reference parser, h11 (``h11.Connection(h11.SERVER)``).

Each case is a raw byte stream of one connection (pipelined requests, odd framing, odd heads).
It is sent to a live server running the direct protocol (whole, byte by byte, and in seeded
random pieces) and fed to h11 in the same pieces. Both must agree on how many requests the
stream holds that get an answer and on whether each is accepted (an answer from the
application: 2xx, or a 4xx such as 404 from the API) or refused as malformed (400, 411, 413,
414, 431, 501, 505 from the protocol, after which the connection closes).

Where the product deliberately differs from h11, :data:`KNOWN` names the case, the product's
outcome and why; the test checks that the product gives exactly that outcome and that h11 still
differs (an entry that became unneeded fails, so the list cannot go stale).

The last request of most streams says ``Connection: close``, so the server ends the connection
and no case waits for an idle timeout; a stream that ends inside a request waits ``QUIET``
seconds for answers that must not come.
"""

from __future__ import annotations

import random
import socket
import threading
import time

import h11
import pytest

pytestmark = pytest.mark.timeout(120)

SEED = 20261206
QUIET = 0.6  # seconds without a byte after which a connection that stays open is done
REFUSALS = {400, 408, 411, 413, 414, 431, 501, 505}
V1 = "/v1/health/version"


def req(method: str = "GET", target: str = V1, *, version: str = "1.1", headers: tuple[str, ...] = (),
        body: bytes = b"", close: bool = False, eol: str = "\r\n", host: bool = True) -> bytes:
    """One request's bytes: request line, ``Host``, ``headers`` (whole ``name: value`` lines), an
    optional ``Connection: close``, each line ended by ``eol``, then ``body`` as given."""
    lines = [f"{method} {target} HTTP/{version}"] + (["Host: 127.0.0.1"] if host else []) + list(headers)
    if close:
        lines.append("Connection: close")
    return (eol.join(lines) + eol + eol).encode("latin-1") + body


def post(body: bytes, *headers: str, close: bool = False) -> bytes:
    return req("POST", headers=(f"Content-Length: {len(body)}", *headers), body=body, close=close)


def chunked(*headers: str, body: bytes = b"5\r\nhello\r\n0\r\n\r\n") -> bytes:
    return req("POST", headers=headers, body=body)


LAST = req(close=True)  # ends most streams

# (name, stream, methods of the requests in order: to know which answers have no body)
CASES: list[tuple[str, bytes, tuple[str, ...]]] = [
    ("pipeline-2", req() + LAST, ("GET", "GET")),
    ("pipeline-3-get-head-post", req() + req("HEAD") + post(b"hello", close=True), ("GET", "HEAD", "POST")),
    ("head-then-get", req("HEAD") + LAST, ("HEAD", "GET")),
    ("post-body-then-get", post(b"hello") + LAST, ("POST", "GET")),
    ("post-empty-body", post(b"") + LAST, ("POST", "GET")),
    ("content-length-duplicate-same", req("POST", headers=("Content-Length: 5", "Content-Length: 5"), body=b"hello")
     + LAST, ("POST", "GET")),
    ("content-length-conflicting", req("POST", headers=("Content-Length: 5", "Content-Length: 6"), body=b"hello!")
     + LAST, ("POST", "GET")),
    ("content-length-list", req("POST", headers=("Content-Length: 5, 5",), body=b"hello") + LAST, ("POST", "GET")),
    ("content-length-plus", req("POST", headers=("Content-Length: +5",), body=b"hello") + LAST, ("POST", "GET")),
    ("content-length-space-before-colon", req("POST", headers=("Content-Length : 5",), body=b"hello") + LAST,
     ("POST", "GET")),
    ("chunked", chunked("Transfer-Encoding: chunked") + LAST, ("POST", "GET")),
    ("chunked-two-chunks", chunked("Transfer-Encoding: chunked", body=b"3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n") + LAST,
     ("POST", "GET")),
    ("chunked-extensions", chunked("Transfer-Encoding: chunked", body=b"5;name=value\r\nhello\r\n0;x\r\n\r\n")
     + LAST, ("POST", "GET")),
    ("chunked-trailer", chunked("Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n")
     + LAST, ("POST", "GET")),
    ("chunked-uppercase", chunked("Transfer-Encoding: CHUNKED") + LAST, ("POST", "GET")),
    ("chunked-then-gzip", chunked("Transfer-Encoding: chunked, gzip") + LAST, ("POST", "GET")),
    ("gzip-then-chunked", chunked("Transfer-Encoding: gzip, chunked") + LAST, ("POST", "GET")),
    ("chunked-with-content-length", chunked("Transfer-Encoding: chunked", "Content-Length: 5") + LAST,
     ("POST", "GET")),
    ("chunked-bad-size", chunked("Transfer-Encoding: chunked", body=b"zz\r\nhello\r\n0\r\n\r\n") + LAST,
     ("POST", "GET")),
    ("obs-fold", req(headers=("X-Folded: one", " two")) + LAST, ("GET", "GET")),
    ("bare-lf", req(eol="\n") + LAST, ("GET", "GET")),
    ("bare-lf-one-line", b"GET " + V1.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\nX-A: 1\r\n\r\n" + LAST,
     ("GET", "GET")),
    ("nul-in-value", req(headers=("X-A: a\x00b",)) + LAST, ("GET", "GET")),
    ("cr-in-value", req(headers=("X-A: a\rb",)) + LAST, ("GET", "GET")),
    ("space-in-name", req(headers=("X A: 1",)) + LAST, ("GET", "GET")),
    ("absolute-form", req(target="http://127.0.0.1" + V1) + LAST, ("GET", "GET")),
    ("expect-100-continue", req("POST", headers=("Content-Length: 5", "Expect: 100-continue"), body=b"hello")
     + LAST, ("POST", "GET")),
    # Neither does keep-alive with an HTTP/1.0 client: one answer, then the connection closes.
    ("http10-keep-alive", req(version="1.0", headers=("Connection: keep-alive",)) + LAST, ("GET", "GET")),
    ("http10-closes", req(version="1.0") + LAST, ("GET", "GET")),
    ("connection-close-first", req(close=True) + LAST, ("GET", "GET")),
    ("handover-admin-between", req() + req("GET", "/admin/login/") + LAST, ("GET", "GET", "GET")),
    ("handover-admin-first", req("GET", "/admin/login/") + LAST, ("GET", "GET")),
    ("handover-chunked-then-v1", chunked("Transfer-Encoding: chunked") + req() + LAST, ("POST", "GET", "GET")),
    ("body-cut-short", req("POST", headers=("Content-Length: 10",), body=b"hello"), ("POST",)),
    ("head-cut-short", req() + b"GET " + V1.encode() + b" HTTP/1.1\r\nHost: 127.", ("GET", "GET")),
]

# Where the product deliberately answers differently from h11: case -> (the product's outcome,
# why). An outcome is the classes of the answers in order ("ok" or "refused").
KNOWN: dict[str, tuple[tuple[str, ...], str]] = {
    # h11 merges repeated identical Content-Length values (RFC 9110 §8.6 allows either). Refusing
    # any second Content-Length (uvicorn's httptools, llhttp) leaves no room for a proxy and this
    # server to disagree on where the body ends (request smuggling).
    "content-length-duplicate-same": (("refused",), "stricter: a repeated Content-Length is refused"),
    # The same for "5, 5" in one field.
    "content-length-list": (("refused",), "stricter: a Content-Length list is refused"),
    # RFC 9112 §6.1: a request with both may be refused; h11 lets Transfer-Encoding win. A sender
    # of both is the textbook smuggling probe, so the product refuses it.
    "chunked-with-content-length": (("refused",), "stricter: Transfer-Encoding with Content-Length is refused"),
    # h11 supports only "chunked" alone and refuses other codings; llhttp accepts a coding list
    # whose final coding is chunked (RFC 9112 §6.1), and the body reaches the application
    # de-chunked (the route then ignores it).
    "gzip-then-chunked": (("ok", "ok"), "more lenient: other codings before a final chunked are framed as chunked"),
    # RFC 9112 §5.2: a server that receives obs-fold in a request must either refuse it with 400
    # or replace each fold by spaces; h11 unfolds, the product (llhttp behind the hand-over)
    # refuses, so no header value means different things to a proxy and to this server.
    "obs-fold": (("refused",), "stricter: a folded header line is refused"),
    # RFC 9112 §2.2: a recipient MAY take a bare LF as a line end; h11 does, the product refuses a
    # head with one (a proxy that reads lines differently cannot smuggle a header through).
    "bare-lf": (("refused",), "stricter: bare LF line ends are refused"),
    "bare-lf-one-line": (("refused",), "stricter: one bare LF line end is refused"),
}


# --- the reference ------------------------------------------------------------------------------
def reference(pieces: list[bytes]) -> tuple[str, ...]:
    """What h11, as a server fed ``pieces``, makes of them: "ok" per whole request, then
    "refused" if it raises RemoteProtocolError. It answers each request with an empty 200 (so it
    goes on to the next) and stops where it would close."""
    conn = h11.Connection(h11.SERVER)
    out: list[str] = []
    for piece in pieces:
        conn.receive_data(piece)
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError:
                return (*out, "refused")
            if event is h11.NEED_DATA or event is h11.PAUSED or isinstance(event, h11.ConnectionClosed):
                break
            if isinstance(event, h11.EndOfMessage):
                out.append("ok")
                conn.send(h11.Response(status_code=200, headers=[("Content-Length", "0")]))
                conn.send(h11.EndOfMessage())
                if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                    return tuple(out)
                conn.start_next_cycle()
    return tuple(out)


# --- the product --------------------------------------------------------------------------------
def _exchange(port: int, pieces: list[bytes], pause: float) -> bytes:
    """Send ``pieces`` (``pause`` seconds apart) on a new connection while reading; reading ends
    when the server closes, after an answer with ``Connection: close`` is complete, or after
    ``QUIET`` seconds without a byte once everything was sent. The sending side is never shut
    (the direct protocol takes a client's half-close as the client leaving)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sent = threading.Event()

    def send():
        try:
            for piece in pieces:
                sock.sendall(piece)
                if pause:
                    time.sleep(pause)
        except OSError:
            pass
        sent.set()

    threading.Thread(target=send, daemon=True).start()
    data = b""
    sock.settimeout(QUIET)
    try:
        while True:
            try:
                piece = sock.recv(65536)
            except TimeoutError:
                if sent.is_set():
                    break
                continue
            if not piece:
                break
            data += piece
            if _closing_answer_complete(data):
                break
    except ConnectionResetError:
        pass
    finally:
        sent.wait(10)
        sock.close()
    return data


def _closing_answer_complete(data: bytes) -> bool:
    """Whether ``data`` ends with a whole answer that says ``Connection: close`` (refusals and
    answers to a closing request have a Content-Length or are chunked)."""
    head_end = data.rfind(b"\r\n\r\n", 0, len(data))
    start = data.rfind(b"HTTP/1.", 0, head_end if head_end >= 0 else len(data))
    if start < 0 or head_end < start:
        return False
    head = data[start:head_end].lower()
    if b"\r\nconnection: close" not in head:
        return False
    body = data[head_end + 4:]
    for line in head.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return body.endswith(b"0\r\n\r\n") or b"transfer-encoding" not in head


def answers(raw: bytes, methods: tuple[str, ...]) -> tuple[int, ...]:
    """The final statuses in ``raw`` (interim 1xx answers skipped); answer ``i`` has no body when
    request ``i`` was a HEAD."""
    out: list[int] = []
    while raw:
        head, sep, rest = raw.partition(b"\r\n\r\n")
        if not sep or not head.startswith(b"HTTP/1."):
            break
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {n.strip().lower(): v.strip() for n, _, v in (line.partition(":") for line in lines[1:])}
        raw = rest
        if status < 200:
            continue
        is_head = len(out) < len(methods) and methods[len(out)] == "HEAD"
        out.append(status)
        if is_head or status in (204, 304):
            continue
        if "content-length" in headers:
            raw = raw[int(headers["content-length"]):]
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            end = raw.find(b"\r\n0\r\n\r\n")
            raw = raw[end + 7:] if end >= 0 else b""
        else:
            break
    return tuple(out)


def product(port: int, pieces: list[bytes], methods: tuple[str, ...], pause: float) -> tuple[str, ...]:
    return tuple("refused" if s in REFUSALS else "ok" for s in answers(_exchange(port, pieces, pause), methods))


def splits(stream: bytes, rng: random.Random) -> dict[str, tuple[list[bytes], float]]:
    """The ways a stream is sent: whole, byte by byte, and in 2-6 seeded random pieces."""
    cuts = sorted(rng.sample(range(1, len(stream)), min(len(stream) - 1, rng.randint(1, 5))))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    return {"whole": ([stream], 0.0), "bytes": ([stream[i:i + 1] for i in range(len(stream))], 0.0005),
            "random": (pieces, 0.01)}


# --- the tests ----------------------------------------------------------------------------------
def test_the_reference_sees_each_case_as_written():
    """A guard on the harness: h11 accepts the plain pipelines whole and refuses plain garbage."""
    assert reference([req() + LAST]) == ("ok", "ok")
    assert reference([b"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n"]) == ("refused",)
    assert answers(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", ("POST",)) == (200,)


@pytest.mark.parametrize("name, stream, methods", CASES, ids=[c[0] for c in CASES])
def test_the_direct_protocol_agrees_with_h11(asgi_server, name, stream, methods):
    rng = random.Random(f"{SEED}-{name}")
    for how, (pieces, pause) in splits(stream, rng).items():
        expected = reference(pieces)
        got = product(asgi_server.port, pieces, methods, pause)
        if name in KNOWN:
            outcome, why = KNOWN[name]
            assert got == outcome, f"{name} sent {how}: {got} instead of the allowed {outcome} ({why})"
            assert expected != outcome, f"{name}: h11 now agrees ({expected}); remove it from KNOWN"
        else:
            assert got == expected, f"{name} sent {how}: server {got}, h11 {expected}: {stream!r}"
