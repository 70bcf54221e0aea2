"""Messages sent by the worker: email over real SMTP to a topic's subscribers, SMS through each
provider's API, push through FCM and APNs, all against local servers (``fake_providers``); the
providers' error answers become the message's ``deliveryErrors`` and never fail the API call."""

from __future__ import annotations

import pytest
from appwrite.id import ID
from appwrite.services.messaging import Messaging
from appwrite.services.users import Users

from apps.messaging.tests import fake_apns as fa
from apps.messaging.tests import fake_providers as fp
from tests.mail import text_of, wait_until


@pytest.fixture
def m(key_client, messaging_worker) -> Messaging:
    return Messaging(key_client)


def _settled(m: Messaging, message_id: str):
    """The message once the worker finished with it (sent or failed)."""
    found = {}

    def done():
        found["m"] = m.get_message(message_id)
        return found["m"].status.value in ("sent", "failed")

    wait_until(done, timeout=60, what=f"message {message_id} settled")
    return found["m"]


def _user_with(users: Users, channel: str, identifier: str):
    user = users.create(ID.unique(), email=f"u{ID.unique()}@example.com", password="password123")
    target = users.create_target(user.id, ID.unique(), channel, identifier)
    return user, target


def test_topic_email_reaches_mailboxes_over_smtp(m, key_client, smtp_server):
    users = Users(key_client)
    m.create_smtp_provider(ID.unique(), "Local SMTP", smtp_server.host, port=smtp_server.port,
                           from_email="news@example.com", from_name="News", auto_tls=False, enabled=True)
    topic = m.create_topic(ID.unique(), "Weekly")
    inboxes = [f"reader{i}-{ID.unique()}@example.com" for i in range(3)]
    for inbox in inboxes:
        _, target = _user_with(users, "email", inbox)
        m.create_subscriber(topic.id, ID.unique(), target.id)
    message = m.create_email(ID.unique(), "This week", "Hello readers", topics=[topic.id])
    assert message.status.value == "processing"
    done = _settled(m, message.id)
    assert done.status.value == "sent" and done.deliveredtotal == 3 and done.deliveryerrors == []
    assert done.deliveredat
    for inbox in inboxes:
        mail = smtp_server.wait_for(to=inbox, subject="This week")[0]
        assert "Hello readers" in text_of(mail) and "news@example.com" in str(mail["From"])


def test_email_to_raw_addresses_over_smtp(m, key_client, smtp_server):
    """``emails`` (SDK 27): addresses no user, target or topic stands for, each reached once."""
    m.create_smtp_provider(ID.unique(), "Local SMTP", smtp_server.host, port=smtp_server.port,
                           from_email="news@example.com", auto_tls=False, enabled=True)
    raw = f"raw-{ID.unique()}@example.com"
    _, target = _user_with(Users(key_client), "email", f"t-{ID.unique()}@example.com")
    message = m.create_email(ID.unique(), "Raw", "To an address", targets=[target.id], emails=[raw, raw.upper()])
    assert message.data["emails"] == [raw, raw] and message.status.value == "processing"
    done = _settled(m, message.id)
    assert done.status.value == "sent" and done.deliveredtotal == 2 and done.deliveryerrors == []
    assert "To an address" in text_of(smtp_server.wait_for(to=raw, subject="Raw")[0])
    assert smtp_server.wait_for(to=target.identifier, subject="Raw")
    only_raw = m.create_email(ID.unique(), "Only raw", "c", emails=[raw])  # no topic, user or target: accepted
    assert _settled(m, only_raw.id).deliveredtotal == 1


SMS_PROVIDERS = [
    ("twilio", lambda m: m.create_twilio_provider(ID.unique(), "Twilio", xfrom="+15550001111", account_sid=fp.TWILIO[0],
                                                  auth_token=fp.TWILIO[1], enabled=True),
     lambda m, pid: m.update_twilio_provider(pid, auth_token="wrong"), "Twilio HTTP 401: Authenticate"),
    ("vonage", lambda m: m.create_vonage_provider(ID.unique(), "Vonage", xfrom="+15550001111", api_key=fp.VONAGE[0],
                                                  api_secret=fp.VONAGE[1], enabled=True),
     lambda m, pid: m.update_vonage_provider(pid, api_secret="wrong"), "Vonage status 4: Bad Credentials"),
    ("msg91", lambda m: m.create_msg91_provider(ID.unique(), "Msg91", template_id="tpl", sender_id="SENDER",
                                                auth_key=fp.MSG91, enabled=True),
     lambda m, pid: m.update_msg91_provider(pid, auth_key="wrong"), "Msg91 HTTP 401: Authentication failure"),
    ("telesign", lambda m: m.create_telesign_provider(ID.unique(), "Telesign", xfrom="+15550001111",
                                                      customer_id=fp.TELESIGN[0], api_key=fp.TELESIGN[1], enabled=True),
     lambda m, pid: m.update_telesign_provider(pid, api_key="wrong"),
     "Telesign HTTP 401: Could not find the customer ID"),
    ("textmagic", lambda m: m.create_textmagic_provider(ID.unique(), "Textmagic", xfrom="+15550001111",
                                                        username=fp.TEXTMAGIC[0], api_key=fp.TEXTMAGIC[1], enabled=True),
     lambda m, pid: m.update_textmagic_provider(pid, api_key="wrong"), "Textmagic HTTP 401: Unauthorized"),
]


