"""MFA end to end through the Python SDK: a TOTP authenticator proved with codes from pyotp's own
generator, the gate on sessions with one factor, challenges (TOTP, email code read from the
received mail, recovery code), recovery codes, the Users service's MFA routes. Bad input is a
row in each route's table."""

from __future__ import annotations

import datetime as dt
import time
from urllib.parse import parse_qs, urlsplit

import pyotp
import pytest
from appwrite.client import Client
from appwrite.enums.authentication_factor import AuthenticationFactor
from appwrite.enums.authenticator_type import AuthenticatorType
from appwrite.exception import AppwriteException
from appwrite.services.account import Account
from appwrite.services.users import Users

from conftest import Api, drop_cached
from tests.mail import code_in


def _account(api: Api, secret: str) -> Account:
    return Account(Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_session(secret))


def _login(api: Api, email: str, password: str = "password123") -> str:
    r = api.call("POST", "/account/sessions/email", json={"email": email, "password": password}, key=True)
    assert r.status_code == 201, r.text
    return r.json()["secret"]


def _refused(call, code: int, etype: str) -> None:
    with pytest.raises(AppwriteException) as err:
        call()
    assert (err.value.code, err.value.type) == (code, etype)


def _enrol(api: Api) -> tuple[dict, str, pyotp.TOTP]:
    """A user with a verified TOTP authenticator and MFA on; returns (user, first session, totp)."""
    user, token = api.signup()
    account = _account(api, token)
    auth = account.create_mfa_authenticator(type=AuthenticatorType.TOTP)
    totp = pyotp.TOTP(auth.secret)
    account.update_mfa_authenticator(type=AuthenticatorType.TOTP, otp=totp.now())
    account.update_mfa(mfa=True)
    return user, token, totp


def test_totp_enrolment_and_sign_in(api: Api):
    user, token = api.signup()
    account = _account(api, token)
    auth = account.create_mfa_authenticator(type=AuthenticatorType.TOTP)
    assert auth.uri.startswith(f"otpauth://totp/{api.project.id}:") and f"secret={auth.secret}" in auth.uri
    assert f"issuer={api.project.id}" in auth.uri
    parsed = pyotp.parse_uri(auth.uri)  # what an authenticator app reads
    assert parsed.secret == auth.secret and parsed.digits == 6 and parsed.interval == 30
    totp = pyotp.TOTP(auth.secret)
    _refused(lambda: account.update_mfa_authenticator(type=AuthenticatorType.TOTP, otp="000000"
                                                      if totp.now() != "000000" else "111111"),
             401, "user_invalid_token")
    me = account.update_mfa_authenticator(type=AuthenticatorType.TOTP, otp=totp.now())
    assert me.mfa is False
    assert account.get_session(session_id="current").factors == ["password", "totp"]
    assert account.list_mfa_factors().totp is True
    assert account.update_mfa(mfa=True).mfa is True
    codes = account.create_mfa_recovery_codes().recoverycodes
    assert len(codes) == 6 and all(len(c) == 10 for c in codes)

    # A new sign-in holds only the password: every route but the MFA ones answers 401.
    partial = _account(api, _login(api, user["email"]))
    _refused(partial.get, 401, "user_more_factors_required")
    _refused(partial.list_sessions, 401, "user_more_factors_required")
    _refused(lambda: partial.update_prefs(prefs={"x": 1}), 401, "user_more_factors_required")
    factors = partial.list_mfa_factors()
    assert (factors.totp, factors.email, factors.phone, factors.recoverycode) == (True, False, False, True)
    challenge = partial.create_mfa_challenge(factor=AuthenticationFactor.TOTP)
    assert challenge.userid == user["$id"]
    _refused(lambda: partial.update_mfa_challenge(challenge_id=challenge.id, otp="12345"), 401, "user_invalid_token")
    session = partial.update_mfa_challenge(challenge_id=challenge.id, otp=totp.now())
    assert session.factors == ["password", "totp"] and session.mfaupdatedat
    assert partial.get().id == user["$id"]
    # Recent challenge: the recovery codes can be read and regenerated now.
    assert partial.get_mfa_recovery_codes().recoverycodes == codes
    fresh = partial.update_mfa_recovery_codes().recoverycodes
    assert len(fresh) == 6 and not set(fresh) & set(codes)

    # A recovery code completes a challenge once.
    other = _account(api, _login(api, user["email"]))
    challenge = other.create_mfa_challenge(factor=AuthenticationFactor.RECOVERYCODE)
    assert other.update_mfa_challenge(challenge_id=challenge.id, otp=fresh[0]).factors == ["password", "recoveryCode"]
    third = _account(api, _login(api, user["email"]))
    challenge = third.create_mfa_challenge(factor=AuthenticationFactor.RECOVERYCODE)
    _refused(lambda: third.update_mfa_challenge(challenge_id=challenge.id, otp=fresh[0]), 401, "user_invalid_token")
    assert len(other.get_mfa_recovery_codes().recoverycodes) == 5


