"""Identity routes: ``GET /account/identities``, ``DELETE /account/identities/{id}`` (the user's
own) and the Users service's ``GET /users/identities``, ``DELETE /users/identities/{id}`` (API
keys). Identities are stored here with SQL as a sign-in would store them (the sign-in itself is
driven in test_oauth2_flow.py); provider tokens are encrypted at rest and sent in clear."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest
from appwrite.client import Client
from appwrite.query import Query
from appwrite.services.account import Account
from appwrite.services.users import Users

from apps.accounts.oauth2 import crypto
from conftest import Api


@pytest.fixture
def identity_for(sql):
    """``identity_for(api, user, provider, uid, email)`` stores an identity; returns its ID."""

    def store(api: Api, user: dict, provider: str, uid: str, email: str = "", access: str = "at") -> str:
        now = dt.datetime.now(dt.UTC)
        ident = f"i{time.monotonic_ns()}"
        sql("INSERT INTO accounts_identity (project_id, user_id, uid, provider, provider_uid, provider_email, "
            "provider_access_token, provider_refresh_token, provider_access_token_expiry, created_at, updated_at) "
            "SELECT %s, id, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM accounts_user WHERE project_id = %s AND uid = %s",
            (api.project.pk, ident, provider, uid, email, crypto.encrypt(access), crypto.encrypt("rt"),
             now + dt.timedelta(hours=1), now, now, api.project.pk, user["$id"]))
        return ident

    return store


@pytest.fixture
def two_users(api: Api, identity_for):
    alice, alice_session = api.signup()
    bob, bob_session = api.signup()
    ids = {
        "a-github": identity_for(api, alice, "github", "101", alice["email"], access="alice-gh"),
        "a-oidc": identity_for(api, alice, "oidc", "sub-a", alice["email"]),
        "b-github": identity_for(api, bob, "github", "202", bob["email"]),
    }
    return alice, alice_session, bob, bob_session, ids


def q(method, attribute=None, values=None):
    data = {"method": method}
    if attribute is not None:
        data["attribute"] = attribute
    if values is not None:
        data["values"] = values
    return json.dumps(data)


def test_account_lists_only_own_identities_with_tokens_in_clear(api: Api, two_users, sql):
    alice, alice_session, _, _, ids = two_users
    r = api.call("GET", "/account/identities", session=alice_session)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == 2
    by_id = {i["$id"]: i for i in body["identities"]}
    assert set(by_id) == {ids["a-github"], ids["a-oidc"]}
    gh = by_id[ids["a-github"]]
    assert gh["userId"] == alice["$id"] and gh["provider"] == "github" and gh["providerUid"] == "101"
    assert gh["providerEmail"] == alice["email"]
    assert gh["providerAccessToken"] == "alice-gh" and gh["providerRefreshToken"] == "rt"
    assert gh["providerAccessTokenExpiry"].endswith("+00:00")
    stored = sql("SELECT provider_access_token FROM accounts_identity WHERE uid = %s", (ids["a-github"],))[0][0]
    assert "alice-gh" not in stored


LIST_CASES = [
    ("provider equal", [q("equal", "provider", ["github"])], 200, None, ["a-github"]),
    ("provider notEqual", [q("notEqual", "provider", ["github"])], 200, None, ["a-oidc"]),
    ("limit 1", [q("limit", values=[1])], 200, None, ["a-github"]),
    ("offset 1", [q("offset", values=[1])], 200, None, ["a-oidc"]),
    ("order desc", [q("orderDesc", "provider")], 200, None, ["a-oidc", "a-github"]),
    ("expiry after", [q("greaterThan", "providerAccessTokenExpiry", ["2000-01-01T00:00:00.000+00:00"])], 200,
     None, ["a-github", "a-oidc"]),
    ("unknown attribute", [q("equal", "secret", ["x"])], 400, "general_query_invalid", None),
    ("select refused", [q("select", values=["provider"])], 400, "general_query_invalid", None),
    ("search method refused", [q("search", "provider", ["git"])], 400, "general_query_invalid", None),
    ("not json", ["{nope"], 400, "general_query_invalid", None),
    ("limit too big", [q("limit", values=[5001])], 400, "general_query_invalid", None),
    ("bad datetime", [q("lessThan", "$createdAt", ["yesterday"])], 400, "general_query_invalid", None),
    ("wrong value type", [q("equal", "provider", [5])], 400, "general_query_invalid", None),
    ("unknown cursor", [q("cursorAfter", values=["nope"])], 400, "general_cursor_not_found", None),
]


@pytest.mark.parametrize("case", LIST_CASES, ids=[c[0] for c in LIST_CASES])
def test_account_list_queries(api: Api, two_users, case):
    _, session, _, _, ids = two_users
    _, queries, status, etype, expected = case
    r = api.call("GET", "/account/identities", params={"queries[]": queries}, session=session)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        return
    assert [i["$id"] for i in r.json()["identities"]] == [ids[k] for k in expected]


def test_account_list_cursor_pages(api: Api, two_users):
    _, session, _, _, ids = two_users
    page = api.call("GET", "/account/identities", params={"queries[]": [q("cursorAfter", values=[ids["a-github"]])]},
                    session=session).json()
    assert [i["$id"] for i in page["identities"]] == [ids["a-oidc"]]
    back = api.call("GET", "/account/identities", params={"queries[]": [q("cursorBefore", values=[ids["a-oidc"]])]},
                    session=session).json()
    assert [i["$id"] for i in back["identities"]] == [ids["a-github"]]


DELETE_CASES = [
    ("own identity", "a-github", 204, None),
    ("another user's identity", "b-github", 404, "user_identity_not_found"),
    ("unknown identity", None, 404, "user_identity_not_found"),
    ("id too long", "x" * 37, 400, "general_argument_invalid"),
]


@pytest.mark.parametrize("case", DELETE_CASES, ids=[c[0] for c in DELETE_CASES])
def test_account_delete(api: Api, two_users, sql, case):
    _, session, _, _, ids = two_users
    _, which, status, etype = case
    target = ids.get(which, which) if which else "nonexistent"
    before = sql("SELECT count(*) FROM accounts_identity WHERE project_id = %s", (api.project.pk,))[0][0]
    r = api.call("DELETE", f"/account/identities/{target}", session=session)
    assert r.status_code == status, r.text
    after = sql("SELECT count(*) FROM accounts_identity WHERE project_id = %s", (api.project.pk,))[0][0]
    if etype:
        assert r.json()["type"] == etype
        assert after == before
    else:
        assert after == before - 1
        assert sql("SELECT count(*) FROM accounts_identity WHERE uid = %s", (target,))[0][0] == 0


def test_account_routes_need_a_session(api: Api, two_users):
    _, _, _, _, ids = two_users
    for method, path in (("GET", "/account/identities"), ("DELETE", f"/account/identities/{ids['a-github']}")):
        r = api.call(method, path)
        assert r.status_code == 401 and r.json()["type"] == "general_unauthorized_scope"


def test_users_routes_with_key(api: Api, two_users, sql):
    alice, _, bob, _, ids = two_users
    listed = api.call("GET", "/users/identities", key=True).json()
    assert listed["total"] == 3 and {i["$id"] for i in listed["identities"]} == set(ids.values())
    only_bob = api.call("GET", "/users/identities", key=True,
                        params={"queries[]": [q("equal", "userId", [bob["$id"]])]}).json()
    assert [i["$id"] for i in only_bob["identities"]] == [ids["b-github"]]
    searched = api.call("GET", "/users/identities", key=True, params={"search": "sub-"}).json()
    assert [i["$id"] for i in searched["identities"]] == [ids["a-oidc"]]
    no_total = api.call("GET", "/users/identities", key=True, params={"total": "false"}).json()
    assert no_total["total"] == 0 and len(no_total["identities"]) == 3

    assert api.call("DELETE", f"/users/identities/{ids['b-github']}", key=True).status_code == 204
    again = api.call("DELETE", f"/users/identities/{ids['b-github']}", key=True)
    assert again.status_code == 404 and again.json()["type"] == "user_identity_not_found"
    assert sql("SELECT count(*) FROM accounts_identity WHERE project_id = %s", (api.project.pk,))[0][0] == 2


@pytest.mark.parametrize("case", [
    ("guest list", "GET", "/users/identities", {}, 401, "general_unauthorized_scope"),
    ("session list", "GET", "/users/identities", {"session": True}, 401, "general_unauthorized_scope"),
    ("guest delete", "DELETE", "/users/identities/x", {}, 401, "general_unauthorized_scope"),
    ("search too long", "GET", "/users/identities", {"key": True, "params": {"search": "s" * 257}}, 400,
     "general_argument_invalid"),
], ids=lambda c: c[0] if isinstance(c, tuple) else "")
def test_users_routes_refuse(api: Api, two_users, case):
    _, session, _, _, _ = two_users
    _, method, path, kw, status, etype = case
    kw = dict(kw)
    if kw.pop("session", False):
        kw["session"] = session
    r = api.call(method, path, **kw)
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_python_sdk_lists_and_deletes(request, project, identity_for, kind):
    server = request.getfixturevalue(f"{kind}_server")
    api = Api(server, project)
    user, session = api.signup()
    ident = identity_for(api, user, "google", "g-1", user["email"])
    client = Client().set_endpoint(server.endpoint).set_project(project.id).set_session(session)
    listed = Account(client).list_identities(queries=[Query.equal("provider", ["google"])])
    assert listed.total == 1 and listed.identities[0].id == ident
    assert listed.identities[0].provideruid == "g-1"  # the SDK model names it so
    admin = Client().set_endpoint(server.endpoint).set_project(project.id).set_key(project.key)
    assert Users(admin).list_identities(search="g-1").total == 1
    Users(admin).delete_identity(identity_id=ident)
    assert Account(client).list_identities().total == 0


# An email that another user's OAuth2 identity reports cannot be taken by a new or renamed
# account (Appwrite: 409 user_email_already_exists); nothing is stored.
EMAIL_CLASH = [
    ("users create", "POST", "/users", lambda uid: {"userId": "unique()", "email": "EMAIL"}, True),
    ("account create", "POST", "/account",
     lambda uid: {"userId": "unique()", "email": "EMAIL", "password": "password123"}, False),
    ("users update email", "PATCH", "/users/{uid}/email", lambda uid: {"email": "EMAIL"}, True),
]


@pytest.mark.parametrize("case", EMAIL_CLASH, ids=[c[0] for c in EMAIL_CLASH])
def test_an_identity_email_cannot_be_taken(api: Api, identity_for, sql, case):
    _, method, path, body, key = case
    owner, _ = api.signup()
    other, _ = api.signup()
    taken = f"gh{time.monotonic_ns()}@example.com"
    identity_for(api, owner, "github", f"gh-{time.monotonic_ns()}", taken)
    users_before = sql("SELECT uid, email FROM accounts_user WHERE project_id = %s ORDER BY id", (api.project.pk,))
    payload = {k: (taken if v == "EMAIL" else v) for k, v in body(other["$id"]).items()}
    r = api.call(method, path.format(uid=other["$id"]), json=payload, key=key)
    assert r.status_code == 409 and r.json()["type"] == "user_email_already_exists", r.text
    assert sql("SELECT uid, email FROM accounts_user WHERE project_id = %s ORDER BY id",
               (api.project.pk,)) == users_before
    # the identity's own user may take it
    assert api.call("PATCH", f"/users/{owner['$id']}/email", key=True, json={"email": taken}).status_code == 200
