"""Request heads that are too big or malformed get Appwrite's JSON error on every build (ASGI
lean, WSGI, ASGI through Django's handler), with the default limits (README "Request limits and
timeouts"), and a flood of header bytes costs the ASGI server no memory."""

from __future__ import annotations

import pytest

from apps.core.tests.rawhttp import exchange, get_with_headers
from conftest import start_server

KIB = 1024


def _head(project: str, headers: list[tuple[str, str]], path: str = "/v1/ping") -> bytes:
    return get_with_headers(0, [("X-Appwrite-Project", project), *headers], path)


def _flood(project: str, total: int, piece: int = 64 * KIB):
    """A head whose one header value is ``total`` bytes, sent in ``piece``-byte chunks."""
    yield f"GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {project}\r\nX-Big: ".encode()
    for _ in range(total // piece):
        yield b"a" * piece
    yield b"\r\n\r\n"


CASES = [
    # (name, head builder(project) -> bytes or chunks, status, error type)
    ("an 8 KiB header is fine", lambda p: [_head(p, [("X-Big", "a" * 8 * KIB)])], 200, None),
    ("30 KiB over 10 headers is fine", lambda p: [_head(p, [(f"X-H{i}", "a" * 3 * KIB) for i in range(10)])],
     200, None),
    ("95 headers are fine", lambda p: [_head(p, [(f"X-H{i}", "1") for i in range(95)])], 200, None),
    ("one 40 KiB header", lambda p: [_head(p, [("X-Big", "a" * 40 * KIB)])], 431, "general_bad_request"),
    ("40 KiB over 10 headers", lambda p: [_head(p, [(f"X-H{i}", "a" * 4 * KIB) for i in range(10)])],
     431, "general_bad_request"),
    ("1 MB of one header", lambda p: _flood(p, 1024 * KIB), 431, "general_bad_request"),
    ("20 MB of one header", lambda p: _flood(p, 20 * 1024 * KIB), 431, "general_bad_request"),
    ("101 headers", lambda p: [_head(p, [(f"X-H{i}", "1") for i in range(101)])], 431, "general_bad_request"),
    ("5000 headers", lambda p: [_head(p, [(f"X-H{i}", "1") for i in range(5000)])], 431, "general_bad_request"),
    # SDK list calls carry their queries in the URL: 20 KiB passes gunicorn's own 8190-byte parser limit too.
    ("request line of 20 KiB is fine", lambda p: [_head(p, [], "/v1/ping?x=" + "a" * 20 * KIB)], 200, None),
    ("request line of 33 KiB", lambda p: [_head(p, [], "/v1/ping?x=" + "a" * 33 * KIB)], 414, "general_bad_request"),
    ("header line without colon", lambda p: [f"GET /v1/ping HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {p}\r\n"
                                             "broken header\r\n\r\n".encode()], 400, "general_bad_request"),
    ("bad content-length", lambda p: [f"POST /v1/ping HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {p}\r\n"
                                      "Content-Length: ten\r\n\r\n".encode()], 400, "general_bad_request"),
    ("not HTTP at all", lambda p: [b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n"],
     400, "general_bad_request"),
]


@pytest.mark.parametrize("name,build,status,etype", CASES, ids=[c[0] for c in CASES])
def test_request_heads(server, project, name, build, status, etype):
    answer = exchange(server.port, build(project.id))
    assert answer.status == status, (answer, server.kind)
    if etype is None:
        assert b"Pong!" in answer.body  # (gunicorn answers chunked)
        return
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert body["type"] == etype and body["code"] == status and set(body) == {"message", "code", "type", "version"}


def test_lowered_limits_come_from_settings(live_env, project):
    """Both builds read the caps from the environment (here: 20 fields, 2 KiB, 1 KiB line)."""
    env = {**live_env, "MAX_HEADER_COUNT": "20", "MAX_HEADER_BYTES": "2048", "MAX_REQUEST_LINE": "1024"}
    for kind in ("asgi", "wsgi"):
        server = start_server(kind, env)
        try:
            ok = exchange(server.port, [_head(project.id, [(f"X-H{i}", "a" * 50) for i in range(15)])])
            assert ok.status == 200, (kind, ok)
            cases = [([(f"X-H{i}", "1") for i in range(25)], "/v1/ping", 431),
                     ([("X-Big", "a" * 2100)], "/v1/ping", 431),
                     ([], "/v1/ping?x=" + "a" * 1100, 414)]
            for headers, path, status in cases:
                answer = exchange(server.port, [_head(project.id, headers, path)])
                assert answer.status == status and answer.json()["code"] == status, (kind, path, answer)
        finally:
            server.stop()


def _peak_rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_header_floods_cost_no_memory(live_env, project):
    """Five 20 MB header floods, one after another, leave the ASGI server's peak RSS within
    8 MiB of where it was (without the cap, uvicorn buffered every byte of each)."""
    server = start_server("asgi", live_env)
    try:
        assert exchange(server.port, [_head(project.id, [])]).status == 200
        before = _peak_rss_kib(server.proc.pid)
        for _ in range(5):
            assert exchange(server.port, _flood(project.id, 20 * 1024 * KIB)).status == 431
        grown = _peak_rss_kib(server.proc.pid) - before
        assert grown < 8 * 1024, f"peak RSS grew by {grown} KiB"
    finally:
        server.stop()


def test_past_the_connection_limit_is_json(live_env, project):
    """uvicorn's own 503 past --limit-concurrency (open connections count) was plain text."""
    import socket
    import sys

    from conftest import free_port

    port = free_port()
    env = {**live_env, "PORT": str(port), "SERVER_LIMIT_CONCURRENCY": "3"}
    server = start_server("asgi", env, port=port, command=[sys.executable, "-m", "backend.serve"])
    held = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    try:
        answer = exchange(port, [_head(project.id, [])])
        assert answer.status == 503 and answer.headers["content-type"] == "application/json", answer
        assert answer.json()["type"] == "general_service_unavailable"
    finally:
        for sock in held:
            sock.close()
        server.stop()

