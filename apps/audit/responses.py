"""The Appwrite ``Log`` model."""

from __future__ import annotations

from apps.audit.clients import country, describe
from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_dt


def log_model(row: dict) -> dict:
    """``{event, userId, userEmail, userName, mode, userType, ip, time}`` plus the client's
    ``os*``/``client*``/``device*`` and ``countryCode``/``countryName`` fields."""
    code, name = country(row["ip"])
    return {
        "event": row["event"],
        "userId": row["actor_uid"],
        "userEmail": row["actor_email"],
        "userName": row["actor_name"],
        "mode": row["mode"],
        "userType": row["actor_type"],
        "ip": row["ip"],
        "time": iso(as_dt(row["time"])),
        **describe(row["user_agent"]),
        "countryCode": code,
        "countryName": name,
    }
