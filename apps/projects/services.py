"""Writes for projects and API keys (used by the admin and the management commands)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.db import IntegrityError, transaction

from apps.core.domain.ids import is_valid_id, unique_id
from apps.core.http.auth import KEY_SCOPES
from apps.projects.models import ApiKey, Platform, Project


class ProjectError(ValueError):
    """Bad input for a project or key operation; the message is for the operator."""


def hash_secret(secret: str) -> str:
    """SHA-256 hex of a key or session secret (the secrets are random, 256+ bits)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def _valid_origin(origin: str) -> bool:
    if origin == "*":
        return True
    scheme, sep, rest = origin.partition("://")
    return bool(sep) and scheme in ("http", "https") and bool(rest) and "/" not in rest


# Authentication settings an operator may set (Project fields) -> (minimum, maximum) for numbers,
# None for booleans. Appwrite's limits: password length 8-256, history at most 20.
AUTH_SETTINGS: dict[str, tuple[int, int] | None] = {
    "auth_limit": (0, 2**31 - 1),
    "auth_max_sessions": (0, 2**31 - 1),
    "auth_duration": (60, 31536000),
    "auth_password_min_length": (8, 256),
    "auth_password_history": (0, 20),
    "auth_password_dictionary": None,
    "auth_personal_data_check": None,
    "auth_invalidate_sessions": None,
    "auth_email_password": None,
    "auth_magic_url": None,
    "auth_email_otp": None,
    "auth_anonymous": None,
    "auth_invites": None,
    "auth_jwt": None,
    "auth_phone": None,
    # What session users see of a team's members (apps.teams.responses.PRIVATE_FIELDS): Appwrite's
    # membershipsUserName, membershipsUserEmail, membershipsMfa, and this server's three more.
    "memberships_user_name": None,
    "memberships_user_email": None,
    "memberships_mfa": None,
    "memberships_user_id": None,
    "memberships_user_phone": None,
    "memberships_user_accessed_at": None,
}


def _check_auth(auth: dict) -> dict:
    unknown = sorted(set(auth) - set(AUTH_SETTINGS))
    if unknown:
        raise ProjectError(f"unknown setting(s) {unknown}")
    for field, value in auth.items():
        bounds = AUTH_SETTINGS[field]
        if bounds is None:
            if not isinstance(value, bool):
                raise ProjectError(f"{field} must be true or false")
        elif isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
            raise ProjectError(f"{field} must be an integer from {bounds[0]} to {bounds[1]}, got {value!r}")
    return auth


def project_auth_update(*, project: Project, auth: dict) -> Project:
    """Set authentication settings (``auth_*`` and ``memberships_*`` fields, see
    :data:`AUTH_SETTINGS`) of ``project``.
    Raises :class:`ProjectError` for an unknown setting or a value out of range. Running servers
    see the change within ``PROJECT_CACHE_TTL`` seconds."""
    if auth:
        for field, value in _check_auth(auth).items():
            setattr(project, field, value)
        project.save(update_fields=[*auth, "updated_at"])
    return project


def project_create(*, project_id: str, name: str = "", origins: list[str] = (), auth: dict | None = None) -> Project:
    """Create a project with its allowed web origins and authentication settings (``auth``: see
    :data:`AUTH_SETTINGS`; the rest keep Appwrite's defaults for a new project).

    Raises :class:`ProjectError` for a bad or duplicate ID, a malformed origin
    (``scheme://host[:port]`` or ``*``) or a bad setting.
    """
    auth = _check_auth(dict(auth or {}))
    if project_id == "unique()":
        project_id = unique_id()
    if not is_valid_id(project_id) or project_id == "console":
        raise ProjectError(f"invalid project ID {project_id!r}: 1-36 chars of a-z, A-Z, 0-9, '.', '-', '_', not starting with a special char")
    bad = [o for o in origins if not _valid_origin(o)]
    if bad:
        raise ProjectError(f"invalid origin {bad[0]!r}: expected scheme://host[:port] or *")
    try:
        with transaction.atomic():
            project = Project.objects.create(uid=project_id, name=name or project_id, **auth)
            for origin in dict.fromkeys(origins):
                _add_origin(project, origin)
    except IntegrityError:
        raise ProjectError(f"project {project_id!r} already exists") from None
    return project


