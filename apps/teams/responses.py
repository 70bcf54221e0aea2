"""Appwrite response models of the Teams service: Team and Membership."""

from __future__ import annotations

from apps.core.domain.timefmt import iso
from apps.core.drivers.db import as_bool, as_dt, as_json


def team_model(row: dict) -> dict:
    """``{$id, $createdAt, $updatedAt, name, total, prefs}``; ``total`` counts confirmed members."""
    return {
        "$id": row["uid"],
        "$createdAt": iso(as_dt(row["created_at"])),
        "$updatedAt": iso(as_dt(row["updated_at"])),
        "name": row["name"],
        "total": int(row["total"] or 0),
        "prefs": as_json(row["prefs"]) or {},
    }


# Membership fields a project may hide from session users: model key -> (project flag, row key).
PRIVATE_FIELDS = {
    "userName": ("memberships_user_name", "user_name"),
    "userEmail": ("memberships_user_email", "user_email"),
    "userPhone": ("memberships_user_phone", "user_phone"),
    "userId": ("memberships_user_id", "user_uid"),
    "userAccessedAt": ("memberships_user_accessed_at", "user_accessed_at"),
    "mfa": ("memberships_mfa", None),
}


def membership_model(row: dict, *, project: dict | None = None) -> dict:
    """The ``Membership`` JSON. With ``project`` (a session caller reading a team's members) the
    member fields the project hides (``memberships_*`` settings) are blank, and ``userId`` is
    left out, as Appwrite does; without it (keys, and the answers of write routes) all are sent.
    ``mfa`` is whether the member has turned MFA on."""
    model = {
        "$id": row["uid"],
        "$createdAt": iso(as_dt(row["created_at"])),
        "$updatedAt": iso(as_dt(row["updated_at"])),
        "userId": row["user_uid"],
        "userName": row["user_name"],
        "userEmail": row["user_email"],
        "userPhone": row["user_phone"],
        "teamId": row["team_uid"],
        "teamName": row["team_name"],
        "invited": iso(as_dt(row["invited"])),
        "joined": iso(as_dt(row["joined"])),
        "confirm": as_bool(row["confirm"]),
        "mfa": as_bool(row.get("user_mfa")),
        "userAccessedAt": iso(as_dt(row["user_accessed_at"])),
        "roles": as_json(row["roles"]) or [],
    }
    if project is not None:
        for key, (flag, _) in PRIVATE_FIELDS.items():
            if not project.get(flag):
                if key == "userId":
                    del model["userId"]
                else:
                    model[key] = False if key == "mfa" else ""
    return model
