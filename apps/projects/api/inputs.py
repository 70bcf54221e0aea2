"""Input schemas of the Project service (Appwrite 1.9's limits)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from apps.accounts.api.inputs import Email, IdParam, Name
from apps.core.domain.ids import NewId
from apps.core.domain.mail import DEFAULT_LANGUAGE, locale_codes
from apps.core.http.auth import KEY_SCOPES
from apps.core.http.inputs import Bool, Datetime, Int, LooseBool, Strict

MAX_SCOPES = 200  # Appwrite's APP_LIMIT_ARRAY_SCOPES_SIZE
# Checked with fullmatch: re's "$" also matches before a final newline ("+15550100\n" passed).
_HOSTNAME = re.compile(r"^(\*|(\*\.)?[A-Za-z0-9_]([A-Za-z0-9_-]{0,62})(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,62}))*)$")
_PHONE = re.compile(r"^\+[1-9][0-9]{5,14}$")
_OTP = re.compile(r"^[0-9]{6}$")


def _scope(value: str) -> str:
    if value not in KEY_SCOPES:
        raise ValueError(f"Value must be one of ({', '.join(sorted(KEY_SCOPES))})")
    return value


def _hostname(value: str) -> str:
    if len(value) > 256 or not _HOSTNAME.fullmatch(value):
        raise ValueError("Value must be a valid hostname without path, port and protocol.")
    return value.lower()


def _phone(value: str) -> str:
    if not _PHONE.fullmatch(value):
        raise ValueError("Phone number must start with a '+' and can have a maximum of fifteen digits.")
    return value


def _otp(value: str) -> str:
    if not _OTP.fullmatch(value):
        raise ValueError("OTP must be a 6-digit number.")
    return value


Scope = Annotated[str, AfterValidator(_scope)]
Scopes = Annotated[list[Scope], Field(max_length=MAX_SCOPES)]
Hostname = Annotated[str, AfterValidator(_hostname)]
Phone = Annotated[str, AfterValidator(_phone)]
Otp = Annotated[str, AfterValidator(_otp)]
Text256 = Annotated[str, StringConstraints(max_length=256)]
Ident = Annotated[str, StringConstraints(min_length=1, max_length=256)]
NonBlankName = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Total = Annotated[int, Field(ge=0, le=2**31 - 1)]


class ListParams(Strict):
    queries: list[str] | None = None
    total: LooseBool = True


# --- keys -------------------------------------------------------------------------------------
class KeyRef(Strict):
    keyId: IdParam


class KeyCreate(Strict):
    keyId: NewId = "unique()"
    name: Name
    scopes: Scopes
    expire: Datetime | None = None


class KeyUpdate(KeyRef):
    name: Name
    scopes: Scopes
    expire: Datetime | None = None
    description: Text256 | None = None


class EphemeralKeyCreate(Strict):
    scopes: Scopes
    duration: Annotated[int, Field(ge=1, le=3600)]


# --- platforms --------------------------------------------------------------------------------
class PlatformRef(Strict):
    platformId: IdParam


class WebPlatform(Strict):
    platformId: NewId
    name: NonBlankName
    hostname: Hostname


class AndroidPlatform(Strict):
    platformId: NewId
    name: NonBlankName
    applicationId: Ident
    fingerprints: Annotated[list[Annotated[str, StringConstraints(min_length=1, max_length=256)]],
                            Field(max_length=100)] = []


class ApplePlatform(Strict):
    platformId: NewId
    name: NonBlankName
    bundleIdentifier: Ident


class LinuxPlatform(Strict):
    platformId: NewId
    name: NonBlankName
    packageName: Ident


class WindowsPlatform(Strict):
    platformId: NewId
    name: NonBlankName
    packageIdentifierName: Ident


class WebPlatformUpdate(WebPlatform):
    platformId: IdParam


class AndroidPlatformUpdate(AndroidPlatform):
    platformId: IdParam


class ApplePlatformUpdate(ApplePlatform):
    platformId: IdParam


class LinuxPlatformUpdate(LinuxPlatform):
    platformId: IdParam


class WindowsPlatformUpdate(WindowsPlatform):
    platformId: IdParam


# --- variables and mock phones ----------------------------------------------------------------
class VariableRef(Strict):
    variableId: IdParam


class VariableCreate(Strict):
    variableId: NewId
    key: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    value: Annotated[str, StringConstraints(max_length=8192)]
    secret: Bool = True
    description: Text256 = ""


class VariableUpdate(VariableRef):
    key: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = None
    value: Annotated[str, StringConstraints(max_length=8192)] | None = None
    secret: Bool | None = None
    description: Text256 | None = None


class MockRef(Strict):
    number: Phone


class MockCreate(MockRef):
    otp: Otp


# --- project, auth methods, SMTP, templates ---------------------------------------------------
class Labels(Strict):
    labels: Annotated[list[Annotated[str, StringConstraints(min_length=1, max_length=36, pattern=r"^[A-Za-z0-9]+$")]],
                      Field(max_length=1000)]


class AuthMethod(Strict):
    methodId: str
    enabled: Bool


class ServiceStatus(Strict):
    serviceId: str
    enabled: Bool


class ProtocolStatus(Strict):
    protocolId: str
    enabled: Bool


class Smtp(Strict):
    host: Annotated[str, StringConstraints(max_length=256)] | None = None
    port: Annotated[Int, Field(ge=1, le=65535)] | None = None  # Appwrite: a strict Integer
    username: Text256 | None = None
    password: Text256 | None = None
    senderEmail: Email | None = None
    senderName: Text256 | None = None
    replyToEmail: Email | None = None
    replyToName: Text256 | None = None
    secure: str | None = None
    enabled: Bool | None = None


class SmtpTest(Strict):
    emails: Annotated[list[Email], Field(min_length=1, max_length=10)]


def _template_locale(value: str) -> str:
    """One of Appwrite's locale codes (``GET /v1/locale/codes``; any case), as Appwrite's
    whitelist requires; empty means its fallback, ``en``."""
    if not value:
        return DEFAULT_LANGUAGE
    if value.lower() not in locale_codes():
        raise ValueError("Value must be one of the locale codes of GET /v1/locale/codes (en, de, pt-br, ...)")
    return value


class TemplateRef(Strict):
    templateId: str
    locale: Annotated[str, StringConstraints(max_length=16), AfterValidator(_template_locale)] = "en"


class TemplateUpdate(TemplateRef):
    subject: Annotated[str, StringConstraints(max_length=256)] | None = None
    message: Annotated[str, StringConstraints(max_length=10_000_000)] | None = None
    senderName: Text256 | None = None
    senderEmail: Email | None = None
    replyToEmail: Email | None = None
    replyToName: Text256 | None = None
