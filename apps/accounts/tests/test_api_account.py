"""Table-driven API cases for the account routes, on the live ASGI server.

Every row is one request: what is sent, the expected status and Appwrite error type. Rejected
writes are checked to have stored nothing.
"""

from __future__ import annotations

import time

import pytest

from conftest import Api, argon2_prefix


def _email() -> str:
    return f"u{time.monotonic_ns()}@example.com"


def _users(sql, project) -> int:
    return sql("SELECT count(*) FROM accounts_user WHERE project_id = %s", (project.pk,))[0][0]


CREATE_CASES = [
    # (id, body (dict) or raw bytes, headers, status, type)
    ("ok", {"userId": "unique()", "email": "EMAIL", "password": "password123", "name": "Ada"}, {}, 201, None),
    ("custom id", {"userId": "my.user-1", "email": "EMAIL", "password": "password123"}, {}, 201, None),
    ("malformed json", b'{"userId": "unique()", "email": ', {}, 400, "general_bad_request"),
    ("json array body", b"[1, 2]", {}, 400, "general_bad_request"),
    ("missing email", {"userId": "unique()", "password": "password123"}, {}, 400, "general_argument_invalid"),
    ("missing userId", {"email": "EMAIL", "password": "password123"}, {}, 400, "general_argument_invalid"),
    ("email wrong type", {"userId": "unique()", "email": 123, "password": "password123"}, {}, 400, "general_argument_invalid"),
    ("bad email", {"userId": "unique()", "email": "not-an-email", "password": "password123"}, {}, 400, "general_argument_invalid"),
    ("password too short", {"userId": "unique()", "email": "EMAIL", "password": "short"}, {}, 400, "general_argument_invalid"),
    ("password too long", {"userId": "unique()", "email": "EMAIL", "password": "p" * 257}, {}, 400, "general_argument_invalid"),
    ("password wrong type", {"userId": "unique()", "email": "EMAIL", "password": ["x" * 9]}, {}, 400, "general_argument_invalid"),
    ("NUL in name", {"userId": "unique()", "email": "EMAIL", "password": "password123", "name": "a\x00"}, {}, 400, "general_argument_invalid"),
    ("name too long", {"userId": "unique()", "email": "EMAIL", "password": "password123", "name": "n" * 129}, {}, 400, "general_argument_invalid"),
    ("bad id start", {"userId": "-bad", "email": "EMAIL", "password": "password123"}, {}, 400, "general_argument_invalid"),
    ("bad id chars", {"userId": "a b", "email": "EMAIL", "password": "password123"}, {}, 400, "general_argument_invalid"),
    ("id too long", {"userId": "a" * 37, "email": "EMAIL", "password": "password123"}, {}, 400, "general_argument_invalid"),
    ("undeclared field ignored", {"userId": "unique()", "email": "EMAIL", "password": "password123", "admin": True}, {}, 201, None),
    ("no project", {"userId": "unique()", "email": "EMAIL", "password": "password123"}, {"X-Appwrite-Project": ""}, 400, "project_id_missing"),
    ("unknown project", {"userId": "unique()", "email": "EMAIL", "password": "password123"}, {"X-Appwrite-Project": "nope"}, 404, "project_not_found"),
    ("bad api key", {"userId": "unique()", "email": "EMAIL", "password": "password123"}, {"X-Appwrite-Key": "standard_wrong"}, 401, "user_unauthorized"),
]


