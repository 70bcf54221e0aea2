"""Passwordless sign-in: magic URL and email code mailed by the worker through a real SMTP
server, read from the received mail and turned into a session; phone tokens refused (no SMS
provider); sessions extended."""

from __future__ import annotations

import datetime as dt
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.services.account import Account

from conftest import ORIGIN, Api, make_project
from tests.mail import code_in, link_in, text_of


def _email() -> str:
    return f"t{time.monotonic_ns()}@example.com"


def _guest(api: Api) -> Account:
    return Account(Client().set_endpoint(api.server.endpoint).set_project(api.project.id))


def _as(api: Api, secret: str) -> Account:
    return Account(Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_session(secret))


def _server_account(api: Api) -> Account:
    return Account(Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_key(api.project.key))


def test_magic_url_creates_the_account_and_signs_in(mail_api: Api):
    api = mail_api
    email = _email()
    token = _guest(api).create_magic_url_token(user_id=ID.unique(), email=email, url=f"{ORIGIN}/magic",
                                               phrase=True)
    assert token.secret == "" and len(token.phrase.split()) == 2
    (mail,) = api.smtp.wait_for(to=email)
    assert mail["Subject"] == f"{api.project.id} Login"
    assert token.phrase in text_of(mail)  # the phrase the app shows is in the mail
    link = link_in(mail)
    params = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    assert link.startswith(f"{ORIGIN}/magic?userId={token.userid}&secret=")
    assert len(params["secret"]) == 64 and params["project"] == api.project.id
    session = _server_account(api).create_session(user_id=params["userId"], secret=params["secret"])
    assert session.provider == "magic-url" and session.factors == ["email"]
    me = _as(api, session.secret).get()
    assert me.email == email and me.emailverification is True and me.passwordupdate == ""
    with pytest.raises(AppwriteException) as again:
        _server_account(api).create_session(user_id=params["userId"], secret=params["secret"])
    assert again.value.type == "user_invalid_token"


def test_magic_url_for_an_existing_account_ignores_user_id(mail_api: Api):
    api = mail_api
    email = _email()
    user, _ = api.signup(email=email)
    r = api.call("POST", "/account/tokens/magic-url", json={"userId": "someone-else", "email": email, "url": ORIGIN})
    assert r.status_code == 201 and r.json()["userId"] == user["$id"]
    params = {k: v[0] for k, v in parse_qs(urlsplit(link_in(api.smtp.wait_for(to=email)[0])).query).items()}
    # The deprecated PUT /account/sessions/magic-url does the same exchange.
    s = api.call("PUT", "/account/sessions/magic-url", json={"userId": user["$id"], "secret": params["secret"]})
    assert s.status_code == 201 and s.json()["provider"] == "magic-url"


def test_email_code_signs_in(mail_api: Api):
    api = mail_api
    email = _email()
    token = _guest(api).create_email_token(user_id=ID.unique(), email=email)
    assert token.phrase == "" and token.secret == ""
    expire = dt.datetime.fromisoformat(token.expire)
    assert 14 * 60 < (expire - dt.datetime.now(dt.UTC)).total_seconds() <= 15 * 60
    (mail,) = api.smtp.wait_for(to=email)
    assert mail["Subject"] == f"OTP for {api.project.id} Login"
    code = code_in(mail)
    session = _server_account(api).create_session(user_id=token.userid, secret=code)
    assert session.factors == ["email"] and session.provider == "token"
    assert _as(api, session.secret).get().emailverification is True


def test_web_style_guest_gets_no_secret_but_a_key_does(asgi_server, app_project):
    api = Api(asgi_server, app_project)
    r = api.call("POST", "/account/tokens/email", json={"userId": "unique()", "email": _email()}, key=True)
    assert r.status_code == 201 and len(r.json()["secret"]) == 6 and r.json()["secret"].isdigit()


TOKEN_CASES = [
    # (id, path, body, status, type, users created)
    ("magic url, url off the platforms", "/account/tokens/magic-url",
     {"userId": "unique()", "email": "NEW", "url": "https://evil.example.com/x"}, 400, "general_argument_invalid", 0),
    ("magic url, bad email", "/account/tokens/magic-url", {"userId": "unique()", "email": "nope"}, 400,
     "general_argument_invalid", 0),
    ("magic url, bad userId", "/account/tokens/magic-url", {"userId": "_bad", "email": "NEW"}, 400,
     "general_argument_invalid", 0),
    ("magic url, userId taken", "/account/tokens/magic-url", {"userId": "TAKEN", "email": "NEW"}, 409,
     "user_already_exists", 0),
    ("magic url, phrase not a bool", "/account/tokens/magic-url",
     {"userId": "unique()", "email": "NEW", "phrase": "yes please"}, 400, "general_argument_invalid", 0),
    *[(f"email code, phrase {v!r}", "/account/tokens/email", {"userId": "unique()", "email": "NEW", "phrase": v},
       400, "general_argument_invalid", 0) for v in ("off", "yes", 2, "true", 1)],
    ("magic url, legacy path", "/account/sessions/magic-url", {"userId": "unique()", "email": "NEW"}, 201, None, 1),
    ("email code", "/account/tokens/email", {"userId": "unique()", "email": "NEW", "phrase": True}, 201, None, 1),
    ("email code, missing email", "/account/tokens/email", {"userId": "unique()"}, 400, "general_argument_invalid", 0),
    ("email code, undeclared field ignored", "/account/tokens/email",
     {"userId": "unique()", "email": "NEW", "url": ORIGIN}, 201, None, 1),
    ("email code, malformed json", "/account/tokens/email", b"{userId", 400, "general_bad_request", 0),
    ("phone token, no SMS provider", "/account/tokens/phone", {"userId": "unique()", "phone": "+15550100"}, 503,
     "general_phone_disabled", 0),
    ("phone token, bad number", "/account/tokens/phone", {"userId": "unique()", "phone": "5550100"}, 400,
     "general_argument_invalid", 0),
    ("phone token, legacy path", "/account/sessions/phone", {"userId": "unique()", "phone": "+15550100"}, 503,
     "general_phone_disabled", 0),
]


