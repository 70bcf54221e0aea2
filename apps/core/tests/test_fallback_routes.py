"""Paths outside /v1 that nothing serves answer Appwrite's JSON 404 on every build; the admin
keeps Django's HTML pages."""

from __future__ import annotations

import pytest
import requests

UNSERVED = [
    ("GET", "/"),
    ("GET", "/nope"),
    ("GET", "/v2/ping"),
    ("GET", "/v1x"),
    ("GET", "/favicon.ico"),
    ("GET", "/static/nope.css"),
    ("POST", "/nope"),
    ("DELETE", "/api/things/1"),
    ("GET", "/demo/"),  # the demo is off unless DEMO_ENABLED
]


@pytest.mark.parametrize("method,path", UNSERVED, ids=[f"{m} {p}" for m, p in UNSERVED])
def test_unserved_paths_are_json_404(server, method, path):
    r = requests.request(method, server.url + path, json={"a": 1} if method == "POST" else None, timeout=10,
                         allow_redirects=False)
    assert r.status_code == 404, r.text[:300]
    assert r.headers["Content-Type"] == "application/json"
    assert r.json() == {"message": "The requested route was not found. Please refer to the API docs and try again.",
                        "code": 404, "type": "general_route_not_found", "version": r.json()["version"]}


@pytest.mark.parametrize("path,status", [("/admin/login/", 200), ("/admin/nope/", 302)])
def test_the_admin_keeps_its_pages(server, path, status):
    r = requests.get(server.url + path, timeout=10, allow_redirects=False)
    assert r.status_code == status
    assert r.headers["Content-Type"].startswith("text/html")
