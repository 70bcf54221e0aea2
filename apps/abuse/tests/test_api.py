"""Rate limits on the live servers with Appwrite's default table (ASGI and WSGI alike)."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from apps.abuse.rules import DEFAULT_RULES
from apps.abuse.tests.conftest import RULE_CALLS, assert_limited, cookieless
from conftest import EVERY_BUILD, Api


@pytest.fixture
def srv_api(server, project) -> Api:
    return cookieless(server, project)


@pytest.mark.parametrize("rule", sorted(RULE_CALLS))
def test_default_rule_allows_limit_then_429(srv_api, rule):
    """``limit`` calls pass with counting-down headers; the next one is refused before the handler."""
    setup, call, ok = RULE_CALLS[rule]
    limit, window = DEFAULT_RULES[rule].limit, DEFAULT_RULES[rule].window
    state = setup(srv_api)
    for i in range(limit):
        r = call(srv_api, state)
        assert r.status_code == ok, (i, r.text)
        assert r.headers["X-RateLimit-Limit"] == str(limit)
        assert r.headers["X-RateLimit-Remaining"] == str(limit - i - 1)
    before = time.time()
    r = call(srv_api, state)
    assert_limited(r, limit)
    assert int(r.headers["Retry-After"]) <= window
    assert before < int(r.headers["X-RateLimit-Reset"]) <= before + window + 1


@EVERY_BUILD  # also on the naive build: one of its smoke tests (conftest.EVERY_BUILD)
def test_refused_request_does_nothing(srv_api):
    for _ in range(10):
        assert RULE_CALLS["account.create"][1](srv_api, {}).status_code == 201
    email = f"late{uuid.uuid4().hex[:12]}@example.com"
    body = {"userId": "unique()", "email": email, "password": "password123"}
    assert srv_api.call("POST", "/account", json=body).status_code == 429
    # Had the refused call created the user, this would be a 409.
    assert srv_api.call("POST", "/account", json=body, key=True).status_code == 201


def test_email_session_failed_logins_count_and_a_good_login_resets(srv_api):
    email = f"r{uuid.uuid4().hex[:12]}@example.com"
    srv_api.call("POST", "/account", key=True, json={"userId": "unique()", "email": email, "password": "password123"})
    bad = {"email": email, "password": "wrong-pass"}
    for i in range(9):
        r = srv_api.call("POST", "/account/sessions/email", json=bad)
        assert r.status_code == 401 and r.headers["X-RateLimit-Remaining"] == str(9 - i)
    good = srv_api.call("POST", "/account/sessions/email", json={"email": email, "password": "password123"})
    assert good.status_code == 201 and good.headers["X-RateLimit-Remaining"] == "0"
    # The 201 cleared the counter: a full budget again.
    for i in range(10):
        r = srv_api.call("POST", "/account/sessions/email", json=bad)
        assert r.status_code == 401 and r.headers["X-RateLimit-Remaining"] == str(9 - i)
    assert_limited(srv_api.call("POST", "/account/sessions/email", json=bad), 10)
    # Now even the right password is refused, and the refusal resets nothing.
    assert_limited(srv_api.call("POST", "/account/sessions/email", json={"email": email, "password": "password123"}), 10)
    assert_limited(srv_api.call("POST", "/account/sessions/email", json=bad), 10)


def test_email_budget_is_per_email(srv_api):
    users = []
    for _ in range(2):
        email = f"p{uuid.uuid4().hex[:12]}@example.com"
        srv_api.call("POST", "/account", key=True, json={"userId": "unique()", "email": email, "password": "password123"})
        users.append(email)
    for _ in range(10):
        srv_api.call("POST", "/account/sessions/email", json={"email": users[0].upper(), "password": "nope-nope"})
    assert_limited(srv_api.call("POST", "/account/sessions/email", json={"email": users[0], "password": "x"}), 10)
    r = srv_api.call("POST", "/account/sessions/email", json={"email": users[1], "password": "password123"})
    assert r.status_code == 201 and r.headers["X-RateLimit-Remaining"] == "9"


def test_api_key_callers_are_never_blocked_but_get_headers(srv_api):
    def create(key: bool):
        return srv_api.call("POST", "/account", key=key, json={
            "userId": "unique()", "email": f"k{uuid.uuid4().hex[:12]}@example.com", "password": "password123"})

    for _ in range(12):  # keys read the counter but do not consume it
        r = create(True)
        assert r.status_code == 201
        assert (r.headers["X-RateLimit-Limit"], r.headers["X-RateLimit-Remaining"]) == ("10", "10")
    for _ in range(10):
        assert create(False).status_code == 201
    assert_limited(create(False), 10)
    r = create(True)
    assert r.status_code == 201 and r.headers["X-RateLimit-Remaining"] == "0"


def test_parallel_requests_never_exceed_the_limit(server, project):
    """200 concurrent sign-ups from one IP at a 10-per-hour route: exactly 10 succeed."""

    def one(i: int) -> int:
        return requests.post(server.endpoint + "/account", headers={"X-Appwrite-Project": project.id}, timeout=60,
                             json={"userId": "unique()", "email": f"c{i}-{uuid.uuid4().hex[:8]}@example.com",
                                   "password": "password123"}).status_code

    with ThreadPoolExecutor(max_workers=100) as pool:
        statuses = list(pool.map(one, range(200)))
    assert statuses.count(201) == 10, statuses
    assert statuses.count(429) == 190


def test_forged_forwarded_for_from_untrusted_peer_is_ignored(srv_api):
    for i in range(10):
        r = RULE_CALLS["account.create"][1](srv_api, {}) if i % 2 else srv_api.call(
            "POST", "/account", headers={"X-Forwarded-For": f"198.51.100.{i}"},
            json={"userId": "unique()", "email": f"f{i}{uuid.uuid4().hex[:8]}@example.com", "password": "password123"})
        assert r.status_code == 201
    r = srv_api.call("POST", "/account", headers={"X-Forwarded-For": "203.0.113.99"},
                     json={"userId": "unique()", "email": "g@example.com", "password": "password123"})
    assert_limited(r, 10)


def test_unlimited_routes_send_no_headers(srv_api):
    _, session = srv_api.signup()
    r = srv_api.call("GET", "/account", session=session)
    assert r.status_code == 200 and "X-RateLimit-Limit" not in r.headers


# Bad input on limited routes, one request each on a fresh project. ``remaining`` is the expected
# X-RateLimit-Remaining (None = no rate headers: the request was refused before the check).
BAD_INPUT = [
    # (name, method, path, kwargs, auth, status, error type, remaining)
    ("no project", "POST", "/account", {"project": False}, "none", 400, "project_id_missing", None),
    ("unknown project", "POST", "/account", {"headers": {"X-Appwrite-Project": "nope"}}, "none", 404,
     "project_not_found", None),
    ("invalid API key", "POST", "/account", {"headers": {"X-Appwrite-Key": "wrong"}}, "none", 401,
     "user_unauthorized", None),
    ("malformed JSON body", "POST", "/account", {"data": b"{", "headers": {"Content-Type": "application/json"}},
     "none", 400, None, None),
    ("missing fields still count", "POST", "/account", {"json": {}}, "none", 400, "general_argument_invalid", 9),
    ("undeclared field ignored, still counts", "POST", "/account/sessions/email",
     {"json": {"email": "a@b.io", "password": "x", "evil": 1}}, "none", 401, "user_invalid_credentials", 9),
    ("email as a number", "POST", "/account/sessions/email", {"json": {"email": 12345, "password": "x"}}, "none",
     400, "general_argument_invalid", 9),
    ("oversized email", "POST", "/account/sessions/email", {"json": {"email": "a" * 400 + "@x.io", "password": "x"}},
     "none", 400, "general_argument_invalid", 9),
    ("email session while signed in", "POST", "/account/sessions/email",
     {"json": {"email": "a@b.io", "password": "x"}}, "session", 401, "user_session_already_exists", None),
    ("guest on a session route", "POST", "/account/jwts", {}, "none", 401, "general_unauthorized_scope", None),
    ("garbage X-Forwarded-For", "POST", "/account/sessions/anonymous",
     {"headers": {"X-Forwarded-For": "not-an-ip, 999.1.1.1, " + "9" * 5000}}, "none", 201, None, 49),
    ("API key with bad input", "POST", "/account", {"json": {"email": "bad"}}, "key", 400,
     "general_argument_invalid", 10),
    ("unknown session id still counts", "DELETE", "/account/sessions/does-not-exist", {}, "session", 404,
     "user_session_not_found", 99),
    ("wrong old password", "PATCH", "/account/password", {"json": {"password": "newpassword1", "oldPassword": "x"}},
     "session", 401, "user_invalid_credentials", 9),
    ("bad JWT duration", "POST", "/account/jwts", {"json": {"duration": -5}}, "session", 400,
     "general_argument_invalid", 119),
]


@pytest.mark.parametrize("name,method,path,kwargs,auth,status,etype,remaining", BAD_INPUT,
                         ids=[c[0] for c in BAD_INPUT])
def test_bad_input(srv_api, name, method, path, kwargs, auth, status, etype, remaining):
    kwargs = dict(kwargs)
    if auth == "session":
        kwargs["session"] = srv_api.signup()[1]
    r = srv_api.call(method, path, key=auth == "key", **kwargs)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
    if remaining is None:
        assert "X-RateLimit-Remaining" not in r.headers
    else:
        assert r.headers["X-RateLimit-Remaining"] == str(remaining)
    assert r.status_code != 500
