"""Conformance: the unmodified Python SDK 27 ``Users`` and ``Teams`` services against the ASGI
build, the WSGI build and the ASGI build on Django's handler (PostgreSQL + Redis), and against
the embedded default (SQLite, no Redis) on ASGI and WSGI."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import bcrypt
import pytest
from appwrite.client import Client
from appwrite.enums.password_hash import PasswordHash
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.models import (
    Jwt,
    Membership,
    MembershipList,
    Preferences,
    Session,
    SessionList,
    Team,
    TeamList,
    Token,
    User,
    UserList,
)
from appwrite.query import Query
from appwrite.services.account import Account
from appwrite.services.teams import Teams
from appwrite.services.users import Users

from conftest import ROOT, ProjectInfo, start_server


@pytest.fixture(scope="module")
def embedded_env(tmp_path_factory):
    path = tmp_path_factory.mktemp("embedded-teams") / "db.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(SQLITE_PATH=str(path), PYTHONUNBUFFERED="1")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "createproject", "embedded"], cwd=ROOT, env=env, check=True, capture_output=True)
    key = subprocess.run([*manage, "createapikey", "embedded", "--all-scopes"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    return env, ProjectInfo(id="embedded", key=key, pk=0)


def _embedded(kind: str, embedded_env):
    server = start_server(kind, embedded_env[0])
    return server, embedded_env[1]


@pytest.fixture(scope="module")
def embedded_asgi_server(embedded_env):
    server, project = _embedded("asgi", embedded_env)
    yield server, project
    server.stop()


@pytest.fixture(scope="module")
def embedded_wsgi_server(embedded_env):
    server, project = _embedded("wsgi", embedded_env)
    yield server, project
    server.stop()


@pytest.fixture(params=["asgi", "lean_asgi", "wsgi", "embedded_asgi", "embedded_wsgi"])
def target(request, project):
    """``(server, project)``: the three builds on PostgreSQL + Redis (direct protocol, pure ASGI,
    WSGI), and the embedded SQLite default on ASGI and WSGI."""
    if request.param.startswith("embedded"):
        return request.getfixturevalue(f"{request.param}_server")
    return request.getfixturevalue(f"{request.param}_server"), project


def _client(server, project, *, key: bool = False, session: str | None = None, jwt: str | None = None) -> Client:
    client = Client().set_endpoint(server.endpoint).set_project(project.id)
    if key:
        client.set_key(project.key)
    if session:
        client.set_session(session)
    if jwt:
        client.set_jwt(jwt)
    return client


def test_users_service(target):
    server, project = target
    users = Users(_client(server, project, key=True))
    n = time.monotonic_ns()
    email, phone = f"sdk{n}@example.com", f"+1{n % 10**10:010d}"
    user = users.create(user_id=ID.unique(), email=email, phone=phone, password="password123", name="Ada")
    assert isinstance(user, User) and user.email == email and user.phone == phone and user.hash == "argon2"
    listed = users.list(queries=[Query.equal("email", [email]), Query.limit(5)])
    assert isinstance(listed, UserList) and listed.total == 1 and listed.users[0].id == user.id
    assert users.list(search=email).users[0].id == user.id
    assert users.get(user_id=user.id).name == "Ada"
    assert users.update_name(user_id=user.id, name="Grace").name == "Grace"
    assert users.update_labels(user_id=user.id, labels=["vip", "beta"]).labels == ["vip", "beta"]
    assert users.list(queries=[Query.contains("labels", ["vip"]), Query.equal("$id", [user.id])]).total == 1
    assert users.update_email_verification(user_id=user.id, email_verification=True).emailverification is True
    assert users.update_phone_verification(user_id=user.id, phone_verification=True).phoneverification is True
    assert users.update_prefs(user_id=user.id, prefs={"theme": "dark"}).data == {"theme": "dark"}
    prefs = users.get_prefs(user_id=user.id)
    assert isinstance(prefs, Preferences) and prefs.data == {"theme": "dark"}

    session = users.create_session(user_id=user.id)
    assert isinstance(session, Session) and session.provider == "server" and session.factors == ["server"]
    me = Account(_client(server, project, session=session.secret))
    assert me.get().email == email
    assert isinstance(users.list_sessions(user_id=user.id), SessionList)
    jwt = users.create_jwt(user_id=user.id, duration=60)
    assert isinstance(jwt, Jwt) and Account(_client(server, project, jwt=jwt.jwt)).get().id == user.id

    assert users.update_status(user_id=user.id, status=False).status is False
    with pytest.raises(AppwriteException) as err:
        me.get()
    assert err.value.code == 403 and err.value.type == "user_blocked"
    users.update_status(user_id=user.id, status=True)
    assert me.get().id == user.id

    token = users.create_token(user_id=user.id, length=16, expire=120)
    assert isinstance(token, Token) and len(token.secret) == 16
    exchanged = Account(_client(server, project)).create_session(user_id=user.id, secret=token.secret)
    assert isinstance(exchanged, Session) and exchanged.factors == ["token"]

    extra = users.create_session(user_id=user.id)
    assert users.delete_session(user_id=user.id, session_id=extra.id) == b""
    assert users.update_password(user_id=user.id, password="another-pass-1").id == user.id
    with pytest.raises(AppwriteException) as err:  # a new password ends the sessions (project default)
        me.get()
    assert err.value.code == 401
    new_email = f"sdk{n}b@example.com"
    updated = users.update_email(user_id=user.id, email=new_email)
    assert updated.email == new_email and updated.emailverification is False
    assert users.update_phone(user_id=user.id, number="").phone == ""
    assert isinstance(users.list_memberships(user_id=user.id), MembershipList)
    assert users.delete_sessions(user_id=user.id) == b""

    hashed = users.create_bcrypt_user(user_id=ID.unique(), email=f"b{n}@example.com",
                                      password=bcrypt.hashpw(b"bcrypt-pass", bcrypt.gensalt(6)).decode())
    assert hashed.hash == "bcrypt"
    sha = users.create_sha_user(user_id=ID.unique(), email=f"s{n}@example.com",
                                password="5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
                                password_version=PasswordHash.SHA256)
    assert sha.hash == "sha"
    Account(_client(server, project)).create_email_password_session(email=f"s{n}@example.com", password="password")

    last = Account(_client(server, project, session=users.create_session(user_id=user.id).secret))
    assert last.get().id == user.id
    assert users.delete(user_id=user.id) == b""
    with pytest.raises(AppwriteException) as err:
        users.get(user_id=user.id)
    assert err.value.code == 404 and err.value.type == "user_not_found"
    with pytest.raises(AppwriteException) as err:
        last.get()
    assert err.value.code == 401


def test_teams_service(target):
    server, project = target
    admin = _client(server, project, key=True)
    n = time.monotonic_ns()
    owner = Users(admin).create(user_id=ID.unique(), email=f"own{n}@example.com", password="password123")
    owner_session = Users(admin).create_session(user_id=owner.id).secret
    mine = Teams(_client(server, project, session=owner_session))
    team = mine.create(team_id=ID.unique(), name="Crew", roles=["lead"])
    assert isinstance(team, Team) and team.total == 1 and team.name == "Crew"
    assert Teams(admin).create(team_id=ID.unique(), name="Empty").total == 0
    listed = mine.list()
    assert isinstance(listed, TeamList) and [t.id for t in listed.teams] == [team.id]
    assert mine.get(team_id=team.id).id == team.id
    assert mine.update_name(team_id=team.id, name="Crew 2").name == "Crew 2"
    assert mine.update_prefs(team_id=team.id, prefs={"color": "red"}).data == {"color": "red"}
    assert mine.get_prefs(team_id=team.id).data == {"color": "red"}

    added = Teams(admin).create_membership(team_id=team.id, roles=["editor"], email=f"mem{n}@example.com",
                                           name="Member")
    assert isinstance(added, Membership) and added.confirm is True and added.roles == ["editor"]
    memberships = mine.list_memberships(team_id=team.id, queries=[Query.equal("confirm", [True])])
    assert memberships.total == 2 and {m.userid for m in memberships.memberships} == {owner.id, added.userid}
    assert "owner" in next(m for m in memberships.memberships if m.userid == owner.id).roles
    assert mine.get_membership(team_id=team.id, membership_id=added.id).username == "Member"
    assert mine.update_membership(team_id=team.id, membership_id=added.id, roles=["viewer"]).roles == ["viewer"]
    with pytest.raises(AppwriteException) as err:
        Teams(_client(server, project)).update_membership_status(team_id=team.id, membership_id=added.id,
                                                                 user_id=added.userid, secret="wrong")
    assert err.value.code == 401 and err.value.type == "team_invalid_secret"
    invited = mine.create_membership(team_id=team.id, roles=[], email=f"inv{n}@example.com",
                                     url="http://127.0.0.1/join")  # the API's own host: mail queued
    assert invited.confirm is False and invited.joined == ""
    member_session = Users(admin).create_session(user_id=added.userid).secret
    theirs = Teams(_client(server, project, session=member_session))
    assert theirs.get(team_id=team.id).total == 2
    with pytest.raises(AppwriteException) as err:
        theirs.update_name(team_id=team.id, name="mine now")
    assert err.value.code == 401 and err.value.type == "user_unauthorized"
    assert theirs.delete_membership(team_id=team.id, membership_id=added.id) == b""
    with pytest.raises(AppwriteException) as err:
        theirs.get(team_id=team.id)
    assert err.value.code == 404 and err.value.type == "team_not_found"
    assert mine.delete(team_id=team.id) == b""
    assert mine.list().total == 0
