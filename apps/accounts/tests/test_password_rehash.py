"""Product users' argon2 hashes made with older parameters (Appwrite's t=4, m=2 MiB, p=3, as this
server made them before, or as Appwrite exports them) still sign in, and are re-hashed with the
server's default parameters, OWASP's argon2id minimum (m=19 MiB, t=2, p=1), on that sign-in.
The server runs with the production defaults (``default_hashing_server``)."""

from __future__ import annotations

import time

import argon2
import pytest

from apps.adminsite.tests.signin import APPWRITE_ARGON2, appwrite_argon2_hash
from conftest import Api

OWASP = "argon2$argon2id$v=19$m=19456,t=2,p=1$"
PASSWORD = "correct horse 9 battery"


def _appwrite_export(password: str) -> str:
    """As Appwrite (PHP's password_hash with Appwrite's options) stores it: 32-byte hash."""
    t, m, p = APPWRITE_ARGON2
    return argon2.PasswordHasher(time_cost=t, memory_cost=m, parallelism=p, hash_len=32, salt_len=16).hash(password)


CASES = [
    # (name, the hash given to POST /users/argon2, as the PHC string)
    ("appwrite export", lambda: _appwrite_export(PASSWORD)),
    ("made by this server with appwrite's parameters", lambda: appwrite_argon2_hash(PASSWORD).removeprefix("argon2")),
]


@pytest.mark.parametrize("make", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_sign_in_rehashes_old_parameters(default_hashing_server, project, sql, make):
    api = Api(default_hashing_server, project)
    email = f"old{time.monotonic_ns()}@example.com"
    old = make()
    assert old.startswith("$argon2id$v=19$m=2048,t=4,p=3$")
    r = api.call("POST", "/users/argon2", key=True, json={"userId": "unique()", "email": email, "password": old})
    assert r.status_code == 201, r.text
    uid = r.json()["$id"]

    def stored() -> str:
        return sql("SELECT password FROM accounts_user WHERE uid = %s", (uid,))[0][0]

    assert stored() == "argon2" + old
    wrong = api.call("POST", "/account/sessions/email", json={"email": email, "password": PASSWORD + "x"})
    assert wrong.status_code == 401 and stored() == "argon2" + old

    good = api.call("POST", "/account/sessions/email", json={"email": email, "password": PASSWORD})
    assert good.status_code == 201, good.text
    assert stored().startswith(OWASP), stored()
    again = api.call("POST", "/account/sessions/email", json={"email": email, "password": PASSWORD})
    assert again.status_code == 201, again.text


def test_new_passwords_get_the_owasp_parameters(default_hashing_server, project, sql):
    api = Api(default_hashing_server, project)
    user, _ = api.signup(password=PASSWORD)
    assert sql("SELECT password FROM accounts_user WHERE uid = %s", (user["$id"],))[0][0].startswith(OWASP)