def project_ensure(*, project_id: str, name: str = "", origins: list[str] = (), auth: dict | None = None) -> Project:
    """The project ``project_id``, created if missing; the given origins are added to it and the
    given authentication settings set.

    Raises :class:`ProjectError` like :func:`project_create` for bad input.
    """
    project = Project.objects.filter(uid=project_id).first()
    if project is None:
        return project_create(project_id=project_id, name=name, origins=origins, auth=auth)
    project_auth_update(project=project, auth=dict(auth or {}))
    bad = [o for o in origins if not _valid_origin(o)]
    if bad:
        raise ProjectError(f"invalid origin {bad[0]!r}: expected scheme://host[:port] or *")
    for origin in dict.fromkeys(origins):
        if not Platform.objects.filter(project=project, origin=origin.rstrip("/")).exists():
            _add_origin(project, origin)
    return project


def _add_origin(project: Project, origin: str) -> Platform:
    """A web platform allowing ``origin`` (``scheme://host[:port]`` or ``*``), named after it."""
    origin = origin.rstrip("/")
    return Platform.objects.create(project=project, origin=origin, uid=unique_id(), name=origin[:128], type="web")


def api_key_create(
    *, project_id: str, name: str = "", scopes: list[str], expire: dt.datetime | None = None
) -> tuple[ApiKey, str]:
    """Create an API key; returns ``(key, secret)``. The secret is shown once, stored hashed.

    Raises :class:`ProjectError` for an unknown project or an unknown scope.
    """
    unknown = sorted(set(scopes) - KEY_SCOPES)
    if unknown:
        raise ProjectError(f"unknown scope(s): {', '.join(unknown)}; known: {', '.join(sorted(KEY_SCOPES))}")
    project = Project.objects.filter(uid=project_id).first()
    if project is None:
        raise ProjectError(f"project {project_id!r} does not exist")
    secret = "standard_" + secrets.token_hex(64)
    key = ApiKey.objects.create(
        project=project, uid=unique_id(), name=name or "API key", scopes=sorted(set(scopes)),
        secret_hash=hash_secret(secret), expire=expire,
    )
    return key, secret


def projects_delete(project_pks: list[int]) -> None:
    """Delete projects and everything in them (the admin's delete), in one transaction: users with
    their sessions, tokens, memberships and audit log entries, teams, buckets and files, databases
    with their tables and rows (a database-level cascade), keys and platforms. The SQL indexes
    behind the tables' user indexes are dropped first (no API delete would leave them), and once
    the transaction has committed the files' bytes (and unfinished uploads' parts) are removed
    from the storage backend, as the storage worker does for a deleted bucket, and this process
    forgets its cached copies of the projects (other processes keep theirs at most
    ``PROJECT_CACHE_TTL`` seconds)."""
    from apps.core.drivers.db import get_database
    from apps.core.drivers.runtime import run_sync
    from apps.databases.models import Table
    from apps.databases.services import ddl
    from apps.projects.selectors import forget_projects
    from apps.storage.models import File

    with transaction.atomic():
        tables = list(Table.objects.filter(database__project_id__in=project_pks).values_list("id", flat=True))
        run_sync(ddl.drop_all(get_database("sync"), tables))
        files = list(File.objects.filter(bucket__project_id__in=project_pks).values_list("id", "key", "status"))
        uids = list(Project.objects.filter(pk__in=project_pks).values_list("uid", flat=True))
        Project.objects.filter(pk__in=project_pks).delete()
        transaction.on_commit(lambda: _remove_bytes(files))
        transaction.on_commit(lambda: forget_projects(uids))


def _remove_bytes(files: list[tuple[int, str, str]]) -> None:
    from apps.storage import backends
    from apps.storage.services.uploads import remove_parts

    for file_id, key, status in files:
        if key and status == "ready":
            backends.delete_quietly(key)
        remove_parts(file_id)
