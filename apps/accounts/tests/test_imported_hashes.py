"""Users created with password hashes made elsewhere sign in, and are moved to the server's argon2.

Each hash is made by its algorithm's own library (argon2-cffi, bcrypt, hashlib), or is a
reference vector published by the algorithm's authors: phpass's own test (``test.php`` of
Openwall phpass) and the sample account of Firebase's ``firebase/scrypt`` README.
"""

from __future__ import annotations

import base64
import hashlib
import os
import time

import argon2
import bcrypt
import pytest

from conftest import Api, argon2_prefix

FIREBASE = {  # firebase/scrypt README: project hash parameters and user1's exported record
    "passwordSignerKey": "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
    "passwordSaltSeparator": "Bw==",
    "passwordSalt": "42xEC+ixf3L2lw==",
    "password": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
}
PHPASS_VECTOR = ("test12345", "$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0")  # Openwall phpass test.php


def _scrypt_hex(password: str, salt: str, n: int, r: int, p: int, length: int) -> str:
    return hashlib.scrypt(password.encode(), salt=salt.encode(), n=n, r=r, p=p, dklen=length).hex()


def _cases() -> list[tuple[str, str, str, dict]]:
    """(name, route, clear password, extra body) with ``password`` set to the hash."""
    pw = "correct horse 9"
    return [
        ("argon2id", "argon2", pw, {"password": argon2.PasswordHasher(time_cost=2, memory_cost=65536).hash(pw)}),
        ("argon2i", "argon2", pw, {"password": argon2.PasswordHasher(type=argon2.Type.I).hash(pw)}),
        ("bcrypt 2b", "bcrypt", pw, {"password": bcrypt.hashpw(pw.encode(), bcrypt.gensalt(8)).decode()}),
        ("bcrypt 2y", "bcrypt", pw, {"password": "$2y$" + bcrypt.hashpw(pw.encode(), bcrypt.gensalt(8)).decode()[4:]}),
        ("md5", "md5", pw, {"password": hashlib.md5(pw.encode()).hexdigest()}),
        ("sha default", "sha", pw, {"password": hashlib.sha256(pw.encode()).hexdigest()}),
        ("sha1", "sha", pw, {"password": hashlib.sha1(pw.encode()).hexdigest(), "passwordVersion": "sha1"}),
        ("sha512/256", "sha", pw, {"password": hashlib.new("sha512_256", pw.encode()).hexdigest(),
                                   "passwordVersion": "sha512/256"}),
        ("sha3-512", "sha", pw, {"password": hashlib.sha3_512(pw.encode()).hexdigest(), "passwordVersion": "sha3-512"}),
        ("phpass vector", "phpass", PHPASS_VECTOR[0], {"password": PHPASS_VECTOR[1]}),
        ("phpass bcrypt", "phpass", pw, {"password": bcrypt.hashpw(pw.encode(), bcrypt.gensalt(8)).decode()}),
        ("scrypt", "scrypt", pw, {"password": _scrypt_hex(pw, "pepper-salt", 1024, 8, 1, 64), "passwordSalt": "pepper-salt",
                                  "passwordCpu": 1024, "passwordMemory": 8, "passwordParallel": 1,
                                  "passwordLength": 64}),
        ("scrypt appwrite defaults", "scrypt", pw, {"password": _scrypt_hex(pw, "s4lt", 8, 14, 1, 64), "passwordSalt": "s4lt",
                                                    "passwordCpu": 8, "passwordMemory": 14, "passwordParallel": 1,
                                                    "passwordLength": 64}),
        ("firebase vector", "scrypt-modified", "user1password", dict(FIREBASE)),
    ]


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_imported_hash_signs_in_and_is_upgraded(api: Api, sql, live_env, case):
    _, route, password, body = case
    email = f"imp{time.monotonic_ns()}@example.com"
    r = api.call("POST", f"/users/{route}", key=True, json={"userId": "unique()", "email": email, "name": "Imp", **body})
    assert r.status_code == 201, r.text
    user = r.json()
    assert user["hash"] == {"scrypt-modified": "scryptMod"}.get(route, route)
    assert user["password"] == body["password"].lower() if route in ("md5", "sha", "scrypt") else True
    stored = sql("SELECT password, password_update FROM accounts_user WHERE uid = %s", (user["$id"],))[0]

    wrong = api.call("POST", "/account/sessions/email", json={"email": email, "password": password + "x"})
    assert wrong.status_code == 401 and wrong.json()["type"] == "user_invalid_credentials"
    assert sql("SELECT password FROM accounts_user WHERE uid = %s", (user["$id"],))[0][0] == stored[0]

    good = api.call("POST", "/account/sessions/email", json={"email": email, "password": password})
    assert good.status_code == 201, good.text
    upgraded, password_update = sql("SELECT password, password_update FROM accounts_user WHERE uid = %s",
                                    (user["$id"],))[0]
    assert upgraded.startswith(argon2_prefix(live_env)), upgraded
    assert password_update == stored[1], "an upgrade is not a password change"
    again = api.call("POST", "/account/sessions/email", json={"email": email, "password": password})
    assert again.status_code == 201, again.text
    shown = api.call("GET", f"/users/{user['$id']}", key=True).json()
    assert shown["hash"] == "argon2" and shown["hashOptions"] == {
        "type": "argon2", "memoryCost": int(live_env["ARGON2_MEMORY_COST_KIB"]),
        "timeCost": int(live_env["ARGON2_TIME_COST"]), "threads": int(live_env["ARGON2_PARALLELISM"])}


