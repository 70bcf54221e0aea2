"""The WSGI build is protected from slow and stalled clients by nginx in front, not by itself.

gunicorn's sync workers read a request in the worker: a client that stalls mid-head or mid-body
holds one until gunicorn's ``--timeout`` kills it, so a handful of stalled connections stop the
whole server (in a breaker run, eight made ``/v1/ping`` time out for 40 s). The deployment's
answer is the lb (``deploy/nginx/templates``), which reads every request whole, with its
client timeouts, before a worker sees it. Here the repo's template runs with 1 s timeouts in
front of the baseline exactly as ``python -m backend.serve wsgi`` starts it (2 workers).
"""

from __future__ import annotations

import socket
import sys
import time

import pytest
import requests
from django.conf import settings

from apps.core.tests.rawhttp import exchange
from conftest import make_project
from tests.deploy.support import NGINX, FakeDNS, free_port, start, start_nginx

pytestmark = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (.ci/run installs nginx-light)")

HOST = "127.0.0.5"
WAIT = 10


@pytest.fixture(scope="module")
def baseline_lb(live_env, django_db_blocker, tmp_path_factory):
    port = free_port()
    env = dict(live_env, PORT=str(port), BIND_HOST=HOST, WSGI_WORKERS="2", TRUSTED_PROXIES="127.0.0.1/32")
    dns = FakeDNS({"baseline.test": [HOST]})
    procs = []
    try:
        procs.append(start("lb-baseline-wsgi", [sys.executable, "-m", "backend.serve", "wsgi"], env,
                           ready_url=f"http://{HOST}:{port}/v1/health/version"))
        lb = start_nginx("lb-baseline-nginx", tmp_path_factory.mktemp("nginx-baseline"), {
            "API_HOST": "baseline.test", "API_PORT": str(port), "LB_RESOLVER": dns.address,
            "LB_RESOLVER_VALID": "1s", "LB_PORT": str(free_port()), "LB_MAX_BODY": str(settings.MAX_REQUEST_BODY),
            "LB_CLIENT_HEADER_TIMEOUT": "1s", "LB_CLIENT_BODY_TIMEOUT": "1s", "LB_KEEPALIVE_TIMEOUT": "1s",
        })
        procs.append(lb)
        yield {"lb": lb, "port": int(lb.url.rsplit(":", 1)[1]), "project": make_project(django_db_blocker)}
    finally:
        for p in procs:
            p.stop()
        dns.close()


def _head(project: str, method: str = "GET", extra: str = "") -> bytes:
    return f"{method} /v1/ping HTTP/1.1\r\nHost: x\r\nX-Appwrite-Project: {project}\r\n{extra}".encode()


def test_stalled_clients_do_not_stop_the_baseline(baseline_lb):
    """Eight stalled connections (mid-head, mid-body, idle), more than the workers: ping is
    still answered at once, and nginx closes every stalled connection within its timeouts."""
    project = baseline_lb["project"].id
    stalls = [_head(project)] * 3 + [_head(project, "POST", "Content-Length: 100\r\n\r\n") + b"x" * 10] * 3 + [b""] * 2
    socks = []
    for piece in stalls:
        sock = socket.create_connection(("127.0.0.1", baseline_lb["port"]), timeout=WAIT)
        sock.sendall(piece)
        socks.append(sock)
    try:
        time.sleep(0.5)  # the body stalls have reached gunicorn if nginx passed them on
        for _ in range(4):
            r = requests.get(baseline_lb["lb"].url + "/v1/ping", headers={"X-Appwrite-Project": project}, timeout=5)
            assert r.status_code == 200 and r.text == "Pong!"
        start_wait = time.monotonic()
        for sock in socks:
            while sock.recv(65536):  # nginx's answer, if any, then the close
                pass
        assert time.monotonic() - start_wait < WAIT - 1
    finally:
        for sock in socks:
            sock.close()


HEADS = [
    # (name, head, status): the app's caps answer through nginx; nginx's own refusals are JSON too
    ("40 KiB over 10 headers (the app's cap)", lambda p: [_head(p, extra="".join(
        f"X-H{i}: {'a' * 4096}\r\n" for i in range(10)) + "Connection: close\r\n\r\n")], 431),
    ("one 40 KiB header (nginx's buffer)", lambda p: [_head(p, extra=f"X-Big: {'a' * 40960}\r\n\r\n")], 431),
    ("a 70 KiB request line (nginx's buffer)", lambda p: [f"GET /v1/ping?x={'a' * 70 * 1024} HTTP/1.1\r\n"
                                                          "Host: x\r\n\r\n".encode()], 414),
    ("a 33 KiB request line (the app's cap)", lambda p: [f"GET /v1/ping?x={'a' * 33 * 1024} HTTP/1.1\r\nHost: x\r\n"
                                                            "Connection: close\r\n\r\n".encode()], 414),
]


@pytest.mark.parametrize("name,head,status", HEADS, ids=[h[0] for h in HEADS])
def test_oversized_heads_through_the_lb_are_json(baseline_lb, name, head, status):
    answer = exchange(baseline_lb["port"], head(baseline_lb["project"].id), timeout=WAIT)
    assert answer.status == status, answer
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["code"] == status and answer.json()["type"] == "general_bad_request"
