"""Table-driven cases for the signed-in account routes: sessions, JWT, name, password, email,
prefs. Each row also runs as a guest to prove the scope check."""

from __future__ import annotations

import time

import pytest

from conftest import Api

ROUTE_CASES = [
    # (id, method, path, body, status, type)
    ("list sessions", "GET", "/account/sessions", None, 200, None),
    ("list sessions total=false", "GET", "/account/sessions?total=false", None, 200, None),
    ("list sessions bad bool", "GET", "/account/sessions?total=maybe", None, 400, "general_argument_invalid"),
    ("list sessions total=0", "GET", "/account/sessions?total=0", None, 200, None),
    *[(f"list sessions total={v}", "GET", f"/account/sessions?total={v}", None, 400, "general_argument_invalid")
      for v in ("off", "yes", "2")],
    ("get current session", "GET", "/account/sessions/current", None, 200, None),
    ("get unknown session", "GET", "/account/sessions/nope", None, 404, "user_session_not_found"),
    ("get session bad id", "GET", "/account/sessions/" + "x" * 40, None, 400, "general_argument_invalid"),
    ("update current session", "PATCH", "/account/sessions/current", {}, 200, None),
    ("update unknown session", "PATCH", "/account/sessions/nope", {}, 404, "user_session_not_found"),
    ("delete unknown session", "DELETE", "/account/sessions/nope", None, 404, "user_session_not_found"),
    ("jwt", "POST", "/account/jwts", {}, 201, None),
    ("jwt legacy path", "POST", "/account/jwt", {"duration": 60}, 201, None),
    ("jwt duration too long", "POST", "/account/jwts", {"duration": 3601}, 400, "general_argument_invalid"),
    ("jwt duration wrong type", "POST", "/account/jwts", {"duration": "soon"}, 400, "general_argument_invalid"),
    ("name", "PATCH", "/account/name", {"name": "Grace"}, 200, None),
    ("name too long", "PATCH", "/account/name", {"name": "n" * 129}, 400, "general_argument_invalid"),
    ("name wrong type", "PATCH", "/account/name", {"name": 5}, 400, "general_argument_invalid"),
    ("name missing", "PATCH", "/account/name", {}, 400, "general_argument_invalid"),
    ("name undeclared field ignored", "PATCH", "/account/name", {"name": "x", "role": "admin"}, 200, None),
    ("password", "PATCH", "/account/password", {"password": "newpassword1", "oldPassword": "password123"}, 200, None),
    ("password wrong old", "PATCH", "/account/password", {"password": "newpassword1", "oldPassword": "wrong-one"}, 401, "user_invalid_credentials"),
    ("password missing old", "PATCH", "/account/password", {"password": "newpassword1"}, 401, "user_invalid_credentials"),
    ("password too short", "PATCH", "/account/password", {"password": "short", "oldPassword": "password123"}, 400, "general_argument_invalid"),
    ("email", "PATCH", "/account/email", {"email": "NEW", "password": "password123"}, 200, None),
    ("email wrong password", "PATCH", "/account/email", {"email": "NEW", "password": "wrong-pass"}, 401, "user_invalid_credentials"),
    ("email invalid", "PATCH", "/account/email", {"email": "nope", "password": "password123"}, 400, "general_argument_invalid"),
    ("email taken", "PATCH", "/account/email", {"email": "TAKEN", "password": "password123"}, 409, "user_email_already_exists"),
    ("get prefs", "GET", "/account/prefs", None, 200, None),
    ("prefs", "PATCH", "/account/prefs", {"prefs": {"theme": "dark", "n": 1}}, 200, None),
    ("prefs not an object", "PATCH", "/account/prefs", {"prefs": [1, 2]}, 400, "general_argument_invalid"),
    ("prefs too large", "PATCH", "/account/prefs", {"prefs": {"x": "y" * 70000}}, 400, "general_argument_invalid"),
    ("prefs missing", "PATCH", "/account/prefs", {}, 400, "general_argument_invalid"),
    ("prefs malformed json", "PATCH", "/account/prefs", b"{prefs", 400, "general_bad_request"),
    ("prefs huge float", "PATCH", "/account/prefs", {"prefs": {"x": 1e308}}, 200, None),
    ("prefs NUL", "PATCH", "/account/prefs", {"prefs": {"x": "\x00"}}, 400, "general_argument_invalid"),
]


