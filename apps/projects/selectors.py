"""Reads for projects, origins and API keys on the /v1 hot path (raw SQL, see apps.core.drivers.db).

The pipeline calls :func:`project_resolve` and :func:`origin_allowed` through the
``V1_PROJECT_RESOLVER`` and ``V1_ORIGIN_CHECKER`` settings.
"""

from __future__ import annotations

import time

from django.conf import settings

from apps.core.drivers.db import as_dt

# project uid -> (row, monotonic expiry). Every /v1 request resolves its project; projects change
# only through the admin and the management commands, so a found project is kept for
# PROJECT_CACHE_TTL seconds per process (unknown IDs are never cached: a project created a moment
# ago is found at once). Measured: the lookup was ~10 % of a request's CPU under load.
_projects: dict[str, tuple[dict, float]] = {}
_MAX_CACHED = 10_000


_PROJECT_COLUMNS = (
    "id, uid, name, auth_limit, auth_max_sessions, auth_duration, auth_password_history, "
    "auth_password_dictionary, auth_password_min_length, auth_personal_data_check, auth_session_alerts, "
    "auth_invalidate_sessions, auth_mock_numbers, auth_email_password, auth_magic_url, auth_email_otp, "
    "auth_anonymous, auth_invites, auth_jwt, auth_phone, memberships_user_name, memberships_user_email, "
    "memberships_mfa, memberships_user_id, memberships_user_phone, memberships_user_accessed_at, smtp_enabled, "
    "services_disabled, protocols_disabled"
)


async def project_resolve(ctx, project_uid: str) -> dict | None:
    """The project row for a public project ID, or ``None``: ``id``, ``uid``, ``name`` and the
    authentication settings (``auth_*``, ``memberships_*`` columns of
    :class:`apps.projects.models.Project`; booleans as ``bool``, ``auth_mock_numbers`` decoded),
    ``smtp_enabled`` (the project sends its mail itself) and ``services_disabled`` /
    ``protocols_disabled`` (frozensets of the Project service's switched-off IDs)."""
    if len(project_uid) > 36 or project_uid.startswith("~"):  # "~trash" holds deleted resources
        return None
    ttl = settings.PROJECT_CACHE_TTL
    now = time.monotonic()
    if ttl:
        hit = _projects.get(project_uid)
        if hit is not None and hit[1] > now:
            return hit[0]
    row = await ctx.db.fetchone(f"SELECT {_PROJECT_COLUMNS} FROM projects_project WHERE uid = %s", (project_uid,))
    if row is not None:
        _decode_settings(row)
    if row is not None and ttl:
        if len(_projects) >= _MAX_CACHED:
            _projects.clear()
        _projects[project_uid] = (row, now + ttl)
    return row


def forget_projects(project_uids: list[str]) -> None:
    """Drop this process's cached copies of these projects (deleted ones): here they are unknown
    at once, in other processes once their copy expires (``PROJECT_CACHE_TTL``)."""
    for uid in project_uids:
        _projects.pop(uid, None)


def _decode_settings(row: dict) -> None:
    from apps.core.drivers.db import as_json

    for name in _BOOLEANS:
        row[name] = bool(row[name])  # SQLite returns 0/1
    row["auth_mock_numbers"] = as_json(row["auth_mock_numbers"]) or []
    # what refuses key-less requests (apps.core.http.pipeline): sets, empty for nearly every project
    row["services_disabled"] = frozenset(as_json(row["services_disabled"]) or ())
    row["protocols_disabled"] = frozenset(as_json(row["protocols_disabled"]) or ())


_BOOLEANS = frozenset({
    "auth_password_dictionary", "auth_personal_data_check", "auth_session_alerts", "auth_invalidate_sessions",
    "auth_email_password", "auth_magic_url", "auth_email_otp", "auth_anonymous", "auth_invites", "auth_jwt",
    "auth_phone", "memberships_user_name", "memberships_user_email", "memberships_mfa", "memberships_user_id",
    "memberships_user_phone", "memberships_user_accessed_at", "smtp_enabled",
})


def session_duration(project: dict) -> int:
    """Seconds a new session of ``project`` lasts: its ``auth_duration``, else ``SESSION_DURATION``."""
    return project.get("auth_duration") or settings.SESSION_DURATION


async def origin_allowed(ctx, origin: str, project: dict | None) -> bool:
    """True when ``origin`` is registered on ``project`` (or on any project when ``None``).

    A registered ``*`` allows every origin of that project; a web platform's ``hostname`` allows
    that host under any scheme and port.
    """
    origin = origin.rstrip("/")
    host = _host_of(origin)
    match = "(origin = %s OR origin = '*' OR (type = 'web' AND hostname IN (%s, '*')))"
    if project is None:
        row = await ctx.db.fetchone(f"SELECT 1 AS ok FROM projects_platform WHERE {match} LIMIT 1", (origin, host))
    else:
        row = await ctx.db.fetchone(
            f"SELECT 1 AS ok FROM projects_platform WHERE project_id = %s AND {match} LIMIT 1",
            (project["id"], origin, host),
        )
    return row is not None


def _host_of(origin: str) -> str:
    """The host name of an origin (``https://app.example.com:8443`` -> ``app.example.com``), or a
    value no platform has (a space) when it has none: a platform made through the Project
    service allows its ``hostname`` under any scheme and port (Appwrite's web platform rule)."""
    from urllib.parse import urlsplit

    try:
        return (urlsplit(origin).hostname or "").lower() or " "
    except ValueError:
        return " "


def key_tag(key_id: int) -> str:
    """The cache tag of everything derived from API key ``key_id`` (apps.core.drivers.cache)."""
    return f"apikey:{key_id}"


async def api_key_get(ctx, project_id: int, secret_hash: str) -> dict | None:
    """The API key row of ``project_id`` whose secret hashes to ``secret_hash``, or ``None``.

    ``scopes`` is decoded; ``expire`` is an aware datetime or ``None``.
    """
    from apps.core.drivers.db import as_json

    row = await ctx.db.fetchone(
        "SELECT id, uid, name, scopes, expire FROM projects_apikey WHERE secret_hash = %s AND project_id = %s",
        (secret_hash, project_id),
    )
    if row is not None:
        row["scopes"] = as_json(row["scopes"])
        row["expire"] = as_dt(row["expire"])
    return row


async def platform_origins(ctx, project_id: int) -> list[str]:
    """The web origins registered on the project (``scheme://host[:port]`` or ``*``)."""
    rows = await ctx.db.fetchall("SELECT origin FROM projects_platform WHERE project_id = %s", (project_id,))
    return [r["origin"] for r in rows]
