"""Writes of functions and variables, and the events they announce."""

from __future__ import annotations

from apps.core.domain.events import WriteEvent, announce
from apps.core.drivers.db import UniqueViolation, now
from apps.core.errors import AppwriteError
from apps.functions import selectors
from apps.functions.responses import function_model

FIELDS = ("name", "description", "runtime", "execute", "events", "has_events", "schedule", "schedule_next",
          "timeout", "enabled", "logging", "entrypoint", "commands", "scopes", "specification",
          "deployment_retention")
_JSON = {"execute", "events", "scopes"}


def _values(ctx, fields: dict) -> list:
    return [ctx.db.json(fields[k]) if k in _JSON else (ctx.db.dt(fields[k]) if k == "schedule_next" and fields[k]
            else fields[k]) for k in FIELDS]


async def function_create(ctx, *, function_uid: str, fields: dict) -> dict:
    """Insert a function; the row. Raises 409 ``function_already_exists``."""
    ts = ctx.db.dt(now())
    try:
        await ctx.db.execute(
            f"INSERT INTO functions_function (project_id, uid, {', '.join(FIELDS)}, version, created_at, updated_at) "
            f"VALUES (%s, %s, {', '.join(['%s'] * len(FIELDS))}, 1, %s, %s)",
            (ctx.project["id"], function_uid, *_values(ctx, fields), ts, ts))
    except UniqueViolation:
        raise AppwriteError("function_already_exists") from None
    row = await selectors.function_get(ctx, function_uid)
    await schedule_changed(ctx, row)
    await function_event(ctx, row, "create")
    return row


async def function_update(ctx, *, function_uid: str, fields: dict) -> dict:
    """Replace the function's settings (PUT). Raises 404 ``function_not_found``."""
    sets = ", ".join(f"{k} = %s" for k in FIELDS)
    count = await ctx.db.execute(
        f"UPDATE functions_function SET {sets}, updated_at = %s WHERE project_id = %s AND uid = %s",
        (*_values(ctx, fields), ctx.db.dt(now()), ctx.project["id"], function_uid))
    if not count:
        raise AppwriteError("function_not_found")
    row = await selectors.function_get(ctx, function_uid)
    await schedule_changed(ctx, row)
    await function_event(ctx, row, "update")
    return row


async def schedule_changed(ctx, row: dict) -> None:
    """(Re)plan the cron chain of a function whose ``schedule_next`` was just set."""
    if row["schedule"] and row["schedule_next"]:
        from apps.core.tasks.queue import enqueue
        from apps.functions.tasks import run_schedule

        task = run_schedule.using(run_after=row["schedule_next"])
        await enqueue(ctx.db, task, function_id=row["id"], planned=row["schedule_next"].isoformat()
                      if hasattr(row["schedule_next"], "isoformat") else str(row["schedule_next"]))


async def function_delete(ctx, *, function_uid: str) -> None:
    """Delete the function, its deployments (and their code), executions and variables; its
    warm containers are stopped by the worker. Raises 404 ``function_not_found``."""
    from apps.core.tasks.queue import enqueue
    from apps.functions.tasks import remove_code

    row = await selectors.function_get(ctx, function_uid)
    deployments = await ctx.db.fetchall("SELECT id FROM functions_deployment WHERE function_id = %s", (row["id"],))
    async with ctx.db.transaction() as tx:
        await tx.execute("UPDATE functions_function SET deployment_id = NULL WHERE id = %s", (row["id"],))
        for table in ("functions_execution", "functions_variable", "functions_deployment"):
            await tx.execute(f"DELETE FROM {table} WHERE function_id = %s", (row["id"],))
        gone = await tx.execute("DELETE FROM functions_function WHERE id = %s", (row["id"],))
        if not gone:
            raise AppwriteError("function_not_found")
        if deployments:
            await enqueue(tx, remove_code, deployment_ids=[d["id"] for d in deployments])
    await function_event(ctx, row, "delete")


async def function_event(ctx, row: dict, action: str) -> None:
    await announce(ctx, WriteEvent(project_id=ctx.project_id, resource="function", action=action,
                                   ids={"functionId": row["uid"]}, payload=function_model(row)))


async def set_active(ctx, function: dict, deployment_id: int | None) -> None:
    await ctx.db.execute("UPDATE functions_function SET deployment_id = %s, updated_at = %s WHERE id = %s",
                         (deployment_id, ctx.db.dt(now()), function["id"]))


# --- variables ---------------------------------------------------------------------------------
async def variable_create(ctx, *, function: dict, variable_uid: str, key: str, value: str, secret: bool,
                          description: str) -> dict:
    """Raises 409 ``variable_already_exists`` (same ID in the project, or same key on the same
    function)."""
    function_id = function["id"]
    if await _key_taken(ctx, function_id, key, None):
        raise AppwriteError("variable_already_exists", "Variable with the same key already exists.")
    ts = ctx.db.dt(now())
    try:
        await ctx.db.execute(
            "INSERT INTO functions_variable (project_id, function_id, uid, key, value, secret, description, "
            "created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (ctx.project["id"], function_id, variable_uid, key, value, secret, description, ts, ts))
    except UniqueViolation:
        raise AppwriteError("variable_already_exists") from None
    return await selectors.variable_get(ctx, function_id=function_id, variable_uid=variable_uid)


async def _key_taken(ctx, function_id: int, key: str, except_id: int | None) -> bool:
    row = await ctx.db.fetchone("SELECT id FROM functions_variable WHERE function_id = %s AND key = %s AND id <> %s",
                                (function_id, key, except_id or 0))
    return row is not None


async def variable_update(ctx, *, function: dict, variable_uid: str, key: str | None, value: str | None,
                          secret: bool | None, description: str | None) -> dict:
    """Change the given fields. A secret variable stays secret (Appwrite refuses to un-secret
    it: 400 ``general_argument_invalid``)."""
    function_id = function["id"]
    row = await selectors.variable_get(ctx, function_id=function_id, variable_uid=variable_uid)
    if secret is False and row["secret"]:
        raise AppwriteError("general_argument_invalid", "Invalid `secret` param: a secret variable cannot be "
                            "made non-secret.")
    if key is not None and key != row["key"] and await _key_taken(ctx, function_id, key, row["id"]):
        raise AppwriteError("variable_already_exists", "Variable with the same key already exists.")
    await ctx.db.execute(
        "UPDATE functions_variable SET key = %s, value = %s, secret = %s, description = %s, updated_at = %s "
        "WHERE id = %s",
        (key if key is not None else row["key"], value if value is not None else row["value"],
         bool(row["secret"]) or bool(secret), description if description is not None else row["description"],
         ctx.db.dt(now()), row["id"]))
    return await selectors.variable_get(ctx, function_id=function_id, variable_uid=variable_uid)


async def variable_delete(ctx, *, function: dict, variable_uid: str) -> None:
    row = await selectors.variable_get(ctx, function_id=function["id"], variable_uid=variable_uid)
    if not await ctx.db.execute("DELETE FROM functions_variable WHERE id = %s", (row["id"],)):
        raise AppwriteError("variable_not_found")
