"""Who is calling: the resolved credential, its roles and its scopes.

The accounts app resolves credentials into an :class:`Auth`; everything downstream (scope checks,
permissions, abuse keys) reads only this object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Appwrite app/config/roles.php, reduced to the services this server implements.
GUEST_SCOPES = frozenset({
    "global", "public", "home", "sessions.write", "documents.read", "documents.write",
    "rows.read", "rows.write", "files.read", "files.write", "locale.read", "avatars.read",
    "execution.read", "execution.write",
})
USER_SCOPES = GUEST_SCOPES | {"account", "teams.read", "teams.write", "subscribers.write"}

# Scopes an API key may hold (Appwrite app/config/scopes.php, the implemented subset).
KEY_SCOPES = frozenset({
    "sessions.write", "users.read", "users.write", "teams.read", "teams.write",
    "databases.read", "databases.write", "collections.read", "collections.write",
    "tables.read", "tables.write", "attributes.read", "attributes.write",
    "columns.read", "columns.write", "indexes.read", "indexes.write",
    "documents.read", "documents.write", "rows.read", "rows.write",
    "buckets.read", "buckets.write", "files.read", "files.write", "health.read",
    "locale.read", "avatars.read", "tokens.read", "tokens.write",
    # the Project and Webhooks services (Appwrite 1.9)
    "project.read", "project.write", "keys.read", "keys.write", "platforms.read", "platforms.write",
    "policies.read", "policies.write", "templates.read", "templates.write", "mocks.read", "mocks.write",
    "project.oauth2.read", "project.oauth2.write", "webhooks.read", "webhooks.write",
    "functions.read", "functions.write", "execution.read", "execution.write",
    "providers.read", "providers.write", "topics.read", "topics.write", "subscribers.read", "subscribers.write",
    "messages.read", "messages.write", "targets.read", "targets.write",
})
# Always granted to a valid key, as Appwrite grants them to every API key.
KEY_BASE_SCOPES = frozenset({"global", "public", "home"})


@dataclass(slots=True)
class Auth:
    """The caller: ``kind`` is ``"guest"``, ``"session"``, ``"jwt"`` or ``"key"``.

    ``user``/``session``/``key`` are the loaded rows (dicts) when present; ``roles`` are the
    Appwrite role strings the caller holds (``any``, ``guests`` or ``users``, ``user:<id>``...).

    While a user impersonates another (Appwrite 1.9's ``X-Appwrite-Impersonate-User-*``
    headers), ``user`` and ``roles`` are the target's: the request runs as them. ``session``
    stays the impersonator's own session and ``impersonator`` their user row; audit entries,
    the request log and rate limits name :attr:`actor`, the impersonator.
    """

    kind: str = "guest"
    user: dict[str, Any] | None = None
    session: dict[str, Any] | None = None
    key: dict[str, Any] | None = None
    scopes: frozenset[str] = GUEST_SCOPES
    roles: list[str] = field(default_factory=lambda: ["any", "guests"])
    impersonator: dict[str, Any] | None = None

    @property
    def is_key(self) -> bool:
        return self.kind == "key"

    @property
    def user_id(self) -> str:
        return self.user["uid"] if self.user else ""

    @property
    def actor(self) -> dict[str, Any] | None:
        """The user who sent the request: the impersonator while impersonating, else ``user``."""
        return self.impersonator if self.impersonator is not None else self.user

    @property
    def role_label(self) -> str:
        """How Appwrite names the caller in scope errors: ``guests``, ``users`` or ``key``."""
        if self.is_key:
            return "key"
        return "users" if self.user else "guests"


def user_roles(user_id: str, *, verified: bool, labels: list[str], memberships: list[Any] | tuple[Any, ...] = ()) -> list[str]:
    """Roles held by a signed-in user (Appwrite Documents/User.php ``getRoles``): ``any``,
    ``users``, ``users/<verified|unverified>``, ``user:<id>``, ``user:<id>/<verified|unverified>``,
    ``label:<name>`` per label, and per confirmed membership ``team:<teamId>``,
    ``team:<teamId>/<role>`` for each of its roles and ``member:<membershipId>``.

    ``memberships`` is a list of ``[teamId, membershipId, [role, ...]]`` (confirmed ones only),
    as :func:`memberships_sql` yields them.
    """
    state = "verified" if verified else "unverified"
    roles = ["any", "users", f"users/{state}", f"user:{user_id}", f"user:{user_id}/{state}"]
    roles.extend(f"label:{label}" for label in labels)
    for team, membership, team_roles in memberships:
        roles.append(f"team:{team}")
        roles.extend(f"team:{team}/{role}" for role in team_roles)
        roles.append(f"member:{membership}")
    return roles


# The user's confirmed memberships as one SQL expression over the user row alias ``u`` (a JSON
# text array of ``[teamId, membershipId, roles]``), per database vendor. The teams app installs
# it at startup (``TeamsConfig.ready``) so that the session lookup in ``accounts`` reads a
# caller's team roles in its one query without ``accounts`` knowing the teams tables.
_memberships_sql: dict[str, str] = {}


def set_memberships_sql(by_vendor: dict[str, str]) -> None:
    """Install the memberships expression (``{"postgresql": sql, "sqlite": sql}``)."""
    _memberships_sql.clear()
    _memberships_sql.update(by_vendor)


def memberships_sql(vendor: str) -> str:
    """The expression for ``vendor``; ``NULL`` (no memberships) when none is installed."""
    return _memberships_sql.get(vendor, "NULL")


def team_tag(project_id: int, team_uid: str) -> str:
    """The cache invalidation tag (``apps.core.drivers.cache``) of every cached credential that carries
    a role of team ``team_uid``; invalidated when the team is deleted."""
    return f"team-roles:{project_id}:{team_uid}"
