"""Table-driven cases for the messaging routes and user targets: each bad input answers its
Appwrite error (never a 500), and a refused write changes nothing."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from conftest import Api

MP, MT, MM = "/messaging/providers", "/messaging/topics", "/messaging/messages"


@dataclass
class World:
    api: Api
    user: dict
    session: str
    other_session: str


@pytest.fixture
def world(api) -> World:
    user, session = api.signup()
    _, other = api.signup()
    uid = user["$id"]
    ok = [
        api.call("POST", MP + "/smtp", key=True, json={"providerId": "P", "name": "Mail", "host": "localhost",
                                                       "fromEmail": "a@example.com", "enabled": True}),
        api.call("POST", MP + "/twilio", key=True, json={"providerId": "S", "name": "SMS"}),
        api.call("POST", MT, key=True, json={"topicId": "T", "name": "News", "subscribe": ["users"]}),
        api.call("POST", MT, key=True, json={"topicId": "closed", "name": "Staff", "subscribe": ["team:staff"]}),
        api.call("POST", f"/users/{uid}/targets", key=True,
                 json={"targetId": "E", "providerType": "email", "identifier": f"e{time.monotonic_ns()}@example.com"}),
        api.call("POST", f"/users/{uid}/targets", key=True,
                 json={"targetId": "PH", "providerType": "sms", "identifier": "+15550009999"}),
        api.call("POST", MT + "/T/subscribers", key=True, json={"subscriberId": "SUB", "targetId": "E"}),
        api.call("POST", MM + "/email", key=True, json={"messageId": "M", "subject": "s", "content": "c",
                                                        "targets": ["E"], "draft": True}),
    ]
    for r in ok:
        assert r.status_code == 201, r.text
    return World(api, user, session, other)


U = "/users/{uid}/targets"
CASES = [
    # (id, caller, method, path, body, status, type)
    ("providers list", "key", "GET", MP, None, 200, None),
    ("providers list bad query", "key", "GET", MP + '?queries[]={"method":"equal","attribute":"secret","values":["x"]}',
     None, 400, "general_query_invalid"),
    ("providers by session", "user", "GET", MP, None, 401, "general_unauthorized_scope"),
    ("provider create by guest", "guest", "POST", MP + "/smtp", {"providerId": "x", "name": "n", "host": "h"}, 401,
     "general_unauthorized_scope"),
    ("provider duplicate", "key", "POST", MP + "/smtp", {"providerId": "P", "name": "n", "host": "h"}, 409,
     "provider_already_exists"),
    ("provider bad id", "key", "POST", MP + "/sendgrid", {"providerId": "-x", "name": "n"}, 400,
     "general_argument_invalid"),
    ("provider missing name", "key", "POST", MP + "/sendgrid", {"providerId": "unique()"}, 400,
     "general_argument_invalid"),
    ("smtp missing host", "key", "POST", MP + "/smtp", {"providerId": "unique()", "name": "n"}, 400,
     "general_argument_invalid"),
    ("smtp bad port", "key", "POST", MP + "/smtp", {"providerId": "unique()", "name": "n", "host": "h", "port": 0},
     400, "general_argument_invalid"),
    ("smtp bad encryption", "key", "POST", MP + "/smtp",
     {"providerId": "unique()", "name": "n", "host": "h", "encryption": "starttls"}, 400, "general_argument_invalid"),
    ("bad from email", "key", "POST", MP + "/sendgrid", {"providerId": "unique()", "name": "n", "fromEmail": "nope"},
     400, "general_argument_invalid"),
    ("fcm bad json", "key", "POST", MP + "/fcm", {"providerId": "unique()", "name": "n", "serviceAccountJSON": "{"},
     400, "general_argument_invalid"),
    ("unknown provider type", "key", "POST", MP + "/pigeon", {"providerId": "unique()", "name": "n"}, 405,
     "general_not_implemented"),  # /messaging/providers/{providerId} has GET and DELETE
    ("update wrong type", "key", "PATCH", MP + "/twilio/P", {"name": "x"}, 400, "provider_incorrect_type"),
    ("enable without credentials", "key", "PATCH", MP + "/twilio/S", {"enabled": True}, 400,
     "provider_missing_credentials"),
    ("update unknown", "key", "PATCH", MP + "/smtp/nope", {"name": "x"}, 404, "provider_not_found"),
    # booleans follow Appwrite's validator, not pydantic's lax bool ("off" would have disabled the provider)
    *[(f"provider enabled {v!r}", "key", "PATCH", MP + "/smtp/P", {"enabled": v}, 400, "general_argument_invalid")
      for v in ("off", "yes", 2, "false", 0)],
    ("smtp autoTLS 'no'", "key", "POST", MP + "/smtp", {"providerId": "unique()", "name": "n", "host": "h",
                                                        "autoTLS": "no"}, 400, "general_argument_invalid"),
    ("apns sandbox 'y'", "key", "POST", MP + "/apns", {"providerId": "unique()", "name": "n", "sandbox": "y"}, 400,
     "general_argument_invalid"),
    ("providers list total=false", "key", "GET", MP + "?total=false", None, 200, None),
    ("providers list total=off", "key", "GET", MP + "?total=off", None, 400, "general_argument_invalid"),
    ("topics list total=2", "key", "GET", MT + "?total=2", None, 400, "general_argument_invalid"),
    ("get unknown provider", "key", "GET", MP + "/nope", None, 404, "provider_not_found"),
    ("get bad provider id", "key", "GET", MP + "/" + "x" * 40, None, 400, "general_argument_invalid"),
    ("delete unknown provider", "key", "DELETE", MP + "/nope", None, 404, "provider_not_found"),
    ("topics list", "key", "GET", MT, None, 200, None),
    ("topics search too long", "key", "GET", MT + "?search=" + "x" * 257, None, 400, "general_argument_invalid"),
    ("topic duplicate", "key", "POST", MT, {"topicId": "T", "name": "n"}, 409, "topic_already_exists"),
    ("topic name too long", "key", "POST", MT, {"topicId": "unique()", "name": "n" * 129}, 400,
     "general_argument_invalid"),
    ("topic bad role", "key", "POST", MT, {"topicId": "unique()", "name": "n", "subscribe": ["a b"]}, 400,
     "general_argument_invalid"),
    # roles of no kind Appwrite knows: a topic nobody could ever subscribe to, stored with 201
    *[(f"topic role {role!r}", "key", "POST", MT, {"topicId": "unique()", "name": "n", "subscribe": ["users", role]},
       400, "general_argument_invalid") for role in ("nonsense", "any:x", "user:", "team:-x", "label:a-b", "users\n")],
    ("topic update role", "key", "PATCH", MT + "/T", {"subscribe": ["admins"]}, 400, "general_argument_invalid"),
    ("topic by session", "user", "POST", MT, {"topicId": "unique()", "name": "n"}, 401, "general_unauthorized_scope"),
    ("topic unknown", "key", "GET", MT + "/nope", None, 404, "topic_not_found"),
    ("topic update unknown", "key", "PATCH", MT + "/nope", {"name": "x"}, 404, "topic_not_found"),
    ("subscriber by owner", "user", "POST", MT + "/T/subscribers", {"subscriberId": "unique()", "targetId": "PH"},
     201, None),
    ("subscriber other's target", "other", "POST", MT + "/T/subscribers",
     {"subscriberId": "unique()", "targetId": "PH"}, 404, "user_target_not_found"),
    ("subscriber topic closed", "user", "POST", MT + "/closed/subscribers",
     {"subscriberId": "unique()", "targetId": "PH"}, 401, "user_unauthorized"),
    ("subscriber by guest", "guest", "POST", MT + "/T/subscribers", {"subscriberId": "unique()", "targetId": "PH"},
     401, "general_unauthorized_scope"),
    ("subscriber duplicate", "key", "POST", MT + "/T/subscribers", {"subscriberId": "unique()", "targetId": "E"}, 409,
     "subscriber_already_exists"),
    ("subscriber unknown target", "key", "POST", MT + "/T/subscribers", {"subscriberId": "unique()", "targetId": "no"},
     404, "user_target_not_found"),
    ("subscriber unknown topic", "key", "POST", MT + "/nope/subscribers", {"subscriberId": "unique()",
                                                                           "targetId": "E"}, 404, "topic_not_found"),
    ("subscriber missing target", "key", "POST", MT + "/T/subscribers", {"subscriberId": "unique()"}, 400,
     "general_argument_invalid"),
    ("subscribers list by session", "user", "GET", MT + "/T/subscribers", None, 401, "general_unauthorized_scope"),
    ("subscriber get unknown", "key", "GET", MT + "/T/subscribers/nope", None, 404, "subscriber_not_found"),
    ("subscriber delete by other", "other", "DELETE", MT + "/T/subscribers/SUB", None, 404, "subscriber_not_found"),
    ("subscriber delete by owner", "user", "DELETE", MT + "/T/subscribers/SUB", None, 204, None),
    ("targets list", "key", "GET", U, None, 200, None),
    ("targets unknown user", "key", "GET", "/users/nope/targets", None, 404, "user_not_found"),
    ("targets by session", "user", "GET", U, None, 401, "general_unauthorized_scope"),
    ("target duplicate id", "key", "POST", U, {"targetId": "E", "providerType": "email",
                                               "identifier": "other@example.com"}, 409, "user_target_already_exists"),
    ("target bad type", "key", "POST", U, {"targetId": "unique()", "providerType": "fax", "identifier": "x"}, 400,
     "general_argument_invalid"),
    ("target bad email", "key", "POST", U, {"targetId": "unique()", "providerType": "email", "identifier": "x"}, 400,
     "general_argument_invalid"),
    ("target bad phone", "key", "POST", U, {"targetId": "unique()", "providerType": "sms", "identifier": "555"}, 400,
     "general_argument_invalid"),
    ("target unknown provider", "key", "POST", U, {"targetId": "unique()", "providerType": "push",
                                                   "identifier": "tok", "providerId": "nope"}, 404, "provider_not_found"),
    ("target provider of other type", "key", "POST", U, {"targetId": "unique()", "providerType": "push",
                                                         "identifier": "tok", "providerId": "P"}, 400,
     "provider_incorrect_type"),
    ("target get unknown", "key", "GET", U + "/nope", None, 404, "user_target_not_found"),
    ("target update bad identifier", "key", "PATCH", U + "/PH", {"identifier": "nope"}, 400,
     "general_argument_invalid"),
    ("target delete", "key", "DELETE", U + "/PH", None, 204, None),
    ("push target by session", "user", "POST", "/account/targets/push", {"targetId": "unique()", "identifier": "t1"},
     201, None),
    ("push target by guest", "guest", "POST", "/account/targets/push", {"targetId": "unique()", "identifier": "t1"},
     401, "general_unauthorized_scope"),
    ("push target missing identifier", "user", "POST", "/account/targets/push", {"targetId": "unique()"}, 400,
     "general_argument_invalid"),
    ("push update of an email target", "user", "PUT", "/account/targets/E/push", {"identifier": "x"}, 404,
     "user_target_not_found"),
    ("push update of other's", "other", "DELETE", "/account/targets/E/push", None, 404, "user_target_not_found"),
    ("messages list", "key", "GET", MM, None, 200, None),
    ("messages by session", "user", "GET", MM, None, 401, "general_unauthorized_scope"),
    ("email no recipients", "key", "POST", MM + "/email", {"messageId": "unique()", "subject": "s", "content": "c"},
     400, "message_missing_target"),
    ("email duplicate", "key", "POST", MM + "/email", {"messageId": "M", "subject": "s", "content": "c", "draft": True},
     409, "message_already_exists"),
    ("email missing subject", "key", "POST", MM + "/email", {"messageId": "unique()", "content": "c", "draft": True},
     400, "general_argument_invalid"),
    ("email to sms target", "key", "POST", MM + "/email", {"messageId": "unique()", "subject": "s", "content": "c",
                                                           "targets": ["PH"]}, 400, "message_target_not_email"),
    ("sms to email target", "key", "POST", MM + "/sms", {"messageId": "unique()", "content": "c", "targets": ["E"]},
     400, "message_target_not_sms"),
    ("push to unknown target", "key", "POST", MM + "/push", {"messageId": "unique()", "title": "t",
                                                             "targets": ["nope"]}, 404, "user_target_not_found"),
    ("scheduled in the past", "key", "POST", MM + "/sms", {"messageId": "unique()", "content": "c", "targets": ["PH"],
                                                           "scheduledAt": "2001-01-01T00:00:00.000+00:00"}, 400,
     "general_argument_invalid"),
    ("bad scheduledAt", "key", "POST", MM + "/sms", {"messageId": "unique()", "content": "c", "targets": ["PH"],
                                                     "scheduledAt": "tomorrow"}, 400, "general_argument_invalid"),
    *[(f"email draft {v!r}", "key", "POST", MM + "/email", {"messageId": "unique()", "subject": "s", "content": "c",
                                                            "targets": ["E"], "draft": v}, 400,
       "general_argument_invalid") for v in ("yes", "on", 1, "true")],
    ("email html 'off'", "key", "PATCH", MM + "/email/M", {"html": "off"}, 400, "general_argument_invalid"),
    ("push critical 't'", "key", "POST", MM + "/push", {"messageId": "unique()", "title": "t", "draft": True,
                                                        "critical": "t"}, 400, "general_argument_invalid"),
    ("push bad priority", "key", "POST", MM + "/push", {"messageId": "unique()", "priority": "urgent", "draft": True},
     400, "general_argument_invalid"),
    *[(f"push badge {v!r}", "key", "POST", MM + "/push", {"messageId": "unique()", "title": "t", "draft": True,
                                                          "badge": v}, 400, "general_argument_invalid")
      for v in ("3", True, 2.5, -2)],
    ("too many targets", "key", "POST", MM + "/sms", {"messageId": "unique()", "content": "c",
                                                      "targets": [f"t{i}" for i in range(101)]}, 400,
     "general_argument_invalid"),
    ("attachment bad form", "key", "POST", MM + "/email", {"messageId": "unique()", "subject": "s", "content": "c",
                                                           "draft": True, "attachments": ["nocolon"]}, 400,
     "general_argument_invalid"),
    ("attachment unknown bucket", "key", "POST", MM + "/email", {"messageId": "unique()", "subject": "s",
                                                                 "content": "c", "draft": True,
                                                                 "attachments": ["nope:file"]}, 404,
     "storage_bucket_not_found"),
    ("update email as sms", "key", "PATCH", MM + "/sms/M", {"content": "x"}, 404, "message_not_found"),
    ("update unknown message", "key", "PATCH", MM + "/email/nope", {"subject": "x"}, 404, "message_not_found"),
    ("get unknown message", "key", "GET", MM + "/nope", None, 404, "message_not_found"),
    ("message targets", "key", "GET", MM + "/M/targets", None, 200, None),
    ("delete unknown message", "key", "DELETE", MM + "/nope", None, 404, "message_not_found"),
    ("malformed body", "key", "POST", MT, b"{", 400, "general_bad_request"),
    # logs (the audit log's entries of one provider, topic, subscriber or message)
    ("provider logs", "key", "GET", MP + "/P/logs", None, 200, None),
    ("provider logs unknown", "key", "GET", MP + "/nope/logs", None, 404, "provider_not_found"),
    ("provider logs by session", "user", "GET", MP + "/P/logs", None, 401, "general_unauthorized_scope"),
    ("provider logs filter query", "key", "GET",
     MP + '/P/logs?queries[]={"method":"equal","attribute":"event","values":["x"]}', None, 400,
     "general_query_invalid"),
    ("provider logs limit too big", "key", "GET", MP + '/P/logs?queries[]={"method":"limit","values":[5001]}', None,
     400, "general_query_invalid"),
    ("provider logs bad query", "key", "GET", MP + "/P/logs?queries[]=nope", None, 400, "general_query_invalid"),
    ("provider logs bad total", "key", "GET", MP + "/P/logs?total=maybe", None, 400, "general_argument_invalid"),
    ("topic logs", "key", "GET", MT + "/T/logs", None, 200, None),
    ("topic logs unknown", "key", "GET", MT + "/nope/logs", None, 404, "topic_not_found"),
    ("topic logs by guest", "guest", "GET", MT + "/T/logs", None, 401, "general_unauthorized_scope"),
    ("subscriber logs", "key", "GET", "/messaging/subscribers/SUB/logs", None, 200, None),
    ("subscriber logs unknown", "key", "GET", "/messaging/subscribers/nope/logs", None, 404, "subscriber_not_found"),
    ("subscriber logs by owner", "user", "GET", "/messaging/subscribers/SUB/logs", None, 401,
     "general_unauthorized_scope"),
    ("message logs", "key", "GET", MM + "/M/logs", None, 200, None),
    ("message logs unknown", "key", "GET", MM + "/nope/logs", None, 404, "message_not_found"),
    ("message logs bad id", "key", "GET", MM + "/" + "x" * 40 + "/logs", None, 400, "general_argument_invalid"),
    # raw addresses (``emails``, email only)
    ("email to raw addresses", "key", "POST", MM + "/email", {"messageId": "unique()", "subject": "s", "content": "c",
                                                              "emails": ["Raw@Example.com"], "draft": True}, 201, None),
    ("email raw bad address", "key", "POST", MM + "/email", {"messageId": "unique()", "subject": "s", "content": "c",
                                                             "emails": ["nope"]}, 400, "general_argument_invalid"),
    ("email raw not a list", "key", "POST", MM + "/email", {"messageId": "unique()", "subject": "s", "content": "c",
                                                            "emails": "a@example.com"}, 400, "general_argument_invalid"),
    ("email raw too many", "key", "POST", MM + "/email", {"messageId": "unique()", "subject": "s", "content": "c",
                                                          "emails": [f"r{i}@example.com" for i in range(101)]}, 400,
     "general_argument_invalid"),
    ("email raw update bad", "key", "PATCH", MM + "/email/M", {"emails": ["a@b"]}, 400, "general_argument_invalid"),
    ("sms ignores emails", "key", "POST", MM + "/sms", {"messageId": "unique()", "content": "c",
                                                        "emails": ["a@example.com"]}, 400, "message_missing_target"),
    ("email raw emptied", "key", "PATCH", MM + "/email/M", {"targets": [], "emails": [], "draft": False}, 400,
     "message_missing_target"),
]


def _snapshot(api: Api) -> list:
    return [api.call("GET", path, key=True).json() for path in (MP, MT, MM, MT + "/T/subscribers")]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_case(world, case):
    _, caller, method, path, body, status, kind = case
    api = world.api
    path = path.replace("{uid}", world.user["$id"])
    before = _snapshot(api) if status >= 400 else None
    session = {"user": world.session, "other": world.other_session}.get(caller)
    kw = {"data": body, "headers": {"Content-Type": "application/json"}} if isinstance(body, bytes) else {"json": body}
    r = api.call(method, path, key=caller == "key", session=session, **kw)
    assert r.status_code == status, r.text
    if kind:
        assert r.json()["type"] == kind
        assert _snapshot(api) == before


def test_credentials_sealed_at_rest(world, sql):
    api = world.api
    r = api.call("POST", MP + "/twilio", key=True, json={"providerId": "sealed", "name": "n", "accountSid": "AC1",
                                                         "authToken": "very-secret-token", "from": "+15550001111"})
    assert r.status_code == 201 and "authToken" not in r.json()["credentials"]
    stored = sql("SELECT credentials FROM messaging_provider WHERE uid = 'sealed' AND project_id = %s",
                 (api.project.pk,))[0][0]
    assert stored.startswith("v1:") and "very-secret-token" not in stored and "AC1" not in stored
    got = api.call("GET", MP + "/sealed", key=True).json()
    assert got["credentials"] == {"accountSid": "AC1"} and got["options"] == {"from": "+15550001111"}
    # A sealed value copied onto another provider does not open there.
    from apps.messaging import crypto

    with pytest.raises(crypto.CredentialsUnreadable):
        crypto.unseal(stored, bound_to=f"{api.project.pk}/other")
    assert crypto.unseal(stored, bound_to=f"{api.project.pk}/sealed")["authToken"] == "very-secret-token"


def test_message_lifecycle_locks(world, messaging_worker):
    """A draft is sent by turning ``draft`` off; a sent or failed message can no longer change;
    a scheduled one is sent at its time."""
    from tests.mail import wait_until

    api = world.api
    r = api.call("PATCH", MM + "/email/M", key=True, json={"draft": False})
    assert r.status_code == 200 and r.json()["status"] == "processing"
    wait_until(lambda: api.call("GET", MM + "/M", key=True).json()["status"] in ("sent", "failed"), timeout=60,
               what="draft sent")
    done = api.call("GET", MM + "/M", key=True).json()
    r = api.call("PATCH", MM + "/email/M", key=True, json={"subject": "late"})
    assert r.status_code == 400 and r.json()["type"] == f"message_already_{done['status']}"
    at = time.strftime("%Y-%m-%dT%H:%M:%S.000+00:00", time.gmtime(time.time() + 2))
    r = api.call("POST", MM + "/sms", key=True, json={"messageId": "later", "content": "c", "targets": ["PH"],
                                                      "scheduledAt": at})
    assert r.status_code == 201 and r.json()["status"] == "scheduled" and r.json()["scheduledAt"] == at
    wait_until(lambda: api.call("GET", MM + "/later", key=True).json()["status"] == "failed", timeout=60,
               what="scheduled message run")  # no enabled SMS provider: failed with the reason
    assert "no enabled sms provider" in api.call("GET", MM + "/later", key=True).json()["deliveryErrors"][0]