@pytest.mark.parametrize("name, create, break_it, reason", SMS_PROVIDERS, ids=[p[0] for p in SMS_PROVIDERS])
def test_sms_through_each_provider(m, key_client, providers, name, create, break_it, reason):
    users = Users(key_client)
    provider = create(m)
    number = f"+1555{ID.unique()[-7:].translate(str.maketrans('abcdef', '123456'))}"
    user, ok_target = _user_with(users, "sms", number)
    _, bad_target = _user_with(users, "sms", "+15551230000")  # the provider refuses numbers ending 0000
    message = m.create_sms(ID.unique(), f"Code 123 via {name}", targets=[ok_target.id, bad_target.id])
    done = _settled(m, message.id)
    assert done.status.value == "sent" and done.deliveredtotal == 1
    assert len(done.deliveryerrors) == 1 and "+15551230000" in done.deliveryerrors[0]
    assert providers.received.to(number) == [(name, number, f"Code 123 via {name}")]
    # Bad credentials: the API call succeeds, the delivery fails with the provider's answer, retried.
    break_it(m, provider.id)
    failing = m.create_sms(ID.unique(), "never", targets=[ok_target.id])
    assert failing.status.value == "processing"
    done = _settled(m, failing.id)
    assert done.status.value == "failed" and done.deliveredtotal == 0
    assert done.deliveryerrors == [f"Failed sending to target {number} with error: {reason}"]


def test_unreachable_provider_fails_the_delivery(m, key_client, sql):
    users = Users(key_client)
    m.create_smtp_provider(ID.unique(), "Gone", "127.0.0.1", port=9, from_email="a@example.com", enabled=True)
    _, target = _user_with(users, "email", f"x{ID.unique()}@example.com")
    message = m.create_email(ID.unique(), "S", "C", targets=[target.id])
    done = _settled(m, message.id)
    assert done.status.value == "failed" and "ConnectionRefusedError" in done.deliveryerrors[0]
    # tried on each of the worker's attempts (TASKS_MAX_ATTEMPTS=2 in the fixture)
    assert sql("SELECT d.attempts, d.status FROM messaging_delivery d JOIN messaging_message m ON m.id = d.message_id "
               "WHERE m.uid = %s", (message.id,)) == [(2, "failed")]


def test_no_provider_fails_the_delivery(m, key_client):
    users = Users(key_client)
    _, target = _user_with(users, "sms", "+15559876543")
    done = _settled(m, m.create_sms(ID.unique(), "x", targets=[target.id]).id)
    assert done.status.value == "failed"
    assert done.deliveryerrors == ["Failed sending to target +15559876543 with error: no enabled sms provider in "
                                   "the project"]


def test_push_fcm_and_apns(m, key_client, providers, push_keys):
    users = Users(key_client)
    m.create_fcm_provider(ID.unique(), "FCM", service_account_json=providers.service_account(), enabled=True)
    token = f"fcm-{ID.unique()}"
    user, fcm_target = _user_with(users, "push", token)
    _, gone = _user_with(users, "push", "gone-token")
    done = _settled(m, m.create_push(ID.unique(), title="Hi", body="There", targets=[fcm_target.id, gone.id]).id)
    assert done.deliveredtotal == 1 and providers.received.to(token) == [("fcm", token, "Hi")]
    assert "UNREGISTERED" in done.deliveryerrors[0]
    assert users.get_target(user.id, fcm_target.id).expired is False
    assert [t for t in users.list_targets(gone.userid).targets if t.id == gone.id][0].expired is True

    apns = m.create_apns_provider(ID.unique(), "APNs", auth_key=push_keys.ec_private, auth_key_id=fa.APNS_KEY_ID,
                                  team_id=fa.APNS_TEAM, bundle_id=fa.APNS_TOPIC, enabled=True)
    device = f"apns{ID.unique()}"
    _, apns_target = _user_with(users, "push", device)
    users.update_target(apns_target.userid, apns_target.id, provider_id=apns.id)
    _, bad = _user_with(users, "push", "bad-token")
    users.update_target(bad.userid, bad.id, provider_id=apns.id)
    done = _settled(m, m.create_push(ID.unique(), title="Apple", body="B", targets=[apns_target.id, bad.id]).id)
    assert done.deliveredtotal == 1 and providers.received.to(device) == [("apns", device, "Apple")]
    assert done.deliveryerrors == ["Failed sending to target bad-token with error: APNs HTTP 400: BadDeviceToken"]
    m.update_apns_provider(apns.id, team_id="OTHERTEAM")
    done = _settled(m, m.create_push(ID.unique(), title="x", targets=[apns_target.id]).id)
    assert done.deliveryerrors == [f"Failed sending to target {device} with error: APNs HTTP 403: InvalidProviderToken"]


