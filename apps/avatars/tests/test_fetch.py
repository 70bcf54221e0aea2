"""The SSRF guard in-process: which addresses count as public, and that the connection goes to
the address that was checked (DNS rebinding). Only loopback addresses are ever connected to."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from apps.avatars import fetch as f


@pytest.mark.parametrize("address, public", [
    ("8.8.8.8", True), ("2606:4700::1111", True),
    ("127.0.0.1", False), ("10.1.2.3", False), ("172.16.0.1", False), ("192.168.1.1", False),
    ("169.254.169.254", False), ("100.64.0.1", False), ("0.0.0.0", False), ("192.0.2.1", False),
    ("198.18.0.1", False), ("224.0.0.1", False), ("240.0.0.1", False), ("255.255.255.255", False),
    ("::1", False), ("::", False), ("fe80::1", False), ("fc00::1", False), ("ff02::1", False),
    ("::ffff:10.0.0.1", False), ("::ffff:8.8.8.8", False), ("2002:0a00:0001::1", False),
    ("64:ff9b::a00:1", False), ("64:ff9b::808:808", False), ("2001:0:4136:e378:8000:63bf:f5ff:fffe", False),
    ("2001:db8::1", False),
])
def test_public_addresses(address, public):
    assert f.is_public_address(ipaddress.ip_address(address)) is public


@pytest.fixture
def allow_loopback(settings):
    settings.AVATARS_FETCH_ALLOW_NETWORKS = ["127.0.0.1/32"]
    settings.AVATARS_FETCH_TIMEOUT = 3.0
    settings.AVATARS_FETCH_MAX_BYTES = 1024 * 1024
    f._allowed_networks.cache_clear()
    yield
    f._allowed_networks.cache_clear()


def test_connects_to_the_checked_address(allow_loopback, origin):
    """A name whose (played) DNS answer is 127.0.0.1 is fetched from that address, with the name
    as Host: no second resolution happens."""
    origin.routes["/x"] = (200, {"Content-Type": "text/plain"}, b"hello")
    answers = []

    def resolver(host, port):
        answers.append(host)
        return [(socket.AF_INET, ("127.0.0.1", port))]

    got = f.fetch(f"http://rebind.test:{origin.port}/x", resolver=resolver)
    assert got.status == 200 and got.body == b"hello" and answers == ["rebind.test"]


def test_refuses_a_name_that_resolves_inside(allow_loopback, origin):
    def resolver(host, port):
        return [(socket.AF_INET, ("127.0.0.1", port)), (socket.AF_INET, ("127.0.0.2", port))]

    with pytest.raises(f.FetchRefused, match="non-public"):
        f.fetch(f"http://rebind.test:{origin.port}/x", resolver=resolver)
    assert origin.hits == []


def test_scheme_and_host_checks(allow_loopback):
    for url in ("file:///etc/passwd", "gopher://127.0.0.1/", "http:///nohost", "http://127.0.0.1:99999/"):
        with pytest.raises(f.FetchRefused):
            f.fetch(url)


def _closing(version: str, body: bytes, declare_length: bool):
    """A route answering in ``version`` and closing the connection after the body."""
    def handler(request):
        request.close_connection = True
        head = f"{version} 200 OK\r\nContent-Type: image/png\r\nConnection: close\r\n"
        if declare_length:
            head += f"Content-Length: {len(body)}\r\n"
        request.wfile.write(head.encode() + b"\r\n" + body)
        request.wfile.flush()
    return handler


@pytest.mark.parametrize("version, declare_length", [
    ("HTTP/1.0", False), ("HTTP/1.0", True), ("HTTP/1.1", True), ("HTTP/1.1", False),
])
def test_a_server_that_closes_after_answering(allow_loopback, origin, version, declare_length):
    """Regression: an answer that ends the connection (HTTP/1.0, ``Connection: close``, a body
    delimited by the close) is read whole instead of failing on the discarded socket."""
    body = bytes(range(256)) * 300
    origin.routes["/closing"] = _closing(version, body, declare_length)
    got = f.fetch(f"{origin.url}/closing")
    assert got.status == 200 and got.body == body and got.content_type == "image/png"
