"""Password hashing through Django's hasher framework.

New passwords are argon2id with the server's parameters (:class:`AppwriteArgon2Hasher`). The
other hashers only *verify* hashes imported from another system (Appwrite's
``POST /users/<algorithm>`` routes and ``manage.py importusers``); a user signing in with one is
moved to the server's argon2 on the first good sign-in (``services.password_verify_and_upgrade``).

Stored forms (``<algorithm>$...``, the algorithm being Appwrite's ``hash`` name; ``apps.accounts
.passwords`` builds them from Appwrite's import parameters and turns them back into Appwrite's
``password``/``hash``/``hashOptions``):

============ ============================================================ ====================
algorithm    stored                                                       checked with
============ ============================================================ ====================
argon2       ``argon2$argon2id$v=19$m=..,t=..,p=..$salt$hash`` (PHC)      argon2-cffi
bcrypt       ``bcrypt$$2y$10$...`` (any ``$2a``/``$2b``/``$2x``/``$2y``)  bcrypt
md5          ``md5$<hex>`` (unsalted ``md5(password)``)                   hashlib
sha          ``sha$<version>$<hex>`` (unsalted, Appwrite's versions)      hashlib
phpass       ``phpass$$P$...`` (portable) or ``phpass$$2a$...`` (bcrypt)  hashlib md5 / bcrypt
scrypt       ``scrypt$<N>$<r>$<p>$<length>$<b64 salt>$<hex>``             hashlib.scrypt
scryptMod    ``scryptMod$<salt>$<separator>$<signer key>$<hash>`` (b64)   hashlib.scrypt + AES
============ ============================================================ ====================
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

from django.conf import settings
from django.contrib.auth.hashers import Argon2PasswordHasher, BasePasswordHasher, mask_hash


class AppwriteArgon2Hasher(Argon2PasswordHasher):
    """argon2id with parameters from settings (``ARGON2_*``; default OWASP's minimum: t=2,
    m=19 MiB, p=1), for product users and staff alike.

    Hashes made with Appwrite's parameters (t=4, m=2 MiB, p=3: ``src/Appwrite/Auth/Hash/
    Argon2.php``, this server's former default) and imported argon2 hashes (argon2i/argon2d/
    argon2id, any parameters) verify too; ``must_update`` is true for those whose parameters are
    not the server's, so they are re-hashed at the next good sign-in (product users:
    ``services.password_verify_and_upgrade``; staff: Django's ``check_password``). Cost per hash:
    docs/security-admin-and-secrets.md; rerun ``python manage.py hashcost``.
    """

    algorithm = "argon2"

    @property
    def time_cost(self):
        return settings.ARGON2_TIME_COST

    @property
    def memory_cost(self):
        return settings.ARGON2_MEMORY_COST_KIB

    @property
    def parallelism(self):
        return settings.ARGON2_PARALLELISM


class _ImportedHasher(BasePasswordHasher):
    """A hasher that checks hashes made elsewhere; it never makes new ones."""

    library = None

    def encode(self, password, salt):  # pragma: no cover - never called: new passwords use argon2
        raise NotImplementedError(f"{self.algorithm} hashes are only imported, never made")

    def salt(self):  # pragma: no cover
        raise NotImplementedError

    def decode(self, encoded):
        algorithm, _, rest = encoded.partition("$")
        return {"algorithm": algorithm, "hash": rest, "salt": ""}

    def safe_summary(self, encoded):
        return {"algorithm": self.algorithm, "hash": mask_hash(self.decode(encoded)["hash"])}

    def must_update(self, encoded):
        return True

    def harden_runtime(self, password, encoded):
        pass


def _equal(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def bcrypt_check(password: str, hashed: str) -> bool:
    """``password`` against a bcrypt hash (``$2a$``/``$2b$``/``$2x$``/``$2y$``); the password is
    cut to bcrypt's 72 bytes first, as PHP's ``password_verify`` does (the bcrypt library refuses
    longer ones)."""
    import bcrypt

    raw = hashed.encode()
    if raw[:4] in (b"$2y$", b"$2x$"):
        raw = b"$2b$" + raw[4:]  # same algorithm; only the prefix differs (PHP's crypt_blowfish)
    try:
        return bcrypt.checkpw(password.encode()[:72], raw)
    except ValueError:
        return False


class BcryptHasher(_ImportedHasher):
    algorithm = "bcrypt"

    def verify(self, password, encoded):
        return bcrypt_check(password, self.decode(encoded)["hash"])


class MD5Hasher(_ImportedHasher):
    """Unsalted ``md5(password)`` as hex (Appwrite ``Hashes/MD5``)."""

    algorithm = "md5"

    def verify(self, password, encoded):
        return _equal(hashlib.md5(password.encode()).hexdigest(), self.decode(encoded)["hash"].lower())


# Appwrite's ``passwordVersion`` values -> hashlib names.
SHA_VERSIONS = {
    "sha1": "sha1", "sha224": "sha224", "sha256": "sha256", "sha384": "sha384",
    "sha512/224": "sha512_224", "sha512/256": "sha512_256", "sha512": "sha512",
    "sha3-224": "sha3_224", "sha3-256": "sha3_256", "sha3-384": "sha3_384", "sha3-512": "sha3_512",
}


class ShaHasher(_ImportedHasher):
    """Unsalted SHA digest as hex, in one of :data:`SHA_VERSIONS` (Appwrite ``Hashes/Sha``)."""

    algorithm = "sha"

    def verify(self, password, encoded):
        _, version, digest = encoded.split("$", 2)
        return _equal(hashlib.new(SHA_VERSIONS[version], password.encode()).hexdigest(), digest.lower())


PHPASS_ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _phpass_encode64(data: bytes) -> str:
    """phpass's own base-64 (little-endian groups of 3 bytes over :data:`PHPASS_ITOA64`)."""
    out, i, count = [], 0, len(data)
    while i < count:
        value = data[i]
        i += 1
        out.append(PHPASS_ITOA64[value & 0x3F])
        if i < count:
            value |= data[i] << 8
        out.append(PHPASS_ITOA64[(value >> 6) & 0x3F])
        if i >= count:
            break
        i += 1
        if i < count:
            value |= data[i] << 16
        out.append(PHPASS_ITOA64[(value >> 12) & 0x3F])
        if i >= count:
            break
        i += 1
        out.append(PHPASS_ITOA64[(value >> 18) & 0x3F])
    return "".join(out)


