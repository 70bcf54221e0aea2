"""Table-driven cases for the Users service routes (API keys): every route with its bad inputs.

Each row runs against a fresh target user (``U``, email ``EMAIL``, phone ``PHONE``) and a second
user (``OTHER_*``) for clashes; a refused row must leave the target user's row unchanged.
Every row also runs without a key to prove the scope check.
"""

from __future__ import annotations

import time

import pytest

from conftest import Api

UNKNOWN = "no-such-user"

ROUTE_CASES = [
    # (id, method, path, body, status, type)
    ("list", "GET", "/users", None, 200, None),
    ("list total=false", "GET", "/users?total=false", None, 200, None),
    ("list bad bool", "GET", "/users?total=maybe", None, 400, "general_argument_invalid"),
    ("list total=0", "GET", "/users?total=0", None, 200, None),
    *[(f"list total={v}", "GET", f"/users?total={v}", None, 400, "general_argument_invalid")
      for v in ("off", "yes", "2", "True")],
    ("list search too long", "GET", "/users?search=" + "s" * 257, None, 400, "general_argument_invalid"),
    ("list bad query json", "GET", "/users?queries[]={nope", None, 400, "general_query_invalid"),
    ("list unknown attribute", "GET", '/users?queries[]={"method":"equal","attribute":"password","values":["x"]}',
     None, 400, "general_query_invalid"),
    ("list select refused", "GET", '/users?queries[]={"method":"select","values":["name"]}', None, 400,
     "general_query_invalid"),
    ("list search query refused", "GET", '/users?queries[]={"method":"search","attribute":"name","values":["a"]}',
     None, 400, "general_query_invalid"),
    ("list wrong value type", "GET", '/users?queries[]={"method":"equal","attribute":"status","values":["yes"]}',
     None, 400, "general_query_invalid"),
    ("list unknown cursor", "GET", '/users?queries[]={"method":"cursorAfter","values":["nobody"]}', None, 400,
     "general_cursor_not_found"),
    ("list limit too big", "GET", '/users?queries[]={"method":"limit","values":[5001]}', None, 400,
     "general_query_invalid"),
    ("create", "POST", "/users", {"userId": "unique()", "email": "NEW", "password": "password123"}, 201, None),
    ("create no email", "POST", "/users", {"userId": "unique()", "name": "nobody"}, 201, None),
    ("create with phone", "POST", "/users", {"userId": "unique()", "phone": "+15550009999"}, 201, None),
    ("create duplicate id", "POST", "/users", {"userId": "U", "email": "NEW"}, 409, "user_already_exists"),
    ("create duplicate email", "POST", "/users", {"userId": "unique()", "email": "EMAIL"}, 409, "user_already_exists"),
    ("create duplicate phone", "POST", "/users", {"userId": "unique()", "phone": "PHONE"}, 409, "user_already_exists"),
    ("create bad id", "POST", "/users", {"userId": "_bad"}, 400, "general_argument_invalid"),
    ("create id too long", "POST", "/users", {"userId": "x" * 37}, 400, "general_argument_invalid"),
    ("scrypt", "POST", "/users/scrypt",
     {"userId": "unique()", "email": "NEW", "password": "ab" * 64, "passwordSalt": "salt", "passwordCpu": 8,
      "passwordMemory": 14, "passwordParallel": 1, "passwordLength": 64}, 201, None),
    ("scrypt cost as text", "POST", "/users/scrypt",
     {"userId": "unique()", "email": "NEW", "password": "ab" * 64, "passwordSalt": "salt", "passwordCpu": "8",
      "passwordMemory": 14, "passwordParallel": 1, "passwordLength": 64}, 400, "general_argument_invalid"),
    ("create missing id", "POST", "/users", {"email": "NEW"}, 400, "general_argument_invalid"),
    ("create bad email", "POST", "/users", {"userId": "unique()", "email": "nope"}, 400, "general_argument_invalid"),
    ("create bad phone", "POST", "/users", {"userId": "unique()", "phone": "5550001"}, 400, "general_argument_invalid"),
    ("create short password", "POST", "/users", {"userId": "unique()", "password": "short"}, 400,
     "general_argument_invalid"),
    ("create password too long", "POST", "/users", {"userId": "unique()", "password": "p" * 257}, 400,
     "general_argument_invalid"),
    ("create name too long", "POST", "/users", {"userId": "unique()", "name": "n" * 129}, 400,
     "general_argument_invalid"),
    ("create undeclared field ignored", "POST", "/users", {"userId": "unique()", "admin": True}, 201, None),
    ("create malformed json", "POST", "/users", b"{userId", 400, "general_bad_request"),
    ("create wrong type", "POST", "/users", {"userId": 5}, 400, "general_argument_invalid"),
    ("get", "GET", "/users/U", None, 200, None),
    ("get unknown", "GET", f"/users/{UNKNOWN}", None, 404, "user_not_found"),
    ("get bad id", "GET", "/users/" + "x" * 40, None, 400, "general_argument_invalid"),
    ("name", "PATCH", "/users/U/name", {"name": "Grace"}, 200, None),
    ("name empty", "PATCH", "/users/U/name", {"name": ""}, 200, None),
    ("name too long", "PATCH", "/users/U/name", {"name": "n" * 129}, 400, "general_argument_invalid"),
    ("name missing", "PATCH", "/users/U/name", {}, 400, "general_argument_invalid"),
    ("name unknown user", "PATCH", f"/users/{UNKNOWN}/name", {"name": "x"}, 404, "user_not_found"),
    ("email", "PATCH", "/users/U/email", {"email": "NEW"}, 200, None),
    ("email clear", "PATCH", "/users/U/email", {"email": ""}, 200, None),
    ("email taken", "PATCH", "/users/U/email", {"email": "OTHER_EMAIL"}, 409, "user_email_already_exists"),
    ("email invalid", "PATCH", "/users/U/email", {"email": "nope"}, 400, "general_argument_invalid"),
    ("email unknown user", "PATCH", f"/users/{UNKNOWN}/email", {"email": "NEW"}, 404, "user_not_found"),
    ("phone", "PATCH", "/users/U/phone", {"number": "+15550001234"}, 200, None),
    ("phone clear", "PATCH", "/users/U/phone", {"number": ""}, 200, None),
    ("phone taken", "PATCH", "/users/U/phone", {"number": "OTHER_PHONE"}, 409, "user_phone_already_exists"),
    ("phone invalid", "PATCH", "/users/U/phone", {"number": "+0123"}, 400, "general_argument_invalid"),
    ("phone wrong type", "PATCH", "/users/U/phone", {"number": 15550001234}, 400, "general_argument_invalid"),
    ("password", "PATCH", "/users/U/password", {"password": "brand-new-pass"}, 200, None),
    ("password clear", "PATCH", "/users/U/password", {"password": ""}, 200, None),
    ("password short", "PATCH", "/users/U/password", {"password": "short"}, 400, "general_argument_invalid"),
    ("status block", "PATCH", "/users/U/status", {"status": False}, 200, None),
    ("status wrong type", "PATCH", "/users/U/status", {"status": "maybe"}, 400, "general_argument_invalid"),
    ("status missing", "PATCH", "/users/U/status", {}, 400, "general_argument_invalid"),
    # booleans follow Appwrite's validator: status is loose there ("false", 0 pass), the others strict
    *[(f"status {v!r}", "PATCH", "/users/U/status", {"status": v}, 400, "general_argument_invalid")
      for v in ("off", "no", "f", 2, -1)],
    ("status 'false' (loose in Appwrite)", "PATCH", "/users/U/status", {"status": "false"}, 200, None),
    ("status 0 (loose in Appwrite)", "PATCH", "/users/U/status", {"status": 0}, 200, None),
    *[(f"email verification {v!r}", "PATCH", "/users/U/verification", {"emailVerification": v}, 400,
       "general_argument_invalid") for v in ("yes", "on", 2, "true", 1)],
    ("phone verification 't'", "PATCH", "/users/U/verification/phone", {"phoneVerification": "t"}, 400,
     "general_argument_invalid"),
    ("mfa 'on'", "PATCH", "/users/U/mfa", {"mfa": "on"}, 400, "general_argument_invalid"),
    ("labels", "PUT", "/users/U/labels", {"labels": ["vip", "beta", "vip"]}, 200, None),
    ("labels empty", "PUT", "/users/U/labels", {"labels": []}, 200, None),
    ("labels bad chars", "PUT", "/users/U/labels", {"labels": ["no-dash"]}, 400, "general_argument_invalid"),
    ("labels too long", "PUT", "/users/U/labels", {"labels": ["l" * 37]}, 400, "general_argument_invalid"),
    ("labels empty label", "PUT", "/users/U/labels", {"labels": [""]}, 400, "general_argument_invalid"),
    ("labels too many", "PUT", "/users/U/labels", {"labels": [f"l{i}" for i in range(1001)]}, 400,
     "general_argument_invalid"),
    ("labels not a list", "PUT", "/users/U/labels", {"labels": "vip"}, 400, "general_argument_invalid"),
    ("email verification", "PATCH", "/users/U/verification", {"emailVerification": True}, 200, None),
    ("email verification wrong type", "PATCH", "/users/U/verification", {"emailVerification": "x"}, 400,
     "general_argument_invalid"),
    ("phone verification", "PATCH", "/users/U/verification/phone", {"phoneVerification": True}, 200, None),
    ("get prefs", "GET", "/users/U/prefs", None, 200, None),
    ("prefs", "PATCH", "/users/U/prefs", {"prefs": {"theme": "dark"}}, 200, None),
    ("prefs not an object", "PATCH", "/users/U/prefs", {"prefs": [1]}, 400, "general_argument_invalid"),
    ("prefs too large", "PATCH", "/users/U/prefs", {"prefs": {"x": "y" * 70000}}, 400, "general_argument_invalid"),
    ("prefs unknown user", "PATCH", f"/users/{UNKNOWN}/prefs", {"prefs": {}}, 404, "user_not_found"),
    ("list sessions", "GET", "/users/U/sessions", None, 200, None),
    ("list sessions unknown user", "GET", f"/users/{UNKNOWN}/sessions", None, 404, "user_not_found"),
    ("create session", "POST", "/users/U/sessions", {}, 201, None),
    ("create session unknown user", "POST", f"/users/{UNKNOWN}/sessions", {}, 404, "user_not_found"),
    ("delete sessions", "DELETE", "/users/U/sessions", None, 204, None),
    ("delete unknown session", "DELETE", "/users/U/sessions/nope", None, 404, "user_session_not_found"),
    ("token", "POST", "/users/U/tokens", {"length": 32, "expire": 60}, 201, None),
    ("token length too short", "POST", "/users/U/tokens", {"length": 3}, 400, "general_argument_invalid"),
    ("token length too long", "POST", "/users/U/tokens", {"length": 129}, 400, "general_argument_invalid"),
    ("token expire too short", "POST", "/users/U/tokens", {"expire": 59}, 400, "general_argument_invalid"),
    ("token unknown user", "POST", f"/users/{UNKNOWN}/tokens", {}, 404, "user_not_found"),
    ("jwt", "POST", "/users/U/jwts", {}, 201, None),
    ("jwt duration too long", "POST", "/users/U/jwts", {"duration": 3601}, 400, "general_argument_invalid"),
    ("jwt unknown user", "POST", f"/users/{UNKNOWN}/jwts", {}, 404, "user_not_found"),
    ("memberships", "GET", "/users/U/memberships", None, 200, None),
    ("memberships unknown user", "GET", f"/users/{UNKNOWN}/memberships", None, 404, "user_not_found"),
    ("logs", "GET", "/users/U/logs", None, 200, None),
    ("logs bad query", "GET", '/users/U/logs?queries[]={"method":"equal","attribute":"event","values":["x"]}', None,
     400, "general_query_invalid"),
    ("logs unknown user", "GET", f"/users/{UNKNOWN}/logs", None, 404, "user_not_found"),
    ("delete unknown", "DELETE", f"/users/{UNKNOWN}", None, 404, "user_not_found"),
    ("delete", "DELETE", "/users/U", None, 204, None),
    ("impersonator on", "PATCH", "/users/U/impersonator", {"impersonator": True}, 200, None),
    ("impersonator 'true' (loose in Appwrite)", "PATCH", "/users/U/impersonator", {"impersonator": "true"}, 200, None),
    ("impersonator missing", "PATCH", "/users/U/impersonator", {}, 400, "general_argument_invalid"),
    *[(f"impersonator {v!r}", "PATCH", "/users/U/impersonator", {"impersonator": v}, 400, "general_argument_invalid")
      for v in ("maybe", "on", 2, None, [True])],
    ("impersonator unknown user", "PATCH", f"/users/{UNKNOWN}/impersonator", {"impersonator": True}, 404,
     "user_not_found"),
    ("impersonator id too long", "PATCH", f"/users/{'x' * 37}/impersonator", {"impersonator": True}, 400,
     "general_argument_invalid"),
    ("list impersonators", "GET", '/users?queries[]={"method":"equal","attribute":"impersonator","values":[true]}',
     None, 200, None),
]

