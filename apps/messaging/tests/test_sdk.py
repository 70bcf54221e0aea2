"""Conformance: the unmodified Python SDK 27 ``Messaging`` service and the ``Users`` targets
against the ASGI build; models parse, errors carry Appwrite's types."""

from __future__ import annotations

import pytest
from appwrite.exception import AppwriteException
from appwrite.id import ID
from appwrite.models import (
    Message,
    MessageList,
    Provider,
    ProviderList,
    Subscriber,
    SubscriberList,
    Target,
    TargetList,
    Topic,
    TopicList,
)
from appwrite.query import Query
from appwrite.services.messaging import Messaging
from appwrite.services.users import Users

from apps.messaging.tests.fake_providers import TWILIO


def _user(users: Users, email: str, phone: str = ""):
    return users.create(ID.unique(), email=email, phone=phone or None, password="password123")


def test_providers(any_key_client):
    m = Messaging(any_key_client)
    smtp = m.create_smtp_provider(ID.unique(), "Mail", "smtp.example.com", port=2525, username="u", password="secret-pw",
                                  from_email="noreply@example.com", enabled=True)
    assert isinstance(smtp, Provider) and smtp.enabled and smtp.type == "email" and smtp.provider == "smtp"
    assert "password" not in smtp.credentials and smtp.credentials["host"] == "smtp.example.com"
    tw = m.create_twilio_provider(ID.unique(), "SMS", xfrom="+15550001111", account_sid=TWILIO[0],
                                  auth_token=TWILIO[1], enabled=True)
    assert tw.enabled and tw.credentials == {"accountSid": TWILIO[0]} and tw.options == {"from": "+15550001111"}
    off = m.create_vonage_provider(ID.unique(), "Vonage", api_key="k", enabled=True)  # no secret: stays off
    assert off.enabled is False
    with pytest.raises(AppwriteException) as err:
        m.update_vonage_provider(off.id, enabled=True)
    assert err.value.type == "provider_missing_credentials"
    assert m.update_vonage_provider(off.id, api_secret="s", xfrom="+15550002222", enabled=True).enabled
    with pytest.raises(AppwriteException) as err:
        m.update_twilio_provider(smtp.id, name="x")
    assert err.value.type == "provider_incorrect_type"
    listed = m.list_providers(queries=[Query.equal("type", "sms"), Query.equal("$id", [tw.id, off.id])])
    assert isinstance(listed, ProviderList) and listed.total == 2
    assert m.get_provider(smtp.id).name == "Mail"
    updated = m.update_smtp_provider(smtp.id, name="Mail 2", port=2626)
    assert updated.name == "Mail 2" and updated.credentials["port"] == 2626 and updated.credentials["username"] == "u"
    for kind, call in (("fcm", lambda: m.create_fcm_provider(ID.unique(), "FCM", service_account_json={"project_id": "p"},
                                                             enabled=True)),
                       ("apns", lambda: m.create_apns_provider(ID.unique(), "APNs", auth_key="k", auth_key_id="i",
                                                               team_id="t", bundle_id="b", sandbox=True, enabled=True)),
                       ("mailgun", lambda: m.create_mailgun_provider(ID.unique(), "MG", api_key="k", domain="d",
                                                                     is_eu_region=False, from_email="a@b.co")),
                       ("sendgrid", lambda: m.create_sendgrid_provider(ID.unique(), "SG", api_key="k")),
                       ("msg91", lambda: m.create_msg91_provider(ID.unique(), "M", template_id="t", sender_id="s",
                                                                 auth_key="k", enabled=True)),
                       ("telesign", lambda: m.create_telesign_provider(ID.unique(), "T", xfrom="+1555", customer_id="c",
                                                                       api_key="k")),
                       ("textmagic", lambda: m.create_textmagic_provider(ID.unique(), "TM", xfrom="+1555", username="u",
                                                                         api_key="k"))):
        made = call()
        assert made.provider == kind
        assert not {"apiKey", "authKey", "serviceAccountJSON"} & set(made.credentials)
    m.delete_provider(smtp.id)
    with pytest.raises(AppwriteException) as err:
        m.get_provider(smtp.id)
    assert err.value.code == 404 and err.value.type == "provider_not_found"


