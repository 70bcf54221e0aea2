"""The compose services' commands, run directly against the local PostgreSQL and Redis.

* ``migrate``: ``python manage.py migrate --noinput`` on an empty database;
* ``api``: ``python -m backend.serve`` for each supported ASGI server, in production mode, with
  the image's collected static files; ``baseline``: ``python -m backend.serve wsgi`` (gunicorn);
* each answers the health check, the admin's static files, a Python SDK sign-up and login, and a
  file upload read back whole and as a range;
* graceful shutdown: SIGTERM in the middle of a burst of requests and of requests whose body is
  still arriving: every accepted request is answered, the process exits within the timeout and
  its lifespan shutdown closes the pools.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import orjson
import pytest
import requests
from django.conf import settings

from backend import serve
from conftest import make_project
from tests.deploy.support import ROOT, free_port, start

GRACE = 8  # SERVER_GRACEFUL_TIMEOUT for these tests, seconds


def _settings(**over) -> SimpleNamespace:
    base = dict(ASGI_SERVER="uvicorn", BIND_HOST="0.0.0.0", PORT=8000, SERVER_GRACEFUL_TIMEOUT=20,
                SERVER_LIMIT_CONCURRENCY=1000, SERVER_BACKLOG=2048, SERVER_ACCESS_LOG=False, WSGI_WORKERS=4,
                WSGI_TIMEOUT=30)
    return SimpleNamespace(**(base | over))


@pytest.mark.parametrize("server,expected", [
    ("uvicorn", ["-m uvicorn backend.asgi:application", "--host 0.0.0.0 --port 8000", "--lifespan on",
                 "--timeout-graceful-shutdown 20", "--limit-concurrency 1000", "--backlog 2048", "--no-proxy-headers",
                 "--loop uvloop", f"--http {serve.HTTP_PROTOCOL}", "--no-access-log"]),
    ("daphne", ["-m backend.serve_daphne"]),
])
def test_asgi_command(server, expected):
    line = " ".join(serve.asgi_command(_settings(ASGI_SERVER=server), python="python"))
    for part in expected:
        assert part in line


def test_limit_zero_means_unlimited():
    assert "--limit-concurrency" not in serve.asgi_command(_settings(SERVER_LIMIT_CONCURRENCY=0))


def test_wsgi_command():
    line = " ".join(serve.wsgi_command(_settings(), python="python"))
    assert "-m gunicorn backend.wsgi:application --bind 0.0.0.0:8000 --config python:backend.gunicorn_conf --workers 4" in line
    assert "--timeout 30 --graceful-timeout 20" in line


@pytest.mark.parametrize("server", ["hypercorn", "granian"])
def test_unknown_server_is_refused(server):
    # granian was a choice until its HTTP layer was found to answer malformed requests with
    # non-JSON bodies and to have no body timeout (docs/decisions/granian.md).
    out = subprocess.run([sys.executable, "-m", "backend.serve", "--print"], cwd=ROOT, capture_output=True,
                         text=True, env={"ASGI_SERVER": server, "PATH": "/usr/bin:/bin"})
    assert out.returncode != 0 and "ASGI_SERVER must be one of uvicorn, daphne, got" in out.stderr


def test_production_start_without_secret_fails_clearly():
    out = subprocess.run([sys.executable, "-m", "backend.serve"], cwd=ROOT, capture_output=True, text=True,
                         env={"APP_ENV": "production", "ALLOWED_HOSTS": "x", "PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.returncode != 0 and "SECRET_KEY is not set" in out.stderr


@pytest.fixture(scope="module")
def prod_env(live_env, tmp_path_factory):
    """The compose app environment in production mode, with static files collected as the
    Dockerfile does (``collectstatic`` into STATIC_ROOT)."""
    static = tmp_path_factory.mktemp("static")
    env = dict(live_env, APP_ENV="production", SECRET_KEY="s" * 64, ALLOWED_HOSTS="127.0.0.1,localhost",
               PUBLIC_URL="http://127.0.0.1:8000",
               TRUSTED_PROXIES="127.0.0.1/32", STATIC_ROOT=str(static), SERVER_GRACEFUL_TIMEOUT=str(GRACE),
               BIND_HOST="127.0.0.1")
    out = subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert (static / "admin" / "css" / "base.css").exists()
    return env


@pytest.mark.skipif(not settings.DATABASE_URL, reason="needs PostgreSQL (DATABASE_URL)")
def test_migrate_command_on_an_empty_database(prod_env, sql):
    name = f"deploy_migrate_{int(time.time() * 1000) % 10**8}"
    # template0: nobody connects to it, so a concurrent CREATE DATABASE elsewhere can't block this.
    sql(f'CREATE DATABASE "{name}" TEMPLATE template0')
    try:
        url = prod_env["DATABASE_URL"].rsplit("/", 1)[0] + "/" + name
        out = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, timeout=120,
                             env=dict(prod_env, DATABASE_URL=url), capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        again = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "--check"], cwd=ROOT,
                               timeout=120, env=dict(prod_env, DATABASE_URL=url), capture_output=True, text=True)
        assert again.returncode == 0, again.stdout + again.stderr
    finally:
        sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _sdk_signup_and_login(endpoint: str, project) -> None:
    from appwrite.client import Client
    from appwrite.id import ID
    from appwrite.services.account import Account

    email = f"srv{time.monotonic_ns()}@example.com"
    server = Client().set_endpoint(endpoint).set_project(project.id).set_key(project.key)
    Account(server).create(user_id=ID.unique(), email=email, password="password123")
    session = Account(server).create_email_password_session(email=email, password="password123")
    user = Client().set_endpoint(endpoint).set_project(project.id).set_session(session.secret)
    assert Account(user).get().email == email


def _sdk_file_round_trip(endpoint: str, project) -> None:
    """Upload a 600 KiB file (past the one-message small-body path) and read it back whole and
    as a range that ends mid-piece: each server gets the stream's pieces in the form it takes."""
    from appwrite.client import Client
    from appwrite.id import ID
    from appwrite.input_file import InputFile
    from appwrite.services.storage import Storage

    storage = Storage(Client().set_endpoint(endpoint).set_project(project.id).set_key(project.key))
    bucket = storage.create_bucket(bucket_id=ID.unique(), name="serve").id
    data = os.urandom(600 * 1024)
    file_id = storage.create_file(bucket, ID.unique(), InputFile.from_bytes(data, "blob.bin")).id
    assert storage.get_file_download(bucket, file_id) == data
    url = f"{endpoint}/storage/buckets/{bucket}/files/{file_id}/download"
    part = requests.get(url, headers={"X-Appwrite-Project": project.id, "X-Appwrite-Key": project.key,
                                      "Range": "bytes=1000-300000"}, timeout=10)
    assert part.status_code == 206 and part.content == data[1000:300001]


