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


MISSING_V1 = [
    ("GET", "/users"),
    ("POST", "/account/sessions/email"),
    ("GET", "/tablesdb/shop/tables/products/rows"),
    ("DELETE", "/ping"),  # a route under /v1, if not for this method
]


@pytest.mark.parametrize("method,path", MISSING_V1, ids=[f"{m} {p}" for m, p in MISSING_V1])
def test_a_path_missing_its_v1_says_so(server, method, path):
    """An SDK whose endpoint lacks ``/v1`` (``http://host:8000``) is told to add it."""
    r = requests.request(method, server.url + path, json={"a": 1} if method == "POST" else None, timeout=10,
                         headers={"X-Appwrite-Project": "demo"}, allow_redirects=False)
    assert r.status_code == 404 and r.headers["Content-Type"] == "application/json", r.text[:300]
    body = r.json()
    assert body["type"] == "general_route_not_found" and body["code"] == 404
    assert body["message"] == ("The requested route was not found. Please refer to the API docs and try again. "
                               f"The API's routes start with /v1: did you mean /v1{path}? (An SDK's endpoint "
                               "ends in /v1, e.g. http://127.0.0.1:8000/v1.)")


@pytest.mark.parametrize("path,status", [("/admin/login/", 200), ("/admin/nope/", 302)])
def test_the_admin_keeps_its_pages(server, path, status):
    r = requests.get(server.url + path, timeout=10, allow_redirects=False)
    assert r.status_code == status
    assert r.headers["Content-Type"].startswith("text/html")