def test_topics_subscribers_targets(any_key_client):
    m, users = Messaging(any_key_client), Users(any_key_client)
    user = _user(users, f"t{ID.unique()}@example.com")
    target = users.create_target(user.id, ID.unique(), "email", f"inbox{ID.unique()}@example.com", name="Inbox")
    assert isinstance(target, Target) and target.providertype == "email" and target.userid == user.id
    assert isinstance(users.list_targets(user.id), TargetList)
    assert users.update_target(user.id, target.id, name="Main").name == "Main"
    topic = m.create_topic(ID.unique(), "News", subscribe=["users"])
    assert isinstance(topic, Topic) and topic.subscribe == ["users"] and topic.emailtotal == 0
    sub = m.create_subscriber(topic.id, ID.unique(), target.id)
    assert isinstance(sub, Subscriber) and sub.target.id == target.id and sub.topicid == topic.id
    assert m.get_topic(topic.id).emailtotal == 1
    assert isinstance(m.list_subscribers(topic.id), SubscriberList)
    assert m.get_subscriber(topic.id, sub.id).userid == user.id
    with pytest.raises(AppwriteException) as err:
        m.create_subscriber(topic.id, ID.unique(), target.id)
    assert err.value.type == "subscriber_already_exists"
    assert isinstance(m.list_topics(search="News"), TopicList)
    assert m.update_topic(topic.id, name="Updates").name == "Updates"
    m.delete_subscriber(topic.id, sub.id)
    assert m.get_topic(topic.id).emailtotal == 0
    m.delete_topic(topic.id)
    users.delete_target(user.id, target.id)
    with pytest.raises(AppwriteException) as err:
        users.get_target(user.id, target.id)
    assert err.value.type == "user_target_not_found"


def test_messages_drafts(any_key_client):
    m, users = Messaging(any_key_client), Users(any_key_client)
    user = _user(users, f"d{ID.unique()}@example.com")
    draft = m.create_email(ID.unique(), "Hello", "Body", users=[user.id], draft=True)
    assert isinstance(draft, Message) and draft.status.value == "draft" and draft.data["subject"] == "Hello"
    updated = m.update_email(draft.id, subject="Hello again")
    assert updated.data["subject"] == "Hello again" and updated.status.value == "draft"
    sms = m.create_sms(ID.unique(), "Code", draft=True)
    push = m.create_push(ID.unique(), title="T", body="B", draft=True)
    assert m.update_sms(sms.id, content="New").data["content"] == "New"
    assert m.update_push(push.id, title="T2").data["title"] == "T2"
    assert isinstance(m.list_messages(queries=[Query.equal("status", "draft")]), MessageList)
    assert m.get_message(sms.id).providertype == "sms"
    assert isinstance(m.list_targets(draft.id), TargetList)
    with pytest.raises(AppwriteException) as err:
        m.create_email(ID.unique(), "S", "C")
    assert err.value.type == "message_missing_target"
    m.delete(sms.id)
    with pytest.raises(AppwriteException) as err:
        m.get_message(sms.id)
    assert err.value.type == "message_not_found"


def test_sms_sent_by_the_in_process_worker(embedded_server, providers):
    """The embedded default sends with its in-process worker, on SQLite."""
    import time

    from apps.messaging.tests.conftest import _client

    server, project = embedded_server
    client = _client(server.endpoint, project)
    m, users = Messaging(client), Users(client)
    m.create_twilio_provider(ID.unique(), "SMS", xfrom="+15550001111", account_sid=TWILIO[0], auth_token=TWILIO[1],
                             enabled=True)
    number = "+1555" + str(time.monotonic_ns())[-7:]
    user = _user(users, f"e{ID.unique()}@example.com")
    target = users.create_target(user.id, ID.unique(), "sms", number)
    topic = m.create_topic(ID.unique(), "Alerts")
    m.create_subscriber(topic.id, ID.unique(), target.id)
    message = m.create_sms(ID.unique(), "Alert!", topics=[topic.id])
    deadline = time.monotonic() + 60
    while (message := m.get_message(message.id)).status.value not in ("sent", "failed"):
        assert time.monotonic() < deadline, message
        time.sleep(0.2)
    assert message.status.value == "sent" and message.deliveredtotal == 1
    assert providers.received.to(number) == [("twilio", number, "Alert!")]
