"""Phone sign-in, phone change and phone verification through the project's SMS provider (a
local server answering like Twilio's API); 503 only while the project has none; the project's mock
numbers get their fixed codes and no SMS."""

from __future__ import annotations

import re

import pytest
from appwrite.id import ID
from appwrite.services.messaging import Messaging

from apps.messaging.tests import fake_providers as fp
from tests.mail import wait_until


@pytest.fixture
def sms_api(api, key_client, messaging_worker, providers):
    Messaging(key_client).create_twilio_provider(ID.unique(), "SMS", xfrom="+15550001111", account_sid=fp.TWILIO[0],
                                                 auth_token=fp.TWILIO[1], enabled=True)
    api.providers = providers
    return api


def _number() -> str:
    return "+1555" + str(int(ID.unique()[-8:], 16))[-7:].rjust(7, "1")


def _code(providers, phone: str, count: int = 1) -> str:
    wait_until(lambda: len(providers.received.to(phone)) >= count, timeout=60, what=f"SMS to {phone}")
    text = providers.received.to(phone)[count - 1][2]
    return re.search(r"\b(\d{6})\b", text).group(1)


def test_without_provider_answers_503(api):
    r = api.call("POST", "/account/tokens/phone", json={"userId": "unique()", "phone": _number()})
    assert r.status_code == 503 and r.json()["type"] == "general_phone_disabled"


def test_phone_sign_in(sms_api):
    phone = _number()
    r = sms_api.call("POST", "/account/tokens/phone", json={"userId": "unique()", "phone": phone})
    assert r.status_code == 201, r.text
    token = r.json()
    assert token["secret"] == ""  # a client never sees the code; it arrives by SMS
    code = _code(sms_api.providers, phone)
    r = sms_api.call("PUT", "/account/sessions/phone", json={"userId": token["userId"], "secret": code})
    assert r.status_code == 201, r.text
    session = r.json()
    assert session["provider"] == "phone" and session["userId"] == token["userId"]
    user = sms_api.call("GET", f"/users/{token['userId']}", key=True).json()
    assert user["phone"] == phone and user["phoneVerification"] is True and user["email"] == ""
    # The same number signs in to the same account, with a new code (the older one stops working).
    r = sms_api.call("POST", "/account/tokens/phone", json={"userId": "unique()", "phone": phone})
    assert r.status_code == 201 and r.json()["userId"] == token["userId"]
    assert sms_api.call("PUT", "/account/sessions/phone",
                        json={"userId": token["userId"], "secret": code}).status_code == 401
    second = _code(sms_api.providers, phone, 2)
    assert sms_api.call("PUT", "/account/sessions/phone",
                        json={"userId": token["userId"], "secret": second}).status_code == 201


def test_change_and_verify_phone(sms_api):
    user, session = sms_api.signup()
    phone = _number()
    r = sms_api.call("PATCH", "/account/phone", session=session, json={"phone": phone, "password": "password123"})
    assert r.status_code == 200 and r.json()["phone"] == phone and r.json()["phoneVerification"] is False
    r = sms_api.call("POST", "/account/verifications/phone", session=session)
    assert r.status_code == 201, r.text
    code = _code(sms_api.providers, phone)
    r = sms_api.call("PUT", "/account/verifications/phone", session=session, json={"userId": user["$id"], "secret": code})
    assert r.status_code == 200, r.text
    assert sms_api.call("GET", "/account", session=session).json()["phoneVerification"] is True
    r = sms_api.call("POST", "/account/verifications/phone", session=session)
    assert r.status_code == 409 and r.json()["type"] == "user_phone_already_verified"


@pytest.mark.parametrize("body, status, kind", [
    ({"phone": "5550001", "password": "password123"}, 400, "general_argument_invalid"),
    ({"phone": "+15550001234"}, 400, "general_argument_invalid"),
    ({"phone": "+15550001234", "password": "wrong-password"}, 401, "user_invalid_credentials"),
])
def test_update_phone_bad_input(api, body, status, kind):
    _, session = api.signup()
    r = api.call("PATCH", "/account/phone", session=session, json=body)
    assert (r.status_code, r.json()["type"]) == (status, kind)


def test_update_phone_refusals(sms_api):
    r = sms_api.call("PATCH", "/account/phone", json={"phone": _number(), "password": "password123"})
    assert r.status_code == 401 and r.json()["type"] == "general_unauthorized_scope"
    _, session = sms_api.signup()
    r = sms_api.call("POST", "/account/verifications/phone", session=session)
    assert r.status_code == 400 and r.json()["type"] == "user_phone_not_found"
    taken = _number()
    _, other = sms_api.signup()
    assert sms_api.call("PATCH", "/account/phone", session=other,
                        json={"phone": taken, "password": "password123"}).status_code == 200
    r = sms_api.call("PATCH", "/account/phone", session=session, json={"phone": taken, "password": "password123"})
    assert r.status_code == 409 and r.json()["type"] == "user_phone_already_exists"


