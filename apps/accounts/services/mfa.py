"""Multi-factor authentication rules shared by the Account and Users routes (Appwrite
``src/Appwrite/Auth/MFA``): TOTP (RFC 6238 through pyotp), recovery codes, the factor list."""

from __future__ import annotations

import datetime as dt
import secrets
import time

import pyotp

from apps.core.drivers.db import as_bool, as_json

TOTP = "totp"
EMAIL = "email"
PHONE = "phone"
RECOVERY_CODE = "recoveryCode"
FACTORS = {"totp": TOTP, "email": EMAIL, "phone": PHONE, "recoverycode": RECOVERY_CODE}
RECOVERY_CODES = 6  # codes per set (Appwrite Type::generateBackupCodes)
RECOVERY_CODE_HEX = 10  # characters per code
RECENT_CHALLENGE = 1800  # seconds a completed challenge keeps the session "fresh" (MFA_RECENT_DURATION)


def totp_new() -> str:
    """A new base32 TOTP secret (160 bits, RFC 4226's recommended length)."""
    return pyotp.random_base32(32)


def totp_uri(secret: str, *, account: str, issuer: str) -> str:
    """The ``otpauth://totp/<issuer>:<account>?secret=...&issuer=...`` URI authenticator apps scan
    (SHA-1, 6 digits, 30 s: the defaults every app supports)."""
    return pyotp.TOTP(secret).provisioning_uri(name=account or "user", issuer_name=issuer)


def totp_step(secret: str, code: str) -> int | None:
    """The 30 s time step (unix seconds // 30) whose authenticator code is ``code``, now's or the
    previous one; ``None`` when it is neither. Appwrite accepts only the current step; one step
    back (RFC 6238 §5.2's allowance for transmission delay) spares users whose code turned over
    while they typed it. Callers that must not accept a code twice record the step (RFC 6238
    §5.2: a verifier must not accept the same OTP again), see ``services.totp_step_use``."""
    if not secret or len(code) != 6 or not code.isdigit():
        return None
    totp = pyotp.TOTP(secret)
    current = totp.timecode(dt.datetime.fromtimestamp(time.time(), dt.UTC))
    for step in (current, current - 1):
        if secrets.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def totp_check(secret: str, code: str) -> bool:
    """True when ``code`` is the authenticator's code for now or for the previous 30 s step."""
    return totp_step(secret, code) is not None


def recovery_codes_new() -> list[str]:
    """A fresh set of single-use recovery codes."""
    return [secrets.token_hex(RECOVERY_CODE_HEX // 2) for _ in range(RECOVERY_CODES)]


def factors_of(user: dict, secrets_row: dict) -> dict:
    """Appwrite's MFAFactors model ``{totp, email, phone, recoveryCode}``: which second factors
    the user can use (``secrets_row`` from ``selectors.user_secrets_get``)."""
    return {
        TOTP: as_bool(secrets_row["mfa_totp_verified"]) and bool(secrets_row["mfa_totp_secret"]),
        EMAIL: bool(user["email"]) and as_bool(user["email_verification"]),
        PHONE: bool(user["phone"]) and as_bool(user["phone_verification"]),
        RECOVERY_CODE: bool(as_json(secrets_row["mfa_recovery_codes"])),
        "custom": False,  # newer servers and SDK 27 know custom factors; this server has none
    }
