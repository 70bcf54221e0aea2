"""The admission limit (``API_MAX_IN_FLIGHT``): past it, /v1 answers a fast JSON 503.

A live ASGI server with a limit of 2 on each /v1 adapter and no project cache. Requests are held
inside their handler deterministically: the test locks the projects table, so every request's
project lookup waits in PostgreSQL until the lock is released.
"""

from __future__ import annotations

import socket
import threading
import time

import psycopg
import pytest
import requests

from conftest import make_project, start_server

LIMIT = 2


@pytest.fixture(scope="module", params=["lean", "django"])
def limited(request, live_env, django_db_blocker):
    project = make_project(django_db_blocker)
    env = {**live_env, "API_MAX_IN_FLIGHT": str(LIMIT), "V1_ADAPTER": request.param, "PROJECT_CACHE_TTL": "0"}
    server = start_server("asgi", env)
    yield server, project, live_env["DATABASE_URL"]
    server.stop()


def _ping(server, project_id: str, timeout: float = 5) -> requests.Response:
    return requests.get(server.endpoint + "/ping", headers={"X-Appwrite-Project": project_id}, timeout=timeout)


def _refused(server, project_id: str) -> bool:
    """True when a ping is refused; a ping that got a slot waits behind the lock (and then holds
    that slot itself until the lock is released), which counts as not refused."""
    try:
        return _ping(server, project_id, timeout=2).status_code == 503
    except requests.Timeout:
        return False


def _wait_for(predicate, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


class _Held:
    """``LIMIT`` pings stuck in their project lookup behind a lock on the projects table."""

    def __init__(self, server, project_id: str, db_url: str):
        self.lock = psycopg.connect(db_url)
        self.lock.execute("LOCK TABLE projects_project IN ACCESS EXCLUSIVE MODE")
        self.statuses: list[int] = []
        self.threads = [threading.Thread(target=self._run, args=(server, project_id)) for _ in range(LIMIT)]
        for thread in self.threads:
            thread.start()
        time.sleep(0.5)  # let them reach the lock before the test probes the limit

    def _run(self, server, project_id):
        self.statuses.append(_ping(server, project_id, timeout=30).status_code)

    def release(self) -> list[int]:
        self.lock.rollback()
        self.lock.close()
        for thread in self.threads:
            thread.join(30)
        return sorted(self.statuses)


def test_full_process_answers_fast_json_503_and_recovers(limited):
    server, project, db_url = limited
    assert _ping(server, project.id).status_code == 200
    held = _Held(server, project.id, db_url)
    try:
        assert _wait_for(lambda: _refused(server, project.id)), "the limit never engaged"
        started = time.monotonic()
        r = _ping(server, project.id)
        assert time.monotonic() - started < 2  # refused at once, not queued behind the lock
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
        statuses = held.release()
    assert statuses == [200] * LIMIT  # the held requests were served, not refused
    # Their slots are free again, whatever way their requests ended: the limit engages only
    # when LIMIT requests are held again.
    assert all(_ping(server, project.id).status_code == 200 for _ in range(2 * LIMIT))
    held = _Held(server, project.id, db_url)
    try:
        assert _wait_for(lambda: _refused(server, project.id))
    finally:
        held.release()
    assert _ping(server, project.id).status_code == 200


def test_slow_clients_hold_no_slot(limited):
    """A client still sending its body costs no CPU: it is not counted (else a few slow uploads,
    or a slow-loris client, would shut the API for everyone)."""
    server, project, _ = limited
    slow = []
    try:
        for _ in range(2 * LIMIT):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            sock.sendall((f"POST /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Appwrite-Project: {project.id}\r\n"
                          "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{").encode())
            slow.append(sock)
        time.sleep(0.3)
        assert all(_ping(server, project.id).status_code == 200 for _ in range(5))
    finally:
        for sock in slow:
            sock.close()
