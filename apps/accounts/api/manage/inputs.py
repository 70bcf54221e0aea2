"""Input schemas of the Users service (server routes, API keys). Limits are Appwrite's."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints, WithJsonSchema

from apps.accounts.api.inputs import EMAIL_SCHEMA, Email, IdParam, Name
from apps.core.domain.ids import NewId
from apps.core.http.inputs import Bool, Int, LooseBool, Strict

_PHONE = re.compile(r"^\+[1-9]\d{6,14}$")
_LABEL = re.compile(r"^[A-Za-z0-9]{1,36}$")
MAX_LABELS = 1000


def _phone(value: str) -> str:
    if not _PHONE.fullmatch(value):
        raise ValueError("Phone number must start with a '+' and can have a maximum of fifteen digits.")
    return value


def _phone_or_empty(value: str) -> str:
    return value if value == "" else _phone(value)


def _email_or_empty(value: str) -> str:
    from apps.accounts.api.inputs import _email

    return value if value == "" else _email(value)


def _password_or_empty(value: str) -> str:
    if value and not 8 <= len(value) <= 256:
        raise ValueError("Password must be between 8 and 256 characters long.")
    return value


def _label(value: str) -> str:
    if not _LABEL.fullmatch(value):
        raise ValueError("Value must be a valid string and at most 36 chars. Only chars A-Z, a-z and 0-9 are allowed")
    return value


Phone = Annotated[str, StringConstraints(max_length=16), AfterValidator(_phone),
                  WithJsonSchema({"type": "string", "pattern": _PHONE.pattern})]
PhoneOrEmpty = Annotated[str, StringConstraints(max_length=16), AfterValidator(_phone_or_empty),
                         WithJsonSchema({"type": "string", "pattern": rf"^$|{_PHONE.pattern}"})]
EmailOrEmpty = Annotated[str, StringConstraints(max_length=320), AfterValidator(_email_or_empty), WithJsonSchema(
    {"type": "string", "maxLength": 320, "anyOf": [{"maxLength": 0}, EMAIL_SCHEMA]})]
PasswordOrEmpty = Annotated[str, StringConstraints(max_length=256), AfterValidator(_password_or_empty)]
HashParam = Annotated[str, StringConstraints(min_length=8, max_length=256)]
Text128 = Annotated[str, StringConstraints(max_length=128)]
Search = Annotated[str, StringConstraints(max_length=256)]
Label = Annotated[str, AfterValidator(_label), WithJsonSchema({"type": "string", "pattern": _LABEL.pattern})]


class UserRef(Strict):
    userId: IdParam


class UsersList(Strict):
    queries: list[str] | None = None
    search: Search = ""
    total: LooseBool = True


class UserCreate(Strict):
    userId: NewId
    email: EmailOrEmpty | None = None
    phone: PhoneOrEmpty | None = None
    password: PasswordOrEmpty | None = None
    name: Name = ""


class HashedUserCreate(Strict):
    """``POST /users/argon2``, ``/bcrypt``, ``/md5``, ``/phpass``: ``password`` is the hash."""

    userId: NewId
    email: Email
    password: HashParam
    name: Name = ""


class ShaUserCreate(HashedUserCreate):
    passwordVersion: Annotated[str, StringConstraints(max_length=16)] = ""


class ScryptUserCreate(HashedUserCreate):
    passwordSalt: Text128
    passwordCpu: Int
    passwordMemory: Int
    passwordParallel: Int
    passwordLength: Int


class ScryptModifiedUserCreate(HashedUserCreate):
    passwordSalt: Text128
    passwordSaltSeparator: Text128
    passwordSignerKey: Text128


class NameUpdate(UserRef):
    name: Name


class EmailUpdate(UserRef):
    email: EmailOrEmpty


class PhoneUpdate(UserRef):
    number: PhoneOrEmpty


class PasswordUpdate(UserRef):
    password: PasswordOrEmpty


class StatusUpdate(UserRef):
    status: LooseBool


class ImpersonatorUpdate(UserRef):
    impersonator: LooseBool


class EmailVerificationUpdate(UserRef):
    emailVerification: Bool


class PhoneVerificationUpdate(UserRef):
    phoneVerification: Bool


class LabelsUpdate(UserRef):
    labels: Annotated[list[Label], Field(max_length=MAX_LABELS)]


class PrefsUpdate(UserRef):
    prefs: dict[str, Any]


class SessionsList(UserRef):
    total: LooseBool = True


class SessionRef(UserRef):
    sessionId: IdParam


class TokenCreate(UserRef):
    length: Annotated[int, Field(ge=4, le=128)] = 6
    expire: Annotated[int, Field(ge=60, le=31536000)] = 900


class JwtCreate(UserRef):
    sessionId: Annotated[str, StringConstraints(max_length=36)] = "recent"
    duration: Annotated[int, Field(ge=0, le=3600)] = 900
