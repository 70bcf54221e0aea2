"""``V1_PROTOCOL`` decides how uvicorn carries /v1, and every ASGI process says which path it runs:
one INFO line at lifespan startup and a line on the admin's home page
(apps/core/http/serving/path.py). Servers started as production starts them
(``python -m backend.serve``) and as the README used to (plain ``uvicorn``, no ``--http``)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys

import pytest
import requests

from apps.adminsite.tests.signin import admin_login, make_staff
from conftest import ROOT, free_port, start_server

SERVE = [sys.executable, "-m", "backend.serve"]


def _plain_uvicorn(port: int) -> list[str]:
    return [sys.executable, "-m", "uvicorn", "backend.asgi:application", "--host", "127.0.0.1", "--port", str(port)]


def _answer(port: int) -> bytes:
    """The raw answer to one ``GET /v1/health/version`` with ``Connection: close``."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET /v1/health/version HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        out = b""
        while data := s.recv(65536):
            out += data
    return out


# (name, environment, command or None for the launcher, the log line's fields, writer's fingerprint)
# The fingerprint tells the protocols apart from outside: the direct protocol's writer
# (apps/core/http/serving/v1_writer.py) puts ``connection: close`` before ``content-length``; uvicorn's
# protocols append it after the application's headers.
CASES = [
    ("default", {}, None, "server=uvicorn protocol=direct adapter=lean", b"connection: close\r\ncontent-length"),
    ("asgi", {"V1_PROTOCOL": "asgi"}, None, "server=uvicorn protocol=asgi adapter=lean",
     b"content-length: 19\r\nconnection: close"),
    # Django's handler gives no length: uvicorn adds its close, then chunks the body.
    ("naive", {"V1_ADAPTER": "django"}, None, "server=uvicorn protocol=asgi adapter=django",
     b"no-referrer\r\nconnection: close\r\ntransfer-encoding: chunked"),
    ("plain-uvicorn", {}, _plain_uvicorn, "server=uvicorn protocol=uvicorn-auto adapter=lean",
     b"content-length: 19\r\nconnection: close"),
]


@pytest.mark.parametrize("name, extra, command, fields, fingerprint", CASES, ids=[c[0] for c in CASES])
def test_the_path_is_the_settings_and_is_logged_and_shown(live_env, django_db_blocker, name, extra, command,
                                                          fields, fingerprint):
    port = free_port()
    env = {**_without_path(live_env), **extra, "PORT": str(port)}
    server = start_server("asgi", env, port=port, command=command(port) if command else SERVE)
    try:
        answer = _answer(port)
        assert answer.startswith(b"HTTP/1.1 200 ") and fingerprint in answer, answer
        username, password = make_staff(django_db_blocker)
        login = admin_login(server, username, password)
        assert login.status_code == 302, login.text[-500:]
        page = requests.get(server.url + "/admin/", cookies=login.cookies, timeout=30).text
    finally:
        server.stop()
    log = server.log.read_text()
    (line,) = [ln for ln in log.splitlines() if " apps.core.http serving: " in ln]
    assert " INFO " in line and fields in line, line
    # live_env's servers run on PostgreSQL without the in-process worker, and say so
    assert ("INFO apps.core.http no in-process worker (TASKS_IN_PROCESS_WORKER is off): mail, messaging, webhooks, "
            "function builds and large deletes wait in their queues for `python manage.py worker`") in log
    if name == "plain-uvicorn":
        assert "WITHOUT the project's head limits" in line
    shown = re.search(r'<p id="serving-path">(.*?)</p>', page, re.S).group(1)
    server_, protocol, adapter = re.findall(r"<code>([^<]*)</code>", shown)
    assert f"server={server_} protocol={protocol} adapter={adapter}" == fields


@pytest.mark.parametrize("env, message", [
    ({"V1_PROTOCOL": "h2"}, "V1_PROTOCOL must be 'direct' or 'asgi', got 'h2'"),
    ({"V1_PROTOCOL": "direct", "V1_ADAPTER": "django"}, "V1_ADAPTER=django needs V1_PROTOCOL=asgi"),
])
def test_contradictory_or_unknown_paths_are_refused(env, message):
    check = "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='backend.settings'; django.setup()"
    done = subprocess.run([sys.executable, "-c", check], cwd=ROOT, env={**_without_path(dict(os.environ)), **env}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and message in done.stderr


def _without_path(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the two path settings (a developer's shell may export them)."""
    return {k: v for k, v in env.items() if k not in ("V1_PROTOCOL", "V1_ADAPTER")}
