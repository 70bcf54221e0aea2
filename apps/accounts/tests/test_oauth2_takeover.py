"""OAuth2 pre-account takeover, against the real OpenID provider (``tests/oidc``) on every build.

Someone creates an email + password account with another person's address (it stays
unverified), arms it (password, sessions, a JWT, a token, an MFA authenticator, a phone number,
their own provider account linked), and waits for the address's owner to sign in with a
provider that vouches for the address. That sign-in takes the account over for the owner:
nothing the creator set still lets them in (``apps/accounts/oauth2/takeover.py``). A provider
that does not vouch for the address is refused with 409 and changes nothing; an account whose
email is verified is joined as before."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pyotp
import pytest

from apps.accounts.tests.test_oauth2_flow import (
    APP,
    FAILURE,
    SUCCESS,
    OAuthSetup,
    configure_oidc,
    sdk_token_flow,
    session_token,
    unique_login,
)
from conftest import Api, make_project

PASSWORD = "attacker-password-1"


@pytest.fixture
def oauth(server, oidc_provider, django_db_blocker) -> OAuthSetup:
    project = make_project(django_db_blocker, origins=(APP,))
    configure_oidc(django_db_blocker, project, server, oidc_provider)
    return OAuthSetup(server, project, Api(server, project), oidc_provider)


def password_sign_in(api: Api, email: str, password: str = PASSWORD):
    return api.call("POST", "/account/sessions/email", json={"email": email, "password": password})


def user_rows(sql, user_uid: str) -> dict:
    """What the database holds for the user: its credential columns and credential row counts."""
    row = sql("SELECT id, password, email_verification, phone, mfa, mfa_totp_secret, mfa_recovery_codes "
              "FROM accounts_user WHERE uid = %s", (user_uid,))[0]
    counts = {table: sql(f"SELECT count(*) FROM {table} WHERE user_id = %s", (row[0],))[0][0]
              for table in ("accounts_session", "accounts_token", "accounts_identity", "accounts_challenge")}
    codes = json.loads(row[6]) if isinstance(row[6], str) else row[6]
    return {"password": row[1], "email_verification": row[2], "phone": row[3], "mfa": row[4],
            "totp": row[5], "recovery_codes": codes, **counts}


def arm_account(oauth: OAuthSetup, email: str) -> dict:
    """The attacker's preparation; returns the handles they keep."""
    api = oauth.api
    user, first = api.signup(email=email, password=PASSWORD)
    # Their own provider account, linked while signed in (replaces the session that asked).
    mallory = unique_login("mallory")
    _, linked = oauth.sign_in(mallory, session=first)
    assert linked.status_code == 301 and linked.headers["Location"] == SUCCESS, linked.headers
    session = session_token(linked, oauth.project)
    jwt = api.call("POST", "/account/jwts", session=session).json()["jwt"]
    # An MFA authenticator, MFA on, recovery codes: all known to the attacker.
    auth = api.call("POST", "/account/mfa/authenticators/totp", session=session).json()
    totp = pyotp.TOTP(auth["secret"])
    r = api.call("PUT", "/account/mfa/authenticators/totp", session=session, json={"otp": totp.now()})
    assert r.status_code == 200, r.text
    assert api.call("PATCH", "/account/mfa", session=session, json={"mfa": True}).status_code == 200
    assert api.call("POST", "/account/mfa/recovery-codes", session=session).status_code == 201
    # A phone number and an outstanding sign-in token (set up here through the Users API).
    r = api.call("PATCH", f"/users/{user['$id']}/phone", key=True, json={"number": "+15550001111"})
    assert r.status_code == 200, r.text
    token = api.call("POST", f"/users/{user['$id']}/tokens", key=True, json={}).json()
    return {"user": user, "session": session, "jwt": jwt, "mallory": mallory, "token": token}