def test_email_http_providers(m, key_client, providers):
    users = Users(key_client)
    mg = m.create_mailgun_provider(ID.unique(), "MG", api_key=fp.MAILGUN[0], domain=fp.MAILGUN[1], is_eu_region=False,
                                   from_email="a@example.com", enabled=True)
    inbox = f"mg{ID.unique()}@example.com"
    _, target = _user_with(users, "email", inbox)
    done = _settled(m, m.create_email(ID.unique(), "Via Mailgun", "x", targets=[target.id]).id)
    assert done.status.value == "sent" and providers.received.to(inbox) == [("mailgun", inbox, "Via Mailgun")]
    m.update_mailgun_provider(mg.id, enabled=False)
    ses = m.create_ses_provider(ID.unique(), "SES", access_key=fp.SES[0], secret_key=fp.SES[1], region=fp.SES[2],
                                from_email="a@example.com", enabled=True)
    assert ses.credentials == {"accessKey": fp.SES[0], "region": fp.SES[2]}
    done = _settled(m, m.create_email(ID.unique(), "Via SES", "x", targets=[target.id]).id)
    assert done.status.value == "sent" and providers.received.to(inbox)[-1] == ("ses", inbox, "Via SES")
    m.update_ses_provider(ses.id, secret_key="wrong")
    done = _settled(m, m.create_email(ID.unique(), "Bad SES", "x", targets=[target.id]).id)
    assert done.deliveryerrors == [f"Failed sending to target {inbox} with error: SES HTTP 403: SignatureDoesNotMatch: "
                                   "The request signature we calculated does not match the signature you provided."]
    m.update_ses_provider(ses.id, enabled=False)
    m.create_sendgrid_provider(ID.unique(), "SG", api_key="wrong", from_email="a@example.com", enabled=True)
    done = _settled(m, m.create_email(ID.unique(), "Via Sendgrid", "x", targets=[target.id]).id)
    assert done.status.value == "failed"
    assert "Sendgrid HTTP 401: The provided authorization grant is invalid" in done.deliveryerrors[0]


def test_rescheduled_message_is_sent_once(m, key_client, providers, sql):
    """A scheduled message moved to another time is sent once, at the new time: the run queued
    for the old time does nothing."""
    import time

    users = Users(key_client)
    m.create_twilio_provider(ID.unique(), "Twilio", xfrom="+15550001111", account_sid=fp.TWILIO[0],
                             auth_token=fp.TWILIO[1], enabled=True)
    number = "+1555" + str(time.monotonic_ns())[-7:]
    _, target = _user_with(users, "sms", number)

    def at(seconds: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S.000+00:00", time.gmtime(time.time() + seconds))

    message = m.create_sms(ID.unique(), "Later", targets=[target.id], scheduled_at=at(2))
    assert message.status.value == "scheduled"
    moved = m.update_sms(message.id, scheduled_at=at(4))
    assert moved.status.value == "scheduled" and moved.scheduledat != message.scheduledat
    draft = m.update_sms(message.id, draft=True)
    assert draft.status.value == "draft"
    m.update_sms(message.id, draft=False)  # scheduled again, for the same time: queued a second time
    done = _settled(m, message.id)
    assert done.status.value == "sent" and done.deliveredtotal == 1
    pk = sql("SELECT id FROM messaging_message WHERE uid = %s", (message.id,))[0][0]
    wait_until(lambda: not sql("SELECT 1 FROM django_tasks_database_dbtaskresult WHERE queue_name = 'messaging' AND "
                               "status IN ('READY', 'RUNNING') AND args_kwargs->'kwargs'->>'message_id' = %s",
                               (str(pk),)), timeout=60, what="the older runs done")
    assert providers.received.to(number) == [("twilio", number, "Later")]


def test_email_attachment_over_smtp(m, key_client, smtp_server, api):
    """``bucketId:fileId`` attachments are read from storage by the worker and attached."""
    users = Users(key_client)
    assert api.call("POST", "/storage/buckets", key=True, json={"bucketId": "att", "name": "att"}).status_code == 201
    r = api.call("POST", "/storage/buckets/att/files", key=True, data={"fileId": "report"},
                 files={"file": ("report.csv", b"a,b\n1,2\n", "text/csv")})
    assert r.status_code == 201, r.text
    m.create_smtp_provider(ID.unique(), "Local SMTP", smtp_server.host, port=smtp_server.port,
                           from_email="reports@example.com", auto_tls=False, enabled=True)
    inbox = f"att{ID.unique()}@example.com"
    _, target = _user_with(users, "email", inbox)
    done = _settled(m, m.create_email(ID.unique(), "Report", "See attached.", targets=[target.id],
                                      attachments=["att:report"]).id)
    assert done.status.value == "sent", done.deliveryerrors
    mail = smtp_server.wait_for(to=inbox, subject="Report")[0]
    parts = list(mail.iter_attachments())
    assert [(p.get_filename(), p.get_content_type(), p.get_content()) for p in parts] == [
        ("report.csv", "text/csv", "a,b\n1,2\n")]
    assert "See attached." in text_of(mail)
