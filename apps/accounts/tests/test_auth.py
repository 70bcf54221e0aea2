"""How the caller is resolved: every credential transport and its failures."""

from __future__ import annotations

import base64
import json
import time

import pytest

from conftest import Api, drop_cached


def _forged(user_id: str) -> str:
    return base64.b64encode(json.dumps({"id": user_id, "secret": "0" * 128}).encode()).decode()


@pytest.fixture
def signed_in(api: Api):
    user, token = api.signup()
    jwt = api.call("POST", "/account/jwts", session=token).json()["jwt"]
    return api, user, token, jwt


AUTH_CASES = [
    # (id, headers builder, status, type)
    ("guest", lambda p, t, j, u: {}, 401, "general_unauthorized_scope"),
    ("session header", lambda p, t, j, u: {"X-Appwrite-Session": t}, 200, None),
    ("cookie", lambda p, t, j, u: {"Cookie": f"a_session_{p.lower()}={t}"}, 200, None),
    ("legacy cookie", lambda p, t, j, u: {"Cookie": f"other=1; a_session_{p.lower()}_legacy={t}"}, 200, None),
    ("fallback cookies", lambda p, t, j, u: {"X-Fallback-Cookies": json.dumps({f"a_session_{p.lower()}": t})}, 200, None),
    ("jwt", lambda p, t, j, u: {"X-Appwrite-JWT": j}, 200, None),
    ("forged session", lambda p, t, j, u: {"X-Appwrite-Session": _forged(u)}, 401, "general_unauthorized_scope"),
    ("garbage session", lambda p, t, j, u: {"X-Appwrite-Session": "%%%not-base64"}, 401, "general_unauthorized_scope"),
    ("session of another user id", lambda p, t, j, u: {"X-Appwrite-Session": _swap_id(t)}, 401, "general_unauthorized_scope"),
    ("malformed fallback", lambda p, t, j, u: {"X-Fallback-Cookies": "{nope"}, 401, "general_unauthorized_scope"),
    ("invalid jwt", lambda p, t, j, u: {"X-Appwrite-JWT": j[:-4] + "AAAA"}, 401, "user_jwt_invalid"),
    ("jwt and cookie", lambda p, t, j, u: {"X-Appwrite-JWT": j, "Cookie": f"a_session_{p.lower()}={t}"}, 403, "user_jwt_and_cookie_set"),
    ("api key has no account scope", lambda p, t, j, u: {"X-Appwrite-Key": "KEY"}, 401, "general_unauthorized_scope"),
    ("api key and session", lambda p, t, j, u: {"X-Appwrite-Key": "KEY", "X-Appwrite-Session": t}, 403, "user_api_key_and_session_set"),
    ("unknown api key", lambda p, t, j, u: {"X-Appwrite-Key": "standard_nope"}, 401, "user_unauthorized"),
]


def _swap_id(token: str) -> str:
    data = json.loads(base64.b64decode(token))
    data["id"] = "someone-else"
    return base64.b64encode(json.dumps(data).encode()).decode()


@pytest.mark.parametrize("case", AUTH_CASES, ids=[c[0] for c in AUTH_CASES])
def test_get_account_auth(signed_in, case):
    api, user, token, jwt = signed_in
    _, build, status, etype = case
    headers = {k: (api.project.key if v == "KEY" else v) for k, v in build(api.project.id, token, jwt, user["$id"]).items()}
    r = api.call("GET", "/account", headers=headers)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
    else:
        assert r.json()["$id"] == user["$id"]


def test_guest_scope_message(api: Api):
    r = api.call("GET", "/account")
    assert r.json()["message"] == 'User (role: guests) missing scopes (["account"])'


