"""Reads for projects, origins and API keys on the /v1 hot path (raw SQL, see apps.core.db).

The pipeline calls :func:`project_resolve` and :func:`origin_allowed` through the
``V1_PROJECT_RESOLVER`` and ``V1_ORIGIN_CHECKER`` settings.
"""

from __future__ import annotations

from apps.core.db import as_dt


async def project_resolve(ctx, project_uid: str) -> dict | None:
    """The project row ``{id, uid, name}`` for a public project ID, or ``None``."""
    if len(project_uid) > 36:
        return None
    return await ctx.db.fetchone(
        "SELECT id, uid, name FROM projects_project WHERE uid = %s", (project_uid,)
    )


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
