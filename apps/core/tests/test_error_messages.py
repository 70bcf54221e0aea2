"""Errors that tell the caller what to do: a refusal names the role the request was seen as (a
guest is told why it may be one), a development server's rate limit says how to turn limits
off, and an unregistered origin or redirect URL says how to register it on this server, which
has no console."""

from __future__ import annotations

import json

import pytest
import requests

from conftest import ORIGIN, Api, start_server


def test_a_scope_refusal_names_the_role_and_the_scope(asgi_server, project):
    r = Api(asgi_server, project).call("GET", "/account")
    assert r.status_code == 401
    body = r.json()
    assert body["type"] == "general_unauthorized_scope"
    assert "(role: guests)" in body["message"] and '["account"]' in body["message"], body


def test_a_permission_refusal_names_the_role(asgi_server, wsgi_server, project):
    """A guest reading a private bucket's file list: user_unauthorized with the role."""
    for server in (asgi_server, wsgi_server):
        api = Api(server, project)
        bucket = api.call("POST", "/storage/buckets", key=True,
                          json={"bucketId": "unique()", "name": "private", "fileSecurity": False}).json()
        r = api.call("GET", f"/storage/buckets/{bucket['$id']}/files")
        assert r.status_code == 401, r.text
        body = r.json()
        assert body["type"] == "user_unauthorized"
        assert body["message"].startswith("The current user is not authorized to perform the requested action.")
        assert "(role: guests)" in body["message"] and "empty secret" in body["message"]


@pytest.fixture(scope="module")
def limited_server(live_env):
    server = start_server("asgi", {**live_env, "ABUSE_ENABLED": "true", "ABUSE_LIMITS": json.dumps({"account.create": 1})})
    yield server
    server.stop()


def test_a_development_rate_limit_says_how_to_turn_limits_off(limited_server, project):
    api = Api(limited_server, project)
    answers = [api.call("POST", "/account", json={"userId": "unique()", "email": f"rl{i}@example.com",
                                                  "password": "password123"}) for i in range(2)]
    assert [a.status_code for a in answers] == [201, 429], [a.text for a in answers]
    body = answers[1].json()
    assert body["type"] == "general_rate_limit_exceeded"
    assert "ABUSE_ENABLED=false" in body["message"] and "Development server" in body["message"]


def test_an_unregistered_origin_says_how_to_register_it(asgi_server, app_project):
    r = requests.get(asgi_server.endpoint + "/account", timeout=10,
                     headers={"X-Appwrite-Project": app_project.id, "Origin": "http://elsewhere.example:3000"})
    assert r.status_code == 403
    body = r.json()
    assert body["type"] == "general_unknown_origin"
    assert "(http://elsewhere.example:3000)" in body["message"]
    assert f"manage.py createproject {app_project.id} --origin" in body["message"]
    # A redirect URL off the platforms: the same hint, naming the host.
    r = Api(asgi_server, app_project).call("POST", "/account/recovery", headers={"Origin": ORIGIN},
                                            json={"email": "nobody@example.com", "url": "https://elsewhere.example/r"})
    assert r.status_code == 400 and "elsewhere.example" in r.json()["message"]
    assert "--exists-ok" in r.json()["message"]
