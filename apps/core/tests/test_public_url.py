"""The API's own address comes from configuration, never from the request.

Mailed links may point at a registered web platform or at ``PUBLIC_URL``'s host: a forged
``Host`` (or ``X-Forwarded-Host``) header no longer makes a recovery, magic-URL, verification or
invitation link point at an attacker's site. With ``ALLOWED_HOSTS`` set, /v1 refuses a Host that
is not on it (JSON 400) on every build the product starts. ``X-Forwarded-Proto`` is believed
only from ``TRUSTED_PROXIES``. Every /v1 answer carries the security headers.
"""

from __future__ import annotations

import json
import socket
import sys
import time

import pytest
import requests

from apps.core.http.context import Response
from apps.core.http.pipeline import security_headers
from conftest import ORIGIN, SERVER_COMMANDS, Api, free_port, make_project, start_server

EVIL = "evil.example.net"


def _mails_to(sql, email: str) -> list[str]:
    """The JSON of the mail tasks queued for ``email`` and for ``invited-<email>`` (their
    templates' contexts carry the link)."""
    rows = sql("SELECT args_kwargs::text FROM django_tasks_database_dbtaskresult WHERE args_kwargs::text LIKE %s",
               (f"%{email}%",))
    return [text for (text,) in rows]


def _task_count(sql) -> int:
    return sql("SELECT count(*) FROM django_tasks_database_dbtaskresult")[0][0]


def _tokens(sql, project_pk: int) -> int:
    return sql("SELECT count(*) FROM accounts_token WHERE project_id = %s", (project_pk,))[0][0]


# --- mailed links -------------------------------------------------------------------------------

def _link_requests(api: Api, email: str, session: str, team_id: str, url: str):
    """The four routes that mail a link built from a client URL: (name, response)."""
    host = {"Host": EVIL}
    yield "recovery", api.call("POST", "/account/recovery", json={"email": email, "url": url}, headers=host)
    yield "magic-url", api.call("POST", "/account/tokens/magic-url",
                                json={"userId": "unique()", "email": email, "url": url}, headers=host)
    yield "verification", api.call("POST", "/account/verifications/email", json={"url": url}, session=session,
                                   headers=host)
    yield "invitation", api.call("POST", f"/teams/{team_id}/memberships", session=session, headers=host,
                                 json={"email": f"invited-{email}", "roles": ["member"], "url": url})


def test_a_forged_host_cannot_aim_mailed_links(asgi_server, app_project, sql):
    """Host: evil.example.net and a link to evil.example.net: refused (400, nothing stored or
    mailed), although the development server answers any Host (ALLOWED_HOSTS=*)."""
    api = Api(asgi_server, app_project)
    user, session = api.signup()
    team = api.call("POST", "/teams", session=session, json={"teamId": "unique()", "name": "t"}).json()
    tokens, tasks = _tokens(sql, app_project.pk), _task_count(sql)
    for name, r in _link_requests(api, user["email"], session, team["$id"], f"http://{EVIL}/take-over"):
        assert r.status_code == 400, (name, r.text)
        assert r.json()["type"] == "general_argument_invalid", name
        assert EVIL in r.json()["message"], name
    assert _tokens(sql, app_project.pk) == tokens
    assert _task_count(sql) == tasks


def test_links_on_the_public_url_or_a_platform_are_mailed(asgi_server, app_project, sql):
    """The same requests with the Host forged but the link on PUBLIC_URL (or on the project's
    platform) are accepted: the check reads configuration, not the header."""
    api = Api(asgi_server, app_project)
    for url in (f"{asgi_server.url}/reset", f"{ORIGIN}/reset"):
        user, session = api.signup()
        team = api.call("POST", "/teams", session=session, json={"teamId": "unique()", "name": "t"}).json()
        for name, r in _link_requests(api, user["email"], session, team["$id"], url):
            assert r.status_code == 201, (name, url, r.text)
        mailed = _mails_to(sql, user["email"])
        assert len(mailed) == 4 and all(url in text and EVIL not in text for text in mailed), mailed


