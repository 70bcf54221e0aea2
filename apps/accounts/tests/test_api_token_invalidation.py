"""What ends a mailed link or code before it expires (docs/security-accounts.md): a new password
or email ends every recovery link; a verification link verifies only the address it was mailed
to; a new magic URL or email code replaces the older ones; the passwordless routes reveal no
more about existing accounts than Appwrite's do. Driven over HTTP against the live servers."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import ORIGIN, Api
from tests.mail import link_in


def _email() -> str:
    return f"i{time.monotonic_ns()}@example.com"


def _recovery_secret(api: Api, email: str) -> str:
    """A recovery link's secret, as an API key sees it (the link itself is mailed)."""
    r = api.call("POST", "/account/recovery", json={"email": email, "url": ORIGIN}, key=True)
    assert r.status_code == 201, r.text
    return r.json()["secret"]


def _reset(api: Api, user_id: str, secret: str, password: str = "reset-password-9"):
    return api.call("PUT", "/account/recovery", json={"userId": user_id, "secret": secret, "password": password})


# --- recovery links ---------------------------------------------------------------------------
# (id, the change: (method, path, body, auth) with USER/EMAIL substituted, recovery link still works?)
RECOVERY_ENDERS = [
    ("reset with another link", ("PUT", "/account/recovery", {"userId": "USER", "secret": "OTHER",
                                                               "password": "another-pass-1"}, "none"), False),
    ("account password change", ("PATCH", "/account/password", {"password": "changed-pass-1",
                                                                "oldPassword": "password123"}, "session"), False),
    ("users API password change", ("PATCH", "/users/USER/password", {"password": "changed-pass-2"}, "key"), False),
    ("users API password removed", ("PATCH", "/users/USER/password", {"password": ""}, "key"), False),
    ("account email change", ("PATCH", "/account/email", {"email": "NEWEMAIL", "password": "password123"},
                              "session"), False),
    ("users API email change", ("PATCH", "/users/USER/email", {"email": "NEWEMAIL"}, "key"), False),
    # Control: a change that proves nothing about the password or the mailbox leaves the link alone.
    ("name change", ("PATCH", "/account/name", {"name": "Someone"}, "session"), True),
]


@pytest.mark.parametrize("case", RECOVERY_ENDERS, ids=[c[0] for c in RECOVERY_ENDERS])
def test_recovery_link_ends_with_a_new_password_or_email(server, app_project, case):
    _, (method, path, body, auth), survives = case
    api = Api(server, app_project)
    user, session = api.signup()
    link, other = _recovery_secret(api, user["email"]), _recovery_secret(api, user["email"])
    subst = {"USER": user["$id"], "OTHER": other, "NEWEMAIL": _email()}
    body = {k: subst.get(v, v) for k, v in body.items()}
    r = api.call(method, path.replace("USER", user["$id"]), json=body, key=auth == "key",
                 session=session if auth == "session" else None)
    assert r.status_code == 200, r.text
    done = _reset(api, user["$id"], link)
    if survives:
        assert done.status_code == 200, done.text
    else:
        assert done.status_code == 401 and done.json()["type"] == "user_invalid_token", done.text
        assert done.json()["code"] == 401


def test_refused_password_change_keeps_the_link(server, app_project):
    """A change that did not happen (wrong old password) ends nothing."""
    api = Api(server, app_project)
    user, session = api.signup()
    link = _recovery_secret(api, user["email"])
    r = api.call("PATCH", "/account/password", json={"password": "changed-pass-1", "oldPassword": "wrong-pass-0"},
                 session=session)
    assert r.status_code == 401
    assert _reset(api, user["$id"], link).status_code == 200


# --- verification links -----------------------------------------------------------------------

def test_verification_link_verifies_only_the_address_it_was_mailed_to(mail_api: Api, sql):
    api = mail_api
    first = _email()
    user, session = api.signup(email=first)
    assert api.call("POST", "/account/verifications/email", json={"url": ORIGIN}, session=session).status_code == 201
    params = {k: v[0] for k, v in parse_qs(urlsplit(link_in(api.smtp.wait_for(to=first)[0])).query).items()}
    second = _email()
    moved = api.call("PATCH", "/account/email", json={"email": second, "password": "password123"}, session=session)
    assert moved.status_code == 200 and moved.json()["emailVerification"] is False
    r = api.call("PUT", "/account/verifications/email", json={"userId": params["userId"], "secret": params["secret"]})
    assert r.status_code == 401 and r.json()["type"] == "user_invalid_token", r.text
    assert api.call("GET", "/account", session=session).json()["emailVerification"] is False
    # Moving back does not revive it either: the email change deleted the link.
    api.call("PATCH", "/account/email", json={"email": first, "password": "password123"}, session=session)
    r = api.call("PUT", "/account/verifications/email", json={"userId": params["userId"], "secret": params["secret"]})
    assert r.status_code == 401 and r.json()["type"] == "user_invalid_token"
    # A link mailed to the address the account has now works.
    assert api.call("POST", "/account/verifications/email", json={"url": ORIGIN}, session=session).status_code == 201
    params = {k: v[0] for k, v in parse_qs(urlsplit(link_in(api.smtp.wait_for(to=first, count=2)[-1])).query).items()}
    r = api.call("PUT", "/account/verifications/email", json={"userId": params["userId"], "secret": params["secret"]})
    assert r.status_code == 200, r.text


