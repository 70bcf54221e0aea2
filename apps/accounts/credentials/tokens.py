"""Session tokens and JWTs.

A session token is ``base64(json({"id": userId, "secret": secret}))`` (utopia-php/auth
``Store``); only ``sha256(secret)`` is stored. JWTs are HS256 over ``SECRET_KEY`` with the
claims ``userId``, ``sessionId`` (Appwrite's), ``projectId`` (the project's public ID: one
``SECRET_KEY`` signs every project's JWTs, so without it a JWT made in one project would name a
user in any other), ``iat`` and ``exp``.
"""

from __future__ import annotations

import base64
import binascii
import secrets
import time

import jwt
import orjson
from django.conf import settings


def new_secret() -> str:
    """A fresh session secret: 128 hex chars (512 random bits)."""
    return secrets.token_hex(64)


def encode_session_token(user_uid: str, secret: str) -> str:
    return base64.b64encode(orjson.dumps({"id": user_uid, "secret": secret})).decode()


def decode_session_token(token: str) -> tuple[str, str] | None:
    """``(user_uid, secret)`` from a token, or ``None`` when it is malformed."""
    if not token or len(token) > 1024:
        return None
    try:
        data = orjson.loads(base64.b64decode(token + "=" * (-len(token) % 4), validate=False))
    except (binascii.Error, ValueError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    uid, secret = data.get("id"), data.get("secret")
    if not isinstance(uid, str) or not isinstance(secret, str) or not secret:
        return None
    return uid, secret


def encode_jwt(*, project_uid: str, user_uid: str, session_uid: str, duration: int) -> str:
    """An HS256 JWT of ``project_uid``'s user, valid for ``duration`` seconds."""
    now = int(time.time())
    claims = {"userId": user_uid, "sessionId": session_uid, "projectId": project_uid, "iat": now,
              "exp": now + duration}
    return jwt.encode(claims, settings.SECRET_KEY, algorithm="HS256")


def decode_jwt(token: str, *, project_uid: str) -> dict | None:
    """The claims of a valid, unexpired JWT made in project ``project_uid``, or ``None``: a bad
    signature, an expired JWT, missing or mistyped ``userId`` / ``sessionId``, and a
    ``projectId`` other than ``project_uid`` (or none: JWTs made before the claim existed) all
    give ``None``."""
    try:
        claims = jwt.decode(token, settings.SECRET_KEY, algorithms=["HS256"],
                            options={"require": ["exp", "projectId"]})
    except jwt.PyJWTError:
        return None
    if not isinstance(claims.get("userId"), str) or not isinstance(claims.get("sessionId"), str):
        return None
    if claims["projectId"] != project_uid:
        return None
    return claims