def test_verified_sign_in_takes_over_unverified_account(oauth: OAuthSetup, sql):
    victim = unique_login("victim")
    email = f"{victim}@example.com"
    armed = arm_account(oauth, email)
    uid = armed["user"]["$id"]
    before = user_rows(sql, uid)
    assert before["password"] and before["phone"] and before["mfa"] and before["totp"]
    assert (before["accounts_session"], before["accounts_token"], before["accounts_identity"]) == (1, 1, 1)

    _, r = oauth.sign_in(victim)
    assert r.status_code == 301 and r.headers["Location"] == SUCCESS, r.headers
    mine = session_token(r, oauth.project)

    # The victim is in the account (same user), verified, with only their own identity and session.
    me = oauth.api.call("GET", "/account", session=mine).json()
    assert me["$id"] == uid and me["email"] == email and me["emailVerification"] is True
    assert me["passwordUpdate"] == "" and me["phone"] == "" and me["mfa"] is False
    identities = oauth.api.call("GET", "/account/identities", session=mine).json()["identities"]
    assert [(i["provider"], i["providerUid"]) for i in identities] == [("oidc", victim)]
    assert oauth.api.call("GET", "/account/sessions", session=mine).json()["total"] == 1
    factors = oauth.api.call("GET", "/account/mfa/factors", session=mine).json()
    assert factors["totp"] is False and factors["recoveryCode"] is False
    after = user_rows(sql, uid)
    assert after["password"] == "" and after["totp"] == "" and after["recovery_codes"] == []
    assert (after["accounts_session"], after["accounts_token"], after["accounts_identity"]) == (1, 0, 1)

    # Nothing the attacker kept lets them in any more.
    refused = password_sign_in(oauth.api, email)
    assert refused.status_code == 401 and refused.json()["type"] == "user_invalid_credentials", refused.text
    assert oauth.api.call("GET", "/account", session=armed["session"]).status_code == 401
    r = oauth.api.call("GET", "/account", headers={"X-Appwrite-JWT": armed["jwt"]})
    assert r.status_code == 401 and r.json()["type"] == "user_jwt_invalid", r.text
    r = oauth.api.call("POST", "/account/sessions/token", json={"userId": uid, "secret": armed["token"]["secret"]})
    assert r.status_code == 401 and r.json()["type"] == "user_invalid_token", r.text
    # Their provider account signs in to an account of its own, not the victim's.
    _, theirs = oauth.sign_in(armed["mallory"])
    assert theirs.headers["Location"] == SUCCESS, theirs.headers
    other = oauth.api.call("GET", "/account", session=session_token(theirs, oauth.project)).json()
    assert other["$id"] != uid

    # The audit log records it, for the account's new owner and for the console.
    logs = oauth.api.call("GET", f"/users/{uid}/logs", key=True).json()["logs"]
    assert "user.takeover" in [entry["event"] for entry in logs]


def test_token_flow_takes_over_unverified_account(oauth: OAuthSetup):
    """The server-side (token) flow does the same: the hand-off secret made after the takeover
    works, the attacker's password no longer does."""
    victim = unique_login("victim-token")
    email = f"{victim}@example.com"
    user, session = oauth.api.signup(email=email, password=PASSWORD)
    user_id, secret = sdk_token_flow(oauth, victim)
    assert user_id == user["$id"]
    assert oauth.api.call("GET", "/account", session=session).status_code == 401
    assert password_sign_in(oauth.api, email).status_code == 401
    created = oauth.api.call("POST", "/account/sessions/token", key=True, json={"userId": user_id, "secret": secret})
    assert created.status_code == 201, created.text
    me = oauth.api.call("GET", "/account", session=created.json()["secret"]).json()
    assert me["emailVerification"] is True


def test_unverified_provider_email_is_refused_and_changes_nothing(oauth: OAuthSetup, sql):
    login = unique_login("unverified")  # the test provider reports these names' emails unverified
    email = f"{login}@example.com"
    user, session = oauth.api.signup(email=email, password=PASSWORD)
    before = user_rows(sql, user["$id"])

    _, r = oauth.sign_in(login)
    assert r.status_code == 301, r.text
    location = urlsplit(r.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == FAILURE
    error = json.loads(parse_qs(location.query)["error"][0])
    assert (error["type"], error["code"]) == ("user_already_exists", 409), error

    assert user_rows(sql, user["$id"]) == before
    assert sql("SELECT count(*) FROM accounts_user WHERE project_id = %s", (oauth.project.pk,))[0][0] == 1
    me = oauth.api.call("GET", "/account", session=session).json()
    assert me["$id"] == user["$id"] and me["emailVerification"] is False
    assert password_sign_in(oauth.api, email).status_code == 201


def test_verified_account_is_joined_as_before(oauth: OAuthSetup, sql):
    login = unique_login("owner")
    email = f"{login}@example.com"
    user, session = oauth.api.signup(email=email, password=PASSWORD)
    r = oauth.api.call("PATCH", f"/users/{user['$id']}/verification", key=True, json={"emailVerification": True})
    assert r.status_code == 200, r.text
    before = user_rows(sql, user["$id"])

    _, r = oauth.sign_in(login)
    assert r.status_code == 301 and r.headers["Location"] == SUCCESS, r.headers
    me = oauth.api.call("GET", "/account", session=session_token(r, oauth.project)).json()
    assert me["$id"] == user["$id"] and me["emailVerification"] is True
    # The password and the earlier session still work; the identity was added.
    assert oauth.api.call("GET", "/account", session=session).status_code == 200
    assert password_sign_in(oauth.api, email).status_code == 201
    after = user_rows(sql, user["$id"])
    assert after["password"] == before["password"]
    assert after["accounts_identity"] == before["accounts_identity"] + 1
    logs = oauth.api.call("GET", f"/users/{user['$id']}/logs", key=True).json()["logs"]
    assert "user.takeover" not in [entry["event"] for entry in logs]
