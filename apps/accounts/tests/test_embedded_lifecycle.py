"""The embedded default (SQLite, no Redis, no SMTP server, no separate worker): the server runs a
worker thread itself and writes every mail to its log, so each flow works from the log alone."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pyotp
import pytest
from appwrite.client import Client
from appwrite.id import ID
from appwrite.services.account import Account

from conftest import ROOT, start_server

ORIGIN = "http://localhost:5173"


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SMTP_HOST")}
    env.update(SQLITE_PATH=str(tmp_path_factory.mktemp("embedded-mail") / "db.sqlite3"), PYTHONUNBUFFERED="1",
               TASKS_POLL_INTERVAL="0.2")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=180)
    subprocess.run([*manage, "createproject", "mailtest", "--origin", ORIGIN], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=60)
    key = subprocess.run([*manage, "createapikey", "mailtest", "--all-scopes"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=60).stdout.strip()
    server = start_server("asgi", env)
    yield server, key
    server.stop()


def _from_log(server, email: str, pattern: str, timeout: float = 30) -> str:
    """The first match of ``pattern`` in the mail to ``email`` that the server logged."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = server.log.read_text(errors="replace")
        for block in log.split("INFO apps.mail mail to ")[1:]:
            if block.startswith(email):
                found = re.search(pattern, block)
                if found:
                    return found.group(0)
        time.sleep(0.2)
    raise AssertionError(f"no mail to {email} in the log:\n{server.log.read_text()[-3000:]}")


def _client(server, **kw) -> Client:
    client = Client().set_endpoint(server.endpoint).set_project("mailtest")
    for name, value in kw.items():
        getattr(client, f"set_{name}")(value)
    return client


def test_flows_with_mails_in_the_log(embedded):
    server, key = embedded
    admin = Account(_client(server, key=key))
    # Verification
    email = f"e{time.monotonic_ns()}@example.com"
    Account(_client(server)).create(user_id=ID.unique(), email=email, password="embedded-pass-1")
    session = admin.create_email_password_session(email=email, password="embedded-pass-1")
    me = Account(_client(server, session=session.secret))
    me.create_email_verification(url=f"{ORIGIN}/verify")
    link = _from_log(server, email, r"http://localhost:5173/verify\?\S+")
    params = dict(p.split("=", 1) for p in link.split("?", 1)[1].split("&"))
    me.update_email_verification(user_id=params["userId"], secret=params["secret"])
    assert me.get().emailverification is True
    # Email code
    other = f"c{time.monotonic_ns()}@example.com"
    token = Account(_client(server)).create_email_token(user_id=ID.unique(), email=other)
    code = _from_log(server, other, r"(?<!\d)\d{6}(?!\d)")
    signed_in = admin.create_session(user_id=token.userid, secret=code)
    assert Account(_client(server, session=signed_in.secret)).get().email == other
    # Recovery (German mail)
    Account(_client(server, locale="de")).create_recovery(email=email, url=f"{ORIGIN}/reset")
    link = _from_log(server, email, r"http://localhost:5173/reset\?\S+")
    assert "Passwort" in server.log.read_text()
    params = dict(p.split("=", 1) for p in link.split("?", 1)[1].split("&"))
    Account(_client(server)).update_recovery(user_id=params["userId"], secret=params["secret"],
                                             password="embedded-pass-2")
    assert admin.create_email_password_session(email=email, password="embedded-pass-2").userid == params["userId"]


def test_mfa_on_the_embedded_default(embedded):
    server, key = embedded
    email = f"m{time.monotonic_ns()}@example.com"
    Account(_client(server)).create(user_id=ID.unique(), email=email, password="embedded-pass-1")
    admin = Account(_client(server, key=key))
    me = Account(_client(server, session=admin.create_email_password_session(
        email=email, password="embedded-pass-1").secret))
    from appwrite.enums.authentication_factor import AuthenticationFactor
    from appwrite.enums.authenticator_type import AuthenticatorType
    from appwrite.exception import AppwriteException

    totp = pyotp.TOTP(me.create_mfa_authenticator(type=AuthenticatorType.TOTP).secret)
    me.update_mfa_authenticator(type=AuthenticatorType.TOTP, otp=totp.now())
    me.update_mfa(mfa=True)
    later = Account(_client(server, session=admin.create_email_password_session(
        email=email, password="embedded-pass-1").secret))
    with pytest.raises(AppwriteException) as err:
        later.get()
    assert err.value.type == "user_more_factors_required"
    challenge = later.create_mfa_challenge(factor=AuthenticationFactor.TOTP)
    code = totp.now()
    later.update_mfa_challenge(challenge_id=challenge.id, otp=code)
    assert later.get().email == email
    # The code's time step is used up (stored in SQLite here): another session cannot use it.
    third = Account(_client(server, session=admin.create_email_password_session(
        email=email, password="embedded-pass-1").secret))
    challenge = third.create_mfa_challenge(factor=AuthenticationFactor.TOTP)
    with pytest.raises(AppwriteException) as err:
        third.update_mfa_challenge(challenge_id=challenge.id, otp=code)
    assert (err.value.code, err.value.type) == (401, "user_invalid_token")
