"""Appwrite response models for accounts: User and Session."""

from __future__ import annotations

from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_bool, as_dt, as_json


def provider_token(token: str | None, shown: bool = True) -> str:
    """An OAuth2 provider token in clear (stored encrypted); ``""`` when none or unreadable, or
    not ``shown`` (another user's session or identity, seen by an impersonator)."""
    if not token or not shown:
        return ""
    from apps.accounts.oauth2.crypto import SecretUnreadable, decrypt

    try:
        return decrypt(token)
    except SecretUnreadable:
        return ""


def user_model(row: dict) -> dict:
    """The Appwrite ``User`` JSON for a user row. ``prefs`` and ``targets`` are always sent
    (the Python SDK fails without ``prefs``; ``null`` fails for non-optional lists);
    ``targets`` is ``[]`` until :func:`with_targets` fills it."""
    return {
        "$id": row["uid"],
        "$createdAt": iso(as_dt(row["created_at"])),
        "$updatedAt": iso(as_dt(row["updated_at"])),
        "name": row["name"],
        "registration": iso(as_dt(row["registration"])),
        "status": as_bool(row["status"]),
        "labels": as_json(row["labels"]) or [],
        "passwordUpdate": iso(as_dt(row["password_update"])),
        "email": row["email"],
        "phone": row["phone"],
        "emailVerification": as_bool(row["email_verification"]),
        "phoneVerification": as_bool(row["phone_verification"]),
        "mfa": as_bool(row.get("mfa")),
        "prefs": as_json(row["prefs"]) or {},
        "targets": [],
        "accessedAt": iso(as_dt(row["accessed_at"])),
        "impersonator": as_bool(row.get("impersonator")),
    }


async def with_targets(ctx, models: list[dict], rows: list[dict]) -> list[dict]:
    """Fill the ``targets`` of the User ``models`` built from ``rows`` with the users' messaging
    targets (Appwrite's User model carries them), in one query for all of them; returns
    ``models``."""
    from apps.messaging.api.targets import user_targets

    found = await user_targets(ctx, rows)
    for model, row in zip(models, rows, strict=True):
        model["targets"] = found[row["id"]]
    return models


async def full_user_model(ctx, row: dict) -> dict:
    """:func:`user_model` of one user with its targets (from the read cache, or one query)."""
    return (await with_targets(ctx, [user_model(row)], [row]))[0]


def session_model(row: dict, *, user_uid: str, current_id: int | None, secret: str = "",
                  provider_tokens: bool = True) -> dict:
    """The Appwrite ``Session`` JSON. ``secret`` is the token, filled only for API-key callers;
    ``current`` marks the session the request authenticated with. ``provider_tokens=False``
    (someone else's sessions: an impersonator) blanks the OAuth2 provider's tokens."""
    return {
        "$id": row["uid"],
        "$createdAt": iso(as_dt(row["created_at"])),
        "$updatedAt": iso(as_dt(row["updated_at"])),
        "userId": user_uid,
        "expire": iso(as_dt(row["expire"])),
        "provider": row["provider"],
        "providerUid": row["provider_uid"],
        "providerAccessToken": provider_token(row.get("provider_access_token"), provider_tokens),
        "providerAccessTokenExpiry": iso(as_dt(row.get("provider_access_token_expiry"))),
        "providerRefreshToken": provider_token(row.get("provider_refresh_token"), provider_tokens),
        "ip": row["ip"],
        "osCode": "",
        "osName": "",
        "osVersion": "",
        "clientType": "",
        "clientCode": "",
        "clientName": "",
        "clientVersion": "",
        "clientEngine": "",
        "clientEngineVersion": "",
        "deviceName": "",
        "deviceBrand": "",
        "deviceModel": "",
        "countryCode": "--",
        "countryName": "Unknown",
        "current": current_id is not None and row["id"] == current_id,
        "factors": as_json(row["factors"]) or [],
        "secret": secret,
        "mfaUpdatedAt": iso(as_dt(row.get("mfa_updated_at"))),
    }


def token_model(row: dict, *, user_uid: str, secret: str = "") -> dict:
    """The Appwrite ``Token`` JSON ``{$id, $createdAt, userId, secret, expire, phrase}``.
    ``secret`` is the clear secret, sent only to API-key callers (Appwrite treats it as sensitive)."""
    return {
        "$id": row["uid"],
        "$createdAt": iso(as_dt(row["created_at"])),
        "userId": user_uid,
        "secret": secret,
        "expire": iso(as_dt(row["expire"])),
        "phrase": row["phrase"],
    }
