"""Reads for projects, origins and API keys on the /v1 hot path (raw SQL, see apps.core.db).

The pipeline calls :func:`project_resolve` and :func:`origin_allowed` through the
``V1_PROJECT_RESOLVER`` and ``V1_ORIGIN_CHECKER`` settings.
"""

from __future__ import annotations

import time

from django.conf import settings

from apps.core.db import as_dt

# project uid -> (row, monotonic expiry). Every /v1 request resolves its project; projects change
# only through the admin and the management commands, so a found project is kept for
# PROJECT_CACHE_TTL seconds per process (unknown IDs are never cached: a project created a moment
# ago is found at once). Measured: the lookup was ~10 % of a request's CPU under load.
_projects: dict[str, tuple[dict, float]] = {}
_MAX_CACHED = 10_000


async def project_resolve(ctx, project_uid: str) -> dict | None:
    """The project row ``{id, uid, name}`` for a public project ID, or ``None``."""
    if len(project_uid) > 36:
        return None
    ttl = settings.PROJECT_CACHE_TTL
    now = time.monotonic()
    if ttl:
        hit = _projects.get(project_uid)
        if hit is not None and hit[1] > now:
            return hit[0]
    row = await ctx.db.fetchone("SELECT id, uid, name FROM projects_project WHERE uid = %s", (project_uid,))
    if row is not None and ttl:
        if len(_projects) >= _MAX_CACHED:
            _projects.clear()
        _projects[project_uid] = (row, now + ttl)
    return row


async def origin_allowed(ctx, origin: str, project: dict | None) -> bool:
    """True when ``origin`` is registered on ``project`` (or on any project when ``None``).

    A registered ``*`` allows every origin of that project.
    """
    origin = origin.rstrip("/")
    if project is None:
        row = await ctx.db.fetchone(
            "SELECT 1 AS ok FROM projects_platform WHERE origin = %s OR origin = '*' LIMIT 1", (origin,)
        )
    else:
        row = await ctx.db.fetchone(
            "SELECT 1 AS ok FROM projects_platform WHERE project_id = %s AND (origin = %s OR origin = '*') LIMIT 1",
            (project["id"], origin),
        )
    return row is not None


def key_tag(key_id: int) -> str:
    """The cache tag of everything derived from API key ``key_id`` (apps.core.cache)."""
    return f"apikey:{key_id}"


async def api_key_get(ctx, project_id: int, secret_hash: str) -> dict | None:
    """The API key row of ``project_id`` whose secret hashes to ``secret_hash``, or ``None``.

    ``scopes`` is decoded; ``expire`` is an aware datetime or ``None``.
    """
    from apps.core.db import as_json

    row = await ctx.db.fetchone(
        "SELECT id, uid, name, scopes, expire FROM projects_apikey WHERE secret_hash = %s AND project_id = %s",
        (secret_hash, project_id),
    )
    if row is not None:
        row["scopes"] = as_json(row["scopes"])
        row["expire"] = as_dt(row["expire"])
    return row
