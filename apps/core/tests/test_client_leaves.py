"""A client that leaves stops its request's work, its PostgreSQL statement included.

The list queries are made slow by a lock this test holds on the rows table; the clients leave
after a second. Their statements must be gone from PostgreSQL at once (not when the lock is
released or ``statement_timeout`` fires), so the pool's connections serve the next request.
"""

from __future__ import annotations

import socket
import time

import psycopg
import pytest

from apps.databases.tests.conftest import Tdb
from conftest import Api, start_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

CLIENTS = 8


def _waiting(conn, marker: str) -> int:
    """Backends waiting for a lock on a statement that mentions ``marker``."""
    return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        "AND pid <> pg_backend_pid() AND query LIKE %s", (f"%{marker}%",)).fetchone()[0]


@pytest.mark.parametrize("kind", ["asgi", "lean_asgi", "naive", "wsgi"])
def test_clients_that_leave_free_their_connections(kind, live_env, project):
    env = {**live_env, "DB_POOL_MAX_SIZE": "4", "DB_STATEMENT_TIMEOUT_MS": "30000"}
    if kind == "naive":
        env["V1_ADAPTER"] = "django"
    if kind == "lean_asgi":
        env |= {"V1_PROTOCOL": "asgi", "V1_ADAPTER": "lean"}
    server = start_server("wsgi" if kind == "wsgi" else "asgi", env)
    lock = psycopg.connect(live_env["DATABASE_URL"], autocommit=True)
    watcher = psycopg.connect(live_env["DATABASE_URL"], autocommit=True)
    clients: list[socket.socket] = []
    try:
        api = Api(server, project)
        t = Tdb(api).setup(columns=[("varchar", {"key": "title", "size": 64, "required": False})])
        assert t.add({"title": "x"}).status_code == 201
        lock.execute("BEGIN")
        lock.execute("LOCK TABLE databases_row IN ACCESS EXCLUSIVE MODE")
        request = (f"GET /v1{t.R} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Appwrite-Project: {project.id}\r\n"
                   f"X-Appwrite-Key: {project.key}\r\n\r\n").encode()
        for _ in range(CLIENTS):
            s = socket.create_connection(("127.0.0.1", server.port))
            s.sendall(request)
            clients.append(s)
        deadline = time.monotonic() + 5
        while _waiting(watcher, "databases_row") == 0:
            assert time.monotonic() < deadline, "the list queries never reached PostgreSQL"
            time.sleep(0.05)
        time.sleep(1)
        for s in clients:
            s.close()
        left = time.monotonic()
        while _waiting(watcher, "databases_row"):
            assert time.monotonic() - left < 3, f"{_waiting(watcher, 'databases_row')} statements still running"
            time.sleep(0.05)
        started = time.monotonic()
        r = api.call("GET", t.T, key=True, timeout=30)  # needs a pooled connection, not the rows table
        assert r.status_code == 200, r.text
        assert time.monotonic() - started < 2
    finally:
        for s in clients:
            s.close()
        lock.close()
        watcher.close()
        server.stop()


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_statement_timeout_answers_408_database_timeout(kind, live_env, project):
    """No statement holds a connection longer than DB_STATEMENT_TIMEOUT_MS: a list stuck
    behind a lock answers 408 ``database_timeout`` (the WSGI build had no limit at all)."""
    server = start_server(kind, {**live_env, "DB_STATEMENT_TIMEOUT_MS": "700"})
    lock = psycopg.connect(live_env["DATABASE_URL"], autocommit=True)
    try:
        api = Api(server, project)
        t = Tdb(api).setup(columns=[("varchar", {"key": "title", "size": 64, "required": False})])
        lock.execute("BEGIN")
        lock.execute("LOCK TABLE databases_row IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        r = api.call("GET", t.R, key=True, timeout=30)
        assert r.status_code == 408 and r.json()["type"] == "database_timeout", r.text
        assert time.monotonic() - started < 5
        lock.execute("ROLLBACK")
        assert api.call("GET", t.R, key=True).status_code == 200
    finally:
        lock.close()
        server.stop()
