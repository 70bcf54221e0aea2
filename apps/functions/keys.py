"""Dynamic API keys: the short-lived key an execution gets (Appwrite's ``dynamic_`` keys).

A dynamic key is ``dynamic_<JWT>``: HS256 over a key derived from ``SECRET_KEY`` for this use
only (a user JWT is never a valid dynamic key, nor the reverse), with the project's ID, the
function's declared ``scopes`` and an expiry of the function's timeout plus
``FUNCTIONS_KEY_GRACE`` seconds. Nothing is stored: it cannot be revoked before it expires.
It reaches the function as the ``x-appwrite-key`` request header and as
``APPWRITE_FUNCTION_API_KEY``.
"""

from __future__ import annotations

import hashlib
import hmac
import time

import jwt
from django.conf import settings

PREFIX = "dynamic_"


def _signing_key() -> bytes:
    return hmac.new(settings.SECRET_KEY.encode(), b"appwrite-functions-dynamic-key", hashlib.sha256).digest()


def make_key(*, project_uid: str, function_uid: str, execution_uid: str, scopes: list[str], duration: int) -> str:
    now = int(time.time())
    claims = {"projectId": project_uid, "functionId": function_uid, "executionId": execution_uid,
              "scopes": sorted(scopes), "iat": now, "exp": now + duration}
    return PREFIX + jwt.encode(claims, _signing_key(), algorithm="HS256")


def read_key(secret: str, *, project_uid: str) -> dict | None:
    """The claims of a valid, unexpired dynamic key of ``project_uid``, else ``None``."""
    if not secret.startswith(PREFIX):
        return None
    try:
        claims = jwt.decode(secret[len(PREFIX):], _signing_key(), algorithms=["HS256"],
                            options={"require": ["exp", "projectId", "scopes"]})
    except jwt.PyJWTError:
        return None
    if claims["projectId"] != project_uid or not isinstance(claims["scopes"], list):
        return None
    return claims
