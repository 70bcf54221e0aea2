"""Authentication policies of the caller's project: ``/v1/project/policies`` (scopes
``policies.read``/``policies.write``; Appwrite also accepts ``project.policies.*``).

Each policy is a view of the project's authentication settings (:class:`apps.projects.models.Project`
``auth_*`` and ``memberships_*`` fields, the same ones the admin edits):

=========================  ===========================================================
policy                     fields
=========================  ===========================================================
password-dictionary        ``enabled`` -> ``auth_password_dictionary``
password-history           ``total`` (1-20, ``null`` = off) -> ``auth_password_history``
password-personal-data     ``enabled`` -> ``auth_personal_data_check``
password-strength          ``min`` (8-256) -> ``auth_password_min_length``
session-alert              ``enabled`` -> ``auth_session_alerts``
session-duration           ``duration`` (60-31536000 s) -> ``auth_duration``
session-invalidation       ``enabled`` -> ``auth_invalidate_sessions``
session-limit              ``total`` (1-100) -> ``auth_max_sessions``
user-limit                 ``total`` (0 or ``null`` = no limit) -> ``auth_limit``
membership-privacy         ``userId`` ``userEmail`` ``userPhone`` ``userName`` ``userMFA``
                           ``userAccessedAt`` -> ``memberships_*``
=========================  ===========================================================

Policies this server does not enforce (password-pwned, password-rotation, the deny-*-email
ones, passkey, character classes of password-strength, a custom dictionary ``denyList``) read
as off; turning one on is 400 ``general_feature_unsupported``, never a silent no-op.
Updates answer the project model (the SDK's ``update*Policy``), except password-strength
which answers its policy. An unknown policy ID is 400 ``general_argument_invalid``.
"""

from __future__ import annotations

from typing import Annotated

from django.conf import settings
from pydantic import Field

from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import json_response
from apps.core.http.inputs import Bool, Strict
from apps.projects.api.common import orm
from apps.projects.api.project import load, project_model, save

_PRIVACY = {"userId": "memberships_user_id", "userEmail": "memberships_user_email",
            "userPhone": "memberships_user_phone", "userName": "memberships_user_name",
            "userMFA": "memberships_mfa", "userAccessedAt": "memberships_user_accessed_at"}


def policies_of(p) -> list[dict]:
    """Every policy of project ``p``, in Appwrite's order."""
    return [
        {"$id": "password-dictionary", "enabled": p.auth_password_dictionary, "denyList": []},
        {"$id": "password-history", "total": p.auth_password_history},
        {"$id": "password-strength", "min": p.auth_password_min_length, "uppercase": False, "lowercase": False,
         "number": False, "symbols": False},
        {"$id": "password-personal-data", "enabled": p.auth_personal_data_check, "denyList": []},
        {"$id": "password-pwned", "enabled": False, "sessions": False, "users": False},
        {"$id": "password-rotation", "enabled": False, "maxAge": 0},
        {"$id": "session-alert", "enabled": p.auth_session_alerts},
        {"$id": "session-duration", "duration": p.auth_duration or settings.SESSION_DURATION},
        {"$id": "session-invalidation", "enabled": p.auth_invalidate_sessions},
        {"$id": "session-limit", "total": p.auth_max_sessions},
        {"$id": "user-limit", "total": p.auth_limit},
        {"$id": "membership-privacy", **{name: bool(getattr(p, column)) for name, column in _PRIVACY.items()}},
        {"$id": "mfa-factors", "totp": True, "email": True, "phone": True, "custom": False},
        {"$id": "deny-aliased-email", "enabled": False},
        {"$id": "deny-disposable-email", "enabled": False},
        {"$id": "deny-free-email", "enabled": False},
        {"$id": "deny-corporate-email", "enabled": False},
        {"$id": "passkey", "rpId": "", "origins": []},
    ]


class PolicyRef(Strict):
    policyId: str


class Enabled(Strict):
    enabled: Bool


class EnabledDenyList(Strict):
    enabled: Bool
    denyList: list[str] | None = None


class History(Strict):
    total: Annotated[int, Field(ge=1, le=20)] | None


class Strength(Strict):
    min: Annotated[int, Field(ge=8, le=256)] | None = None
    uppercase: Bool | None = None
    lowercase: Bool | None = None
    number: Bool | None = None
    symbols: Bool | None = None


class Duration(Strict):
    duration: Annotated[int, Field(ge=60, le=31536000)]


