"""Fixtures for the abuse tests: dedicated server processes with their own abuse settings, a
private Redis that a test may stop and restart, and one request per rule."""

from __future__ import annotations

import json
import time
import uuid

import pytest

from conftest import Api, LiveServer, PrivateRedis, free_port, start_server


@pytest.fixture(scope="session")
def dedicated(live_env):
    """``dedicated(kind, **env) -> LiveServer``: a server process of ``kind`` ("asgi"/"wsgi")
    with extra environment variables, started once per distinct environment and stopped at the
    end of the session. ``ABUSE_LIMITS`` may be given as a dict."""
    started: dict[tuple, LiveServer] = {}

    def get(kind: str, **env) -> LiveServer:
        env = {k: json.dumps(v) if isinstance(v, dict) else str(v) for k, v in env.items()}
        key = (kind, tuple(sorted(env.items())))
        if key not in started:
            started[key] = start_server(kind, {**live_env, **env})
        return started[key]

    yield get
    for server in started.values():
        server.stop()


@pytest.fixture
def private_redis():
    r = PrivateRedis(free_port())
    r.start()
    yield r
    r.stop()


def cookieless(server: LiveServer, project) -> Api:
    """An :class:`Api` whose HTTP session keeps no cookies, so a session created by one call
    does not ride along on the next (session-creating routes refuse signed-in callers)."""
    from http.cookiejar import DefaultCookiePolicy

    api = Api(server, project)
    api.http.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
    return api


# --- one request per rule ----------------------------------------------------------------------
# ``setup(api) -> state`` prepares what the call needs (a user, a session) without touching the
# rule's own budget; ``call(api, state) -> response`` makes one request that the rule counts;
# ``ok`` is the status that request gets while under the limit.


def _email() -> str:
    return f"u{uuid.uuid4().hex[:16]}@example.com"


def _user_with_key(api: Api) -> dict:
    email = _email()
    r = api.call("POST", "/account", key=True, json={"userId": "unique()", "email": email, "password": "password123"})
    assert r.status_code == 201, r.text
    return {"email": email}


def _session(api: Api) -> dict:
    email = _email()
    r = api.call("POST", "/account", key=True, json={"userId": "unique()", "email": email, "password": "password123"})
    assert r.status_code == 201, r.text
    s = api.call("POST", "/account/sessions/email", key=True, json={"email": email, "password": "password123"})
    assert s.status_code == 201, s.text
    return {"email": email, "session": s.json()["secret"]}


RULE_CALLS = {
    "account.create": (
        lambda api: {},
        lambda api, st: api.call("POST", "/account", json={"userId": "unique()", "email": _email(),
                                                           "password": "password123"}),
        201,
    ),
    "account.session.email": (
        _user_with_key,
        lambda api, st: api.call("POST", "/account/sessions/email", json={"email": st["email"], "password": "wrong-pass"}),
        401,
    ),
    "account.session.anonymous": (
        lambda api: {},
        lambda api, st: api.call("POST", "/account/sessions/anonymous"),
        201,
    ),
    "account.session.update": (
        _session,
        lambda api, st: api.call("PATCH", "/account/sessions/current", session=st["session"]),
        200,
    ),
    "account.sessions.delete": (
        _session,
        lambda api, st: api.call("DELETE", "/account/sessions/nosuchsession", session=st["session"]),
        404,
    ),
    "account.jwt": (
        _session,
        lambda api, st: api.call("POST", "/account/jwts", session=st["session"]),
        201,
    ),
    "account.password": (
        _session,
        lambda api, st: api.call("PATCH", "/account/password", session=st["session"],
                                 json={"password": "newpassword1", "oldPassword": "not-the-password"}),
        401,
    ),
    "account.email": (
        _session,
        lambda api, st: api.call("PATCH", "/account/email", session=st["session"],
                                 json={"email": _email(), "password": "not-the-password"}),
        401,
    ),
}


def assert_limited(r, limit: int) -> None:
    """``r`` is Appwrite's 429 with the rate-limit headers of an exhausted window."""
    assert r.status_code == 429, r.text
    body = r.json()
    assert body["type"] == "general_rate_limit_exceeded" and body["code"] == 429
    assert r.headers["X-RateLimit-Limit"] == str(limit)
    assert r.headers["X-RateLimit-Remaining"] == "0"
    assert int(r.headers["Retry-After"]) >= 1
    assert int(r.headers["X-RateLimit-Reset"]) >= int(time.time())
