"""The logs of providers, topics, subscribers and messages (Appwrite's ``listProviderLogs``,
``listTopicLogs``, ``listSubscriberLogs``, ``listMessageLogs``): every messaging write leaves an
audit entry under Appwrite's event and resource names, made by an API key or a session, and the
routes serve them newest first, by the Python SDK 27's client too."""

from __future__ import annotations

import pytest
from appwrite.client import Client
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.query import Query
from appwrite.services.messaging import Messaging
from appwrite.services.users import Users

from conftest import Api

MP, MT, MM = "/messaging/providers", "/messaging/topics", "/messaging/messages"


def _events(api: Api, path: str, **kw) -> list[str]:
    r = api.call("GET", path, key=True, **kw)
    assert r.status_code == 200, r.text
    return [entry["event"] for entry in r.json()["logs"]]


def test_key_writes_are_logged_per_resource(api: Api):
    user, session = api.signup()
    assert api.call("POST", MP + "/smtp", key=True, json={"providerId": "lp", "name": "Mail", "host": "h"}).ok
    assert api.call("PATCH", MP + "/smtp/lp", key=True, json={"name": "Mail 2"}).ok
    assert api.call("POST", MT, key=True, json={"topicId": "lt", "name": "News"}).ok
    assert api.call("PATCH", MT + "/lt", key=True, json={"description": "d"}).ok
    assert api.call("POST", f"/users/{user['$id']}/targets", key=True,
                    json={"targetId": "ltg", "providerType": "sms", "identifier": "+15550007777"}).ok
    assert api.call("POST", MT + "/lt/subscribers", key=True, json={"subscriberId": "ls", "targetId": "ltg"}).ok
    assert api.call("POST", MM + "/sms", key=True, json={"messageId": "lm", "content": "c", "draft": True}).ok
    assert api.call("PATCH", MM + "/sms/lm", key=True, json={"content": "c2"}).ok

    assert _events(api, MP + "/lp/logs") == ["provider.update", "provider.create"]
    assert _events(api, MT + "/lt/logs") == ["topic.update", "topic.create"]
    assert _events(api, "/messaging/subscribers/ls/logs") == ["subscriber.create"]
    assert _events(api, MM + "/lm/logs") == ["message.update", "message.create"]
    page = api.call("GET", MP + "/lp/logs", key=True, params={"queries[]": ['{"method":"limit","values":[1]}',
                                                                            '{"method":"offset","values":[1]}']})
    assert page.json()["total"] == 2 and [e["event"] for e in page.json()["logs"]] == ["provider.create"]
    assert api.call("GET", MP + "/lp/logs", key=True, params={"total": "false"}).json()["total"] == 0
    entry = api.call("GET", MM + "/lm/logs", key=True).json()["logs"][0]
    assert entry["userType"] == "keyProject" and entry["userId"] == ""
    assert entry["userEmail"].startswith(f"app.{api.project.id}@service.") and entry["ip"] == "127.0.0.1"
    # The target's write stays in its user's log, under its own resource now.
    assert "target.create" in [e["event"] for e in api.call("GET", f"/users/{user['$id']}/logs", key=True)
                               .json()["logs"]]

    # A session's own subscription: in the subscriber's log and in the user's.
    assert api.call("POST", MT, key=True, json={"topicId": "lt2", "name": "Open"}).ok
    sub = api.call("POST", MT + "/lt2/subscribers", session=session, json={"subscriberId": "mine", "targetId": "ltg"})
    assert sub.status_code == 201, sub.text
    entry = api.call("GET", "/messaging/subscribers/mine/logs", key=True).json()["logs"][0]
    assert (entry["event"], entry["userType"], entry["userId"]) == ("subscriber.create", "user", user["$id"])
    assert api.call("DELETE", MT + "/lt2/subscribers/mine", session=session).status_code == 204
    logs = api.call("GET", "/account/logs", session=session).json()["logs"]
    assert [e["event"] for e in logs[:2]] == ["subscriber.delete", "subscriber.create"]


def test_deleted_resource_has_no_logs(api: Api):
    assert api.call("POST", MT, key=True, json={"topicId": "gone", "name": "n"}).ok
    assert api.call("DELETE", MT + "/gone", key=True).status_code == 204
    r = api.call("GET", MT + "/gone/logs", key=True)
    assert r.status_code == 404 and r.json()["type"] == "topic_not_found"


def test_logs_through_the_sdk(any_key_client: Client):
    """SDK 27 has no method for these routes (its spec has no audit logs); its client calls them."""
    m, users = Messaging(any_key_client), Users(any_key_client)
    # The headers the SDK's services send with each call.
    headers = {"X-Appwrite-Project": any_key_client.get_config("project"), "content-type": "application/json"}
    provider = m.create_sendgrid_provider(ID.unique(), "SG", api_key="k")
    m.update_sendgrid_provider(provider.id, name="SG 2")
    topic = m.create_topic(ID.unique(), "T")
    user = users.create(ID.unique(), email=f"l{ID.unique()}@example.com", password="password123")
    target = users.create_target(user.id, ID.unique(), "email", f"l{ID.unique()}@example.com")
    sub = m.create_subscriber(topic.id, ID.unique(), target.id)
    message = m.create_email(ID.unique(), "S", "C", topics=[topic.id], draft=True)
    for path, events in ((f"{MP}/{provider.id}/logs", ["provider.update", "provider.create"]),
                         (f"{MT}/{topic.id}/logs", ["topic.create"]),
                         (f"/messaging/subscribers/{sub.id}/logs", ["subscriber.create"]),
                         (f"{MM}/{message.id}/logs", ["message.create"])):
        got = any_key_client.call("get", path, headers, {"queries": [Query.limit(10)]})
        assert got["total"] == len(events) and [e["event"] for e in got["logs"]] == events, path
        assert {"userType", "userEmail", "ip", "time", "osName", "countryCode"} <= set(got["logs"][0])
    with pytest.raises(AppwriteException) as err:
        any_key_client.call("get", f"{MM}/nope/logs", headers, {})
    assert err.value.code == 404 and err.value.type == "message_not_found"
    with pytest.raises(AppwriteException) as err:
        any_key_client.call("get", f"{MP}/{provider.id}/logs", headers, {"queries": [Query.equal("event", "x")]})
    assert err.value.type == "general_query_invalid"
