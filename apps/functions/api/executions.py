"""Execution endpoints. Scopes ``execution.read``/``execution.write`` (guests and users hold
them, as in Appwrite); creating one also needs the function's ``execute`` permission (API keys
bypass it). An execution is readable by the user who started it and by API keys."""

from __future__ import annotations

import orjson
from django.conf import settings

from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.core.tasks.queue import enqueue
from apps.functions import executions, selectors
from apps.functions.responses import execution_model


async def _function(ctx) -> dict:
    """The function, 404 ``function_not_found`` when it is missing or (for non-keys) disabled."""
    function = await selectors.function_get(ctx, ctx.params.functionId)
    if not function["enabled"] and not ctx.auth.is_key:
        raise AppwriteError("function_not_found")
    return function


def _may_execute(ctx, function: dict) -> None:
    """Raises 401 ``user_unauthorized`` unless the caller holds a role of ``execute``."""
    if ctx.auth.is_key:
        return
    allowed = orjson.loads(function["execute"]) if isinstance(function["execute"], (str, bytes)) else function["execute"]
    if not set(allowed or []) & set(ctx.auth.roles):
        raise AppwriteError("user_unauthorized", "The current user is not authorized to execute this function: "
                            "its execute permission does not include any of the caller's roles.")


async def execution_create(ctx):
    """Synchronous (201, with the response), asynchronous (202, ``waiting``; poll its status)
    or scheduled (202, ``scheduled``; needs ``async``). Raises 503
    ``function_executor_unavailable`` without a container engine."""
    from apps.functions.tasks import run_execution

    p = ctx.params
    function = await _function(ctx)
    _may_execute(ctx, function)
    executions.executor_or_503()
    headers = executions.clean_headers(p.headers)
    when = None
    if p.scheduledAt:
        if not p.async_:
            raise AppwriteError("general_argument_invalid", "Invalid `scheduledAt` param: scheduled executions "
                                "must be asynchronous (async=true).")
        when = executions.parse_schedule(p.scheduledAt)
    user = ctx.auth.user_id if not ctx.auth.is_key else ""
    body = p.body.encode()
    if p.async_:
        row = await executions.create(ctx, function, trigger="http", method=p.method, path=p.path, headers=headers,
                                      body=body, user_uid=user, status="scheduled" if when else "waiting",
                                      scheduled_at=when)
        task = run_execution.using(run_after=when) if when else run_execution
        await enqueue(ctx.db, task, execution_id=row["id"])
        return json_response(execution_model(row, function["uid"]), 202)
    row = await executions.create(ctx, function, trigger="http", method=p.method, path=p.path, headers=headers,
                                  body=body, user_uid=user, status="processing")
    row = await executions.run(ctx, function, row, timeout=min(int(function["timeout"]),
                                                               settings.FUNCTIONS_SYNC_TIMEOUT), sync=True)
    return json_response(execution_model(row, function["uid"]), 201)


async def execution_list(ctx):
    p = ctx.params
    function = await _function(ctx)
    user = None if ctx.auth.is_key else ctx.auth.user_id
    total, rows = await selectors.execution_list(ctx, function, queries=p.queries, user_uid=user)
    return json_response({"total": total if p.total else 0,
                          "executions": [execution_model(r, function["uid"]) for r in rows]})


async def _readable(ctx) -> tuple[dict, dict]:
    function = await _function(ctx)
    row = await selectors.execution_get(ctx, function, ctx.params.executionId)
    if not ctx.auth.is_key and (not ctx.auth.user_id or row["user_uid"] != ctx.auth.user_id):
        raise AppwriteError("execution_not_found")
    return function, row


async def execution_get(ctx):
    function, row = await _readable(ctx)
    return json_response(execution_model(row, function["uid"]))


async def execution_delete(ctx):
    """Raises 400 ``execution_in_progress`` while it runs (Appwrite's rule); a scheduled one
    may be deleted (it then never runs)."""
    if not ctx.auth.is_key:  # server-side only in Appwrite
        raise AppwriteError("user_unauthorized")
    function = await selectors.function_get(ctx, ctx.params.functionId)
    row = await selectors.execution_get(ctx, function, ctx.params.executionId)
    gone = await ctx.db.execute(
        "DELETE FROM functions_execution WHERE id = %s AND status NOT IN ('waiting', 'processing')", (row["id"],))
    if not gone:
        raise AppwriteError("execution_in_progress")
    await executions.execution_event(ctx, function, row, "delete")
    return no_content()