def phpass_portable(password: str, setting: str) -> str:
    """phpass's portable hash (``$P$``/``$H$``, WordPress and phpBB): ``2**count`` rounds of MD5
    over a salt. ``setting`` is a stored hash (its first 12 chars are used). Returns the full
    34-char hash, or ``"*"`` for a malformed setting (Openwall phpass ``crypt_private``)."""
    if setting[:3] not in ("$P$", "$H$") or len(setting) < 12:
        return "*"
    count_log2 = PHPASS_ITOA64.find(setting[3])
    if not 7 <= count_log2 <= 30:
        return "*"
    salt = setting[4:12].encode()
    secret = password.encode()
    digest = hashlib.md5(salt + secret).digest()
    for _ in range(1 << count_log2):
        digest = hashlib.md5(digest + secret).digest()
    return setting[:12] + _phpass_encode64(digest)


class PHPassHasher(_ImportedHasher):
    """phpass: portable MD5 hashes, or the bcrypt hashes phpass makes when it can
    (Appwrite ``Hashes/PHPass``)."""

    algorithm = "phpass"

    def verify(self, password, encoded):
        stored = self.decode(encoded)["hash"]
        if stored.startswith("$2"):
            return bcrypt_check(password, stored)
        return _equal(phpass_portable(password, stored), stored)


def scrypt_maxmem(n: int, r: int, p: int) -> int:
    """Bytes OpenSSL's scrypt needs for these parameters, with room to spare (``maxmem``)."""
    return 128 * r * (n + p + 2) + 1024 * 1024


class ScryptHasher(_ImportedHasher):
    """scrypt as php-scrypt computes it: ``scrypt(password, salt, N, r, p, length)`` as hex, the
    salt used as given (Appwrite ``Hashes/Scrypt``)."""

    algorithm = "scrypt"

    def verify(self, password, encoded):
        _, n, r, p, length, salt, digest = encoded.split("$", 6)
        n, r, p, length = int(n), int(r), int(p), int(length)
        derived = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=n, r=r, p=p, dklen=length,
                                 maxmem=scrypt_maxmem(n, r, p))
        return _equal(derived.hex(), digest.lower())


def firebase_scrypt(password: str, salt: bytes, separator: bytes, signer_key: bytes) -> bytes:
    """Firebase's modified scrypt: ``scrypt(password, salt + separator, N=2**14, r=8, p=1, 64)``,
    whose first 32 bytes key AES-256-CTR (zero IV) over the signer key. Returns the cipher text
    (Firebase ``firebase/scrypt``; Appwrite ``Hashes/ScryptModified``)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    derived = hashlib.scrypt(password.encode(), salt=salt + separator, n=16384, r=8, p=1, dklen=64,
                             maxmem=scrypt_maxmem(16384, 8, 1))
    encryptor = Cipher(algorithms.AES(derived[:32]), modes.CTR(b"\x00" * 16)).encryptor()
    return encryptor.update(signer_key) + encryptor.finalize()


class ScryptModifiedHasher(_ImportedHasher):
    """Firebase's modified scrypt (:func:`firebase_scrypt`), compared in base64."""

    algorithm = "scryptMod"

    def verify(self, password, encoded):
        _, salt, separator, signer, digest = encoded.split("$", 4)
        try:
            made = firebase_scrypt(password, base64.b64decode(salt), base64.b64decode(separator),
                                   base64.b64decode(signer))
        except binascii.Error:
            return False
        return _equal(base64.b64encode(made).decode(), digest)
