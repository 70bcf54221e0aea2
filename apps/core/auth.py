"""Who is calling: the resolved credential, its roles and its scopes (contract §3, §7).

The accounts app resolves credentials into an :class:`Auth`; everything downstream (scope checks,
permissions, abuse keys) reads only this object.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Appwrite app/config/roles.php, reduced to the services this server implements.
GUEST_SCOPES = frozenset({
    "global", "public", "home", "sessions.write", "documents.read", "documents.write",
    "rows.read", "rows.write", "files.read", "files.write", "locale.read", "avatars.read",
})
USER_SCOPES = GUEST_SCOPES | {"account", "teams.read", "teams.write"}

# Scopes an API key may hold (Appwrite app/config/scopes.php, the implemented subset).
KEY_SCOPES = frozenset({
    "sessions.write", "users.read", "users.write",
    "databases.read", "databases.write", "collections.read", "collections.write",
    "tables.read", "tables.write", "attributes.read", "attributes.write",
    "columns.read", "columns.write", "indexes.read", "indexes.write",
    "documents.read", "documents.write", "rows.read", "rows.write",
    "buckets.read", "buckets.write", "files.read", "files.write", "health.read",
    "locale.read", "avatars.read", "tokens.read", "tokens.write",
})
# Always granted to a valid key, as Appwrite grants them to every API key.
KEY_BASE_SCOPES = frozenset({"global", "public", "home"})


@dataclass(slots=True)
class Auth:
    """The caller: ``kind`` is ``"guest"``, ``"session"``, ``"jwt"`` or ``"key"``.

    ``user``/``session``/``key`` are the loaded rows (dicts) when present; ``roles`` are the
    Appwrite role strings the caller holds (``any``, ``guests`` or ``users``, ``user:<id>``...).
    """

    kind: str = "guest"
    user: dict | None = None
    session: dict | None = None
    key: dict | None = None
    scopes: frozenset[str] = GUEST_SCOPES
    roles: list[str] = field(default_factory=lambda: ["any", "guests"])

    @property
    def is_key(self) -> bool:
        return self.kind == "key"

    @property
    def user_id(self) -> str:
        return self.user["uid"] if self.user else ""

    @property
    def role_label(self) -> str:
        """How Appwrite names the caller in scope errors: ``guests``, ``users`` or ``key``."""
        if self.is_key:
            return "key"
        return "users" if self.user else "guests"


def user_roles(user_id: str, *, verified: bool, labels: list[str]) -> list[str]:
    """Roles held by a signed-in user (Appwrite Documents/User.php ``getRoles``)."""
    state = "verified" if verified else "unverified"
    roles = ["any", "users", f"users/{state}", f"user:{user_id}", f"user:{user_id}/{state}"]
    roles.extend(f"label:{label}" for label in labels)
    return roles
