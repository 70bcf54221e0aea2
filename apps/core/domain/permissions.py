"""Permission strings and roles.

A permission is ``<action>("<role>")``: action ``read``, ``create``, ``update``, ``delete`` or
``write`` (``write`` expands to ``create``/``update``/``delete`` where the resource allows them);
roles are ``any``, ``guests``, ``users[/verified|/unverified]``, ``user:<id>[/verified|/unverified]``,
``team:<id>[/<role>]``, ``member:<id>`` and ``label:<name>``. Items (rows, documents, files)
accept read/update/delete; containers (tables, collections, buckets) also ``create``.
"""

from __future__ import annotations

import re

from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.auth import Auth

ITEM_ACTIONS = ("read", "update", "delete")
CONTAINER_ACTIONS = ("create", "read", "update", "delete")
MAX_PERMISSIONS = 100

_PERMISSION = re.compile(r'^(read|create|update|delete|write)\("([^"]{1,300})"\)$')
_ID = r"[A-Za-z0-9][A-Za-z0-9._-]{0,35}"
_ROLE = re.compile(
    rf"^(any|guests|users(/(verified|unverified))?|user:{_ID}(/(verified|unverified))?"
    rf"|team:{_ID}(/[A-Za-z0-9._-]{{1,81}})?|member:{_ID}|label:[A-Za-z0-9]{{1,36}})$"
)


def is_role(role: str) -> bool:
    """Whether ``role`` is one of Appwrite's roles (``any``, ``users/verified``, ``team:ID/owner``...)."""
    return _ROLE.fullmatch(role) is not None


def parse(permission: str) -> tuple[str, str]:
    """``(action, role)`` of one permission string.

    Raises 400 ``general_argument_invalid`` when it does not parse or names an unknown role.
    """
    found = _PERMISSION.match(permission) if isinstance(permission, str) else None
    if not found or not _ROLE.match(found.group(2)):
        raise invalid_argument("permissions", f"Permission {permission!r} is not valid")
    return found.group(1), found.group(2)


def normalize(permissions: list[str] | None, actions: tuple[str, ...]) -> list[str] | None:
    """Validated, de-duplicated permissions with ``write`` expanded; ``None`` stays ``None``.

    ``actions`` are the actions the resource accepts (:data:`ITEM_ACTIONS` or
    :data:`CONTAINER_ACTIONS`). Raises 400 ``general_argument_invalid``.
    """
    if permissions is None:
        return None
    if not isinstance(permissions, list) or len(permissions) > MAX_PERMISSIONS:
        raise invalid_argument("permissions", f"Value must be an array of at most {MAX_PERMISSIONS} permissions")
    out: list[str] = []
    for item in permissions:
        action, role = parse(item)
        expanded = [a for a in ("create", "update", "delete") if a in actions] if action == "write" else [action]
        if action != "write" and action not in actions:
            raise invalid_argument("permissions", f"Permission action {action!r} is not allowed here")
        for a in expanded:
            text = f'{a}("{role}")'
            if text not in out:
                out.append(text)
    return out


def roles_of(permissions: list[str], action: str) -> list[str]:
    """The roles that ``permissions`` grant ``action`` to."""
    prefix = action + '("'
    return [p[len(prefix):-2] for p in permissions if p.startswith(prefix)]


def allows(auth: Auth, permissions: list[str], action: str) -> bool:
    """True when the caller holds a role that ``permissions`` grant ``action`` to.

    API keys bypass permissions.
    """
    if auth.is_key:
        return True
    granted = roles_of(permissions, action)
    return any(role in granted for role in auth.roles)


def check_grantable(auth: Auth, permissions: list[str]) -> None:
    """A non-key caller may only grant roles it holds (Appwrite Documents/Create.php).

    Raises 401 ``user_unauthorized``.
    """
    if auth.is_key:
        return
    held = set(auth.roles)
    for permission in permissions:
        _, role = parse(permission)
        if role not in held:
            raise AppwriteError(
                "user_unauthorized",
                f"Permissions must be one of: ({', '.join(auth.roles)})",
            )


def default_item_permissions(auth: Auth) -> list[str]:
    """Permissions of an item created without any: the session user's read/update/delete;
    nothing for API keys and guests."""
    if auth.user is None:
        return []
    uid = auth.user_id
    return [f'{a}("user:{uid}")' for a in ITEM_ACTIONS]


def item_read_roles(container_permissions: list[str], item_security: bool, item_permissions: list[str]) -> list[str]:
    """Roles that may read an item: the container's read roles, plus the item's own when
    rowSecurity/documentSecurity/fileSecurity is on. Realtime delivers an item's
    events to exactly these roles (``WriteEvent.extra["read_roles"]``)."""
    roles = roles_of(container_permissions, "read")
    if item_security:
        roles += [r for r in roles_of(item_permissions, "read") if r not in roles]
    return roles
