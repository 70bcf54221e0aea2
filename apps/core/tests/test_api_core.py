"""Ping, health, routing, errors, CORS and body limits on the live ASGI server."""

from __future__ import annotations

import pytest
import requests

CASES = [
    # (name, method, path, project, key, status, error type)
    ("ping", "GET", "/ping", True, False, 200, None),
    ("ping without project", "GET", "/ping", False, False, 400, "project_id_missing"),
    ("version is public", "GET", "/health/version", False, False, 200, None),
    ("health needs a key", "GET", "/health", True, False, 401, "general_unauthorized_scope"),
    ("health with key", "GET", "/health", True, True, 200, None),
    ("health db", "GET", "/health/db", True, True, 200, None),
    ("health cache", "GET", "/health/cache", True, True, 200, None),
    ("unknown route", "GET", "/nope", True, False, 404, "general_route_not_found"),
    ("wrong method", "DELETE", "/ping", True, False, 405, "general_not_implemented"),
    ("wrong method, dynamic path", "PATCH", "/storage/buckets/b1", True, True, 405, "general_not_implemented"),
    ("wrong method, no project", "POST", "/health/version", False, False, 405, "general_not_implemented"),
    ("bare prefix", "GET", "", True, False, 404, "general_route_not_found"),
    ("trailing slash", "GET", "/ping/", True, False, 404, "general_route_not_found"),
    ("openapi is public", "GET", "/openapi.json", False, False, 200, None),
]


@pytest.mark.parametrize("name,method,path,with_project,key,status,etype", CASES, ids=[c[0] for c in CASES])
def test_core_routes(api, name, method, path, with_project, key, status, etype):
    r = api.call(method, path, project=with_project, key=key)
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"]
    if etype:
        body = r.json()
        assert body["type"] == etype
        assert set(body) == {"message", "code", "type", "version"}
        assert body["code"] == status
        assert r.headers["Cache-Control"] == "no-cache, no-store, must-revalidate"


@pytest.mark.parametrize("method,path,allow", [
    ("DELETE", "/ping", "GET, HEAD"),
    ("PATCH", "/storage/buckets/b1", "DELETE, GET, HEAD, PUT"),
    ("POST", "/locale", "GET, HEAD"),
])
def test_wrong_method_names_allowed_methods(api, method, path, allow):
    r = api.call(method, path, key=True)
    assert r.status_code == 405
    assert r.headers["Allow"] == allow


def test_wrong_method_on_every_build(server, project):
    """The ASGI, WSGI and Django-handler builds answer a wrong method alike."""
    from conftest import Api

    r = Api(server, project).call("PUT", "/locale", key=True)
    assert r.status_code == 405 and r.json()["type"] == "general_not_implemented"
    assert r.headers["Allow"] == "GET, HEAD"


def test_ping_body(api):
    r = api.call("GET", "/ping")
    assert r.text == "Pong!"
    assert r.headers["Content-Type"].startswith("text/plain")


def test_unknown_project(api):
    r = api.call("GET", "/ping", headers={"X-Appwrite-Project": "does-not-exist"})
    assert r.status_code == 404 and r.json()["type"] == "project_not_found"


def test_project_from_query_param(api):
    r = requests.get(api.server.endpoint + "/ping", params={"project": api.project.id})
    assert r.status_code == 200


def test_health_db_and_cache_report_pass(api):
    for path in ("/health/db", "/health/cache"):
        body = api.call("GET", path, key=True).json()
        assert body["statuses"][0]["status"] == "pass"


def test_openapi_lists_declared_routes(api):
    doc = api.call("GET", "/openapi.json", project=False).json()
    assert doc["openapi"].startswith("3.")
    assert "post" in doc["paths"]["/v1/account"]
    assert doc["paths"]["/v1/account"]["post"]["operationId"] == "account.create"
    body = doc["paths"]["/v1/account"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert {"userId", "email", "password"} <= set(body["required"])


def test_oversized_body_refused_before_reading(api):
    big = b"{" + b" " * (6 * 1024 * 1024) + b"}"
    r = api.call("POST", "/account", data=big, headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    assert r.json()["type"] == "general_payload_too_large"


class TestCors:
    def test_allowed_origin_is_echoed_with_credentials(self, asgi_server, django_db_blocker):
        from conftest import Api, make_project

        api = Api(asgi_server, make_project(django_db_blocker, origins=("http://app.test:5173",)))
        r = api.call("GET", "/ping", headers={"Origin": "http://app.test:5173"})
        assert r.status_code == 200
        assert r.headers["Access-Control-Allow-Origin"] == "http://app.test:5173"
        assert r.headers["Access-Control-Allow-Credentials"] == "true"
        assert "X-Fallback-Cookies" in r.headers["Access-Control-Expose-Headers"]

    def test_unknown_origin_is_refused(self, api):
        r = api.call("GET", "/ping", headers={"Origin": "http://evil.test"})
        assert r.status_code == 403
        assert r.json()["type"] == "general_unknown_origin"
        assert "Access-Control-Allow-Origin" not in r.headers

    def test_api_key_callers_skip_origin_check(self, api):
        r = api.call("GET", "/health", key=True, headers={"Origin": "http://evil.test"})
        assert r.status_code == 200
        assert "Access-Control-Allow-Origin" not in r.headers

    def test_preflight(self, asgi_server, django_db_blocker):
        from conftest import make_project

        make_project(django_db_blocker, origins=("http://pre.test",))
        ok = requests.options(asgi_server.endpoint + "/account", headers={
            "Origin": "http://pre.test", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-appwrite-project,content-type"})
        assert ok.status_code == 204
        assert ok.headers["Access-Control-Allow-Origin"] == "http://pre.test"
        assert "X-Appwrite-Project" in ok.headers["Access-Control-Allow-Headers"]
        bad = requests.options(asgi_server.endpoint + "/account", headers={
            "Origin": "http://never-registered.test", "Access-Control-Request-Method": "POST"})
        assert bad.status_code == 204
        assert "Access-Control-Allow-Origin" not in bad.headers