def test_mfa_phone_challenge(sms_api):
    """A verified phone is a second factor: the challenge's code arrives by SMS and completes it."""
    user, session = sms_api.signup()
    phone = _number()
    r = sms_api.call("POST", "/account/mfa/challenges", session=session, json={"factor": "phone"})
    assert r.status_code == 400 and r.json()["type"] == "user_phone_not_found"
    assert sms_api.call("PATCH", f"/users/{user['$id']}/phone", key=True, json={"number": phone}).status_code == 200
    r = sms_api.call("POST", "/account/mfa/challenges", session=session, json={"factor": "phone"})
    assert r.status_code == 400 and r.json()["type"] == "user_phone_not_verified"
    assert sms_api.call("PATCH", f"/users/{user['$id']}/verification/phone", key=True,
                        json={"phoneVerification": True}).status_code == 200
    assert sms_api.call("GET", "/account/mfa/factors", session=session).json()["phone"] is True
    r = sms_api.call("POST", "/account/mfa/challenges", session=session, json={"factor": "phone"})
    assert r.status_code == 201, r.text
    challenge = r.json()["$id"]
    code = _code(sms_api.providers, phone)
    wrong = "000000" if code != "000000" else "111111"
    r = sms_api.call("PUT", "/account/mfa/challenges", session=session, json={"challengeId": challenge, "otp": wrong})
    assert r.status_code == 401 and r.json()["type"] == "user_invalid_token"
    r = sms_api.call("PUT", "/account/mfa/challenges", session=session, json={"challengeId": challenge, "otp": code})
    assert r.status_code == 200, r.text
    assert "phone" in r.json()["factors"]


def test_team_invitation_by_phone(sms_api):
    """An invitation to a phone number arrives by SMS; its link's secret accepts it."""
    import urllib.parse

    _, owner = sms_api.signup(name="Owner")
    team = sms_api.call("POST", "/teams", session=owner, json={"teamId": "unique()", "name": "Crew"}).json()
    phone = _number()
    r = sms_api.call("POST", f"/teams/{team['$id']}/memberships", session=owner,
                     json={"phone": phone, "roles": ["crew"], "url": "http://127.0.0.1/join"})
    assert r.status_code == 201, r.text
    wait_until(lambda: sms_api.providers.received.to(phone), timeout=60, what="invitation SMS")
    text = sms_api.providers.received.to(phone)[0][2]
    assert text.startswith("Owner invited you to join Crew at ")
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(text.rsplit(" ", 1)[1]).query))
    r = sms_api.call("PATCH", f"/teams/{team['$id']}/memberships/{query['membershipId']}/status",
                     json={"userId": query["userId"], "secret": query["secret"]})
    assert r.status_code == 200 and r.json()["confirm"] is True and r.json()["userPhone"] == phone


def _sms_tasks(django_db_blocker, phone: str) -> int:
    from django_tasks_db.models import DBTaskResult

    with django_db_blocker.unblock():
        return DBTaskResult.objects.filter(task_path="apps.messaging.phone.send_sms",
                                           args_kwargs__kwargs__phone=phone).count()


def test_mock_number_signs_in_with_its_fixed_code_without_a_provider(api, django_db_blocker):
    phone = _number()
    r = api.call("POST", "/project/mock-phones", key=True, json={"number": phone, "otp": "424242"})
    assert r.status_code == 201, r.text
    # The project has no SMS provider: another number answers 503, the mock one gets its token.
    r = api.call("POST", "/account/tokens/phone", json={"userId": "unique()", "phone": _number()})
    assert r.status_code == 503 and r.json()["type"] == "general_phone_disabled"
    r = api.call("POST", "/account/tokens/phone", json={"userId": "unique()", "phone": phone})
    assert r.status_code == 201, r.text
    token = r.json()
    assert token["secret"] == ""  # a client still never sees the code
    r = api.call("PUT", "/account/sessions/phone", json={"userId": token["userId"], "secret": "424242"})
    assert r.status_code == 201, r.text
    assert r.json()["provider"] == "phone" and r.json()["userId"] == token["userId"]
    assert _sms_tasks(django_db_blocker, phone) == 0
    # A mock number's verification code is the fixed one too.
    user, session = api.signup()
    other = _number()
    assert api.call("POST", "/project/mock-phones", key=True, json={"number": other, "otp": "246810"}).status_code == 201
    r = api.call("PATCH", "/account/phone", session=session, json={"phone": other, "password": "password123"})
    assert r.status_code == 200, r.text
    r = api.call("POST", "/account/verifications/phone", session=session)
    assert r.status_code == 201, r.text
    r = api.call("PUT", "/account/verifications/phone", session=session, json={"userId": user["$id"], "secret": "246810"})
    assert r.status_code == 200, r.text
    assert api.call("GET", "/account", session=session).json()["phoneVerification"] is True
    assert _sms_tasks(django_db_blocker, other) == 0


def test_mock_number_gets_no_sms_from_a_configured_provider(sms_api):
    phone = _number()
    assert sms_api.call("POST", "/project/mock-phones", key=True,
                        json={"number": phone, "otp": "135790"}).status_code == 201
    r = sms_api.call("POST", "/account/tokens/phone", json={"userId": "unique()", "phone": phone})
    assert r.status_code == 201, r.text
    user_id = r.json()["userId"]
    r = sms_api.call("PUT", "/account/sessions/phone", json={"userId": user_id, "secret": "135790"})
    assert r.status_code == 201, r.text
    # A number not in the list still gets its SMS through the provider; the mock number, whose
    # token came first, got none.
    other = _number()
    assert sms_api.call("POST", "/account/tokens/phone", json={"userId": "unique()", "phone": other}).status_code == 201
    assert re.fullmatch(r"\d{6}", _code(sms_api.providers, other))
    assert sms_api.providers.received.to(phone) == []
