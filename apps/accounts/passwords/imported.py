"""Imported password hashes: Appwrite's import parameters <-> the stored form
(``apps.accounts.passwords.hashers``), with the checks that keep a sign-in affordable.

:func:`imported` validates what ``POST /users/<algorithm>`` and ``manage.py importusers`` receive
and returns the stored string; :func:`appwrite_form` turns a stored string back into Appwrite's
``password``/``hash``/``hashOptions`` (the Users API shows them to API keys, as Appwrite does).

Cost limits (a stored hash is checked at every sign-in until it is upgraded, so an import must
not be able to make one sign-in cost seconds or gigabytes): argon2 memory at most
:data:`ARGON2_MAX_MEMORY_KIB`, time cost at most 16, 16 lanes; bcrypt cost 4-16; phpass at most
2**:data:`PHPASS_MAX_LOG2` rounds; scrypt ``N`` a power of two from 2 to 2**20 with
``128 * N * r`` at most :data:`SCRYPT_MAX_BYTES`, ``r`` 1-32, ``p`` 1-16, length 16-128 bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass

from apps.accounts.passwords.hashers import PHPASS_ITOA64, SHA_VERSIONS
from apps.core.errors import invalid_argument

ALGORITHMS = ("argon2", "bcrypt", "md5", "sha", "phpass", "scrypt", "scryptMod")
ARGON2_MAX_MEMORY_KIB = 262144  # 256 MiB
PHPASS_MAX_LOG2 = 20
SCRYPT_MAX_BYTES = 256 * 1024 * 1024

_ARGON2 = re.compile(r"^\$argon2(id|i|d)\$v=(\d+)\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+={0,2}\$[A-Za-z0-9+/]+={0,2}$")
_BCRYPT = re.compile(r"^\$2[abxy]\$(\d\d)\$[./A-Za-z0-9]{53}$")
_PHPASS = re.compile(r"^\$[PH]\$[./0-9A-Za-z]{31}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_B64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_SHA_LENGTHS = {"sha1": 40, "sha224": 56, "sha256": 64, "sha384": 96, "sha512/224": 56, "sha512/256": 64,
                "sha512": 128, "sha3-224": 56, "sha3-256": 64, "sha3-384": 96, "sha3-512": 128}


@dataclass(frozen=True, slots=True)
class ScryptParams:
    """Appwrite's scrypt import options (``passwordSalt``, ``passwordCpu`` = N,
    ``passwordMemory`` = r, ``passwordParallel`` = p, ``passwordLength`` = bytes)."""

    salt: str
    cpu: int = 8
    memory: int = 14
    parallel: int = 1
    length: int = 64


@dataclass(frozen=True, slots=True)
class ScryptModParams:
    """Firebase's project hash parameters plus the user's salt, all base64."""

    salt: str
    separator: str
    signer_key: str


def _bad(param: str, reason: str):
    return invalid_argument(param, reason)


def _b64(value: str, param: str, *, allow_empty: bool = False) -> str:
    if value == "" and allow_empty:
        return value
    if not _B64.fullmatch(value or ""):
        raise _bad(param, "Value must be a valid base64 string")
    try:
        base64.b64decode(value, validate=True)
    except binascii.Error:
        raise _bad(param, "Value must be a valid base64 string") from None
    return value


def imported(algorithm: str, password: str, *, version: str = "", scrypt: ScryptParams | None = None,
             scrypt_mod: ScryptModParams | None = None) -> str:
    """The stored form of a hash made by ``algorithm`` (one of :data:`ALGORITHMS`).

    ``version`` is the SHA version (default ``sha256``); ``scrypt``/``scrypt_mod`` carry those
    algorithms' options. Raises 400 ``general_argument_invalid`` (naming the parameter) for a
    malformed hash or options out of range.
    """
    if algorithm == "argon2":
        found = _ARGON2.fullmatch(password)
        if not found:
            raise _bad("password", "Value must be an argon2 hash in PHC form ($argon2id$v=19$m=...,t=...,p=...$salt$hash)")
        memory, time_cost, lanes = int(found.group(3)), int(found.group(4)), int(found.group(5))
        if not (8 <= memory <= ARGON2_MAX_MEMORY_KIB and 1 <= time_cost <= 16 and 1 <= lanes <= 16):
            raise _bad("password", f"argon2 parameters out of range (m <= {ARGON2_MAX_MEMORY_KIB} KiB, t <= 16, p <= 16)")
        return "argon2" + password
    if algorithm == "bcrypt":
        found = _BCRYPT.fullmatch(password)
        if not found:
            raise _bad("password", "Value must be a bcrypt hash ($2a$, $2b$, $2x$ or $2y$)")
        if not 4 <= int(found.group(1)) <= 16:
            raise _bad("password", "bcrypt cost must be between 4 and 16")
        return "bcrypt$" + password
    if algorithm == "md5":
        if len(password) != 32 or not _HEX.fullmatch(password):
            raise _bad("password", "Value must be an MD5 digest (32 hex characters)")
        return "md5$" + password.lower()
    if algorithm == "sha":
        version = version or "sha256"
        if version not in SHA_VERSIONS:
            raise _bad("passwordVersion", f"Value must be one of ({', '.join(SHA_VERSIONS)})")
        if len(password) != _SHA_LENGTHS[version] or not _HEX.fullmatch(password):
            raise _bad("password", f"Value must be a {version} digest ({_SHA_LENGTHS[version]} hex characters)")
        return f"sha${version}${password.lower()}"
    if algorithm == "phpass":
        found = _BCRYPT.fullmatch(password)
        if found:
            if not 4 <= int(found.group(1)) <= 16:
                raise _bad("password", "bcrypt cost must be between 4 and 16")
            return "phpass$" + password
        if not _PHPASS.fullmatch(password):
            raise _bad("password", "Value must be a phpass hash ($P$ or $H$, 34 characters) or a bcrypt hash")
        if not 7 <= PHPASS_ITOA64.find(password[3]) <= PHPASS_MAX_LOG2:
            raise _bad("password", f"phpass rounds must be between 2^7 and 2^{PHPASS_MAX_LOG2}")
        return "phpass$" + password
    if algorithm == "scrypt":
        p = scrypt or ScryptParams(salt="")
        if not p.salt:
            raise _bad("passwordSalt", "Value must be a valid string and at least 1 chars")
        if p.cpu < 2 or p.cpu > 2**20 or p.cpu & (p.cpu - 1):
            raise _bad("passwordCpu", "Value must be a power of 2 between 2 and 1048576")
        if not 1 <= p.memory <= 32:
            raise _bad("passwordMemory", "Value must be a valid range between 1 and 32")
        if not 1 <= p.parallel <= 16:
            raise _bad("passwordParallel", "Value must be a valid range between 1 and 16")
        if not 16 <= p.length <= 128:
            raise _bad("passwordLength", "Value must be a valid range between 16 and 128")
        if 128 * p.cpu * p.memory * p.parallel > SCRYPT_MAX_BYTES:
            raise _bad("passwordCpu", f"scrypt would need more than {SCRYPT_MAX_BYTES // 2**20} MiB per check")
        if len(password) != 2 * p.length or not _HEX.fullmatch(password):
            raise _bad("password", f"Value must be the scrypt output as {2 * p.length} hex characters")
        salt = base64.b64encode(p.salt.encode()).decode()
        return f"scrypt${p.cpu}${p.memory}${p.parallel}${p.length}${salt}${password.lower()}"
    if algorithm == "scryptMod":
        mod = scrypt_mod or ScryptModParams("", "", "")
        salt = _b64(mod.salt, "passwordSalt")
        separator = _b64(mod.separator, "passwordSaltSeparator", allow_empty=True)
        signer = _b64(mod.signer_key, "passwordSignerKey")
        _b64(password, "password")
        return f"scryptMod${salt}${separator}${signer}${password}"
    raise _bad("hash", f"Value must be one of ({', '.join(ALGORITHMS)})")


def _argon2_options(phc: str) -> dict:
    found = _ARGON2.fullmatch(phc)
    if not found:
        return {"type": "argon2"}
    return {"type": "argon2", "memoryCost": int(found.group(3)), "timeCost": int(found.group(4)),
            "threads": int(found.group(5))}


def appwrite_form(encoded: str) -> tuple[str, str, dict]:
    """``(password, hash, hashOptions)`` as Appwrite shows them on the Users routes, for a stored
    password (``("", "argon2", {...})`` for a user without one)."""
    if not encoded:
        return "", "argon2", {"type": "argon2"}
    algorithm, _, rest = encoded.partition("$")
    if algorithm == "argon2":
        phc = "$" + rest
        return phc, "argon2", _argon2_options(phc)
    if algorithm == "sha":
        version, _, digest = rest.partition("$")
        return digest, "sha", {"type": "sha", "version": version}
    if algorithm == "scrypt":
        n, r, p, length, salt, digest = rest.split("$", 5)
        return digest, "scrypt", {"type": "scrypt", "costCpu": int(n), "costMemory": int(r),
                                  "costParallel": int(p), "length": int(length),
                                  "salt": base64.b64decode(salt).decode(errors="replace")}
    if algorithm == "scryptMod":
        salt, separator, signer, digest = rest.split("$", 3)
        return digest, "scryptMod", {"type": "scryptMod", "salt": salt, "saltSeparator": separator,
                                     "signerKey": signer}
    if algorithm in ("bcrypt", "md5", "phpass"):
        return rest, algorithm, {"type": algorithm}
    return "", algorithm, {"type": algorithm}
