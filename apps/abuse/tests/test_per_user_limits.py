"""Budgets counted per user whatever the client IP (docs/security-accounts.md): guessing a sign-in
code from many addresses, and the password check of an email change. The servers trust
127.0.0.1 as a proxy, so each request's ``X-Forwarded-For`` is its client IP."""

from __future__ import annotations

import pytest

from apps.abuse.tests.conftest import assert_limited, cookieless

KINDS = ["asgi", "wsgi"]
# The same environment as test_settings_live's proxy test, so one server per kind serves both.
PROXY_ENV = {"TRUSTED_PROXIES": "127.0.0.1", "ABUSE_LIMITS": {"account.session.anonymous": 2}}


def _ip(n: int) -> dict:
    return {"X-Forwarded-For": f"198.51.100.{n}"}


def _code(api, email: str) -> tuple[str, str]:
    """``(userId, code)`` of a fresh email sign-in code (an API key sees the code)."""
    r = api.call("POST", "/account/tokens/email", json={"userId": "unique()", "email": email}, key=True)
    assert r.status_code == 201, r.text
    return r.json()["userId"], r.json()["secret"]


@pytest.mark.parametrize("path,method", [("/account/sessions/token", "POST"),
                                         ("/account/sessions/magic-url", "PUT")])
@pytest.mark.parametrize("kind", KINDS)
def test_code_guessing_is_limited_per_user_across_ips(dedicated, project, kind, path, method):
    api = cookieless(dedicated(kind, **PROXY_ENV), project)
    user_id, code = _code(api, f"victim-{kind}-{method}@example.com")
    for n in range(10):  # ten wrong codes, each from another address
        wrong = f"{(int(code) + n + 1) % 1_000_000:06d}"
        r = api.call(method, path, json={"userId": user_id, "secret": wrong}, headers=_ip(n))
        assert r.status_code == 401 and r.json()["type"] == "user_invalid_token", r.text
    # The right code, from an address that never guessed, is refused: the user's budget is spent.
    assert_limited(api.call(method, path, json={"userId": user_id, "secret": code}, headers=_ip(200)), 10)
    # Another user's budget is untouched.
    other_id, other_code = _code(api, f"other-{kind}-{method}@example.com")
    r = api.call(method, path, json={"userId": other_id, "secret": other_code}, headers=_ip(200))
    assert r.status_code == 201, r.text


@pytest.mark.parametrize("kind", KINDS)
def test_email_change_password_check_is_limited_per_user(dedicated, project, kind):
    """PATCH /account/email checks the password: ten tries an hour per user, from any address;
    then even the right password is refused, and another user still has a full budget."""
    api = cookieless(dedicated(kind, **PROXY_ENV), project)
    sessions = [api.signup()[1] for _ in range(2)]
    for n in range(10):
        r = api.call("PATCH", "/account/email", json={"email": f"n{n}-{kind}@example.com", "password": "wrong-pass"},
                     session=sessions[0], headers=_ip(n))
        assert r.status_code == 401 and r.json()["type"] == "user_invalid_credentials", r.text
    r = api.call("PATCH", "/account/email", json={"email": f"right-{kind}@example.com", "password": "password123"},
                 session=sessions[0], headers=_ip(200))
    assert_limited(r, 10)
    r = api.call("PATCH", "/account/email", json={"email": f"other-{kind}@example.com", "password": "password123"},
                 session=sessions[1], headers=_ip(200))
    assert r.status_code == 200 and r.headers["X-RateLimit-Remaining"] == "9", r.text
