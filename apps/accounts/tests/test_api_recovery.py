"""Email verification and password recovery, end to end: the route stores a token and queues the
mail, the worker process sends it to a real SMTP server process, the test reads the link from
the received mail and completes the flow. Bad input is a row in each route's table."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.services.account import Account

from conftest import ORIGIN, Api
from tests.mail import link_in, text_of


def _email() -> str:
    return f"r{time.monotonic_ns()}@example.com"


def _params(link: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}


def _count(sql, table: str, project_pk: int) -> int:
    return sql(f"SELECT count(*) FROM {table} WHERE project_id = %s", (project_pk,))[0][0]


def _mails(sql) -> int:
    return sql("SELECT count(*) FROM django_tasks_database_dbtaskresult WHERE queue_name = 'mails'")[0][0]


# --- verification ---------------------------------------------------------------------------------

def test_verification_through_the_python_sdk(mail_api: Api):
    api = mail_api
    email = _email()
    user, token = api.signup(email=email, name="Ada")
    client = Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_session(token)
    account = Account(client)
    created = account.create_email_verification(url=f"{ORIGIN}/verify?from=mail")
    assert created.userid == user["$id"] and created.secret == ""  # secrets go to API keys only
    (mail,) = api.smtp.wait_for(to=email)
    assert mail["Subject"] == f"Account Verification for {api.project.id}"
    link = link_in(mail)
    assert link.startswith(f"{ORIGIN}/verify?from=mail&userId={user['$id']}&secret=")
    params = _params(link)
    assert len(params["secret"]) == 256 and params["expire"] == created.expire
    assert "Hello Ada" in text_of(mail)
    done = account.update_email_verification(user_id=params["userId"], secret=params["secret"])
    assert done.id == created.id
    assert account.get().emailverification is True
    with pytest.raises(AppwriteException) as again:  # single use
        account.update_email_verification(user_id=params["userId"], secret=params["secret"])
    assert again.value.code == 401 and again.value.type == "user_invalid_token"
    with pytest.raises(AppwriteException) as verified:
        account.create_email_verification(url=f"{ORIGIN}/verify")
    assert verified.value.code == 409 and verified.value.type == "user_email_already_verified"


def test_verification_by_raw_requests_and_email_change(mail_api: Api, sql):
    """The flow over plain HTTP; changing the email afterwards makes it unverified again."""
    api = mail_api
    email = _email()
    _, token = api.signup(email=email)
    assert api.call("POST", "/account/verifications/email", json={"url": ORIGIN}, session=token).status_code == 201
    params = _params(link_in(api.smtp.wait_for(to=email)[0]))
    assert api.call("PUT", "/account/verifications/email", json=params_subset(params)).status_code == 200
    me = api.call("GET", "/account", session=token).json()
    assert me["emailVerification"] is True
    jwt = api.call("POST", "/account/jwts", json={}, session=token).json()["jwt"]
    assert jwt  # the session still works after the flag changed (cache dropped, not the session)
    # A new address is not verified yet.
    moved = api.call("PATCH", "/account/email", json={"email": "moved-" + email, "password": "password123"},
                     session=token)
    assert moved.status_code == 200 and moved.json()["emailVerification"] is False


def params_subset(params: dict) -> dict:
    return {"userId": params["userId"], "secret": params["secret"]}


VERIFY_CREATE = [
    # (id, body, status, type)
    ("missing url", {}, 400, "general_argument_invalid"),
    ("empty url", {"url": ""}, 400, "general_argument_invalid"),
    ("url off the platforms", {"url": "https://evil.example.net/verify"}, 400, "general_argument_invalid"),
    ("javascript url", {"url": "javascript:alert(1)"}, 400, "general_argument_invalid"),
    ("url wrong type", {"url": 5}, 400, "general_argument_invalid"),
    ("url too long", {"url": ORIGIN + "/" + "x" * 2100}, 400, "general_argument_invalid"),
    ("undeclared field ignored", {"url": ORIGIN, "admin": True}, 201, None),
    ("malformed json", b"{url", 400, "general_bad_request"),
    ("the API's own host", {"url": "SELF/verify"}, 201, None),
    ("registered origin, other path and query", {"url": ORIGIN + "/a/b?c=d#frag"}, 201, None),
]


@pytest.mark.parametrize("case", VERIFY_CREATE, ids=[c[0] for c in VERIFY_CREATE])
def test_verification_create_cases(asgi_server, app_project, sql, case):
    _, body, status, etype = case
    api = Api(asgi_server, app_project)
    _, token = api.signup()
    tokens, mails = _count(sql, "accounts_token", app_project.pk), _mails(sql)
    if isinstance(body, dict) and body.get("url") == "SELF/verify":
        body = {"url": asgi_server.url + "/verify"}
    if isinstance(body, bytes):
        r = api.call("POST", "/account/verifications/email", data=body, headers={"Content-Type": "application/json"},
                     session=token)
    else:
        r = api.call("POST", "/account/verifications/email", json=body, session=token)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        assert _count(sql, "accounts_token", app_project.pk) == tokens, "a refused request stored a token"
        assert _mails(sql) <= mails, "a refused request queued a mail"
    else:
        assert _count(sql, "accounts_token", app_project.pk) == tokens + 1
    guest = api.call("POST", "/account/verifications/email", json={"url": ORIGIN})
    assert guest.status_code == 401 and guest.json()["type"] == "general_unauthorized_scope"


def test_verification_needs_an_email(asgi_server, app_project, sql):
    api = Api(asgi_server, app_project)
    anon = api.call("POST", "/account/sessions/anonymous", key=True).json()["secret"]
    r = api.call("POST", "/account/verifications/email", json={"url": ORIGIN}, session=anon)
    assert r.status_code == 400 and r.json()["type"] == "user_email_not_found"
    assert _count(sql, "accounts_token", app_project.pk) == 0


def test_verification_legacy_path_and_abuse_limit(asgi_server, app_project):
    api = Api(asgi_server, app_project)
    _, token = api.signup()
    for _ in range(10):
        assert api.call("POST", "/account/verification", json={"url": ORIGIN}, session=token).status_code == 201
    r = api.call("POST", "/account/verifications/email", json={"url": ORIGIN}, session=token)
    assert r.status_code == 429 and r.json()["type"] == "general_rate_limit_exceeded"
    assert r.headers["X-RateLimit-Limit"] == "10"


VERIFY_CONFIRM = [
    # (id, body (USER/SECRET substituted), status, type)
    ("wrong secret", {"userId": "USER", "secret": "0" * 256}, 401, "user_invalid_token"),
    ("recovery token is not a verification", {"userId": "USER", "secret": "RECOVERY"}, 401, "user_invalid_token"),
    ("expired", {"userId": "USER", "secret": "EXPIRED"}, 401, "user_invalid_token"),
    ("unknown user", {"userId": "nobody", "secret": "SECRET"}, 404, "user_not_found"),
    ("another user's secret", {"userId": "OTHER", "secret": "SECRET"}, 401, "user_invalid_token"),
    ("secret too long", {"userId": "USER", "secret": "s" * 257}, 400, "general_argument_invalid"),
    ("empty secret", {"userId": "USER", "secret": ""}, 400, "general_argument_invalid"),
    ("missing userId", {"secret": "SECRET"}, 400, "general_argument_invalid"),
    ("userId too long", {"userId": "u" * 37, "secret": "SECRET"}, 400, "general_argument_invalid"),
    ("malformed json", b"{userId", 400, "general_bad_request"),
]


@pytest.fixture
def stored_token(sql):
    """``stored_token(api, user_uid, secret, type, ttl)``: a token stored as the routes store one
    (bound to the user's current email, the address it would be mailed to)."""
    import datetime as dt
    import hashlib

    def store(api: Api, user_uid: str, secret: str, type: int, ttl: int = 3600) -> str:
        now = dt.datetime.now(dt.UTC)
        sql("INSERT INTO accounts_token (project_id, user_id, uid, type, secret_hash, phrase, email, ip, user_agent, "
            "expire, created_at) SELECT %s, id, %s, %s, %s, '', email, '', '', %s, %s FROM accounts_user "
            "WHERE project_id = %s AND uid = %s",
            (api.project.pk, f"t{time.monotonic_ns()}", type, hashlib.sha256(secret.encode()).hexdigest(),
             now + dt.timedelta(seconds=ttl), now, api.project.pk, user_uid))
        return secret

    return store


@pytest.mark.parametrize("case", VERIFY_CONFIRM, ids=[c[0] for c in VERIFY_CONFIRM])
def test_verification_confirm_cases(server, app_project, sql, stored_token, case):
    _, body, status, etype = case
    api = Api(server, app_project)
    user, _ = api.signup()
    other, _ = api.signup()
    secret = stored_token(api, user["$id"], f"v{time.monotonic_ns()}", 2)
    subst = {"USER": user["$id"], "OTHER": other["$id"], "SECRET": secret,
             "RECOVERY": stored_token(api, user["$id"], f"r{time.monotonic_ns()}", 3),
             "EXPIRED": stored_token(api, user["$id"], f"e{time.monotonic_ns()}", 2, ttl=-1)}
    if isinstance(body, dict):
        body = {k: subst.get(v, v) if isinstance(v, str) else v for k, v in body.items()}
        r = api.call("PUT", "/account/verifications/email", json=body)
    else:
        r = api.call("PUT", "/account/verifications/email", data=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert sql("SELECT email_verification FROM accounts_user WHERE uid = %s AND project_id = %s",
               (user["$id"], app_project.pk)) == [(False,)]
    # The good secret still works after every refused attempt.
    ok = api.call("PUT", "/account/verifications/email", json={"userId": user["$id"], "secret": secret})
    assert ok.status_code == 200, ok.text


# --- recovery ------------------------------------------------------------------------------------

def test_recovery_through_the_python_sdk(mail_api: Api):
    api = mail_api
    email = _email()
    user, old_session = api.signup(email=email, password="old-password-1")
    second = api.call("POST", "/account/sessions/email", json={"email": email, "password": "old-password-1"},
                      key=True).json()["secret"]
    guest = Account(Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_locale("de"))
    token = guest.create_recovery(email=email.upper(), url=f"{ORIGIN}/reset")
    assert token.userid == user["$id"] and token.secret == ""
    (mail,) = api.smtp.wait_for(to=email)
    assert mail["Subject"] == f"Passwort zurücksetzen für {api.project.id}"  # X-Appwrite-Locale: de
    params = _params(link_in(mail))
    done = guest.update_recovery(user_id=params["userId"], secret=params["secret"], password="new-password-2")
    assert done.id == token.id
    for stale in (old_session, second):  # invalidateSessions (on for new projects): every session ended
        assert api.call("GET", "/account", session=stale).status_code == 401
    assert api.call("POST", "/account/sessions/email", json={"email": email, "password": "old-password-1"}
                    ).status_code == 401
    session = Account(Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_key(
        api.project.key)).create_email_password_session(email=email, password="new-password-2")
    me = Account(Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_session(
        session.secret)).get()
    assert me.emailverification is True  # the link proved the mailbox
    with pytest.raises(AppwriteException) as again:
        guest.update_recovery(user_id=params["userId"], secret=params["secret"], password="third-password-3")
    assert again.value.type == "user_invalid_token"


def test_recovery_secret_goes_to_api_keys(server, app_project):
    """Every build: the token and its mail are stored in one transaction, the secret is shown to
    an API key, and the exchange works."""
    api = Api(server, app_project)
    user, _ = api.signup()
    r = api.call("POST", "/account/recovery", json={"email": user["email"], "url": ORIGIN}, key=True)
    assert r.status_code == 201 and len(r.json()["secret"]) == 256
    ok = api.call("PUT", "/account/recovery", json={"userId": user["$id"], "secret": r.json()["secret"],
                                                     "password": "brand-new-pass"})
    assert ok.status_code == 200 and ok.json()["secret"] == ""


RECOVERY_CREATE = [
    ("unknown email", {"email": "nobody@example.com", "url": ORIGIN}, 404, "user_not_found"),
    ("blocked user", {"email": "BLOCKED", "url": ORIGIN}, 403, "user_blocked"),
    ("url off the platforms", {"email": "USER", "url": "https://phish.example.org/reset"}, 400,
     "general_argument_invalid"),
    ("ftp url", {"email": "USER", "url": "ftp://localhost/reset"}, 400, "general_argument_invalid"),
    ("bad email", {"email": "not-an-email", "url": ORIGIN}, 400, "general_argument_invalid"),
    ("missing url", {"email": "USER"}, 400, "general_argument_invalid"),
    ("missing email", {"url": ORIGIN}, 400, "general_argument_invalid"),
    ("malformed json", b"{email", 400, "general_bad_request"),
]


@pytest.mark.parametrize("case", RECOVERY_CREATE, ids=[c[0] for c in RECOVERY_CREATE])
def test_recovery_create_cases(server, app_project, sql, case):
    _, body, status, etype = case
    api = Api(server, app_project)
    user, _ = api.signup()
    blocked, blocked_token = api.signup()
    api.call("PATCH", "/account/status", session=blocked_token)
    tokens = _count(sql, "accounts_token", app_project.pk)
    if isinstance(body, dict):
        body = {k: {"USER": user["email"], "BLOCKED": blocked["email"]}.get(v, v) for k, v in body.items()}
        r = api.call("POST", "/account/recovery", json=body)
    else:
        r = api.call("POST", "/account/recovery", data=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert _count(sql, "accounts_token", app_project.pk) == tokens


def test_recovery_is_rate_limited_per_email(asgi_server, app_project):
    api = Api(asgi_server, app_project)
    user, _ = api.signup()
    for _ in range(10):
        api.call("POST", "/account/recovery", json={"email": user["email"], "url": ORIGIN})
    r = api.call("POST", "/account/recovery", json={"email": user["email"], "url": ORIGIN})
    assert r.status_code == 429 and r.json()["type"] == "general_rate_limit_exceeded"


RECOVERY_CONFIRM = [
    ("wrong secret", {"secret": "0" * 256, "password": "brand-new-pass"}, 401, "user_invalid_token"),
    ("expired", {"secret": "EXPIRED", "password": "brand-new-pass"}, 401, "user_invalid_token"),
    ("verification token", {"secret": "VERIFICATION", "password": "brand-new-pass"}, 401, "user_invalid_token"),
    ("password too short", {"secret": "SECRET", "password": "short"}, 400, "general_argument_invalid"),
    ("password too long", {"secret": "SECRET", "password": "p" * 257}, 400, "general_argument_invalid"),
    ("missing password", {"secret": "SECRET"}, 400, "general_argument_invalid"),
    ("password wrong type", {"secret": "SECRET", "password": 12345678}, 400, "general_argument_invalid"),
    ("unknown user", {"userId": "nobody", "secret": "SECRET", "password": "brand-new-pass"}, 404, "user_not_found"),
]


@pytest.mark.parametrize("case", RECOVERY_CONFIRM, ids=[c[0] for c in RECOVERY_CONFIRM])
def test_recovery_confirm_cases(server, app_project, sql, stored_token, case):
    _, body, status, etype = case
    api = Api(server, app_project)
    user, session = api.signup(password="original-pass")
    secret = stored_token(api, user["$id"], f"r{time.monotonic_ns()}", 3)
    subst = {"SECRET": secret, "EXPIRED": stored_token(api, user["$id"], f"e{time.monotonic_ns()}", 3, ttl=-1),
             "VERIFICATION": stored_token(api, user["$id"], f"v{time.monotonic_ns()}", 2)}
    body = {"userId": user["$id"], **{k: subst.get(v, v) if isinstance(v, str) else v for k, v in body.items()}}
    before = sql("SELECT password FROM accounts_user WHERE uid = %s AND project_id = %s", (user["$id"], app_project.pk))
    r = api.call("PUT", "/account/recovery", json=body)
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert sql("SELECT password FROM accounts_user WHERE uid = %s AND project_id = %s",
               (user["$id"], app_project.pk)) == before
    assert api.call("GET", "/account", session=session).status_code == 200, "a refused reset ended a session"
    ok = api.call("PUT", "/account/recovery", json={"userId": user["$id"], "secret": secret, "password": "fine-pass-1"})
    assert ok.status_code == 200, "the link must survive a refused attempt"


def test_smtp_disabled_in_production(live_env, app_project, tmp_path):
    """APP_ENV=production without SMTP_HOST: the mail routes answer 503 general_smtp_disabled and
    store nothing."""
    from conftest import start_server

    env = {**live_env, "APP_ENV": "production", "SECRET_KEY": "s" * 64, "ALLOWED_HOSTS": "127.0.0.1"}
    env.pop("SMTP_HOST", None)
    server = start_server("asgi", env)
    try:
        api = Api(server, app_project)
        user, token = api.signup()
        for method, path, body, kw in (
            ("POST", "/account/verifications/email", {"url": ORIGIN}, {"session": token}),
            ("POST", "/account/recovery", {"email": user["email"], "url": ORIGIN}, {}),
            ("POST", "/account/tokens/magic-url", {"userId": "unique()", "email": user["email"], "url": ORIGIN}, {}),
            ("POST", "/account/tokens/email", {"userId": "unique()", "email": user["email"]}, {}),
        ):
            r = api.call(method, path, json=body, **kw)
            assert r.status_code == 503 and r.json()["type"] == "general_smtp_disabled", (path, r.text)
    finally:
        server.stop()