def test_the_default_magic_url_page_is_on_the_public_url(asgi_server, app_project, sql):
    """Without ``url`` the magic-URL link goes to PUBLIC_URL's page, not the request's Host."""
    api = Api(asgi_server, app_project)
    user, _ = api.signup()
    r = api.call("POST", "/account/tokens/magic-url", json={"userId": "unique()", "email": user["email"]},
                 headers={"Host": EVIL, "X-Forwarded-Host": EVIL})
    assert r.status_code == 201, r.text
    (mailed,) = _mails_to(sql, user["email"])
    assert f"{asgi_server.url}/console/auth/magic-url?" in mailed and EVIL not in mailed


# --- ALLOWED_HOSTS on /v1 ------------------------------------------------------------------------

def _lean_command(port: int) -> list[str]:
    """uvicorn with the lean ASGI adapter for every request (no direct /v1 protocol)."""
    cmd = SERVER_COMMANDS["asgi"](port)
    cmd[cmd.index("--http") + 1] = "apps.core.http.serving.uvicorn_protocol:LimitedHttpToolsProtocol"
    return cmd


@pytest.fixture(scope="module", params=["asgi-direct", "asgi-lean", "wsgi"])
def strict_server(request, live_env):
    """A server with ALLOWED_HOSTS=127.0.0.1,api.example.com and the loopback as trusted proxy."""
    env = {**live_env, "ALLOWED_HOSTS": "127.0.0.1,api.example.com", "TRUSTED_PROXIES": "127.0.0.1/32"}
    kind = "wsgi" if request.param == "wsgi" else "asgi"
    port = free_port()
    server = start_server(kind, env, port=port, command=_lean_command(port) if request.param == "asgi-lean" else None)
    yield server
    server.stop()


def _raw(port: int, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        chunks = []
        while True:
            data = s.recv(65536)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks)


@pytest.mark.parametrize("host, status", [
    ("127.0.0.1", 200),
    ("api.example.com", 200),
    ("API.EXAMPLE.COM:443", 200),
    (EVIL, 400),
    ("api.example.com.evil.example.net", 400),
    ("127.0.0.1@evil.example.net", 400),
    ("", 400),
])
def test_v1_enforces_allowed_hosts(strict_server, host, status):
    if host:
        r = requests.get(strict_server.endpoint + "/health/version", headers={"Host": host}, timeout=10)
        assert r.status_code == status, r.text
        if status == 400:
            assert r.headers["Content-Type"].startswith("application/json")
            body = r.json()
            assert body["type"] == "general_argument_invalid" and body["code"] == 400
            assert "Host" in body["message"]
        return
    # An empty Host over a raw socket (requests always sends one).
    raw = _raw(strict_server.port, b"GET /v1/health/version HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n")
    assert raw.split(b" ", 2)[1] == b"400", raw[:300]


