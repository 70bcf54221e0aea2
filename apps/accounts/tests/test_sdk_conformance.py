"""Conformance: the unmodified Appwrite Python SDK 27.0.0 against live ASGI and WSGI servers.

Each test runs twice (``server`` is parametrized over both builds) and checks the SDK's parsed
models and ``AppwriteException.type``.
"""

from __future__ import annotations

import time

import pytest
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.models import Jwt, Session, SessionList, User
from appwrite.services.account import Account

from conftest import EVERY_BUILD


def _client(server, project_id: str) -> Client:
    return Client().set_endpoint(server.endpoint).set_project(project_id)


def _email() -> str:
    return f"sdk{time.monotonic_ns()}@example.com"


@pytest.fixture
def sdk(server, project):
    """``(key client, email, password, session)``: a user signed up and logged in via the key."""
    admin = _client(server, project.id).set_key(project.key)
    email, password = _email(), "password123"
    created = Account(admin).create(user_id=ID.unique(), email=email, password=password, name="Ada")
    assert isinstance(created, User) and created.name == "Ada"
    session = Account(admin).create_email_password_session(email=email, password=password)
    return admin, email, password, session


@EVERY_BUILD  # also on the naive build: one of its smoke tests (conftest.EVERY_BUILD)
def test_account_flow(server, project, sdk):
    _, email, password, session = sdk
    assert isinstance(session, Session) and session.secret, "API-key callers get the session secret"
    assert session.provider == "email" and session.current is True

    me = Account(_client(server, project.id).set_session(session.secret))
    user = me.get()
    assert isinstance(user, User) and user.email == email and user.status is True
    assert me.update_name(name="Grace").name == "Grace"
    updated = me.update_prefs(prefs={"theme": "dark", "size": 3})
    assert updated.prefs.data == {"theme": "dark", "size": 3}
    assert me.get_prefs().data == {"theme": "dark", "size": 3}
    assert me.update_password(password="brand-new-pass", old_password=password).email == email

    sessions = me.list_sessions()
    assert isinstance(sessions, SessionList) and sessions.total == 1
    assert sessions.sessions[0].id == session.id and sessions.sessions[0].current is True
    assert me.get_session(session_id="current").id == session.id
    assert me.delete_session(session_id="current") == b""
    with pytest.raises(AppwriteException) as err:
        me.get()
    assert err.value.code == 401 and err.value.type == "general_unauthorized_scope"


def test_client_login_without_key_has_blank_secret(server, project, sdk):
    _, email, password, _ = sdk
    anon_client = _client(server, project.id)
    session = Account(anon_client).create_email_password_session(email=email, password=password)
    assert session.secret == ""


def test_anonymous_session_and_jwt(server, project):
    admin = _client(server, project.id).set_key(project.key)
    session = Account(admin).create_anonymous_session()
    assert session.provider == "anonymous"
    user_client = _client(server, project.id).set_session(session.secret)
    me = Account(user_client)
    assert me.get().email == ""
    # Python SDK 27 has no create_jwt (web-only): call the route through the SDK's transport.
    raw = user_client.call("post", "/account/jwts", {"content-type": "application/json", "x-appwrite-project": project.id}, {})
    jwt = Jwt.model_validate(raw)
    jwt_client = _client(server, project.id).set_jwt(jwt.jwt)
    assert Account(jwt_client).get().id == session.userid


def test_delete_all_sessions(server, project, sdk):
    _, email, password, session = sdk
    me = Account(_client(server, project.id).set_session(session.secret))
    assert me.delete_sessions() == b""
    with pytest.raises(AppwriteException) as err:
        me.get()
    assert err.value.type == "general_unauthorized_scope"


ERROR_CASES = [
    # (id, action(server, project, email, password, session) -> call, code, type)
    ("duplicate email", lambda s, p, e, pw, ss: Account(_client(s, p.id)).create(user_id=ID.unique(), email=e, password=pw), 409, "user_already_exists"),
    ("wrong password", lambda s, p, e, pw, ss: Account(_client(s, p.id)).create_email_password_session(email=e, password="wrong-password"), 401, "user_invalid_credentials"),
    ("guest get", lambda s, p, e, pw, ss: Account(_client(s, p.id)).get(), 401, "general_unauthorized_scope"),
    ("no project", lambda s, p, e, pw, ss: Account(Client().set_endpoint(s.endpoint)).get(), 400, "project_id_missing"),
    ("unknown project", lambda s, p, e, pw, ss: Account(_client(s, "no-such-project")).get(), 404, "project_not_found"),
    ("forged session", lambda s, p, e, pw, ss: Account(_client(s, p.id).set_session("eyJpZCI6IngiLCJzZWNyZXQiOiJ5In0=")).get(), 401, "general_unauthorized_scope"),
    ("jwt and cookie", lambda s, p, e, pw, ss: Account(_client(s, p.id).set_jwt("a.b.c").set_cookie(f"a_session_{p.id.lower()}={ss.secret}")).get(), 403, "user_jwt_and_cookie_set"),
    ("invalid jwt", lambda s, p, e, pw, ss: Account(_client(s, p.id).set_jwt("a.b.c")).get(), 401, "user_jwt_invalid"),
    ("session exists", lambda s, p, e, pw, ss: Account(_client(s, p.id).set_session(ss.secret)).create_email_password_session(email=e, password=pw), 401, "user_session_already_exists"),
    ("short password", lambda s, p, e, pw, ss: Account(_client(s, p.id)).create(user_id=ID.unique(), email=_email(), password="short"), 400, "general_argument_invalid"),
    ("bad user id", lambda s, p, e, pw, ss: Account(_client(s, p.id)).create(user_id="_bad", email=_email(), password=pw), 400, "general_argument_invalid"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_sdk_errors(server, project, sdk, case):
    _, email, password, session = sdk
    _, action, code, etype = case
    with pytest.raises(AppwriteException) as err:
        action(server, project, email, password, session)
    assert err.value.code == code
    assert err.value.type == etype
