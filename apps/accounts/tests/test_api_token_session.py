"""``POST /account/sessions/token``: a sign-in token (magic URL, email or phone code, server-made
token) becomes a session. Tokens are stored here with SQL, as the routes that mail or return
them would store them; the exchange is driven over HTTP on every build and through the SDK."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import hashlib
import time

import pytest
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.services.account import Account

from conftest import Api

GENERIC, MAGIC_URL, EMAIL, PHONE, RECOVERY, VERIFICATION = 8, 5, 9, 6, 3, 2


@pytest.fixture
def token_for(sql):
    """``token_for(api, user, secret, type=8, ttl=900)`` stores a token and returns ``secret``."""

    def store(api: Api, user: dict, secret: str, type: int = GENERIC, ttl: int = 900) -> str:
        now = dt.datetime.now(dt.UTC)
        sql(
            "INSERT INTO accounts_token (project_id, user_id, uid, type, secret_hash, phrase, ip, user_agent, "
            "expire, created_at) SELECT %s, id, %s, %s, %s, '', '', '', %s, %s FROM accounts_user "
            "WHERE project_id = %s AND uid = %s",
            (api.project.pk, f"t{time.monotonic_ns()}", type, hashlib.sha256(secret.encode()).hexdigest(),
             now + dt.timedelta(seconds=ttl), now, api.project.pk, user["$id"]),
        )
        return secret

    return store


def _exchange(api: Api, user_id, secret, **kw):
    return api.call("POST", "/account/sessions/token", json={"userId": user_id, "secret": secret}, **kw)


# (id, token type stored, ttl, what is sent (secret override), status, error type, provider, factors)
CASES = [
    ("server token", GENERIC, 900, None, 201, None, "token", ["token"]),
    ("magic url", MAGIC_URL, 900, None, 201, None, "magic-url", ["email"]),
    ("email code", EMAIL, 900, None, 201, None, "token", ["email"]),
    ("phone code", PHONE, 900, None, 201, None, "phone", ["phone"]),
    ("wrong secret", GENERIC, 900, "not-the-secret", 401, "user_invalid_token", None, None),
    ("expired", GENERIC, -1, None, 401, "user_invalid_token", None, None),
    ("recovery token refused", RECOVERY, 900, None, 401, "user_invalid_token", None, None),
    ("verification token refused", VERIFICATION, 900, None, 401, "user_invalid_token", None, None),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_exchange(server, project, token_for, case):
    _, ttype, ttl, sent, status, etype, provider, factors = case
    api = Api(server, project)
    user, _ = api.signup()
    secret = token_for(api, user, f"s{time.monotonic_ns()}", ttype, ttl)
    r = _exchange(api, user["$id"], sent or secret)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        return
    session = r.json()
    assert session["provider"] == provider and session["factors"] == factors and session["current"] is True
    assert session["secret"] == ""  # the token only goes to API-key callers
    token = r.cookies.get(f"a_session_{project.id}".lower())
    me = api.call("GET", "/account", session=token).json()
    assert me["$id"] == user["$id"]
    assert me["emailVerification"] is (ttype in (MAGIC_URL, EMAIL))
    assert me["phoneVerification"] is (ttype == PHONE)


BAD_INPUT = [
    ("missing secret", {"userId": "u1"}, 400, "general_argument_invalid"),
    ("missing userId", {"secret": "abc"}, 400, "general_argument_invalid"),
    ("empty secret", {"userId": "u1", "secret": ""}, 400, "general_argument_invalid"),
    ("secret too long", {"userId": "u1", "secret": "s" * 257}, 400, "general_argument_invalid"),
    ("userId too long", {"userId": "u" * 37, "secret": "abc"}, 400, "general_argument_invalid"),
    ("userId wrong type", {"userId": 5, "secret": "abc"}, 400, "general_argument_invalid"),
    ("undeclared field ignored", {"userId": "u1", "secret": "abc", "admin": True}, 401, "user_invalid_token"),
    ("malformed json", b"{userId", 400, "general_bad_request"),
    ("unknown user", {"userId": "nobody", "secret": "abc"}, 401, "user_invalid_token"),
]


@pytest.mark.parametrize("case", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input(api: Api, sql, case):
    _, body, status, etype = case
    before = sql("SELECT count(*) FROM accounts_session WHERE project_id = %s", (api.project.pk,))
    if isinstance(body, bytes):
        r = api.call("POST", "/account/sessions/token", data=body, headers={"Content-Type": "application/json"})
    else:
        r = api.call("POST", "/account/sessions/token", json=body)
    assert r.status_code == status, r.text
    assert r.json()["type"] == etype
    assert sql("SELECT count(*) FROM accounts_session WHERE project_id = %s", (api.project.pk,)) == before


def test_a_token_works_once(api: Api, token_for):
    user, _ = api.signup()
    secret = token_for(api, user, "once-only")
    assert _exchange(api, user["$id"], secret).status_code == 201
    again = _exchange(api, user["$id"], secret)
    assert again.status_code == 401 and again.json()["type"] == "user_invalid_token"


def test_racing_exchanges_make_one_session(api: Api, token_for, sql):
    user, _ = api.signup()
    secret = token_for(api, user, "raced")
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda _: _exchange(api, user["$id"], secret).status_code, range(8)))
    assert sorted(statuses) == [201] + [401] * 7
    sessions = sql("SELECT count(*) FROM accounts_session s JOIN accounts_user u ON u.id = s.user_id "
                   "WHERE u.uid = %s AND u.project_id = %s", (user["$id"], api.project.pk))
    assert sessions == [(2,)]  # the sign-up's session and the token's


def test_blocked_user(api: Api, token_for):
    user, session = api.signup()
    secret = token_for(api, user, "blocked-user")
    assert api.call("PATCH", "/account/status", session=session).status_code == 200
    r = _exchange(api, user["$id"], secret)
    assert r.status_code == 403 and r.json()["type"] == "user_blocked"


def test_refused_with_a_session_attached(api: Api, token_for):
    user, session = api.signup()
    secret = token_for(api, user, "with-session")
    r = _exchange(api, user["$id"], secret, session=session)
    assert r.status_code == 401 and r.json()["type"] == "user_session_already_exists"
    assert _exchange(api, user["$id"], secret).status_code == 201  # the refused attempt used nothing


def test_guessing_is_rate_limited_and_a_success_clears_it(api: Api, token_for):
    user, _ = api.signup()
    for _ in range(10):
        assert _exchange(api, user["$id"], "guess").status_code == 401
    secret = token_for(api, user, "the-real-one")
    r = _exchange(api, user["$id"], secret)
    assert r.status_code == 429 and r.json()["type"] == "general_rate_limit_exceeded"
    other, _ = api.signup()  # the budget is per user: another user's exchange is not blocked
    assert _exchange(api, other["$id"], token_for(api, other, "other-secret")).status_code == 201


def test_python_sdk_create_session(asgi_server, project, token_for):
    api = Api(asgi_server, project)
    user, _ = api.signup()
    secret = token_for(api, user, "sdk-secret")
    server = Client().set_endpoint(asgi_server.endpoint).set_project(project.id).set_key(project.key)
    session = Account(server).create_session(user_id=user["$id"], secret=secret)
    assert session.userid == user["$id"] and session.provider == "token"
    client = Client().set_endpoint(asgi_server.endpoint).set_project(project.id).set_session(session.secret)
    assert Account(client).get().id == user["$id"]
    with pytest.raises(AppwriteException) as err:
        Account(server).create_session(user_id=user["$id"], secret=secret)
    assert err.value.type == "user_invalid_token"