BAD = [
    ("argon2 not phc", "argon2", {"password": "not-an-argon2-hash"}, "password"),
    ("argon2 memory too big", "argon2", {"password": "$argon2id$v=19$m=1048576,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo"},
     "password"),
    ("bcrypt malformed", "bcrypt", {"password": "$2b$10$short"}, "password"),
    ("bcrypt cost too high", "bcrypt", {"password": "$2b$17$" + "a" * 53}, "password"),
    ("md5 not hex", "md5", {"password": "z" * 32}, "password"),
    ("sha wrong length", "sha", {"password": "ab" * 10}, "password"),
    ("sha unknown version", "sha", {"password": "ab" * 32, "passwordVersion": "sha999"}, "passwordVersion"),
    ("phpass malformed", "phpass", {"password": "$P$tooshort"}, "password"),
    ("phpass too many rounds", "phpass", {"password": "$P$Z" + "a" * 30}, "password"),
    ("scrypt cpu not power of two", "scrypt", {"password": "ab" * 64, "passwordSalt": "s", "passwordCpu": 1000,
                                               "passwordMemory": 8, "passwordParallel": 1, "passwordLength": 64},
     "passwordCpu"),
    ("scrypt memory too big", "scrypt", {"password": "ab" * 64, "passwordSalt": "s", "passwordCpu": 2**20,
                                         "passwordMemory": 32, "passwordParallel": 1, "passwordLength": 64},
     "passwordCpu"),
    ("scrypt length too small", "scrypt", {"password": "ab" * 8, "passwordSalt": "s", "passwordCpu": 16,
                                           "passwordMemory": 8, "passwordParallel": 1, "passwordLength": 8},
     "passwordLength"),
    ("scrypt parallel zero", "scrypt", {"password": "ab" * 64, "passwordSalt": "s", "passwordCpu": 16,
                                        "passwordMemory": 8, "passwordParallel": 0, "passwordLength": 64},
     "passwordParallel"),
    ("scrypt missing salt", "scrypt", {"password": "ab" * 64, "passwordCpu": 16, "passwordMemory": 8,
                                       "passwordParallel": 1, "passwordLength": 64}, None),
    ("scrypt-modified bad base64", "scrypt-modified", {**FIREBASE, "passwordSignerKey": "not base64!"},
     "passwordSignerKey"),
    ("hash too short", "md5", {"password": "abc"}, None),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_hash_parameters_are_refused(api: Api, sql, case):
    _, route, body, param = case
    uid = f"bad{os.getpid()}{time.monotonic_ns()}"
    r = api.call("POST", f"/users/{route}", key=True, json={"userId": uid, "email": f"{uid}@example.com", **body})
    assert r.status_code == 400, r.text
    assert r.json()["type"] == "general_argument_invalid"
    if param:
        assert f"`{param}`" in r.json()["message"]
    assert sql("SELECT COUNT(*) FROM accounts_user WHERE uid = %s", (uid,)) == [(0,)]


def test_firebase_vector_reproduces_with_the_servers_code():
    """The server's own Firebase routine gives the published hash for the published input."""
    from apps.accounts.passwords.hashers import firebase_scrypt

    made = firebase_scrypt("user1password", base64.b64decode(FIREBASE["passwordSalt"]),
                           base64.b64decode(FIREBASE["passwordSaltSeparator"]),
                           base64.b64decode(FIREBASE["passwordSignerKey"]))
    assert base64.b64encode(made).decode() == FIREBASE["password"]
