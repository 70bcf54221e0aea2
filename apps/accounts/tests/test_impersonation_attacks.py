"""Impersonation (Appwrite 1.9) under attack: what an impersonator must not reach through the
``X-Appwrite-Impersonate-User-*`` headers, and odd header values that must not break a request.

Live ASGI server, real PostgreSQL and Redis; the OAuth2 rows use the real OpenID provider of
test_oauth2_flow.py.
"""

from __future__ import annotations

import asyncio
import http.client
from urllib.parse import urlsplit

import pytest
import requests

from apps.accounts.tests.test_impersonation import ID, _flag
from apps.accounts.tests.test_oauth2_flow import APP, OAuthSetup, configure_oidc, session_token, unique_login
from conftest import Api, make_project


@pytest.fixture
def oauth(server, oidc_provider, django_db_blocker) -> OAuthSetup:
    project = make_project(django_db_blocker, origins=(APP,))
    configure_oidc(django_db_blocker, project, server, oidc_provider)
    return OAuthSetup(server, project, Api(server, project), oidc_provider)


def _refused(r: requests.Response, status: int, kind: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["type"] == kind, r.text


# --- OAuth2: a GET that links a provider and signs in --------------------------------------------

def test_oauth2_sign_in_cannot_link_the_target(oauth: OAuthSetup, sql):
    """Starting an OAuth2 sign-in while impersonating would link the impersonator's provider
    account to the target and hand over a session of the target: both GET routes are account
    changes."""
    api = oauth.api
    operator, op = api.signup(email=f"{unique_login('op')}@example.com")
    target, target_session = api.signup(email=f"{unique_login('victim')}@example.com")
    _flag(api, operator["$id"], True)
    as_target = {ID: target["$id"]}

    http_ = requests.Session()
    start = oauth.start(http_, session=op, **{"impersonateUserId": target["$id"]})
    _refused(start, 403, "user_impersonation_read_only")
    for route in ("sessions", "tokens"):
        r = http_.get(f"{oauth.server.endpoint}/account/{route}/oauth2/oidc", allow_redirects=False, timeout=30,
                      params={"project": oauth.project.id, "success": "http://app.test/ok"},
                      headers={"X-Appwrite-Session": op, **as_target})
        _refused(r, 403, "user_impersonation_read_only")

    # A link started for the impersonator's own account cannot be finished as the target.
    http_ = requests.Session()
    start = oauth.start(http_, session=op)
    assert start.status_code == 301, start.text
    callback = oauth.provider.login(http_, start.headers["Location"], unique_login("op-elsewhere"))
    r = http_.get(callback, allow_redirects=False, timeout=30)
    assert r.status_code == 301, r.text
    finish = http_.get(r.headers["Location"], allow_redirects=False, timeout=60,
                       headers={"X-Appwrite-Session": op, **as_target})
    _refused(finish, 403, "user_impersonation_read_only")

    pk = sql("SELECT id FROM accounts_user WHERE uid = %s AND project_id = %s", (target["$id"], oauth.project.pk))
    assert sql("SELECT count(*) FROM accounts_identity WHERE user_id = %s", (pk[0][0],)) == [(0,)]
    assert sql("SELECT count(*) FROM accounts_session WHERE user_id = %s", (pk[0][0],)) == [(1,)]
    assert api.call("GET", "/account", session=target_session).json()["$id"] == target["$id"]


# --- MFA: a session waiting for its second factor ------------------------------------------------

def _mfa_pending(api: Api, user: dict) -> str:
    """Turn MFA on for ``user`` (verified email: two factors needed); a new password session."""
    assert api.call("PATCH", f"/users/{user['$id']}/verification", key=True,
                    json={"emailVerification": True}).status_code == 200
    assert api.call("PATCH", f"/users/{user['$id']}/mfa", key=True, json={"mfa": True}).status_code == 200
    s = api.call("POST", "/account/sessions/email", key=True, json={"email": user["email"], "password": "password123"})
    assert s.status_code == 201, s.text
    assert api.call("GET", "/account", session=s.json()["secret"]).json()["type"] == "user_more_factors_required"
    return s.json()["secret"]


def test_a_session_without_its_second_factor_cannot_impersonate(api: Api, pair):
    operator, _, target, _ = pair
    partial = _mfa_pending(api, operator)
    as_target = {ID: target["$id"]}
    # The MFA-exempt routes answer the impersonator's own, not the target's.
    factors = api.call("GET", "/account/mfa/factors", session=partial, headers=as_target)
    assert factors.status_code == 200, factors.text
    assert factors.json()["email"] is True  # the operator's verified email, not the target's
    _refused(api.call("GET", "/account", session=partial, headers=as_target), 401, "user_more_factors_required")
    _refused(api.call("GET", "/users", session=partial), 401, "user_more_factors_required")

    from tests.ws_client import connect

    async def run():
        ws, connected = await connect(api.server, api.project.id, session=partial, impersonateUserId=target["$id"])
        try:
            assert connected["type"] == "connected" and connected["data"]["user"] is None, connected
        finally:
            await ws.close()

    asyncio.run(run())


def test_a_target_with_mfa_does_not_block_the_impersonators_socket(api: Api, pair):
    """The socket's MFA rule reads the impersonator's session against the impersonator, not
    against the target's MFA settings."""
    operator, op, target, _ = pair
    _mfa_pending(api, target)

    from tests.ws_client import connect

    async def run():
        ws, connected = await connect(api.server, api.project.id, session=op, impersonateUserId=target["$id"])
        try:
            assert connected["data"]["user"]["$id"] == target["$id"], connected
        finally:
            await ws.close()

    asyncio.run(run())


# --- credentials behind users.read and the account reads -----------------------------------------

def test_users_read_of_an_impersonator_shows_no_password_hashes_or_codes(api: Api, pair):
    operator, op, target, _ = pair
    one = api.call("GET", f"/users/{target['$id']}", session=op)
    assert one.status_code == 200, one.text
    assert not {"password", "hash", "hashOptions"} & one.json().keys(), one.json()
    listed = api.call("GET", "/users", session=op).json()["users"]
    assert listed and all(not {"password", "hash", "hashOptions"} & u.keys() for u in listed)
    codes = api.call("GET", f"/users/{target['$id']}/mfa/recovery-codes", session=op, headers={ID: target["$id"]})
    _refused(codes, 401, "general_unauthorized_scope")
    _refused(api.call("GET", f"/users/{target['$id']}/mfa/recovery-codes", session=op), 401,
             "general_unauthorized_scope")
    # An API key still sees them.
    assert api.call("GET", f"/users/{target['$id']}", key=True).json()["hash"] == "argon2"


def test_provider_tokens_are_not_shown_to_an_impersonator(oauth: OAuthSetup):
    api = oauth.api
    operator, op = api.signup(email=f"{unique_login('op')}@example.com")
    _flag(api, operator["$id"], True)
    login = unique_login("oauthvictim")
    _, r = oauth.sign_in(login)
    victim = session_token(r, oauth.project)
    own = api.call("GET", "/account/sessions", session=victim).json()["sessions"][0]
    assert own["providerAccessToken"]  # the user sees their own
    target = api.call("GET", "/account", session=victim).json()
    as_target = {ID: target["$id"]}

    for path, key in (("/account/sessions", "sessions"), ("/account/identities", "identities")):
        rows = api.call("GET", path, session=op, headers=as_target).json()[key]
        assert rows and all(x["providerAccessToken"] == "" and x["providerRefreshToken"] == "" for x in rows), path
    one = api.call("GET", f"/account/sessions/{own['$id']}", session=op, headers=as_target).json()
    assert one["$id"] == own["$id"] and one["providerAccessToken"] == "" and one["providerRefreshToken"] == ""
    for path, key in ((f"/users/{target['$id']}/sessions", "sessions"), ("/users/identities", "identities")):
        rows = api.call("GET", path, session=op).json()[key]
        assert rows and all(x["providerAccessToken"] == "" and x["providerRefreshToken"] == "" for x in rows), path
        assert api.call("GET", path, key=True).json()[key][0]["providerAccessToken"], path


# --- odd header values: never a 500 --------------------------------------------------------------

def test_odd_impersonation_values_never_break_a_request(api: Api, pair):
    operator, op, target, _ = pair
    me = operator["$id"]
    cases = [
        ({ID: "x" * 10_000}, None, me),
        ({ID: ""}, None, me),
        ({ID: ""}, {"impersonateUserId": target["$id"]}, target["$id"]),
        ({ID: "nobody"}, {"impersonateUserId": target["$id"]}, me),  # the header wins
        ({ID: target["$id"], "X-Appwrite-Impersonate-User-Email": operator["email"]}, None, target["$id"]),
        ({"X-Appwrite-Impersonate-User-Email": target["email"].swapcase()}, None, target["$id"]),
        ({"X-Appwrite-Impersonate-User-Email": "\u00e9@example.com".encode().decode("latin-1")}, None, me),
        ({"X-Appwrite-Impersonate-User-Phone": target["phone"][1:]}, None, me),
        ({"X-Appwrite-Impersonate-User-Phone": "+" + "9" * 500}, None, me),
        ({}, {"impersonateUserId": "\x00"}, None),
        ({}, "impersonateEmail=%ED%A0%80x&impersonateUserId=%FF", None),
        ({}, {"impersonatePhone": "\u202e+1"}, me),
        ({}, {"impersonateuserid": target["$id"]}, target["$id"]),
    ]
    for headers, params, expect in cases:
        r = api.call("GET", "/account", session=op, headers=headers, params=params)
        assert r.status_code < 500, (headers, params, r.text)
        if expect is not None:
            assert r.status_code == 200 and r.json()["$id"] == expect, (headers, params, r.text)
        else:
            assert r.status_code in (200, 400), (headers, params, r.text)

    # The same header twice.
    url = urlsplit(api.server.endpoint)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.putrequest("GET", url.path + "/account")
        conn.putheader("X-Appwrite-Project", api.project.id)
        conn.putheader("X-Appwrite-Session", op)
        conn.putheader(ID, target["$id"])
        conn.putheader(ID, operator["$id"])
        conn.endheaders()
        res = conn.getresponse()
        assert res.status < 500, res.read()
    finally:
        conn.close()


def test_keys_and_other_users_are_untouched_by_the_headers(api: Api, pair, django_db_blocker):
    operator, op, target, target_session = pair
    # An API key: the headers change nothing (the key's own scopes, no account).
    r = api.call("GET", "/account", key=True, headers={ID: target["$id"]})
    _refused(r, 401, "general_unauthorized_scope")
    assert api.call("PATCH", f"/users/{target['$id']}/name", key=True, headers={ID: operator["$id"]},
                    json={"name": "by key"}).json()["name"] == "by key"
    # A key with a session or JWT is refused as before.
    _refused(api.call("GET", "/users", key=True, session=op, headers={ID: target["$id"]}), 403,
             "user_api_key_and_session_set")
    # A user without the flag changes their own account, headers or not.
    renamed = api.call("PATCH", "/account/name", session=target_session, headers={ID: operator["$id"]},
                       json={"name": "mine"})
    assert renamed.status_code == 200 and renamed.json()["$id"] == target["$id"], renamed.text
    assert api.call("GET", f"/users/{operator['$id']}", key=True).json()["name"] == operator["name"]
    # A JWT of the impersonator impersonates like the session, read-only included.
    jwt = api.call("POST", "/account/jwts", session=op).json()["jwt"]
    via = api.call("GET", "/account", headers={"X-Appwrite-JWT": jwt, ID: target["$id"]})
    assert via.json()["$id"] == target["$id"] and via.json()["impersonatorUserId"] == operator["$id"]
    _refused(api.call("PATCH", "/account/name", headers={"X-Appwrite-JWT": jwt, ID: target["$id"]},
                      json={"name": "x"}), 403, "user_impersonation_read_only")
    # Another project's user is not a target: the request stays the impersonator's.
    elsewhere, _ = Api(api.server, make_project(django_db_blocker)).signup()
    for how in ({ID: elsewhere["$id"]}, {"X-Appwrite-Impersonate-User-Email": elsewhere["email"]}):
        r = api.call("GET", "/account", session=op, headers=how)
        assert r.json()["$id"] == operator["$id"], r.text
    assert api.call("GET", f"/users/{elsewhere['$id']}", session=op).json()["type"] == "user_not_found"


def test_graphql_account_mutations_are_read_only_too(api: Api, pair):
    operator, op, target, _ = pair
    r = api.call("POST", "/graphql", session=op, headers={ID: target["$id"]},
                 json={"query": 'mutation { accountUpdateName(name: "hijacked") { name } }'})
    assert r.status_code == 200, r.text
    errors = r.json().get("errors") or []
    assert errors and errors[0]["extensions"]["type"] == "user_impersonation_read_only", r.text
    assert api.call("GET", f"/users/{target['$id']}", key=True).json()["name"] == target["name"]


def test_realtime_account_events_carry_no_password_hash(api: Api, pair):
    """A user's ``account`` channel (and so an impersonator's socket naming them) receives the
    Users service's events without the password hash an API key sees in the response."""
    from tests.ws_client import connect, recv_type, subscribe

    operator, op, target, _ = pair

    async def run():
        ws, connected = await connect(api.server, api.project.id, session=op, impersonateUserId=target["$id"])
        try:
            assert connected["data"]["user"]["$id"] == target["$id"]
            await subscribe(ws, "acc", ["account"])
            renamed = await asyncio.to_thread(api.call, "PATCH", f"/users/{target['$id']}/name", key=True,
                                              json={"name": "renamed"})
            assert renamed.json()["hash"] == "argon2"  # the key's answer has it
            frame = await recv_type(ws, "event")
            payload = frame["data"]["payload"]
            assert payload["$id"] == target["$id"] and payload["name"] == "renamed"
            assert not {"password", "hash", "hashOptions"} & payload.keys(), payload
        finally:
            await ws.close()

    asyncio.run(run())
