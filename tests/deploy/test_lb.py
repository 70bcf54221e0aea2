"""The compose `lb` service, proven without Docker: the repo's nginx template, rendered the way the
nginx image renders it (only the upstream name/port and DNS server differ), run by Debian's nginx
in front of API processes started with the compose `api` command (``python -m backend.serve``).

Two API replicas listen on 127.0.0.2 and 127.0.0.3 (same port), and a small DNS server answers
``api.test`` with both addresses, as Docker's DNS answers ``api`` for ``--scale api=2``.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.conf import settings

from conftest import make_project
from tests.deploy.support import NGINX, ROOT, FakeDNS, check_nginx, free_port, start, start_nginx

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (.ci/run installs nginx-light)")

REPLICAS = ["127.0.0.2", "127.0.0.3"]
# The compose lb service's client timeouts.
LB_TIMEOUTS = {"LB_CLIENT_HEADER_TIMEOUT": "30s", "LB_CLIENT_BODY_TIMEOUT": "60s", "LB_KEEPALIVE_TIMEOUT": "65s"}


def _upstreams(lb, since: int) -> list[str]:
    """Upstream addresses nginx logged (one entry per request) after byte ``since`` of its log."""
    return re.findall(r'upstream="([^"]*)"', lb.text()[since:])


@pytest.fixture(scope="module")
def cluster(live_env, django_db_blocker, tmp_path_factory):
    port = free_port()
    # A small concurrency limit, so test_overload_is_503_json can reach it; rate limits off, so
    # that test's burst of session creates from one client IP is not a 429 test.
    env = dict(live_env, ASGI_SERVER="uvicorn", PORT=str(port), TRUSTED_PROXIES="127.0.0.1/32",
               SERVER_GRACEFUL_TIMEOUT="5", SERVER_LIMIT_CONCURRENCY="4", ABUSE_ENABLED="false")
    apis = {}
    dns = FakeDNS({"api.test": list(REPLICAS)})
    procs = []
    try:
        for host in REPLICAS:
            apis[host] = start(f"lb-api-{host}", [sys.executable, "-m", "backend.serve"], dict(env, BIND_HOST=host),
                               ready_url=f"http://{host}:{port}/v1/health/version")
            procs.append(apis[host])
        lb = start_nginx("lb-nginx", tmp_path_factory.mktemp("nginx"), {
            "API_HOST": "api.test", "API_PORT": str(port), "LB_RESOLVER": dns.address,
            "LB_RESOLVER_VALID": "1s", "LB_PORT": str(free_port()), "LB_MAX_BODY": str(settings.MAX_REQUEST_BODY),
            **LB_TIMEOUTS,
        })
        procs.append(lb)
        yield {"lb": lb, "apis": apis, "port": port, "env": env, "dns": dns,
               "project": make_project(django_db_blocker)}
    finally:
        for p in procs:
            p.stop()
        dns.close()


def test_compose_rendering_is_valid(tmp_path):
    """The template rendered with the compose lb service's own environment (its ``${VAR:-default}``
    values interpolated as compose does with no .env) passes `nginx -t`."""
    import yaml

    from tests.deploy.test_compose import interpolate

    env = interpolate(yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["lb"]["environment"], {})
    main = check_nginx(tmp_path, {k: str(v) for k, v in env.items()})
    rendered = (tmp_path / "conf.d" / "default.conf").read_text()
    assert "resolver 127.0.0.11 valid=5s" in rendered and "set $lb_api http://api:8000;" in rendered
    assert "client_max_body_size 5505024;" in rendered and "listen 8080;" in rendered
    assert "${" not in rendered and main.exists()
    # Upgrades are forwarded for the realtime websocket only: every other location inherits
    # `Connection ""` and no Upgrade (nginx passes neither hop-by-hop field unless told), so an
    # Upgrade header on any other path never reaches a server process (docs/reliability-http.md).
    realtime = re.search(r"location /v1/realtime \{(.*?)\n    \}", rendered, re.S).group(1)
    assert "proxy_set_header Upgrade $http_upgrade;" in realtime
    assert "proxy_set_header Connection $lb_connection_upgrade;" in realtime
    elsewhere = rendered.replace(realtime, "")
    assert "Upgrade" not in elsewhere.replace("$http_upgrade $lb_connection_upgrade", "")
    assert 'proxy_set_header Connection "";' in elsewhere


def test_requests_are_spread_over_replicas(cluster):
    lb, project = cluster["lb"], cluster["project"]
    mark = len(lb.text())
    for _ in range(40):
        r = requests.get(lb.url + "/v1/ping", headers={"X-Appwrite-Project": project.id}, timeout=10)
        assert r.status_code == 200 and r.text == "Pong!"
    time.sleep(0.2)
    used = _upstreams(lb, mark)
    assert len(used) == 40
    for host in REPLICAS:
        assert sum(u.startswith(host + ":") for u in used) >= 5, used


def test_body_over_the_cap_gets_413_json(cluster):
    lb, project = cluster["lb"], cluster["project"]
    headers = {"X-Appwrite-Project": project.id, "Content-Type": "application/json"}
    for size in (settings.MAX_REQUEST_BODY + 1, 7 * 1024 * 1024):
        r = requests.post(lb.url + "/v1/account", data=b"x" * size, headers=headers, timeout=30)
        assert r.status_code == 413, (size, r.text)
        assert r.json() == {"message": "The request body is too large.", "code": 413,
                            "type": "general_payload_too_large", "version": settings.APPWRITE_VERSION}
    # A body of exactly the cap passes nginx and reaches the app, which finds no parameters in it
    # (multipart: a JSON body that large would be over MAX_JSON_BODY, the app's own 413).
    multipart = {**headers, "Content-Type": "multipart/form-data; boundary=B"}
    r = requests.post(lb.url + "/v1/account", data=b"x" * settings.MAX_REQUEST_BODY, headers=multipart, timeout=30)
    assert r.status_code == 400, r.text
    assert r.json()["code"] == 400


def test_sdk_through_lb_and_forwarded_client_ip(cluster):
    from appwrite.client import Client
    from appwrite.id import ID
    from appwrite.services.account import Account

    lb, project = cluster["lb"], cluster["project"]
    email = f"lb{time.monotonic_ns()}@example.com"
    server = Client().set_endpoint(lb.url + "/v1").set_project(project.id).set_key(project.key)
    Account(server).create(user_id=ID.unique(), email=email, password="password123")
    # The client's own X-Forwarded-For is kept and nginx appends its peer; the API trusts only
    # the lb (TRUSTED_PROXIES), so the session records the right-most address the lb was given.
    r = requests.post(lb.url + "/v1/account/sessions/email", json={"email": email, "password": "password123"},
                      headers={"X-Appwrite-Project": project.id, "X-Appwrite-Key": project.key,
                               "X-Forwarded-For": "203.0.113.9"}, timeout=10)
    assert r.status_code == 201, r.text
    assert r.json()["ip"] == "203.0.113.9"
    user = Client().set_endpoint(lb.url + "/v1").set_project(project.id).set_session(r.json()["secret"])
    assert Account(user).get().email == email


def test_overload_is_503_json(cluster):
    """Back-pressure: past SERVER_LIMIT_CONCURRENCY uvicorn answers a plain-text 503 at once;
    through the lb the client gets the API's JSON error instead."""
    lb, project = cluster["lb"], cluster["project"]

    def one(_):
        # An anonymous session: a few ms of work per request (two writes), so that 32 concurrent
        # clients really do pass the replicas' concurrency limit of 4 (ping is now too cheap).
        r = requests.post(lb.url + "/v1/account/sessions/anonymous", headers={"X-Appwrite-Project": project.id},
                          timeout=20)
        return r.status_code, r.text

    with ThreadPoolExecutor(32) as pool:
        results = list(pool.map(one, range(160)))
    statuses = {status for status, _ in results}
    assert statuses <= {201, 503} and 503 in statuses, statuses
    for status, text in results:
        if status == 503:
            assert json.loads(text) == {"message": "The server is temporarily overloaded. Please try again shortly.",
                                        "code": 503, "type": "general_service_unavailable",
                                        "version": settings.APPWRITE_VERSION}