def test_session_without_a_recent_challenge_cannot_read_codes(api: Api):
    user, token, _ = _enrol(api)
    account = _account(api, token)
    account.create_mfa_recovery_codes()
    _refused(account.get_mfa_recovery_codes, 401, "user_challenge_required")
    _refused(account.update_mfa_recovery_codes, 401, "user_challenge_required")
    _refused(lambda: account.delete_mfa_authenticator(type=AuthenticatorType.TOTP), 401, "user_challenge_required")


def test_partial_session_may_sign_out_and_keys_are_never_blocked(api: Api):
    user, _, _ = _enrol(api)
    partial = _login(api, user["email"])
    assert api.call("POST", "/account/jwts", json={}, session=partial).json()["type"] == "user_more_factors_required"
    r = api.call("DELETE", "/account/sessions/current", session=partial)
    assert r.status_code == 204
    users = Users(Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_key(api.project.key))
    assert users.list_mfa_factors(user_id=user["$id"]).totp is True


def test_email_challenge_code_arrives_by_mail(asgi_server, project, mail_worker, smtp_server, sql):
    api = Api(asgi_server, project)
    email = f"m{time.monotonic_ns()}@example.com"
    user, token = api.signup(email=email)
    sql("UPDATE accounts_user SET email_verification = true WHERE uid = %s AND project_id = %s",
        (user["$id"], project.pk))
    drop_cached(*[f"user:{i}" for (i,) in sql("SELECT id FROM accounts_user WHERE uid = %s AND project_id = %s",
                                               (user["$id"], project.pk))])
    account = _account(api, token)
    account.update_mfa(mfa=True)  # the verified email becomes a factor of this session
    assert account.get_session(session_id="current").factors == ["password", "email"]
    partial = _account(api, _login(api, email))
    _refused(partial.get, 401, "user_more_factors_required")
    challenge = partial.create_mfa_challenge(factor=AuthenticationFactor.EMAIL)
    (mail,) = smtp_server.wait_for(to=email, subject="Verification Code")
    session = partial.update_mfa_challenge(challenge_id=challenge.id, otp=code_in(mail))
    assert session.factors == ["password", "email"]
    assert partial.get().email == email


def test_users_service_mfa_routes(api: Api):
    user, _, _ = _enrol(api)
    users = Users(Client().set_endpoint(api.server.endpoint).set_project(api.project.id).set_key(api.project.key))
    _refused(lambda: users.get_mfa_recovery_codes(user_id=user["$id"]), 404, "user_recovery_codes_not_found")
    _refused(lambda: users.update_mfa_recovery_codes(user_id=user["$id"]), 404, "user_recovery_codes_not_found")
    codes = users.create_mfa_recovery_codes(user_id=user["$id"]).recoverycodes
    assert len(codes) == 6
    _refused(lambda: users.create_mfa_recovery_codes(user_id=user["$id"]), 409, "user_recovery_codes_already_exists")
    assert users.get_mfa_recovery_codes(user_id=user["$id"]).recoverycodes == codes
    assert users.update_mfa_recovery_codes(user_id=user["$id"]).recoverycodes != codes
    users.delete_mfa_authenticator(user_id=user["$id"], type=AuthenticatorType.TOTP)
    _refused(lambda: users.delete_mfa_authenticator(user_id=user["$id"], type=AuthenticatorType.TOTP), 404,
             "user_authenticator_not_found")
    assert users.list_mfa_factors(user_id=user["$id"]).totp is False
    # Without a verified factor MFA asks for nothing more: a new sign-in works at once.
    assert _account(api, _login(api, user["email"])).get().id == user["$id"]
    assert users.update_mfa(user_id=user["$id"], mfa=False).mfa is False
    _refused(lambda: users.update_mfa(user_id="nobody", mfa=True), 404, "user_not_found")


