"""Provider credentials at rest: AES-256-GCM (``cryptography``) under a key derived with
HKDF-SHA256 from ``MESSAGING_KEY`` (or ``SECRET_KEY`` when that is empty).

A stored value is ``v1:`` + URL-safe base64 of ``nonce (12 bytes) || ciphertext || tag``; the
associated data binds it to its provider row (``<project pk>/<provider uid>``), so a value copied
onto another provider does not decrypt.
"""

from __future__ import annotations

import base64
import os
from functools import lru_cache

import orjson
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

PREFIX = "v1:"


class CredentialsUnreadable(Exception):
    """The stored credentials do not decrypt (the key changed, or the value was tampered with)."""


@lru_cache(maxsize=4)
def _aead(secret: str) -> AESGCM:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"appwrite-messaging", info=b"provider-credentials"
               ).derive(secret.encode())
    return AESGCM(key)


def _cipher() -> AESGCM:
    return _aead(settings.MESSAGING_KEY or settings.SECRET_KEY)


def seal(credentials: dict, *, bound_to: str) -> str:
    """Encrypt a credentials object (JSON data) for the provider named by ``bound_to``."""
    nonce = os.urandom(12)
    sealed = _cipher().encrypt(nonce, orjson.dumps(credentials), bound_to.encode())
    return PREFIX + base64.urlsafe_b64encode(nonce + sealed).decode()


def unseal(value: str, *, bound_to: str) -> dict:
    """The credentials object sealed by :func:`seal`; ``{}`` for an empty value. Raises
    :class:`CredentialsUnreadable`."""
    if not value:
        return {}
    try:
        raw = base64.urlsafe_b64decode(value.removeprefix(PREFIX).encode())
        return orjson.loads(_cipher().decrypt(raw[:12], raw[12:], bound_to.encode()))
    except Exception as exc:
        raise CredentialsUnreadable("the provider's credentials cannot be decrypted with this server's key") from exc
