"""A webhook POST resolves its host once, checks the address and connects to that very address
(DNS rebinding cannot send it elsewhere): against the local receiver, in this process, with the
production rule switched on through the settings."""

from __future__ import annotations

import socket
import time

import pytest

from apps.webhooks.post import post

HEADERS = {"Content-Type": "application/json", "X-Appwrite-Webhook-Id": "hook"}


@pytest.fixture
def production(settings):
    settings.PRODUCTION = True
    settings.WEBHOOK_ALLOW_NETWORKS = []
    return settings


def _path(tag: str) -> str:
    return f"/{tag}-{time.monotonic_ns()}"


def test_a_name_resolving_to_a_private_address_is_refused_in_production(production, receiver):
    path = _path("localhost")
    status, text, error = post(f"http://localhost:{receiver.port}{path}", b"{}", HEADERS, verify=False, auth=None,
                               timeout=5)
    assert (status, text) == (0, "") and error == "Webhook target localhost rejected: not a public address."
    assert receiver.at(path) == []


def test_one_private_address_among_public_ones_is_refused(production, receiver):
    calls = []

    def resolver(host, port):
        calls.append(host)
        return [(socket.AF_INET, ("93.184.215.14", port)), (socket.AF_INET, ("10.1.2.3", port))]

    status, _, error = post("http://hooks.example.test/in", b"{}", HEADERS, verify=False, auth=None, timeout=5,
                            resolver=resolver)
    assert status == 0 and "not a public address" in error and calls == ["hooks.example.test"]


def test_the_connection_goes_to_the_checked_address_with_the_host_name_kept(production, receiver):
    """The resolver answers an allowed address once and a forbidden one afterwards (a rebinding
    DNS server): the POST reaches the first, and the name is never resolved again."""
    production.WEBHOOK_ALLOW_NETWORKS = ["127.0.0.0/8"]
    answers = [[(socket.AF_INET, ("127.0.0.1", receiver.port))]]

    def resolver(host, port):
        if not answers:
            return [(socket.AF_INET, ("169.254.169.254", port))]
        return answers.pop()

    path = _path("pinned")
    status, text, error = post(f"http://hooks.rebind.test:{receiver.port}{path}", b'{"a":1}', HEADERS, verify=False,
                               auth=("user", "pass"), timeout=5, resolver=resolver)
    assert (status, text, error) == (200, "ok", "")
    [got] = receiver.at(path)
    assert got.headers["host"] == f"hooks.rebind.test:{receiver.port}" and got.body == b'{"a":1}'
    assert got.headers["authorization"] == "Basic dXNlcjpwYXNz" and got.headers["x-appwrite-webhook-id"] == "hook"
    assert answers == []  # resolved exactly once


def test_outside_production_private_receivers_are_allowed_and_errors_reported(settings, receiver):
    settings.PRODUCTION = False
    path = _path("dev")
    assert post(f"http://localhost:{receiver.port}{path}", b"{}", HEADERS, verify=False, auth=None,
                timeout=5)[:2] == (200, "ok")
    assert len(receiver.at(path)) == 1
    status, _, error = post("http://nowhere.test/x", b"{}", HEADERS, verify=False, auth=None, timeout=5,
                            resolver=lambda host, port: [])
    assert status == 0 and error == "Webhook target nowhere.test cannot be resolved."
    status, _, error = post("ftp://example.test/x", b"{}", HEADERS, verify=False, auth=None, timeout=5)
    assert status == 0 and "not an http(s) URL" in error


def test_header_values_outside_latin1_or_with_line_breaks_are_sent_not_raised(settings, receiver):
    """A webhook named ``Café ✓`` (or with a line break in its name) made http.client raise
    before sending: no delivery, no failure counted, for every event. Its name goes as UTF-8, line
    breaks as spaces, and never as a header of its own; a URL path http.client cannot send is a
    reported failure, not an exception."""
    settings.PRODUCTION = False
    path = _path("names")
    headers = {**HEADERS, "X-Appwrite-Webhook-Name": "Café ✓\r\nX-Evil: 1"}
    assert post(f"http://127.0.0.1:{receiver.port}{path}", b"{}", headers, verify=False, auth=("ü", "p✓"),
                timeout=5)[:3] == (200, "ok", "")
    [got] = receiver.at(path)
    assert got.headers["x-appwrite-webhook-name"].encode("latin-1").decode() == "Café ✓  X-Evil: 1"
    assert "x-evil" not in got.headers
    status, _, error = post(f"http://127.0.0.1:{receiver.port}/é", b"{}", HEADERS, verify=False, auth=None, timeout=5)
    assert status == 0 and "UnicodeEncodeError" in error
