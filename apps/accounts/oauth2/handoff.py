"""The token flow's hand-off secret: what ``success`` receives as ``secret``.

As Appwrite 1.9.6 does, the one-time token's secret travels wrapped in a short-lived HS256 JWT
``{secret, provider}`` (60 s), so ``POST /account/sessions/token`` can name the session after the
provider. The signing key is derived from ``SECRET_KEY`` for this use only, so account JWTs and
hand-off secrets can never stand in for each other.
"""

from __future__ import annotations

import hashlib
import time

import jwt
from django.conf import settings

MAX_AGE = 60  # seconds


def _key() -> bytes:
    return hashlib.sha256(b"oauth2-handoff:" + settings.SECRET_KEY.encode()).digest()


def wrap(secret: str, provider: str) -> str:
    """The JWT to hand to ``success``."""
    issued = int(time.time())
    return jwt.encode({"secret": secret, "provider": provider, "iat": issued, "exp": issued + MAX_AGE},
                      _key(), algorithm="HS256")


def unwrap(value: str) -> tuple[str, str] | None:
    """``(secret, provider)`` from a valid, unexpired hand-off JWT; ``None`` for anything else
    (a plain token secret, a code, an expired or forged JWT)."""
    if value.count(".") != 2:
        return None
    try:
        claims = jwt.decode(value, _key(), algorithms=["HS256"], options={"require": ["exp", "secret", "provider"]})
    except jwt.PyJWTError:
        return None
    secret, provider = claims.get("secret"), claims.get("provider")
    if not isinstance(secret, str) or not isinstance(provider, str) or not secret or not provider:
        return None
    return secret, provider