def _send(api: Api, method, path, body, token):
    if isinstance(body, bytes):
        return api.call(method, path, data=body, headers={"Content-Type": "application/json"}, session=token)
    return api.call(method, path, json=body, session=token)


@pytest.mark.parametrize("case", ROUTE_CASES, ids=[c[0] for c in ROUTE_CASES])
def test_signed_in_routes(api: Api, sql, case):
    _, method, path, body, status, etype = case
    user, token = api.signup()
    taken, _ = api.signup()
    if isinstance(body, dict):
        body = {k: {"NEW": f"n{time.monotonic_ns()}@example.com", "TAKEN": taken["email"]}.get(v, v)
                if isinstance(v, str) else v for k, v in body.items()}
    row_before = sql("SELECT name, email, password, prefs::text FROM accounts_user WHERE uid = %s AND project_id = %s",
                     (user["$id"], api.project.pk))
    r = _send(api, method, path, body, token)
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"]
    if etype:
        assert r.json()["type"] == etype
        row_after = sql("SELECT name, email, password, prefs::text FROM accounts_user WHERE uid = %s AND project_id = %s",
                        (user["$id"], api.project.pk))
        assert row_after == row_before, "a rejected request changed the user"
    guest = _send(api, method, path, body, None)
    assert guest.status_code == 401 and guest.json()["type"] == "general_unauthorized_scope"


def test_updates_are_visible(api: Api):
    user, token = api.signup()
    assert api.call("PATCH", "/account/name", json={"name": "Grace"}, session=token).json()["name"] == "Grace"
    api.call("PATCH", "/account/prefs", json={"prefs": {"theme": "dark"}}, session=token)
    assert api.call("GET", "/account/prefs", session=token).json() == {"theme": "dark"}
    assert api.call("GET", "/account", session=token).json()["prefs"] == {"theme": "dark"}
    api.call("PATCH", "/account/password", json={"password": "another-pass", "oldPassword": "password123"}, session=token)
    old = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"})
    assert old.status_code == 401
    new = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "another-pass"})
    assert new.status_code == 201


def test_sessions_list_and_delete(api: Api):
    user, token = api.signup()
    second = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"},
                      key=True).json()
    listing = api.call("GET", "/account/sessions", session=token).json()
    assert listing["total"] == 2
    assert sorted(s["current"] for s in listing["sessions"]) == [False, True]
    assert api.call("GET", "/account/sessions?total=false", session=token).json()["total"] == 0
    r = api.call("DELETE", f"/account/sessions/{second['$id']}", session=token)
    assert r.status_code == 204 and r.content == b"" and not r.headers["Content-Type"].startswith("application/json")
    assert "X-Fallback-Cookies" not in r.headers, "deleting another session does not log out"
    assert api.call("GET", "/account", session=second["secret"]).status_code == 401
    out = api.call("DELETE", "/account/sessions/current", session=token)
    assert out.status_code == 204 and out.headers["X-Fallback-Cookies"] == "[]"
    assert api.call("GET", "/account", session=token).status_code == 401


def test_delete_all_sessions(api: Api):
    user, token = api.signup()
    other = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"},
                     key=True).json()["secret"]
    r = api.call("DELETE", "/account/sessions", json={}, session=token)
    assert r.status_code == 204
    for t in (token, other):
        assert api.call("GET", "/account", session=t).status_code == 401


def test_huge_float_in_prefs_reads_back(api: Api):
    """jsonb prints 1e308 as a 309-digit integer: reading it back must still serialise."""
    _, token = api.signup()
    assert api.call("PATCH", "/account/prefs", json={"prefs": {"x": 1e308, "y": 1e19}}, session=token).status_code == 200
    for path in ("/account", "/account/prefs"):
        r = api.call("GET", path, session=token)
        assert r.status_code == 200, r.text
    assert api.call("GET", "/account/prefs", session=token).json() == {"x": 1e308, "y": 1e19}
