"""Clients that stall get cut off by the ASGI build (uvicorn with the project's protocol): idle
connections, heads and bodies that stop arriving (``SERVER_IDLE_TIMEOUT``,
``SERVER_HEADER_TIMEOUT``, ``SERVER_BODY_TIMEOUT``, here 1 s each), while clients that are slow
but keep sending, and websockets, are left alone. The WSGI build's protection is nginx in front
(tests/deploy/test_lb_baseline.py)."""

from __future__ import annotations

import socket
import time

import pytest
import requests

from apps.core.tests.rawhttp import exchange
from conftest import start_server

# The client's own give-up time: far above the server's 1 s timeouts, far below the 45 s that
# stalled connections were held before.
WAIT = 10


@pytest.fixture(scope="module")
def quick_server(live_env):
    server = start_server("asgi", {**live_env, "SERVER_HEADER_TIMEOUT": "1", "SERVER_BODY_TIMEOUT": "1",
                                   "SERVER_IDLE_TIMEOUT": "1"})
    yield server
    server.stop()


def _stall(*pieces: bytes):
    """Send ``pieces`` and then nothing (the generator ends; the socket stays open)."""
    yield from pieces


def _head(project: str, method: str = "GET", extra: str = "") -> bytes:
    return f"{method} /v1/ping HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {project}\r\n{extra}".encode()


STALLS = [
    # (name, pieces(project), status the server answers before closing; 0 = closes silently)
    ("idle, nothing sent", lambda p: _stall(), 0),
    ("stalled in the request line", lambda p: _stall(b"GET /v1/pi"), 408),
    ("stalled in the headers", lambda p: _stall(_head(p)), 408),
    ("stalled in the body", lambda p: _stall(_head(p, "POST", "Content-Length: 100\r\n\r\n") + b"x" * 10), 408),
    ("stalled in a chunked body", lambda p: _stall(_head(p, "POST", "Transfer-Encoding: chunked\r\n\r\n5\r\nab")),
     408),
]


@pytest.mark.parametrize("name,pieces,status", STALLS, ids=[s[0] for s in STALLS])
def test_stalled_clients_are_cut_off(quick_server, project, name, pieces, status):
    answer = exchange(quick_server.port, pieces(project.id), timeout=WAIT)
    assert answer.seconds < WAIT - 1, f"still open after {answer.seconds:.1f} s"
    assert answer.status == status, answer
    if status:
        body = answer.json()
        assert body["code"] == 408 and body["type"] == "general_bad_request"


def test_idle_after_a_response_is_closed(quick_server, project):
    with socket.create_connection(("127.0.0.1", quick_server.port), timeout=WAIT) as sock:
        sock.sendall(_head(project.id) + b"\r\n")
        start, data = time.monotonic(), b""
        while piece := sock.recv(65536):
            data += piece
        assert data.startswith(b"HTTP/1.1 200") and data.endswith(b"Pong!")
        assert time.monotonic() - start < WAIT - 1


def test_slow_bodies_that_keep_coming_are_served(quick_server, project):
    """A body sent a byte every 0.4 s (3.2 s in all, longer than the body timeout, but never a
    second without a byte) is read to its end and answered (405: /ping takes GET)."""
    head = _head(project.id, "POST", "Content-Type: application/json\r\nContent-Length: 8\r\nConnection: close\r\n\r\n")
    pieces = [head] + [b"{}      "[i:i + 1] for i in range(8)]
    answer = exchange(quick_server.port, pieces, pause=0.4, timeout=WAIT * 3)
    assert answer.status == 405 and answer.json()["type"] == "general_not_implemented", answer


def test_a_head_dribbled_past_the_header_timeout_is_refused(quick_server, project):
    """The head timeout is a deadline for the whole head (as nginx's client_header_timeout):
    a byte every 0.3 s does not keep a connection open for ever."""
    head = _head(project.id) + b"\r\n"
    answer = exchange(quick_server.port, [head[i:i + 1] for i in range(len(head))], pause=0.3, timeout=WAIT)
    assert answer.status == 408 and answer.seconds < WAIT - 1, answer


def test_stalled_connections_do_not_block_others(quick_server, project):
    socks = [socket.create_connection(("127.0.0.1", quick_server.port)) for _ in range(8)]
    try:
        for sock in socks:
            sock.sendall(_head(project.id))
        r = requests.get(quick_server.endpoint + "/ping", headers={"X-Appwrite-Project": project.id}, timeout=5)
        assert r.status_code == 200
    finally:
        for sock in socks:
            sock.close()


def test_websockets_outlive_the_http_timeouts(quick_server, project):
    from websockets.sync.client import connect

    url = quick_server.url.replace("http", "ws") + f"/v1/realtime?project={project.id}&channels[]=files"
    with connect(url, open_timeout=WAIT) as ws:
        ws.recv(timeout=WAIT)  # "connected"
        time.sleep(2.5)
        assert ws.ping().wait(WAIT)
