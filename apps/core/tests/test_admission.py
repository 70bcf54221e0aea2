"""The admission limit (``API_MAX_IN_FLIGHT``): past it, /v1 answers a fast JSON 503.

A live ASGI server with a limit of 2 on each /v1 adapter. Two requests whose bodies never finish
arriving hold both slots deterministically (they are admitted and wait in the body read).
"""

from __future__ import annotations

import socket
import time

import pytest
import requests

from conftest import make_project, start_server

LIMIT = 2


@pytest.fixture(scope="module", params=["lean", "django"])
def limited(request, live_env, django_db_blocker):
    project = make_project(django_db_blocker)
    server = start_server("asgi", {**live_env, "API_MAX_IN_FLIGHT": str(LIMIT), "V1_ADAPTER": request.param})
    yield server, project
    server.stop()


def _hold(server, project_id: str) -> socket.socket:
    """Open a request that is admitted and then waits for a body that never comes.

    A refused attempt (an answer arrives: another request still held a slot for a moment) is
    retried.
    """
    for _ in range(50):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        sock.sendall((f"POST /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Appwrite-Project: {project_id}\r\n"
                      "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{").encode())
        sock.settimeout(0.5)
        try:
            answer = sock.recv(65536)
        except TimeoutError:
            return sock  # admitted: the server waits for the rest of the body
        sock.close()
        assert answer.startswith(b"HTTP/1.1 503"), answer[:200]
    raise AssertionError("no slot became free for a holding request")


def _ping(server, project_id: str, **kw) -> requests.Response:
    return requests.get(server.endpoint + "/ping", headers={"X-Appwrite-Project": project_id}, timeout=5, **kw)


def _wait_for(predicate, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_full_process_answers_fast_json_503_and_recovers(limited):
    server, project = limited
    assert _ping(server, project.id).status_code == 200
    holders = [_hold(server, project.id) for _ in range(LIMIT)]
    try:
        assert _wait_for(lambda: _ping(server, project.id).status_code == 503), "the limit never engaged"
        r = _ping(server, project.id)
        assert r.status_code == 503
        assert r.headers["Retry-After"] == "1"
        assert r.headers.get("Connection", "").lower() != "close"  # bodiless: the connection stays
        body = r.json()
        assert body["type"] == "general_service_unavailable" and body["code"] == 503
        assert "limit" in body["message"]

        # A refused request with a body closes its connection: its body was never read.
        r = requests.post(server.endpoint + "/account", json={"email": "x@example.com"},
                          headers={"X-Appwrite-Project": project.id}, timeout=5)
        assert r.status_code == 503 and r.headers.get("Connection", "").lower() == "close"

        # Paths outside /v1 are not counted.
        assert requests.get(server.url + "/", timeout=5).status_code != 503
    finally:
        for sock in holders:
            sock.close()
    # The clients left: their slots are released, whatever way their requests ended.
    assert _wait_for(lambda: _ping(server, project.id).status_code == 200), "slots were not released"
    for sock in [_hold(server, project.id) for _ in range(LIMIT)]:  # every slot is free again
        sock.close()


def test_refusals_do_not_leak_slots(limited):
    """Many refusals in a row leave the counter where it was: both slots still serve."""
    server, project = limited
    holders = [_hold(server, project.id)]
    try:
        assert _wait_for(lambda: _ping(server, project.id).status_code == 200)
        holders.append(_hold(server, project.id))
        assert _wait_for(lambda: _ping(server, project.id).status_code == 503)
        statuses = {_ping(server, project.id).status_code for _ in range(20)}
        assert statuses == {503}
    finally:
        for sock in holders:
            sock.close()
    for sock in [_hold(server, project.id) for _ in range(LIMIT)]:
        sock.close()