@pytest.mark.parametrize("case", TOKEN_CASES, ids=[c[0] for c in TOKEN_CASES])
def test_token_routes(server, app_project, sql, case):
    _, path, body, status, etype, created = case
    api = Api(server, app_project)
    taken, _ = api.signup()
    users = sql("SELECT count(*) FROM accounts_user WHERE project_id = %s", (app_project.pk,))[0][0]
    if isinstance(body, dict):
        body = {k: {"NEW": _email(), "TAKEN": taken["$id"]}.get(v, v) if isinstance(v, str) else v
                for k, v in body.items()}
        r = api.call("POST", path, json=body)
    else:
        r = api.call("POST", path, data=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
    else:
        assert r.json()["secret"] == "" and (r.json()["phrase"] != "") is bool(body.get("phrase"))
    assert sql("SELECT count(*) FROM accounts_user WHERE project_id = %s", (app_project.pk,))[0][0] == users + created


def test_phone_verification_refused_and_its_put_checks_tokens(server, app_project):
    api = Api(server, app_project)
    user, token = api.signup()
    r = api.call("POST", "/account/verifications/phone", json={}, session=token)
    assert r.status_code == 503 and r.json()["type"] == "general_phone_disabled"
    r = api.call("POST", "/account/verification/phone", json={}, session=token)
    assert r.status_code == 503
    r = api.call("PUT", "/account/verifications/phone", json={"userId": user["$id"], "secret": "123456"})
    assert r.status_code == 401 and r.json()["type"] == "user_invalid_token"
    r = api.call("PUT", "/account/verifications/phone", json={"userId": "nobody", "secret": "123456"})
    assert r.status_code == 404 and r.json()["type"] == "user_not_found"


def test_user_limit_applies_to_new_passwordless_accounts(asgi_server, django_db_setup, django_db_blocker, sql):
    project = make_project(django_db_blocker, origins=(ORIGIN,))
    sql("UPDATE projects_project SET auth_limit = 1 WHERE id = %s", (project.pk,))
    api = Api(asgi_server, project)
    existing, _ = api.signup()
    r = api.call("POST", "/account/tokens/email", json={"userId": "unique()", "email": _email()})
    assert r.status_code == 400 and r.json()["type"] == "user_count_exceeded"
    ok = api.call("POST", "/account/tokens/email", json={"userId": "unique()", "email": existing["email"]})
    assert ok.status_code == 201  # an existing account still gets its code


@pytest.mark.parametrize("setting,path,body", [
    ("auth_magic_url", "/account/tokens/magic-url", {"userId": "unique()", "email": "x@example.com"}),
    ("auth_email_otp", "/account/tokens/email", {"userId": "unique()", "email": "x@example.com"}),
    ("auth_phone", "/account/tokens/phone", {"userId": "unique()", "phone": "+15550100"}),
])
def test_sign_in_methods_can_be_turned_off(asgi_server, django_db_setup, django_db_blocker, sql, setting, path, body):
    project = make_project(django_db_blocker, origins=(ORIGIN,))
    sql(f"UPDATE projects_project SET {setting} = false WHERE id = %s", (project.pk,))
    api = Api(asgi_server, project)
    r = api.call("POST", path, json=body)
    assert r.status_code == 501 and r.json()["type"] == "user_auth_method_unsupported"
    assert api.call("POST", path, json=body, key=True).status_code in (201, 503)  # keys are never refused


def test_token_exchange_guessing_a_code_is_rate_limited(asgi_server, app_project):
    api = Api(asgi_server, app_project)
    token = api.call("POST", "/account/tokens/email", json={"userId": "unique()", "email": _email()}, key=True).json()
    for guess in range(10):
        r = api.call("POST", "/account/sessions/token", json={"userId": token["userId"], "secret": f"{guess:06d}"})
        assert r.status_code in (401, 201)
    r = api.call("POST", "/account/sessions/token", json={"userId": token["userId"], "secret": token["secret"]})
    assert r.status_code == 429 and r.json()["type"] == "general_rate_limit_exceeded"


def test_session_update_extends_it(server, django_db_setup, django_db_blocker, sql):
    project = make_project(django_db_blocker)
    sql("UPDATE projects_project SET auth_duration = 7200 WHERE id = %s", (project.pk,))
    api = Api(server, project)
    _, token = api.signup()
    sql("UPDATE accounts_session SET expire = now() + interval '60 seconds' WHERE project_id = %s", (project.pk,))
    from conftest import drop_cached

    drop_cached(*[f"user:{uid}" for (uid,) in sql("SELECT id FROM accounts_user WHERE project_id = %s",
                                                  (project.pk,))])
    r = api.call("PATCH", "/account/sessions/current", json={}, session=token)
    assert r.status_code == 200, r.text
    left = (dt.datetime.fromisoformat(r.json()["expire"]) - dt.datetime.now(dt.UTC)).total_seconds()
    assert 7000 < left <= 7200
    assert api.call("GET", "/account", session=token).status_code == 200
