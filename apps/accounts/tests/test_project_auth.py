"""The project's authentication settings reach the account routes (the rest of the settings are
tested with the flows that use them)."""

from __future__ import annotations

import datetime as dt

from conftest import Api


def test_session_length_follows_the_project(api: Api, sql):
    sql("UPDATE projects_project SET auth_duration = 3600 WHERE id = %s", (api.project.pk,))
    user, token = api.signup()
    session = api.call("GET", "/account/sessions/current", session=token).json()
    expire = dt.datetime.fromisoformat(session["expire"])
    left = (expire - dt.datetime.now(dt.UTC)).total_seconds()
    assert 3500 < left <= 3600


def test_default_session_length_is_the_servers(api: Api):
    user, token = api.signup()
    session = api.call("GET", "/account/sessions/current", session=token).json()
    left = (dt.datetime.fromisoformat(session["expire"]) - dt.datetime.now(dt.UTC)).total_seconds()
    assert left > 364 * 86400  # SESSION_DURATION: one year


import pytest  # noqa: E402

from conftest import make_project  # noqa: E402


@pytest.fixture
def configured(asgi_server, django_db_setup, django_db_blocker, sql):
    """``configured(**auth_fields) -> Api`` on a fresh project with those settings (set before the
    server first resolves the project, so no cache is in the way)."""

    def make(**fields) -> Api:
        project = make_project(django_db_blocker)
        if fields:
            sets = ", ".join(f"{k} = %s" for k in fields)
            sql(f"UPDATE projects_project SET {sets} WHERE id = %s", (*fields.values(), project.pk))
        return Api(asgi_server, project)

    return make


def test_sessions_per_user_end_the_oldest(configured, sql):
    api = configured(auth_max_sessions=2)
    user, first = api.signup()
    second = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"},
                      key=True).json()["secret"]
    third = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"},
                     key=True).json()["secret"]
    assert api.call("GET", "/account", session=first).status_code == 401
    for alive in (second, third):
        assert api.call("GET", "/account", session=alive).status_code == 200
    assert api.call("GET", "/account/sessions", session=third).json()["total"] == 2


def test_user_limit(configured, sql):
    api = configured(auth_limit=1)
    api.signup()
    r = api.call("POST", "/account", json={"userId": "unique()", "email": "second@example.com",
                                           "password": "password123"})
    assert r.status_code == 400 and r.json()["type"] == "user_count_exceeded"
    r = api.call("POST", "/account/sessions/anonymous")
    assert r.status_code == 400 and r.json()["type"] == "user_count_exceeded"
    assert sql("SELECT count(*) FROM accounts_user WHERE project_id = %s", (api.project.pk,)) == [(1,)]


PASSWORD_CASES = [
    # (id, settings, password, name, status, type)
    ("minimum length", {"auth_password_min_length": 12}, "elevenchars", "", 400, "general_argument_invalid"),
    ("minimum length met", {"auth_password_min_length": 12}, "twelve-chars", "", 201, None),
    ("common password", {"auth_password_dictionary": True}, "password123", "", 400, "general_argument_invalid"),
    ("common password, any case", {"auth_password_dictionary": True}, "PASSWORD123", "", 400,
     "general_argument_invalid"),
    ("uncommon password", {"auth_password_dictionary": True}, "wobbly-teapot-42", "", 201, None),
    ("contains the name", {"auth_personal_data_check": True}, "x-HOPPER-99x", "Hopper", 400,
     "password_personal_data"),
    ("contains the email's local part", {"auth_personal_data_check": True}, "LOCALPART!", "", 400,
     "password_personal_data"),
    ("personal data check off", {}, "x-HOPPER-99x", "Hopper", 201, None),
]


@pytest.mark.parametrize("case", PASSWORD_CASES, ids=[c[0] for c in PASSWORD_CASES])
def test_password_policy_on_sign_up(configured, sql, case):
    _, fields, password, name, status, etype = case
    api = configured(**fields)
    local = f"someone{abs(hash(case[0])) % 10**6}"
    password = password.replace("LOCALPART", local)
    r = api.call("POST", "/account", json={"userId": "unique()", "email": f"{local}@example.com",
                                           "password": password, "name": name})
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        assert sql("SELECT count(*) FROM accounts_user WHERE project_id = %s", (api.project.pk,)) == [(0,)]


def test_password_history_and_invalidate_sessions_on_change(configured):
    api = configured(auth_password_history=2)
    user, token = api.signup(password="first-pass-1")
    other = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "first-pass-1"},
                     key=True).json()["secret"]
    again = api.call("PATCH", "/account/password", json={"password": "first-pass-1", "oldPassword": "first-pass-1"},
                     session=token)
    assert again.status_code == 400 and again.json()["type"] == "password_recently_used"
    assert api.call("GET", "/account", session=other).status_code == 200  # the refusal changed nothing
    ok = api.call("PATCH", "/account/password", json={"password": "second-pass-2", "oldPassword": "first-pass-1"},
                  session=token)
    assert ok.status_code == 200
    # invalidate sessions is on for new projects: the other session ended, the current one stays.
    assert api.call("GET", "/account", session=other).status_code == 401
    assert api.call("GET", "/account", session=token).status_code == 200
    back = api.call("PATCH", "/account/password", json={"password": "first-pass-1", "oldPassword": "second-pass-2"},
                    session=token)
    assert back.status_code == 400 and back.json()["type"] == "password_recently_used"


def test_sessions_survive_a_password_change_when_not_invalidated(configured):
    api = configured(auth_invalidate_sessions=False)
    user, token = api.signup()
    other = api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"},
                     key=True).json()["secret"]
    assert api.call("PATCH", "/account/password", json={"password": "another-pass", "oldPassword": "password123"},
                    session=token).status_code == 200
    assert api.call("GET", "/account", session=other).status_code == 200


@pytest.mark.parametrize("field,method,path,body", [
    ("auth_email_password", "POST", "/account", {"userId": "unique()", "email": "e@example.com", "password": "pass-word-1"}),
    ("auth_email_password", "POST", "/account/sessions/email", {"email": "e@example.com", "password": "pass-word-1"}),
    ("auth_anonymous", "POST", "/account/sessions/anonymous", {}),
])
def test_method_toggles(configured, field, method, path, body):
    api = configured(**{field: False})
    r = api.call(method, path, json=body)
    assert r.status_code == 501 and r.json()["type"] == "user_auth_method_unsupported"


def test_jwt_toggle(configured):
    api = configured(auth_jwt=False)
    _, token = api.signup()
    r = api.call("POST", "/account/jwts", json={}, session=token)
    assert r.status_code == 501 and r.json()["type"] == "user_auth_method_unsupported"