class SessionLimit(Strict):
    total: Annotated[int, Field(ge=1, le=100)]


class UserLimit(Strict):
    total: Annotated[int, Field(ge=0, le=2**31 - 1)] | None


class Privacy(Strict):
    userId: Bool | None = None
    userEmail: Bool | None = None
    userPhone: Bool | None = None
    userName: Bool | None = None
    userMFA: Bool | None = None
    userAccessedAt: Bool | None = None


class MfaFactors(Strict):
    totp: Bool | None = None
    email: Bool | None = None
    phone: Bool | None = None
    custom: Bool | None = None


class Pwned(Strict):
    enabled: Bool
    sessions: Bool | None = None
    users: Bool | None = None


class Rotation(Strict):
    enabled: Bool
    maxAge: int | None = None


class Passkey(Strict):
    rpId: str = ""


def _unsupported(what: str) -> AppwriteError:
    return AppwriteError("general_feature_unsupported", f"The {what} policy is not supported by this server.")


def _changes(policy: str, p) -> dict:  # noqa: C901, PLR0911, PLR0912  (one branch per policy)
    """The project fields a policy update sets; raises for what this server cannot enforce."""
    if policy in ("password-dictionary", "password-personal-data"):
        if p.denyList:
            raise _unsupported(f"{policy} denyList")
        return {"auth_password_dictionary" if policy == "password-dictionary" else "auth_personal_data_check": p.enabled}
    if policy == "password-history":
        return {"auth_password_history": p.total or 0}
    if policy == "password-strength":
        if p.uppercase or p.lowercase or p.number or p.symbols:
            raise _unsupported("password-strength character class")
        return {"auth_password_min_length": p.min} if p.min is not None else {}
    if policy in ("session-alert", "session-invalidation"):
        return {"auth_session_alerts" if policy == "session-alert" else "auth_invalidate_sessions": p.enabled}
    if policy == "session-duration":
        return {"auth_duration": p.duration}
    if policy == "session-limit":
        return {"auth_max_sessions": p.total}
    if policy == "user-limit":
        return {"auth_limit": p.total or 0}
    if policy == "membership-privacy":
        return {column: getattr(p, name) for name, column in _PRIVACY.items() if getattr(p, name) is not None}
    if policy == "mfa-factors":
        if p.custom or False in (p.totp, p.email, p.phone):
            raise _unsupported("mfa-factors (totp, email and phone are always on, custom off)")
        return {}
    if policy in ("password-pwned", "password-rotation") or policy.startswith("deny-"):
        if p.enabled:
            raise _unsupported(policy)
        return {}
    if policy == "passkey":
        if p.rpId:
            raise _unsupported(policy)
        return {}
    raise invalid_argument("policyId", f"Value must be one of ({', '.join(POLICY_IDS)})")


# policy ID -> its input schema
INPUTS = {
    "password-dictionary": EnabledDenyList, "password-history": History, "password-personal-data": EnabledDenyList,
    "password-strength": Strength, "password-pwned": Pwned, "password-rotation": Rotation,
    "session-alert": Enabled, "session-duration": Duration, "session-invalidation": Enabled,
    "session-limit": SessionLimit, "user-limit": UserLimit, "membership-privacy": Privacy, "mfa-factors": MfaFactors,
    "deny-aliased-email": Enabled, "deny-corporate-email": Enabled, "deny-disposable-email": Enabled,
    "deny-free-email": Enabled, "passkey": Passkey,
}
POLICY_IDS = tuple(INPUTS)


async def policies_list(ctx):
    found = policies_of(await orm(ctx, load, ctx))
    return json_response({"total": len(found) if ctx.params.total else 0, "policies": found})


async def policy_get(ctx):
    policy_id = ctx.params.policyId
    for policy in policies_of(await orm(ctx, load, ctx)):
        if policy["$id"] == policy_id:
            return json_response(policy)
    raise invalid_argument("policyId", f"Value must be one of ({', '.join(POLICY_IDS)})")


def updater(policy: str):
    """The ``PATCH /project/policies/<policy>`` handler."""
    async def update(ctx):
        changes = _changes(policy, ctx.params)
        project = await orm(ctx, save, ctx, changes) if changes else await orm(ctx, load, ctx)
        if policy == "password-strength":
            return json_response(next(p for p in policies_of(project) if p["$id"] == policy))
        return json_response(project_model(project))

    update.__name__ = "policy_update_" + policy.replace("-", "_")
    return update
