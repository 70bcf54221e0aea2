"""Impersonation (Appwrite 1.9): a user with the ``impersonator`` flag acts as another user of
the project through the ``X-Appwrite-Impersonate-User-*`` headers or query parameters.

Live ASGI server, real PostgreSQL and Redis; the last test drives the official Python SDK.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.services.account import Account
from appwrite.services.teams import Teams
from appwrite.services.users import Users

from conftest import Api

ID = "X-Appwrite-Impersonate-User-Id"


def _user(api: Api, *, phone: bool = False) -> tuple[dict, str]:
    """A user made with the key (email, password, optionally a phone) and an email session."""
    n = time.monotonic_ns()
    body = {"userId": "unique()", "email": f"imp{n}@example.com", "password": "password123", "name": f"n{n}"}
    if phone:
        body["phone"] = f"+1{n % 10**10:010d}"
    r = api.call("POST", "/users", key=True, json=body)
    assert r.status_code == 201, r.text
    s = api.call("POST", "/account/sessions/email", key=True,
                 json={"email": body["email"], "password": "password123"})
    assert s.status_code == 201, s.text
    return r.json(), s.json()["secret"]


def _flag(api: Api, user_id: str, on: bool) -> dict:
    r = api.call("PATCH", f"/users/{user_id}/impersonator", key=True, json={"impersonator": on})
    assert r.status_code == 200, r.text
    assert r.json()["impersonator"] is on
    return r.json()


def test_requests_run_as_the_target(api: Api, pair):
    operator, op, target, target_session = pair
    team = api.call("POST", "/teams", session=target_session, json={"teamId": "unique()", "name": "theirs"})
    assert team.status_code == 201, team.text

    me = api.call("GET", "/account", session=op)
    assert me.json()["$id"] == operator["$id"] and "impersonatorUserId" not in me.json()
    assert me.json()["impersonator"] is True
    assert api.call("GET", "/teams", session=op).json()["total"] == 0

    for how in ({"headers": {ID: target["$id"]}},
                {"headers": {"X-Appwrite-Impersonate-User-Email": target["email"].upper()}},
                {"headers": {"X-Appwrite-Impersonate-User-Phone": target["phone"]}},
                {"params": {"impersonateUserId": target["$id"]}}):
        r = api.call("GET", "/account", session=op, **how)
        assert r.status_code == 200, r.text
        assert r.json()["$id"] == target["$id"] and r.json()["impersonatorUserId"] == operator["$id"], how
        teams = api.call("GET", "/teams", session=op, **how)
        assert [t["$id"] for t in teams.json()["teams"]] == [team.json()["$id"]], how

    # A write outside the account service runs as the target: they own what is made.
    made = api.call("POST", "/teams", session=op, headers={ID: target["$id"]},
                    json={"teamId": "unique()", "name": "made while impersonating"})
    assert made.status_code == 201, made.text
    assert api.call("GET", "/teams", session=target_session).json()["total"] == 2
    assert api.call("GET", "/teams", session=op).json()["total"] == 0


def test_the_targets_account_is_read_only(api: Api, sql, pair):
    operator, op, target, _ = pair
    as_target = {ID: target["$id"]}
    for method, path, body in (("PATCH", "/account/name", {"name": "hijacked"}),
                               ("PATCH", "/account/password", {"password": "newpassword1", "oldPassword": "password123"}),
                               ("PATCH", "/account/prefs", {"prefs": {"a": 1}}),
                               ("PATCH", "/account/status", None),
                               ("DELETE", "/account/sessions", None),
                               ("POST", "/account/mfa/recovery-codes", None),
                               ("GET", "/account/mfa/recovery-codes", None)):
        r = api.call(method, path, session=op, headers=as_target, json=body)
        assert r.status_code == 403, (path, r.text)
        assert r.json()["type"] == "user_impersonation_read_only", path
    row = sql("SELECT name, status, prefs::text FROM accounts_user WHERE uid = %s AND project_id = %s",
              (target["$id"], api.project.pk))
    assert row == [(target["name"], True, "{}")]
    assert sql("SELECT count(*) FROM accounts_session s JOIN accounts_user u ON u.id = s.user_id "
               "WHERE u.uid = %s AND u.project_id = %s", (target["$id"], api.project.pk)) == [(1,)]

    # Reads answer the target's: their sessions, none of which is the request's own.
    sessions = api.call("GET", "/account/sessions", session=op, headers=as_target).json()
    assert sessions["total"] == 1 and sessions["sessions"][0]["userId"] == target["$id"]
    assert sessions["sessions"][0]["current"] is False

    # The routes of the impersonator's own session: the current session, a JWT, signing out.
    current = api.call("GET", "/account/sessions/current", session=op, headers=as_target)
    assert current.status_code == 200 and current.json()["userId"] == operator["$id"], current.text
    jwt = api.call("POST", "/account/jwts", session=op, headers=as_target)
    assert jwt.status_code == 201, jwt.text
    via_jwt = api.call("GET", "/account", headers={"X-Appwrite-JWT": jwt.json()["jwt"]})
    assert via_jwt.json()["$id"] == operator["$id"]
    # An MFA challenge is the impersonator's too (their code, their mailbox), not the target's.
    for uid in (operator["$id"], target["$id"]):
        v = api.call("PATCH", f"/users/{uid}/verification", key=True, json={"emailVerification": True})
        assert v.status_code == 200, v.text
    challenge = api.call("POST", "/account/mfa/challenges", session=op, headers=as_target, json={"factor": "email"})
    assert challenge.status_code == 201 and challenge.json()["userId"] == operator["$id"], challenge.text
    out = api.call("DELETE", "/account/sessions/current", session=op, headers=as_target)
    assert out.status_code == 204, out.text
    assert api.call("GET", "/account", session=op).status_code == 401


def test_scope_flag_and_unknown_targets(api: Api, pair):
    operator, op, target, target_session = pair
    # An impersonator reads users (to find a target), with or without one.
    assert api.call("GET", "/users", session=op).status_code == 200
    r = api.call("GET", f"/users/{operator['$id']}", session=op, headers={ID: target["$id"]})
    assert r.status_code == 200 and r.json()["$id"] == operator["$id"]
    assert api.call("PATCH", f"/users/{target['$id']}/name", session=op, json={"name": "x"}).status_code == 401
    # A user without the flag: the headers are ignored and users stay out of reach.
    mine = api.call("GET", "/account", session=target_session, headers={ID: operator["$id"]})
    assert mine.json()["$id"] == target["$id"] and "impersonatorUserId" not in mine.json()
    assert api.call("GET", "/users", session=target_session).json()["type"] == "general_unauthorized_scope"
    # An unknown target leaves the request the impersonator's own (Appwrite).
    assert api.call("GET", "/account", session=op, headers={ID: "nobody"}).json()["$id"] == operator["$id"]
    # Taking the flag away works from the next request on (the cached session is dropped).
    _flag(api, operator["$id"], False)
    assert api.call("GET", "/account", session=op, headers={ID: target["$id"]}).json()["$id"] == operator["$id"]
    assert api.call("GET", "/users", session=op).status_code == 401


def test_audit_names_the_impersonator(api: Api, sql, pair):
    operator, op, target, _ = pair
    team = api.call("POST", "/teams", session=op, headers={ID: target["$id"]},
                    json={"teamId": "unique()", "name": "audited"})
    assert team.status_code == 201, team.text
    rows = sql("SELECT actor_uid, resource FROM audit_log WHERE project_id = %s AND event = 'team.create' "
               "AND resource = %s", (api.project.pk, f"team/{team.json()['$id']}"))
    assert rows == [(operator["$id"], f"team/{team.json()['$id']}")]


def test_graphql_fields_follow_the_same_rules(api: Api, sql, pair):
    """Each GraphQL field runs as its REST operation with the caller's headers (and the
    impersonation query parameter): reads as the target, account writes refused."""
    operator, op, target, _ = pair
    for how in ({"headers": {ID: target["$id"]}}, {"params": {"impersonateUserId": target["$id"]}}):
        r = api.call("POST", "/graphql", session=op, json={"query": "query { accountGet { _id } }"}, **how)
        assert r.status_code == 200 and r.json()["data"]["accountGet"]["_id"] == target["$id"], (how, r.text)
        m = api.call("POST", "/graphql/mutation", session=op, **how,
                     json={"query": 'mutation { accountUpdateName(name: "hijacked") { _id } }'})
        assert m.status_code == 200, m.text
        assert m.json()["errors"][0]["extensions"]["type"] == "user_impersonation_read_only", (how, m.text)
    assert sql("SELECT name FROM accounts_user WHERE uid = %s AND project_id = %s",
               (target["$id"], api.project.pk)) == [(target["name"],)]


def test_realtime_socket_as_the_target(api: Api, pair):
    """The socket's URL names the target (a browser cannot set headers on a websocket): the
    connection is the target's and receives the target's account events."""
    from tests.ws_client import connect, recv_type, subscribe

    operator, op, target, _ = pair

    async def run():
        ws, connected = await connect(api.server, api.project.id, session=op, impersonateUserId=target["$id"])
        try:
            assert connected["type"] == "connected" and connected["data"]["user"]["$id"] == target["$id"]
            await subscribe(ws, "acc", ["account"])
            renamed = await asyncio.to_thread(api.call, "PATCH", f"/users/{target['$id']}/name", key=True,
                                              json={"name": "seen by the impersonator"})
            assert renamed.status_code == 200, renamed.text
            frame = await recv_type(ws, "event")
            assert frame["data"]["payload"]["$id"] == target["$id"]
            assert frame["data"]["payload"]["name"] == "seen by the impersonator"
        finally:
            await ws.close()

    asyncio.run(run())


def test_python_sdk(api: Api, pair):
    """The official SDK's ``update_impersonator`` and ``set_impersonate_user_*`` calls."""
    operator, op, target, _ = pair
    endpoint = api.server.endpoint
    users = Users(Client().set_endpoint(endpoint).set_project(api.project.id).set_key(api.project.key))
    assert users.update_impersonator(user_id=target["$id"], impersonator=False).impersonator is False

    client = Client().set_endpoint(endpoint).set_project(api.project.id).set_session(op)
    client.set_impersonate_user_id(target["$id"])
    account = Account(client).get()
    assert account.id == target["$id"] and account.impersonatoruserid == operator["$id"]
    with pytest.raises(AppwriteException) as refused:
        Account(client).update_name(name="nope")
    assert refused.value.code == 403 and refused.value.type == "user_impersonation_read_only"
    assert Teams(client).list().total == 0

    by_email = Client().set_endpoint(endpoint).set_project(api.project.id).set_session(op)
    by_email.set_impersonate_user_email(target["email"])
    assert Account(by_email).get().id == target["$id"]


def test_rate_limits_count_for_the_impersonator(api: Api, pair):
    """Appwrite's row-create limit is keyed by user: an impersonated create uses the
    impersonator's budget, not the target's."""
    operator, op, target, target_session = pair
    db = api.call("POST", "/tablesdb", key=True, json={"databaseId": "unique()", "name": "rl"}).json()["$id"]
    assert api.call("POST", f"/tablesdb/{db}/tables", key=True, json={
        "tableId": "notes", "name": "notes", "permissions": ['create("users")', 'read("users")']}).status_code == 201
    assert api.call("POST", f"/tablesdb/{db}/tables/notes/columns/varchar", key=True,
                    json={"key": "t", "size": 10, "required": False}).status_code == 202

    def create(session: str, headers: dict | None = None) -> int:
        r = api.call("POST", f"/tablesdb/{db}/tables/notes/rows", session=session, headers=headers,
                     json={"rowId": "unique()", "data": {"t": "x"}})
        assert r.status_code == 201, r.text
        return int(r.headers["X-RateLimit-Remaining"])

    mine = create(op)
    assert create(op, {ID: target["$id"]}) == mine - 1  # the impersonator's count went on
    assert create(target_session) == mine  # the target's own count had not moved