def test_a_guest_on_a_key_only_route_is_told_to_send_a_key(signed_in):
    """A server SDK without ``set_key``: Appwrite's message, then where the scope comes from. A
    session on the same route gets Appwrite's message alone (it did send a credential)."""
    api, user, token, _ = signed_in
    r = api.call("GET", "/users")
    assert r.status_code == 401 and r.json()["type"] == "general_unauthorized_scope"
    assert r.json()["message"] == (
        'User (role: guests) missing scopes (["users.read"]) No API key came with the request: this route needs a '
        "key with that scope in the X-Appwrite-Key header (set_key / setKey in the SDKs; manage.py createapikey "
        "makes one).")
    r = api.call("GET", "/users", session=token)
    assert r.status_code == 401 and r.json()["message"] == f'{user["email"]} (role: users) missing scopes (["users.read"])'


def test_expired_session_is_a_guest(signed_in, sql):
    api, user, token, _ = signed_in
    rows = sql("UPDATE accounts_session SET expire = now() - interval '1 second' WHERE user_id = "
               "(SELECT id FROM accounts_user WHERE uid = %s AND project_id = %s) RETURNING user_id",
               (user["$id"], api.project.pk))
    # An SQL edit bypasses the services that drop cached sessions (apps/core/drivers/cache.py): tell the
    # server the way they do. (Real expiry needs nothing: the cached expiry is checked per request.)
    drop_cached(f"user:{rows[0][0]}")
    deadline = time.monotonic() + 3
    while True:
        r = api.call("GET", "/account", session=token)
        if r.status_code == 401 or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert r.status_code == 401 and r.json()["type"] == "general_unauthorized_scope"


def test_expired_api_key(api: Api, sql):
    sql("UPDATE projects_apikey SET expire = now() - interval '1 second' WHERE project_id = %s", (api.project.pk,))
    r = api.call("GET", "/health", key=True)
    assert r.status_code == 401 and r.json()["type"] == "project_key_expired"


def test_jwt_dies_with_its_session(signed_in):
    api, _, token, jwt = signed_in
    assert api.call("DELETE", "/account/sessions/current", session=token).status_code == 204
    r = api.call("GET", "/account", headers={"X-Appwrite-JWT": jwt})
    assert r.status_code == 401 and r.json()["type"] == "user_jwt_invalid"


def test_blocked_user(signed_in):
    api, user, token, _ = signed_in
    other = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"},
                     key=True).json()["secret"]
    r = api.call("PATCH", "/account/status", session=token)
    assert r.status_code == 200 and r.json()["status"] is False
    assert api.call("GET", "/account", session=other).status_code == 401  # all sessions were removed
    login = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"})
    assert login.status_code == 403 and login.json()["type"] == "user_blocked"


def test_key_session_secret_is_a_working_token(api: Api):
    user, token = api.signup()
    assert token, "API-key callers get Session.secret"
    assert api.call("GET", "/account", session=token).json()["$id"] == user["$id"]


# --- JWTs: bound to their project and to a live session ---------------------------------------


def _claims(jwt_token: str) -> dict:
    import jwt as pyjwt

    return pyjwt.decode(jwt_token, options={"verify_signature": False})


def _signed(claims: dict) -> str:
    """A JWT signed with the servers' own key (the test process runs on the same settings)."""
    import jwt as pyjwt
    from django.conf import settings

    return pyjwt.encode(claims, settings.SECRET_KEY, algorithm="HS256")


def test_jwt_claims_name_project_user_and_session(signed_in):
    api, user, token, jwt = signed_in
    session = api.call("GET", "/account/sessions/current", session=token).json()
    claims = _claims(jwt)
    assert (claims["projectId"], claims["userId"], claims["sessionId"]) == (api.project.id, user["$id"], session["$id"])
    made = api.call("POST", f"/users/{user['$id']}/jwts", json={"sessionId": session["$id"]}, key=True).json()["jwt"]
    assert _claims(made)["projectId"] == api.project.id