ACCOUNT_CASES = [
    # (id, method, path, body, setup, status, type)
    ("mfa not a bool", "PATCH", "/account/mfa", {"mfa": "maybe"}, None, 400, "general_argument_invalid"),
    *[(f"mfa {v!r}", "PATCH", "/account/mfa", {"mfa": v}, None, 400, "general_argument_invalid")
      for v in ("on", "yes", 2, "true", 1)],
    ("mfa missing", "PATCH", "/account/mfa", {}, None, 400, "general_argument_invalid"),
    ("mfa undeclared field ignored", "PATCH", "/account/mfa", {"mfa": True, "x": 1}, None, 200, None),
    ("authenticator of unknown type", "POST", "/account/mfa/authenticators/sms", {}, None, 400,
     "general_argument_invalid"),
    ("verify without authenticator", "PUT", "/account/mfa/authenticators/totp", {"otp": "123456"}, None, 404,
     "user_authenticator_not_found"),
    ("verify with a wrong code", "PUT", "/account/mfa/authenticators/totp", {"otp": "WRONG"}, "authenticator", 401,
     "user_invalid_token"),
    ("verify with a non-numeric code", "PUT", "/account/mfa/authenticators/totp", {"otp": "abcdef"},
     "authenticator", 401, "user_invalid_token"),
    ("verify without otp", "PUT", "/account/mfa/authenticators/totp", {}, "authenticator", 400,
     "general_argument_invalid"),
    ("verify twice", "PUT", "/account/mfa/authenticators/totp", {"otp": "NOW"}, "verified", 409,
     "user_authenticator_already_verified"),
    ("create when verified", "POST", "/account/mfa/authenticators/totp", {}, "verified", 409,
     "user_authenticator_already_verified"),
    ("delete without authenticator", "DELETE", "/account/mfa/authenticators/totp", None, None, 401,
     "user_challenge_required"),
    ("challenge of unknown factor", "POST", "/account/mfa/challenges", {"factor": "sms"}, None, 400,
     "general_argument_invalid"),
    ("challenge without factor", "POST", "/account/mfa/challenges", {}, None, 400, "general_argument_invalid"),
    ("email challenge, email not verified", "POST", "/account/mfa/challenges", {"factor": "email"}, None, 400,
     "user_email_not_verified"),
    ("phone challenge, no SMS provider", "POST", "/account/mfa/challenges", {"factor": "phone"}, None, 503,
     "general_phone_disabled"),
    ("complete an unknown challenge", "PUT", "/account/mfa/challenges", {"challengeId": "nope", "otp": "123456"},
     None, 401, "user_invalid_token"),
    ("complete with a wrong code", "PUT", "/account/mfa/challenges", {"challengeId": "CHALLENGE", "otp": "WRONG"},
     "challenge", 401, "user_invalid_token"),
    ("complete an expired challenge", "PUT", "/account/mfa/challenges", {"challengeId": "CHALLENGE", "otp": "NOW"},
     "expired challenge", 401, "user_invalid_token"),
    ("complete without otp", "PUT", "/account/mfa/challenges", {"challengeId": "CHALLENGE"}, "challenge", 400,
     "general_argument_invalid"),
    ("codes twice", "POST", "/account/mfa/recovery-codes", {}, "codes", 409, "user_recovery_codes_already_exists"),
    ("read codes without a recent challenge", "GET", "/account/mfa/recovery-codes", None, "codes", 401,
     "user_challenge_required"),
    ("factors", "GET", "/account/mfa/factors", None, None, 200, None),
    ("legacy challenge path", "POST", "/account/mfa/challenge", {"factor": "recoverycode"}, None, 201, None),
]