_SNAPSHOT = ("SELECT name, email, phone, password, status, labels::text, prefs::text, email_verification, "
             "phone_verification, impersonator FROM accounts_user WHERE uid = %s AND project_id = %s")


def _make(api: Api, tag: str) -> dict:
    n = time.monotonic_ns()
    r = api.call("POST", "/users", key=True, json={"userId": f"{tag}{n}", "email": f"{tag}{n}@example.com",
                                                    "phone": f"+1{n % 10**10:010d}", "password": "password123"})
    assert r.status_code == 201, r.text
    return r.json()


@pytest.mark.parametrize("case", ROUTE_CASES, ids=[c[0] for c in ROUTE_CASES])
def test_users_routes(api: Api, sql, case):
    _, method, path, body, status, etype = case
    target, other = _make(api, "t"), _make(api, "o")
    names = {"EMAIL": target["email"], "PHONE": target["phone"], "OTHER_EMAIL": other["email"],
             "OTHER_PHONE": other["phone"], "NEW": f"n{time.monotonic_ns()}@example.com", "U": target["$id"]}
    path = path.replace("/U/", f"/{target['$id']}/") if "/U/" in path else (
        path[:-2] + "/" + target["$id"] if path.endswith("/U") else path)
    if isinstance(body, dict):
        body = {k: (names.get(v, v) if isinstance(v, str) else v) for k, v in body.items()}
    before = sql(_SNAPSHOT, (target["$id"], api.project.pk))
    if isinstance(body, bytes):
        r = api.call(method, path, data=body, headers={"Content-Type": "application/json"}, key=True)
    else:
        r = api.call(method, path, json=body, key=True)
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"]
    if etype:
        assert r.json()["type"] == etype
        assert sql(_SNAPSHOT, (target["$id"], api.project.pk)) == before, "a refused request changed the user"
    guest = api.call(method, path, json=body if isinstance(body, dict) else None)
    assert guest.status_code == 401 and guest.json()["type"] == "general_unauthorized_scope", guest.text
