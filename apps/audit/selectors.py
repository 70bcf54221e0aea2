"""Reading the audit log: a user's entries or a resource's, newest first, with ``limit``/``offset``."""

from __future__ import annotations

from apps.core.domain.queries import parse_queries
from apps.core.errors import AppwriteError

DEFAULT_LIMIT = 25
MAX_LIMIT = 5000


def page_of(raw_queries) -> tuple[int, int]:
    """``(limit, offset)`` from the ``queries`` parameter; only ``limit`` and ``offset`` are
    allowed (Appwrite). Raises 400 ``general_query_invalid``."""
    limit, offset = DEFAULT_LIMIT, 0
    for q in parse_queries(raw_queries):
        if q.method == "limit":
            if q.values[0] > MAX_LIMIT:
                raise AppwriteError("general_query_invalid", f"Invalid query: limit must be at most {MAX_LIMIT}")
            limit = q.values[0]
        elif q.method == "offset":
            offset = q.values[0]
        else:
            raise AppwriteError("general_query_invalid", f"Invalid query: Query method not valid: {q.method}. "
                                                         "Only limit and offset are allowed")
    return limit, offset


async def log_list(ctx, *, user_id: int | None = None, resource: str = "", limit: int,
                   offset: int, total: bool) -> tuple[int, list[dict]]:
    """``(total or 0, rows)`` of user ``user_id``'s log, or of the project's entries about
    ``resource`` (``provider/<id>``...), newest first."""
    params: tuple[object, ...]
    if user_id is not None:
        where, params = "user_id = %s", (user_id,)
    else:
        where, params = "project_id = %s AND resource = %s", (ctx.project["id"], resource)
    rows = await ctx.db.fetchall(
        "SELECT event, mode, actor_type, actor_uid, actor_email, actor_name, ip, user_agent, time FROM audit_log "
        f"WHERE {where} ORDER BY time DESC, id DESC LIMIT {int(limit)} OFFSET {int(offset)}",
        params,
    )
    count = 0
    if total:
        count = await ctx.db.fetchval(f"SELECT COUNT(*) AS n FROM audit_log WHERE {where}", params)
    return int(count or 0), rows
