"""Encryption at rest for OAuth2 secrets: provider client secrets and the access and refresh
tokens that providers hand out (Appwrite keeps these encrypted too).

Fernet (AES-128-CBC + HMAC-SHA256, from ``cryptography``) under a :class:`MultiFernet` of
``OAUTH2_SECRET_KEYS``: the first key encrypts, every key decrypts, so keys rotate without
downtime (add the new key first, run ``manage.py oauthprovider --rotate-keys``, drop the old
key). Without ``OAUTH2_SECRET_KEYS`` one key is derived from ``SECRET_KEY``.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class SecretUnreadable(Exception):
    """A stored secret that none of the configured keys opens (a key was dropped too early)."""


@cache
def _fernet(keys: tuple[str, ...], secret_key: str) -> MultiFernet:
    if not keys:
        derived = hashlib.sha256(b"oauth2-secrets:" + secret_key.encode()).digest()
        keys = (base64.urlsafe_b64encode(derived).decode(),)
    return MultiFernet([Fernet(k) for k in keys])


def _current() -> MultiFernet:
    return _fernet(tuple(settings.OAUTH2_SECRET_KEYS), settings.SECRET_KEY)


def encrypt(plain: str) -> str:
    """The Fernet token (ASCII) of ``plain``; ``""`` stays ``""`` (nothing to hide)."""
    if not plain:
        return ""
    return _current().encrypt(plain.encode()).decode()


def decrypt(token: str) -> str:
    """The plain text of a token made by :func:`encrypt`; ``""`` stays ``""``.

    Raises :class:`SecretUnreadable` when no configured key opens it.
    """
    if not token:
        return ""
    try:
        return _current().decrypt(token.encode()).decode()
    except InvalidToken:
        raise SecretUnreadable("no key in OAUTH2_SECRET_KEYS opens this stored secret") from None


def rotate(token: str) -> str:
    """``token`` re-encrypted under the first key (``""`` stays ``""``).

    Raises :class:`SecretUnreadable` like :func:`decrypt`.
    """
    if not token:
        return ""
    try:
        return _current().rotate(token.encode()).decode()
    except InvalidToken:
        raise SecretUnreadable("no key in OAUTH2_SECRET_KEYS opens this stored secret") from None
