"""The User model's ``targets`` (Appwrite fills it from the user's targets): ``GET /users/{id}``,
the users list (one query for the page), the Users service's updates and ``GET /account``."""

from __future__ import annotations

from appwrite.client import Client
from appwrite.id import ID
from appwrite.query import Query
from appwrite.services.account import Account
from appwrite.services.messaging import Messaging
from appwrite.services.users import Users

from conftest import Api


def _user(users: Users):
    return users.create(ID.unique(), email=f"ut{ID.unique()}@example.com", password="password123")


def test_users_carry_their_targets(any_key_client: Client):
    users, m = Users(any_key_client), Messaging(any_key_client)
    provider = m.create_sendgrid_provider(ID.unique(), "SG", api_key="k")
    a, b, c = _user(users), _user(users), _user(users)
    assert a.targets == []
    ta = users.create_target(a.id, ID.unique(), "email", f"w{ID.unique()}@example.com", provider_id=provider.id,
                             name="Work")
    tb1 = users.create_target(b.id, ID.unique(), "sms", "+1555" + ID.unique()[-7:].translate(
        str.maketrans("abcdef", "123456")))
    tb2 = users.create_target(b.id, ID.unique(), "push", f"token-{ID.unique()}")

    got = users.get(a.id)
    assert [t.id for t in got.targets] == [ta.id]
    assert got.targets[0].model_dump() == users.get_target(a.id, ta.id).model_dump()
    assert got.targets[0].providerid == provider.id and got.targets[0].userid == a.id
    listed = users.list(queries=[Query.equal("$id", [a.id, b.id, c.id])])
    assert {u.id: [t.id for t in u.targets] for u in listed.users} == {a.id: [ta.id], b.id: [tb1.id, tb2.id],
                                                                        c.id: []}
    assert [t.id for t in users.update_name(b.id, "B").targets] == [tb1.id, tb2.id]
    users.delete_target(b.id, tb1.id)
    assert [t.id for t in users.get(b.id).targets] == [tb2.id]
    m.delete_provider(provider.id)
    assert users.get(a.id).targets[0].providerid is None


def test_account_carries_its_targets(api: Api):
    user, session = api.signup()
    uid = user["$id"]
    assert user["targets"] == []
    assert api.call("GET", "/account", session=session).json()["targets"] == []  # now cached: writes drop it
    email = api.call("POST", f"/users/{uid}/targets", key=True,
                     json={"targetId": "unique()", "providerType": "email", "identifier": f"a{uid}@example.com"})
    push = api.call("POST", "/account/targets/push", session=session, json={"targetId": "unique()",
                                                                             "identifier": f"tok-{uid}"})
    assert email.status_code == 201 and push.status_code == 201
    client = Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_session(session)
    account = Account(client).get()
    assert [t.id for t in account.targets] == [email.json()["$id"], push.json()["$id"]]
    assert account.targets[1].providertype == "push" and account.targets[1].userid == uid
    ids = [email.json()["$id"], push.json()["$id"]]
    for method, path, body in (("PATCH", "/account/name", {"name": "N"}), ("PATCH", "/account/mfa", {"mfa": False}),
                               ("PATCH", "/account/phone", {"phone": "+1555" + uid[-7:].translate(
                                   str.maketrans("abcdef", "123456")), "password": "password123"})):
        r = api.call(method, path, session=session, json=body)
        assert r.status_code == 200 and [t["$id"] for t in r.json()["targets"]] == ids, (path, r.text)
    r = api.call("PATCH", f"/users/{uid}/mfa", key=True, json={"mfa": False})
    assert [t["$id"] for t in r.json()["targets"]] == ids
    assert api.call("DELETE", f"/account/targets/{push.json()['$id']}/push", session=session).status_code == 204
    assert [t["$id"] for t in api.call("GET", "/account", session=session).json()["targets"]] == [email.json()["$id"]]
    old = api.call("GET", "/account", session=session, headers={"X-Appwrite-Response-Format": "1.4.0"}).json()
    assert "targets" not in old  # the response formats before 1.5 have no targets