@pytest.mark.parametrize("case", CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_account_create(api: Api, sql, case):
    _, body, headers, status, etype = case
    before = _users(sql, api.project)
    kwargs = {}
    if isinstance(body, bytes):
        kwargs["data"] = body
        headers = {"Content-Type": "application/json", **headers}
    else:
        kwargs["json"] = {k: (_email() if v == "EMAIL" else v) for k, v in body.items()}
    r = api.call("POST", "/account", headers=headers, **kwargs)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        assert _users(sql, api.project) == before, "a rejected request wrote a user"
    else:
        user = r.json()
        assert user["email"] == kwargs["json"]["email"].lower()
        assert user["prefs"] == {} and user["targets"] == [] and user["status"] is True
        assert "password" not in user
        assert user["$createdAt"].endswith("+00:00") and len(user["$createdAt"]) == 29
        assert _users(sql, api.project) == before + 1


def test_duplicates_are_409(api: Api, sql):
    email = _email()
    first = api.call("POST", "/account", json={"userId": "dup-id", "email": email, "password": "password123"})
    assert first.status_code == 201
    same_email = api.call("POST", "/account", json={"userId": "unique()", "email": email.upper(), "password": "password123"})
    assert same_email.status_code == 409 and same_email.json()["type"] == "user_already_exists"
    same_id = api.call("POST", "/account", json={"userId": "dup-id", "email": _email(), "password": "password123"})
    assert same_id.status_code == 409 and same_id.json()["type"] == "user_already_exists"
    assert _users(sql, api.project) == 1


def test_password_is_stored_as_argon2id(api: Api, sql, live_env):
    email = _email()
    api.call("POST", "/account", json={"userId": "unique()", "email": email, "password": "password123"})
    stored = sql("SELECT password FROM accounts_user WHERE email = %s", (email,))[0][0]
    assert stored.startswith(argon2_prefix(live_env)), stored
    assert "password123" not in stored


def test_form_encoded_body_is_accepted(api: Api):
    r = api.call("POST", "/account", data={"userId": "unique()", "email": _email(), "password": "password123"})
    assert r.status_code == 201, r.text


EMAIL_SESSION_CASES = [
    # (id, email, password, extra headers (SESSION = a valid session), status, type)
    ("ok", "EMAIL", "password123", {}, 201, None),
    ("upper-case email", "UPPER", "password123", {}, 201, None),
    ("wrong password", "EMAIL", "wrong-password", {}, 401, "user_invalid_credentials"),
    ("unknown email", "nobody@example.com", "password123", {}, 401, "user_invalid_credentials"),
    ("missing password", "EMAIL", None, {}, 400, "general_argument_invalid"),
    ("bad email", "nope", "password123", {}, 400, "general_argument_invalid"),
    ("NUL in email", "a\x00@example.com", "password123", {}, 400, "general_argument_invalid"),
    ("already signed in", "EMAIL", "password123", {"X-Appwrite-Session": "SESSION"}, 401, "user_session_already_exists"),
]


@pytest.mark.parametrize("case", EMAIL_SESSION_CASES, ids=[c[0] for c in EMAIL_SESSION_CASES])
def test_email_session(api: Api, sql, case):
    _, email, password, headers, status, etype = case
    user, token = api.signup()
    email = {"EMAIL": user["email"], "UPPER": user["email"].upper()}.get(email, email)
    headers = {k: (token if v == "SESSION" else v) for k, v in headers.items()}
    body = {"email": email} if password is None else {"email": email, "password": password}
    before = sql("SELECT count(*) FROM accounts_session WHERE project_id = %s", (api.project.pk,))[0][0]
    r = api.call("POST", "/account/sessions/email", json=body, headers=headers)
    assert r.status_code == status, r.text
    after = sql("SELECT count(*) FROM accounts_session WHERE project_id = %s", (api.project.pk,))[0][0]
    if etype:
        assert r.json()["type"] == etype
        assert after == before
    else:
        session = r.json()
        assert session["userId"] == user["$id"] and session["provider"] == "email"
        assert session["secret"] == "", "secret is only for API-key callers"
        assert session["current"] is True and session["factors"] == ["password"]
        name = f"a_session_{api.project.id}".lower()
        assert name in r.cookies and f"{name}_legacy" in r.cookies
        assert r.headers["X-Fallback-Cookies"].startswith("{")
        assert after == before + 1


def test_session_cookie_attributes(api: Api):
    user, _ = api.signup()
    r = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"})
    cookies = r.raw.headers.getlist("Set-Cookie")
    main = next(c for c in cookies if c.startswith(f"a_session_{api.project.id}=".lower()))
    legacy = next(c for c in cookies if "_legacy=" in c)
    assert "HttpOnly" in main and "SameSite=None" in main and "Path=/" in main and '"' not in main
    assert "SameSite" not in legacy
    assert "Secure" not in main  # plain http


def test_same_site_origin_gets_no_fallback_header(asgi_server, django_db_blocker):
    from conftest import make_project

    api = Api(asgi_server, make_project(django_db_blocker, origins=("http://127.0.0.1:3000",)))
    user, _ = api.signup()
    r = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"},
                 headers={"Origin": "http://127.0.0.1:3000"})
    assert r.status_code == 201
    assert "X-Fallback-Cookies" not in r.headers
    assert r.headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:3000"


def test_anonymous_session(api: Api, sql):
    r = api.call("POST", "/account/sessions/anonymous")
    assert r.status_code == 201, r.text
    assert r.json()["provider"] == "anonymous"
    token = r.cookies[f"a_session_{api.project.id}".lower()]
    me = api.call("GET", "/account", headers={"Cookie": f"a_session_{api.project.id.lower()}={token}"})
    assert me.status_code == 200 and me.json()["email"] == ""
    again = api.call("POST", "/account/sessions/anonymous", session=token)
    assert again.status_code == 401 and again.json()["type"] == "user_session_already_exists"
    ignored = api.call("POST", "/account/sessions/anonymous", json={"extra": 1})  # undeclared: ignored
    assert ignored.status_code == 201 and ignored.json()["provider"] == "anonymous"