def test_upgrade_headers_are_not_forwarded_outside_realtime(cluster):
    """An ``Upgrade: websocket`` on an API path reaches the replica as a plain request (nginx
    drops the hop-by-hop fields), so the API's 400 for a misplaced upgrade never shows here."""
    port = int(cluster["lb"].url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /v1/health/version HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                     b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200") and b'"version"' in answer, answer[:300]


def test_lb_health(cluster):
    r = requests.get(cluster["lb"].url + "/lb-health", timeout=5)
    assert r.status_code == 200 and r.text == "ok"


def test_websocket_upgrade_goes_through(live_env, tmp_path_factory):
    """Realtime comes with its own issue; a tiny ASGI websocket app stands in for the API here."""
    from websockets.sync.client import connect

    port = free_port()
    dns = FakeDNS({"ws.test": ["127.0.0.4"]})
    procs = []
    try:
        procs.append(start("lb-wsapp", [sys.executable, "-m", "uvicorn", "tests.deploy.wsapp:app", "--host",
                                        "127.0.0.4", "--port", str(port), "--no-access-log"], dict(live_env)))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.4", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.1)
        lb = start_nginx("lb-nginx-ws", tmp_path_factory.mktemp("nginx-ws"), {
            "API_HOST": "ws.test", "API_PORT": str(port), "LB_RESOLVER": dns.address,
            "LB_RESOLVER_VALID": "1s", "LB_PORT": str(free_port()), "LB_MAX_BODY": str(settings.MAX_REQUEST_BODY),
            **LB_TIMEOUTS,
        })
        procs.append(lb)
        with connect(lb.url.replace("http", "ws") + "/v1/realtime?project=x", open_timeout=10) as ws:
            hello = json.loads(ws.recv(timeout=10))
            assert hello["path"] == "/v1/realtime"
            assert hello["headers"]["upgrade"].lower() == "websocket"
            assert hello["headers"]["x-forwarded-for"] == "127.0.0.1"
            ws.send("ping")
            assert ws.recv(timeout=10) == "ping"
    finally:
        for p in procs:
            p.stop()
        dns.close()


def test_new_replica_is_picked_up_without_reload(cluster):
    """`docker compose up --scale api=3` while the lb runs: DNS gains an address, nginx uses it."""
    lb, project, port = cluster["lb"], cluster["project"], cluster["port"]
    third = start("lb-api-127.0.0.5", [sys.executable, "-m", "backend.serve"],
                  dict(cluster["env"], BIND_HOST="127.0.0.5"), ready_url=f"http://127.0.0.5:{port}/v1/health/version")
    try:
        mark = len(lb.text())
        cluster["dns"].records["api.test"] = [*REPLICAS, "127.0.0.5"]
        deadline = time.monotonic() + 15  # LB_RESOLVER_VALID is 1 s
        while time.monotonic() < deadline and not any(u.startswith("127.0.0.5:") for u in _upstreams(lb, mark)):
            r = requests.get(lb.url + "/v1/ping", headers={"X-Appwrite-Project": project.id}, timeout=10)
            assert r.status_code == 200
            time.sleep(0.05)
        assert any(u.startswith("127.0.0.5:") for u in _upstreams(lb, mark)), lb.text()[mark:][-2000:]
    finally:
        cluster["dns"].records["api.test"] = list(REPLICAS)
        third.stop()


def test_killed_replica_is_routed_around(cluster):
    lb, project = cluster["lb"], cluster["project"]
    dead = cluster["apis"][REPLICAS[0]]
    dead.proc.kill()
    dead.proc.wait()
    mark = len(lb.text())
    for _ in range(30):
        r = requests.get(lb.url + "/v1/ping", headers={"X-Appwrite-Project": project.id}, timeout=10)
        assert r.status_code == 200, r.text
    time.sleep(0.2)
    used = _upstreams(lb, mark)
    # A request that first tried the dead replica lists both: "127.0.0.2:p, 127.0.0.3:p".
    assert len(used) == 30 and all(u.split(", ")[-1].startswith(REPLICAS[1] + ":") for u in used), used
    assert any(REPLICAS[0] in u for u in used), "the dead replica was never tried"
    # With no replica left, nginx's own 503 keeps the API's error shape.
    cluster["apis"][REPLICAS[1]].proc.kill()
    cluster["apis"][REPLICAS[1]].proc.wait()
    r = requests.get(lb.url + "/v1/ping", headers={"X-Appwrite-Project": project.id}, timeout=20)
    assert r.status_code == 503
    assert r.json() == {"message": "The server is temporarily overloaded. Please try again shortly.", "code": 503,
                        "type": "general_service_unavailable", "version": settings.APPWRITE_VERSION}