@pytest.mark.parametrize("case", ACCOUNT_CASES, ids=[c[0] for c in ACCOUNT_CASES])
def test_account_mfa_cases(server, project, sql, case):
    _, method, path, body, setup, status, etype = case
    api = Api(server, project)
    user, token = api.signup()
    totp = None
    if setup in ("authenticator", "verified", "challenge", "expired challenge"):
        totp = pyotp.TOTP(api.call("POST", "/account/mfa/authenticators/totp", json={}, session=token).json()["secret"])
    if setup in ("verified", "challenge", "expired challenge"):
        assert api.call("PUT", "/account/mfa/authenticators/totp", json={"otp": totp.now()}, session=token).ok
    challenge = ""
    if setup in ("challenge", "expired challenge"):
        challenge = api.call("POST", "/account/mfa/challenges", json={"factor": "totp"}, session=token).json()["$id"]
        if setup == "expired challenge":
            sql("UPDATE accounts_challenge SET expire = %s WHERE uid = %s", (dt.datetime.now(dt.UTC), challenge))
    if setup == "codes":
        assert api.call("POST", "/account/mfa/recovery-codes", json={}, session=token).status_code == 201
    if isinstance(body, dict):
        wrong = "000000" if totp is None or totp.now() != "000000" else "111111"
        body = {k: {"NOW": totp.now() if totp else "", "WRONG": wrong, "CHALLENGE": challenge}.get(v, v)
                if isinstance(v, str) else v for k, v in body.items()}
    before = sql("SELECT mfa, mfa_totp_secret, mfa_totp_verified, mfa_recovery_codes::text FROM accounts_user "
                 "WHERE uid = %s AND project_id = %s", (user["$id"], project.pk))
    r = api.call(method, path, json=body, session=token)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
        after = sql("SELECT mfa, mfa_totp_secret, mfa_totp_verified, mfa_recovery_codes::text FROM accounts_user "
                    "WHERE uid = %s AND project_id = %s", (user["$id"], project.pk))
        assert after == before, "a refused request changed the user"
    guest = api.call(method, path, json=body)
    assert guest.status_code == 401 and guest.json()["type"] == "general_unauthorized_scope"


def test_challenge_guessing_is_rate_limited(api: Api):
    user, token, totp = _enrol(api)
    partial = _login(api, user["email"])
    challenge = api.call("POST", "/account/mfa/challenges", json={"factor": "totp"}, session=partial).json()["$id"]
    wrong = "000000" if totp.now() != "000000" else "111111"
    for _ in range(10):
        api.call("PUT", "/account/mfa/challenges", json={"challengeId": challenge, "otp": wrong}, session=partial)
    r = api.call("PUT", "/account/mfa/challenges", json={"challengeId": challenge, "otp": totp.now()}, session=partial)
    assert r.status_code == 429 and r.json()["type"] == "general_rate_limit_exceeded"


USERS_CASES = [
    ("update unknown user", "PATCH", "/users/nobody/mfa", {"mfa": True}, 404, "user_not_found"),
    ("update not a bool", "PATCH", "/users/USER/mfa", {"mfa": "maybe"}, 400, "general_argument_invalid"),
    ("factors of unknown user", "GET", "/users/nobody/mfa/factors", None, 404, "user_not_found"),
    ("delete unknown type", "DELETE", "/users/USER/mfa/authenticators/sms", None, 400, "general_argument_invalid"),
    ("delete missing authenticator", "DELETE", "/users/USER/mfa/authenticators/totp", None, 404,
     "user_authenticator_not_found"),
    ("get missing codes", "GET", "/users/USER/mfa/recovery-codes", None, 404, "user_recovery_codes_not_found"),
    ("regenerate missing codes", "PUT", "/users/USER/mfa/recovery-codes", None, 404, "user_recovery_codes_not_found"),
    ("bad user id", "GET", "/users/" + "u" * 40 + "/mfa/factors", None, 400, "general_argument_invalid"),
    ("factors", "GET", "/users/USER/mfa/factors", None, 200, None),
]