def _twin(api: Api, other: Api, sql, user_id: str) -> tuple[str, str]:
    """The same user ID in ``api``'s and ``other``'s projects, and, behind the server's back,
    ``other``'s session given the ID of ``api``'s: every claim of ``api``'s JWT names a live user
    and session of ``other``'s project. Returns ``(the JWT, other's session token)``."""
    tokens = []
    for a in (api, other):
        r = a.call("POST", "/users", json={"userId": user_id, "email": f"{user_id}@example.com",
                                           "password": "password123"}, key=True)
        assert r.status_code == 201, r.text
        s = a.call("POST", "/account/sessions/email", json={"email": f"{user_id}@example.com",
                                                           "password": "password123"}, key=True)
        tokens.append(s.json()["secret"])
    jwt = api.call("POST", "/account/jwts", session=tokens[0]).json()["jwt"]
    sql("UPDATE accounts_session SET uid = %s WHERE project_id = %s", (_claims(jwt)["sessionId"], other.project.pk))
    return jwt, tokens[1]


def test_jwt_of_another_project_is_refused(api: Api, sql, django_db_blocker):
    from conftest import make_project

    other = Api(api.server, make_project(django_db_blocker))
    jwt, _ = _twin(api, other, sql, f"twin{time.monotonic_ns() % 10**9}")
    assert api.call("GET", "/account", headers={"X-Appwrite-JWT": jwt}).status_code == 200
    r = other.call("GET", "/account", headers={"X-Appwrite-JWT": jwt})
    assert r.status_code == 401 and r.json()["type"] == "user_jwt_invalid", r.text


# (id, how the JWT is made from (api, user, session token, session id))
REFUSED_JWTS = [
    ("session deleted", lambda api, u, t, s: _made_then(api, u, s, lambda: api.call(
        "DELETE", f"/users/{u['$id']}/sessions/{s}", key=True))),
    ("made for a user without sessions", lambda api, u, t, s: _made_then(api, u, "", lambda: None, drop=True)),
    ("made for an unknown session", lambda api, u, t, s: api.call(
        "POST", f"/users/{u['$id']}/jwts", json={"sessionId": "nosuchsession"}, key=True).json()["jwt"]),
    ("no project claim (made before the claim existed)", lambda api, u, t, s: _signed(
        {"userId": u["$id"], "sessionId": s, "iat": int(time.time()), "exp": int(time.time()) + 900})),
    ("another project's ID", lambda api, u, t, s: _signed(
        {"userId": u["$id"], "sessionId": s, "projectId": "elsewhere", "exp": int(time.time()) + 900})),
    ("project claim not a string", lambda api, u, t, s: _signed(
        {"userId": u["$id"], "sessionId": s, "projectId": [api.project.id], "exp": int(time.time()) + 900})),
]


def _made_then(api: Api, user: dict, session_id: str, then, drop: bool = False) -> str:
    if drop:
        assert api.call("DELETE", f"/users/{user['$id']}/sessions", key=True).status_code == 204
    jwt = api.call("POST", f"/users/{user['$id']}/jwts", json={"sessionId": session_id or "recent"},
                   key=True).json()["jwt"]
    then()
    return jwt


@pytest.mark.parametrize("route", [("GET", "/account"), ("GET", "/account/sessions/current"),
                                   ("DELETE", "/account/sessions/current"), ("POST", "/account/jwts"),
                                   ("GET", "/teams")], ids=lambda r: f"{r[0]} {r[1]}")
@pytest.mark.parametrize("case", REFUSED_JWTS, ids=[c[0] for c in REFUSED_JWTS])
def test_refused_jwts_answer_401_never_500(api: Api, case, route):
    user, token = api.signup()
    session = api.call("GET", "/account/sessions/current", session=token).json()["$id"]
    jwt = case[1](api, user, token, session)
    r = api.call(*route, headers={"X-Appwrite-JWT": jwt})
    assert r.status_code == 401 and r.json()["type"] == "user_jwt_invalid", r.text
