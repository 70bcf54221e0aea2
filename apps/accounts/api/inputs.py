"""Input schemas for the account endpoints."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, WithJsonSchema

from apps.core.domain.ids import NewId
from apps.core.http.inputs import Bool, LooseBool, Strict

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")


def _email(value: str) -> str:
    value = value.strip().lower()
    if not _EMAIL.fullmatch(value):
        raise ValueError("Value must be a valid email address")
    return value


# The JSON schema (OpenAPI document) states the rule that the validator applies after trimming.
EMAIL_SCHEMA = {"format": "email", "pattern": r"^\s*[^@\s]+@[^@\s]+\.[^@\s.]+\s*$"}
Email = Annotated[str, StringConstraints(max_length=320), AfterValidator(_email), WithJsonSchema(
    {"type": "string", "maxLength": 320, **EMAIL_SCHEMA})]
Password = Annotated[str, StringConstraints(min_length=8, max_length=256)]
Name = Annotated[str, StringConstraints(max_length=128)]
IdParam = Annotated[str, StringConstraints(min_length=1, max_length=36)]


class AccountCreate(Strict):
    userId: NewId
    email: Email
    password: Password
    name: Name = ""


class EmailSessionCreate(Strict):
    email: Email
    password: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    duration: Annotated[int, Field(ge=0, le=31536000)] | None = None


class TokenSessionCreate(Strict):
    userId: IdParam
    secret: Annotated[str, StringConstraints(min_length=1, max_length=256)]


class Empty(Strict):
    pass


class SessionsList(Strict):
    total: LooseBool = True
    queries: list[str] | None = None


class SessionRef(Strict):
    sessionId: IdParam


class SessionsDelete(Strict):
    current: Bool = True


class JwtCreate(Strict):
    duration: Annotated[int, Field(ge=0, le=3600)] = 900


class NameUpdate(Strict):
    name: Name


class PasswordUpdate(Strict):
    password: Password
    oldPassword: Annotated[str, StringConstraints(max_length=256)] = ""


class EmailUpdate(Strict):
    email: Email
    password: Annotated[str, StringConstraints(min_length=1, max_length=256)]


class PrefsUpdate(Strict):
    prefs: dict[str, Any]


# --- account lifecycle: verification, recovery, sign-in tokens, MFA ---------------------------------
Url = Annotated[str, StringConstraints(min_length=1, max_length=2048)]
Secret = Annotated[str, StringConstraints(min_length=1, max_length=256)]
Phone = Annotated[str, StringConstraints(pattern=r"^\+[0-9]{7,15}$")]


class UrlCreate(Strict):
    url: Url


class TokenConfirm(Strict):
    userId: IdParam
    secret: Secret


class RecoveryCreate(Strict):
    email: Email
    url: Url


class RecoveryConfirm(Strict):
    userId: IdParam
    secret: Secret
    password: Password


class MagicUrlCreate(Strict):
    userId: NewId
    email: Email
    url: Annotated[str, StringConstraints(max_length=2048)] = ""
    phrase: Bool = False


class EmailTokenCreate(Strict):
    userId: NewId
    email: Email
    phrase: Bool = False


class PhoneTokenCreate(Strict):
    userId: NewId
    phone: Phone


class MfaUpdate(Strict):
    mfa: Bool


class AuthenticatorRef(Strict):
    type: Literal["totp"]


class AuthenticatorVerify(Strict):
    type: Literal["totp"]
    otp: Secret


class ChallengeCreate(Strict):
    # Appwrite accepts the factor case-insensitively (the SDKs send "recoverycode").
    factor: Annotated[str, StringConstraints(max_length=32)]


class ChallengeConfirm(Strict):
    challengeId: IdParam
    otp: Secret


class UserRef(Strict):
    userId: IdParam


class UserMfaUpdate(Strict):
    userId: IdParam
    mfa: Bool


class UserAuthenticatorRef(Strict):
    userId: IdParam
    type: Literal["totp"]