@pytest.mark.parametrize("case", USERS_CASES, ids=[c[0] for c in USERS_CASES])
def test_users_mfa_cases(server, project, case):
    _, method, path, body, status, etype = case
    api = Api(server, project)
    user, _ = api.signup()
    path = path.replace("USER", user["$id"])
    r = api.call(method, path, json=body, key=True)
    assert r.status_code == status, r.text
    if etype:
        assert r.json()["type"] == etype
    else:
        assert r.json() == {"totp": False, "email": False, "phone": False, "recoveryCode": False, "custom": False}
    guest = api.call(method, path, json=body)
    assert guest.status_code == 401 and guest.json()["type"] == "general_unauthorized_scope"


def test_a_session_made_by_a_key_still_needs_the_second_factor(api: Api):
    """A key is never blocked, but the session it makes for an MFA user is a first factor only."""
    user, _, totp = _enrol(api)
    secret = _login(api, user["email"])
    assert api.call("GET", "/account", session=secret).json()["type"] == "user_more_factors_required"
    challenge = api.call("POST", "/account/mfa/challenges", json={"factor": "totp"}, session=secret).json()["$id"]
    done = api.call("PUT", "/account/mfa/challenges", json={"challengeId": challenge, "otp": totp.now()},
                    session=secret)
    assert done.status_code == 200 and done.json()["current"] is True
    assert api.call("GET", "/account", session=secret).status_code == 200


def test_magic_url_session_of_an_mfa_user_needs_a_second_factor(asgi_server, project, mail_worker, smtp_server):
    """The email factor alone (a magic URL) is one factor: the TOTP challenge still applies."""
    api = Api(asgi_server, project)
    user, _, totp = _enrol(api)
    token = api.call("POST", "/account/tokens/magic-url", json={"userId": "unique()", "email": user["email"]}).json()
    params = {k: v[0] for k, v in parse_qs(urlsplit(token and _link(smtp_server, user["email"])).query).items()}
    session = api.call("POST", "/account/sessions/token", json={"userId": params["userId"], "secret": params["secret"]},
                       key=True).json()
    assert session["factors"] == ["email"]
    # The link verified the email, so now the user needs 2 factors and has 1.
    assert api.call("GET", "/account", session=session["secret"]).json()["type"] == "user_more_factors_required"
    challenge = api.call("POST", "/account/mfa/challenges", json={"factor": "totp"}, session=session["secret"]).json()
    api.call("PUT", "/account/mfa/challenges", json={"challengeId": challenge["$id"], "otp": totp.now()},
             session=session["secret"])
    assert api.call("GET", "/account", session=session["secret"]).status_code == 200


def _link(smtp, email: str) -> str:
    from tests.mail import link_in

    return link_in(smtp.wait_for(to=email)[0])


def test_one_totp_code_completes_one_challenge(server, project):
    """A TOTP code's time step is used up by the challenge it completes: the same code (or the
    previous step's) is refused on another session, even within the same 30 s (RFC 6238 §5.2)."""
    api = Api(server, project)
    user, _, totp = _enrol(api)
    sessions = [_login(api, user["email"]) for _ in range(3)]
    challenges = [api.call("POST", "/account/mfa/challenges", json={"factor": "totp"}, session=s).json()["$id"]
                  for s in sessions]
    code = totp.now()
    first = api.call("PUT", "/account/mfa/challenges", json={"challengeId": challenges[0], "otp": code},
                     session=sessions[0])
    assert first.status_code == 200, first.text
    for session, challenge, otp in ((sessions[1], challenges[1], code),
                                    (sessions[2], challenges[2], totp.at(time.time() - 30))):
        again = api.call("PUT", "/account/mfa/challenges", json={"challengeId": challenge, "otp": otp},
                         session=session)
        assert again.status_code == 401 and again.json()["type"] == "user_invalid_token", again.text
        assert api.call("GET", "/account", session=session).json()["type"] == "user_more_factors_required"
    assert api.call("GET", "/account", session=sessions[0]).status_code == 200