def _slow_signup(port: int, project_id: str) -> tuple[socket.socket, bytes]:
    """Open a sign-up request and send its headers and half its body; returns the socket and
    the rest of the body. The server has accepted the request and is reading its body."""
    body = orjson.dumps({"userId": "unique()", "email": f"slow{time.monotonic_ns()}@example.com",
                         "password": "password123"})
    head = (f"POST /v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Appwrite-Project: {project_id}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=GRACE + 10)
    half = len(body) // 2
    sock.sendall(head + body[:half])
    return sock, body[half:]


def _read_status(sock: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    sock.close()
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else -1


def _burst(port: int, project_id: str, stop: threading.Event, outcomes: list) -> None:
    """GET /v1/ping on new connections until ``stop``; records (status | error name, time)."""
    request = (f"GET /v1/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Appwrite-Project: {project_id}\r\n"
               "Connection: close\r\n\r\n").encode()
    while not stop.is_set():
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=GRACE + 10)
        except (ConnectionRefusedError, ConnectionResetError):  # reset: the closing listener's backlog
            outcomes.append(("refused", time.monotonic()))
            time.sleep(0.01)
            continue
        try:
            sock.sendall(request)
            status = _read_status(sock)
            # No byte of a response on a connection the server closed: it never took the request
            # (it was still in the listen backlog), so a client may retry it (RFC 9112 §9.3.1).
            outcomes.append((status if status != -1 else "closed-unanswered", time.monotonic()))
        except (ConnectionResetError, BrokenPipeError):
            outcomes.append(("closed-unanswered", time.monotonic()))
        except OSError as exc:  # e.g. a timeout: reported by the test's assertions
            outcomes.append((f"error:{type(exc).__name__}", time.monotonic()))
        finally:
            sock.close()


def _warm_up(url: str, parallel: int = 8, within: float = 15) -> None:
    """Until ``parallel`` concurrent health checks all answer fast: every gunicorn worker has
    booted and loaded the app (the health check at start needs only one)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        threads = [threading.Thread(target=requests.get, args=(url + "/v1/health/version",), kwargs={"timeout": 10})
                   for _ in range(parallel)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if time.monotonic() - t0 < 0.3:
            return


SERVERS = [
    ("uvicorn", ["-m", "backend.serve"]),
    ("daphne", ["-m", "backend.serve"]),
    ("gunicorn", ["-m", "backend.serve", "wsgi"]),
]


@pytest.mark.parametrize("name,args", SERVERS, ids=[s[0] for s in SERVERS])
def test_server_serves_and_shuts_down_gracefully(name, args, prod_env, django_db_blocker):
    port = free_port()
    env = dict(prod_env, PORT=str(port), WSGI_WORKERS="4")  # 3 slow requests + the burst
    if name != "gunicorn":
        env["ASGI_SERVER"] = name
    url = f"http://127.0.0.1:{port}"
    proc = start(f"serve-{name}-{port}", [sys.executable, *args], env, ready_url=url + "/v1/health/version")
    try:
        project = make_project(django_db_blocker)
        _warm_up(url)
        assert requests.get(url + "/v1/health/version", timeout=5).json() == {"version": settings.APPWRITE_VERSION}
        static = requests.get(url + "/static/admin/css/base.css", timeout=5)
        assert static.status_code == 200 and "text/css" in static.headers["Content-Type"]
        assert len(static.content) == int(static.headers["Content-Length"]) > 0
        assert "synchronous iterators" not in proc.text()  # served without Django's streaming warning
        _sdk_signup_and_login(url + "/v1", project)
        _sdk_file_round_trip(url + "/v1", project)

        slow = [_slow_signup(port, project.id) for _ in range(3)]
        stop, outcomes = threading.Event(), []
        workers = [threading.Thread(target=_burst, args=(port, project.id, stop, outcomes)) for _ in range(6)]
        for w in workers:
            w.start()
        time.sleep(0.6)
        term_at = time.monotonic()
        proc.proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        for sock, rest in slow:
            sock.sendall(rest)
        statuses = [_read_status(sock) for sock, _ in slow]
        try:
            proc.proc.wait(GRACE + 5)
        finally:
            stop.set()
            for w in workers:
                w.join(GRACE + 10)
        exited_in = time.monotonic() - term_at
    finally:
        proc.stop()
    log = proc.text()

    assert statuses == [201, 201, 201], (statuses, log[-2000:])
    answered = [o for o, _ in outcomes if isinstance(o, int)]
    assert answered and set(answered) == {200}, (outcomes, log[-2000:])
    assert {o for o, _ in outcomes} <= {200, "refused", "closed-unanswered"}, outcomes
    assert exited_in < GRACE + 5
    assert proc.proc.returncode == 0, log[-2000:]
    if name != "gunicorn":
        assert "lifespan shutdown: database and Redis pools closed" in log, log[-2000:]


def test_runserver_streams_files_as_bytes(live_env, django_db_blocker):
    """``manage.py runserver`` is daphne's (an installed app) while ASGI_SERVER keeps its default
    (uvicorn) and no lifespan runs: streamed pieces must still reach Twisted as bytes, or a
    download over 64 KiB is cut off after its head."""
    port = free_port()
    env = {k: v for k, v in live_env.items() if k != "ASGI_SERVER"}
    url = f"http://127.0.0.1:{port}"
    proc = start(f"runserver-{port}", [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                 env, ready_url=url + "/v1/health/version")
    try:
        _sdk_file_round_trip(url + "/v1", make_project(django_db_blocker))
    finally:
        proc.stop()


# Close code an open websocket gets when its server process is stopped with SIGTERM.
# uvicorn sends 1012 "service restart" (RFC 6455 registry; it has no option to change it);
# daphne through backend.serve_daphne sends 1001 "going away". Appwrite's realtime clients
# reconnect on any.
WS_SERVERS = [
    ("uvicorn", lambda port: ["-m", "uvicorn", "tests.deploy.wsapp:app", "--port", str(port), "--ws",
                              "websockets-sansio", "--timeout-graceful-shutdown", str(GRACE)], 1012),
    ("daphne", lambda port: ["-m", "backend.serve_daphne", "tests.deploy.wsapp:app"], 1001),
]


@pytest.mark.parametrize("name,args,code", WS_SERVERS, ids=["uvicorn", "daphne"])
def test_websocket_closed_with_a_code_on_sigterm(name, args, code, live_env):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    port = free_port()
    env = dict(live_env, PORT=str(port), SERVER_GRACEFUL_TIMEOUT=str(GRACE))
    proc = start(f"ws-{name}-{port}", [sys.executable, *args(port)], env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                ws = connect(f"ws://127.0.0.1:{port}/v1/realtime", open_timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        ws.recv(timeout=5)
        proc.proc.send_signal(signal.SIGTERM)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=GRACE)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == code
        proc.proc.wait(GRACE + 5)
    finally:
        proc.stop()
