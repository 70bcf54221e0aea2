"""The admin's sign-in throttle on a live ASGI server, with the default rule (10 failed sign-ins
per 15 minutes per client IP and per username), on both stores of the API's limiter: Redis
(``REDIS_URL``) and the embedded in-process store (no ``REDIS_URL``). The server trusts
127.0.0.1 as a proxy, so each case picks its client IPs with ``X-Forwarded-For``; IPs and
usernames are fresh per run, so counters left in Redis by an earlier run do not matter."""

from __future__ import annotations

import random

import pytest

from apps.adminsite.tests.signin import admin_login, make_staff, signed_in, stored_hash
from conftest import PrivateRedis, free_port, start_server

LIMIT, WINDOW = 10, 900  # apps/abuse/rules.py "admin.login"
INVALID = "Please enter the correct username and password for a staff account."
LOCKED = "Too many failed sign-in attempts for this account or from this address."


@pytest.fixture(scope="module", params=["redis", "memory"])
def admin_server(request, live_env):
    env = {**live_env, "TRUSTED_PROXIES": "127.0.0.1/32"}
    if request.param == "memory":
        env.pop("REDIS_URL", None)
    server = start_server("asgi", env)
    yield server
    server.stop()


def _ip() -> str:
    return f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}"


def test_fifteen_wrong_passwords_then_the_right_one_is_refused(admin_server, django_db_blocker):
    # Stored with other argon2 parameters than the server's: checking the right password would
    # re-hash it, so an unchanged hash shows the password was not checked while locked.
    username, password = make_staff(django_db_blocker, appwrite_hash=True)
    before = stored_hash(django_db_blocker, username)
    ip = _ip()
    answers = [admin_login(admin_server, username, f"wrong-{i}", ip) for i in range(15)]
    assert [r.status_code for r in answers] == [200] * LIMIT + [429] * 5
    assert all(INVALID in r.text for r in answers[:LIMIT])
    refused = admin_login(admin_server, username, password, ip)
    assert refused.status_code == 429 and not signed_in(refused)
    assert LOCKED in refused.text and 'id="id_username"' in refused.text  # the form, with the error
    assert 0 < int(refused.headers["Retry-After"]) <= WINDOW
    assert stored_hash(django_db_blocker, username) == before

    # The username is locked from any address; the address is locked for any username.
    assert admin_login(admin_server, username, password, _ip()).status_code == 429
    other, other_password = make_staff(django_db_blocker)
    assert admin_login(admin_server, other, other_password, ip).status_code == 429
    assert signed_in(admin_login(admin_server, other, other_password, _ip()))


def test_only_failed_sign_ins_count(admin_server, django_db_blocker):
    username, password = make_staff(django_db_blocker)
    ip = _ip()
    for _ in range(LIMIT + 2):
        assert signed_in(admin_login(admin_server, username, password, ip))
    # A good sign-in clears the username's counter: its owner may mistype again afterwards.
    for _ in range(2):
        for i in range(LIMIT - 1):
            assert admin_login(admin_server, username, f"typo-{i}", _ip()).status_code == 200
        assert signed_in(admin_login(admin_server, username, password, _ip()))


def test_a_good_sign_in_does_not_reset_the_address(admin_server, django_db_blocker):
    """One valid account must not reset the budget for guessing other accounts from its address."""
    mine, mine_password = make_staff(django_db_blocker)
    ip = _ip()
    for round_ in range(2):
        for i in range(LIMIT // 2):
            victim, _ = make_staff(django_db_blocker)
            assert admin_login(admin_server, victim, f"guess-{round_}-{i}", ip).status_code == 200
        if round_ == 0:
            assert signed_in(admin_login(admin_server, mine, mine_password, ip))
    assert admin_login(admin_server, mine, mine_password, ip).status_code == 429


@pytest.mark.faults
def test_store_down_refuses_sign_in_without_checking(live_env, django_db_blocker):
    """The limiter's Redis unreachable: the rule fails closed, so the sign-in is refused (503, the
    form with its error) and the password is not checked, a correct one included."""
    redis_server = PrivateRedis(free_port())
    redis_server.start()
    server = start_server("asgi", {**live_env, "REDIS_URL": redis_server.url, "REDIS_TIMEOUT": "0.5"})
    try:
        username, password = make_staff(django_db_blocker, appwrite_hash=True)
        before = stored_hash(django_db_blocker, username)
        redis_server.stop()
        refused = admin_login(server, username, password)
        assert refused.status_code == 503 and not signed_in(refused)
        assert "Sign-in is temporarily unavailable" in refused.text and int(refused.headers["Retry-After"]) >= 1
        assert stored_hash(django_db_blocker, username) == before
    finally:
        server.stop()
        redis_server.stop()
