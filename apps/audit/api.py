"""Log endpoints: ``GET /account/logs`` (the caller's) and ``GET /users/{userId}/logs`` (keys)."""

from __future__ import annotations

from apps.accounts.selectors.users import user_require
from apps.audit.responses import log_model
from apps.audit.selectors import log_list, page_of
from apps.core.http.context import json_response


async def _logs(ctx, user_id: int):
    limit, offset = page_of(ctx.params.queries)
    total, rows = await log_list(ctx, user_id=user_id, limit=limit, offset=offset, total=ctx.params.total)
    return json_response({"total": total, "logs": [log_model(r) for r in rows]})


async def account_logs(ctx):
    return await _logs(ctx, ctx.auth.user["id"])


async def user_logs(ctx):
    user = await user_require(ctx, user_uid=ctx.params.userId)
    return await _logs(ctx, user["id"])