def _handshake(port: int, project: str, host: str) -> bytes:
    """A websocket handshake for /v1/realtime with exactly one ``Host`` header (a client library
    would add its own); returns what the server sent within a few seconds."""
    head = (f"GET /v1/realtime?project={project}&channels[]=account HTTP/1.1\r\nHost: {host}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        s.settimeout(3)
        data = b""
        try:
            while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < 2:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except TimeoutError:
            pass
    return data


def _first_frame(data: bytes) -> dict:
    """The first (unmasked, short) text frame after a 101 answer, as JSON."""
    body = data.split(b"\r\n\r\n", 1)[1]
    length = body[1] & 0x7F
    start = 2 if length < 126 else 4
    if length == 126:
        length = int.from_bytes(body[2:4], "big")
    return json.loads(body[start:start + length])


def test_realtime_refuses_a_host_off_the_list(strict_server, django_db_blocker):
    if strict_server.kind == "wsgi":
        pytest.skip("the WSGI build serves no websockets")
    project = make_project(django_db_blocker)
    refused = _handshake(strict_server.port, project.id, EVIL)
    assert refused.startswith(b"HTTP/1.1 101"), refused[:200]
    frame = _first_frame(refused)
    assert frame["type"] == "error" and frame["data"]["code"] == 1008, frame
    served = _handshake(strict_server.port, project.id, f"127.0.0.1:{strict_server.port}")
    assert served.startswith(b"HTTP/1.1 101"), served[:200]
    assert _first_frame(served)["type"] == "connected"


# --- X-Forwarded-Proto ---------------------------------------------------------------------------

def _session_cookies(api: Api, headers: dict) -> list[str]:
    email = f"proto-{time.monotonic_ns()}@example.com"
    assert api.call("POST", "/account", json={"userId": "unique()", "email": email,
                                                "password": "password123"}).status_code == 201
    r = api.call("POST", "/account/sessions/email", json={"email": email, "password": "password123"},
                 headers=headers)
    assert r.status_code == 201, r.text
    return [c for c in r.raw.headers.getlist("Set-Cookie") if c.startswith("a_session_")]


def test_forwarded_proto_from_a_trusted_proxy_makes_cookies_secure(strict_server, django_db_blocker):
    api = Api(strict_server, make_project(django_db_blocker))
    cookies = _session_cookies(api, {"X-Forwarded-Proto": "https"})
    assert len(cookies) == 2 and all("; secure" in c.lower() for c in cookies), cookies
    plain = _session_cookies(api, {})
    assert len(plain) == 2 and not any("; secure" in c.lower() for c in plain), plain


def test_forwarded_proto_from_anyone_else_is_ignored(asgi_server, wsgi_server, django_db_blocker):
    """The default servers trust no proxy: a client's own X-Forwarded-Proto changes nothing."""
    for server in (asgi_server, wsgi_server):
        api = Api(server, make_project(django_db_blocker))
        cookies = _session_cookies(api, {"X-Forwarded-Proto": "https"})
        assert len(cookies) == 2 and not any("; secure" in c.lower() for c in cookies), (server.kind, cookies)


# --- security headers ----------------------------------------------------------------------------

@pytest.mark.parametrize("path, status", [("/health/version", 200), ("/no-such-route", 404)])
def test_every_v1_answer_has_the_security_headers(asgi_server, wsgi_server, path, status):
    for server in (asgi_server, wsgi_server):
        r = requests.get(server.endpoint + path, timeout=10)
        assert r.status_code == status
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["Referrer-Policy"] == "no-referrer"
        assert "Content-Security-Policy" not in r.headers  # JSON is never rendered as a document


@pytest.mark.parametrize("content_type, csp", [
    ("text/html; charset=utf-8", True), ("image/svg+xml", True), ("application/xml", True),
    ("text/xml", True), ("application/xhtml+xml", True), ("application/json", False),
    ("image/png", False), ("text/plain; charset=utf-8", False), (None, False),
])
def test_documents_get_a_sandboxing_csp(content_type, csp):
    response = Response(content_type=content_type)
    security_headers(response)
    names = dict(response.headers)
    assert names["X-Content-Type-Options"] == "nosniff"
    assert ("Content-Security-Policy" in names) is csp
    if csp:
        assert "default-src 'none'" in names["Content-Security-Policy"] and "sandbox" in names["Content-Security-Policy"]


def test_settings_refuse_a_bad_public_url():
    import subprocess

    from conftest import ROOT

    code = "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='backend.settings'; django.setup()"
    for bad in ("api.example.com", "ftp://api.example.com", "https://api.example.com/v1", "https://u@h",
                "https://h:99999"):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                             env={"PATH": "/usr/bin:/bin", "PUBLIC_URL": bad})
        assert out.returncode != 0 and "PUBLIC_URL must be scheme://host[:port]" in out.stderr, (bad, out.stderr[-300:])
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "APP_ENV": "production", "SECRET_KEY": "k" * 64,
                              "ALLOWED_HOSTS": "a.b"})
    assert out.returncode != 0 and "PUBLIC_URL is required" in out.stderr, out.stderr[-300:]