def test_verification_token_bound_to_another_address_is_refused(server, app_project, sql):
    """Every build: a stored verification token whose address is not the user's email (or that
    carries none) is refused, even though its secret is right."""
    import datetime as dt
    import hashlib

    api = Api(server, app_project)
    user, _ = api.signup()
    now = dt.datetime.now(dt.UTC)
    for n, address in enumerate(("old-address@example.com", "", user["email"])):
        secret = f"v{n}-{time.monotonic_ns()}"
        sql("INSERT INTO accounts_token (project_id, user_id, uid, type, secret_hash, phrase, email, ip, user_agent, "
            "expire, created_at) SELECT %s, id, %s, 2, %s, '', %s, '', '', %s, %s FROM accounts_user "
            "WHERE project_id = %s AND uid = %s",
            (app_project.pk, f"t{time.monotonic_ns()}", hashlib.sha256(secret.encode()).hexdigest(), address,
             now + dt.timedelta(hours=1), now, app_project.pk, user["$id"]))
        r = api.call("PUT", "/account/verifications/email", json={"userId": user["$id"], "secret": secret})
        if address == user["email"]:
            assert r.status_code == 200, r.text
        else:
            assert r.status_code == 401 and r.json()["type"] == "user_invalid_token", (address, r.text)


# --- sign-in links and codes ------------------------------------------------------------------

@pytest.mark.parametrize("path,body", [
    ("/account/tokens/email", {}),
    ("/account/tokens/magic-url", {"url": ORIGIN}),
], ids=["email code", "magic url"])
def test_a_new_sign_in_token_replaces_the_older_ones(server, app_project, sql, path, body):
    api = Api(server, app_project)
    email = _email()
    secrets = []
    for _ in range(3):
        r = api.call("POST", path, json={"userId": "unique()", "email": email, **body}, key=True)
        assert r.status_code == 201, r.text
        secrets.append((r.json()["userId"], r.json()["secret"]))
    user_id = secrets[0][0]
    assert sql("SELECT count(*) FROM accounts_token t JOIN accounts_user u ON u.id = t.user_id "
               "WHERE u.project_id = %s AND u.uid = %s", (app_project.pk, user_id)) == [(1,)]
    for _, old in secrets[:2]:
        if old == secrets[2][1]:
            continue  # two 6-digit codes may coincide (one chance in a million)
        r = api.call("POST", "/account/sessions/token", json={"userId": user_id, "secret": old})
        assert r.status_code == 401 and r.json()["type"] == "user_invalid_token", r.text
    r = api.call("POST", "/account/sessions/token", json={"userId": user_id, "secret": secrets[2][1]})
    assert r.status_code == 201, r.text


def test_sign_in_code_mailed_before_an_email_change_is_refused(server, app_project):
    api = Api(server, app_project)
    user, session = api.signup()
    code = api.call("POST", "/account/tokens/email", json={"userId": "unique()", "email": user["email"]},
                    key=True).json()["secret"]
    moved = api.call("PATCH", "/account/email", json={"email": _email(), "password": "password123"}, session=session)
    assert moved.status_code == 200
    r = api.call("POST", "/account/sessions/token", json={"userId": user["$id"], "secret": code})
    assert r.status_code == 401 and r.json()["type"] == "user_invalid_token"


# --- what the passwordless routes reveal -------------------------------------------------------

def _identity_email(sql, api: Api, user_id: str) -> str:
    """Link an OAuth2 identity reporting a fresh address to ``user_id``; returns that address."""
    import datetime as dt

    address = _email()
    now = dt.datetime.now(dt.UTC)
    sql("INSERT INTO accounts_identity (project_id, user_id, uid, provider, provider_uid, provider_email, "
        "provider_access_token, provider_refresh_token, created_at, updated_at) "
        "SELECT %s, id, %s, 'github', %s, %s, '', '', %s, %s FROM accounts_user WHERE project_id = %s AND uid = %s",
        (api.project.pk, f"id{time.monotonic_ns()}", f"gh{time.monotonic_ns()}", address, now, now,
         api.project.pk, user_id))
    return address


def test_email_code_for_an_identity_email_reveals_no_account(server, app_project, sql):
    """Appwrite's email-code route answers its generic 400 for an address another account's
    OAuth2 identity reports: the same body as any bad request, nothing about an account."""
    api = Api(server, app_project)
    owner, _ = api.signup()
    address = _identity_email(sql, api, owner["$id"])
    r = api.call("POST", "/account/tokens/email", json={"userId": "unique()", "email": address})
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["type"] == "general_bad_request"
    assert body["message"] == "There was an error processing your request."
    assert owner["$id"] not in r.text and "exist" not in body["message"].lower()
    # The magic-URL route answers Appwrite's 409 for the same case (Appwrite does not hide it there).
    r = api.call("POST", "/account/tokens/magic-url", json={"userId": "unique()", "email": address})
    assert r.status_code == 409 and r.json()["type"] == "user_email_already_exists"


@pytest.mark.parametrize("path", ["/account/tokens/email", "/account/tokens/magic-url"])
def test_existing_email_gets_the_existing_account_id(server, app_project, path):
    """Appwrite's documented behaviour, kept: ``userId`` is ignored for an email that has an
    account, and the token names that account (the SDK needs the ID for the exchange)."""
    api = Api(server, app_project)
    user, _ = api.signup()
    r = api.call("POST", path, json={"userId": "someone-new", "email": user["email"]})
    assert r.status_code == 201 and r.json()["userId"] == user["$id"] and r.json()["secret"] == ""
