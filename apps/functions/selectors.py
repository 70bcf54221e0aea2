"""Reads of functions, deployments, executions and variables (raw SQL over ``apps.core.drivers.db``);
lists reuse the storage app's query planner (``apps.storage.querysql``) and pager."""

from __future__ import annotations

from apps.core.errors import AppwriteError
from apps.storage.querysql import like_escape, plan
from apps.storage.selectors import _page, _qualified

FUNCTION_COLUMNS = {
    "$id": ("uid", "str"), "name": ("name", "str"), "enabled": ("enabled", "bool"),
    "runtime": ("runtime", "str"), "schedule": ("schedule", "str"), "timeout": ("timeout", "int"),
    "entrypoint": ("entrypoint", "str"), "commands": ("commands", "str"),
    "$createdAt": ("created_at", "dt"), "$updatedAt": ("updated_at", "dt"),
}
DEPLOYMENT_COLUMNS = {
    "$id": ("uid", "str"), "entrypoint": ("entrypoint", "str"), "status": ("status", "str"),
    "sourceSize": ("source_size", "int"), "buildSize": ("build_size", "int"),
    "buildDuration": ("build_duration", "int"), "activate": ("activate", "bool"),
    "$createdAt": ("created_at", "dt"), "$updatedAt": ("updated_at", "dt"),
}
EXECUTION_COLUMNS = {
    "$id": ("uid", "str"), "trigger": ("trigger", "str"), "status": ("status", "str"),
    "responseStatusCode": ("response_status_code", "int"), "duration": ("duration", "int"),
    "requestMethod": ("request_method", "str"), "requestPath": ("request_path", "str"),
    "deploymentId": ("deployment_uid", "str"), "$createdAt": ("created_at", "dt"), "$updatedAt": ("updated_at", "dt"),
}
VARIABLE_COLUMNS = {"$id": ("uid", "str"), "key": ("key", "str"), "secret": ("secret", "bool"),
                    "$createdAt": ("created_at", "dt"), "$updatedAt": ("updated_at", "dt")}

# The active deployment and the latest one of a function row ``b``.
_JOINS = (
    "b.*, d.uid AS dep_uid, d.created_at AS dep_created_at, "
    "(SELECT l.uid FROM functions_deployment l WHERE l.function_id = b.id ORDER BY l.id DESC LIMIT 1) AS latest_uid, "
    "(SELECT l.created_at FROM functions_deployment l WHERE l.function_id = b.id ORDER BY l.id DESC LIMIT 1) "
    "AS latest_created_at, "
    "(SELECT l.status FROM functions_deployment l WHERE l.function_id = b.id ORDER BY l.id DESC LIMIT 1) AS latest_status"
)
_FROM = "functions_function b LEFT JOIN functions_deployment d ON d.id = b.deployment_id"


async def function_get(ctx, function_uid: str) -> dict:
    """The function row of the request's project (with deployment columns, see
    ``responses.function_model``). Raises 404 ``function_not_found``."""
    row = await ctx.db.fetchone(f"SELECT {_JOINS} FROM {_FROM} WHERE b.project_id = %s AND b.uid = %s",
                                (ctx.project["id"], function_uid))
    if row is None:
        raise AppwriteError("function_not_found")
    return row


async def function_list(ctx, *, queries, search: str) -> tuple[int, list[dict]]:
    p = plan(queries, _qualified(FUNCTION_COLUMNS), ctx.db)
    where, params = ["b.project_id = %s", *p.where], [ctx.project["id"], *p.params]
    if search:
        where.append("(LOWER(b.name) LIKE %s ESCAPE '\\' OR LOWER(b.uid) LIKE %s ESCAPE '\\')")
        params += ["%" + like_escape(search.lower()) + "%"] * 2
    return await _page(ctx, _FROM, _JOINS, where, params, p, cursor_scope=("b.project_id = %s", [ctx.project["id"]]))


async def project_variables(ctx) -> list[dict]:
    """The project's own variables (the Project service's table ``projects_variable``), oldest
    first: ``key`` and ``value``."""
    return await ctx.db.fetchall(
        "SELECT v.key, v.value FROM projects_variable v WHERE v.project_id = %s ORDER BY v.id", (ctx.project["id"],))


async def variables_of(ctx, function_id: int) -> list[dict]:
    """Variables of a function, oldest first."""
    return await ctx.db.fetchall(
        "SELECT v.*, f.uid AS function_uid FROM functions_variable v JOIN functions_function f ON f.id = v.function_id "
        "WHERE v.function_id = %s ORDER BY v.id", (function_id,))


async def variable_list(ctx, *, function_id: int, queries) -> tuple[int, list[dict]]:
    p = plan(queries, _qualified(VARIABLE_COLUMNS), ctx.db)
    scope = ("b.function_id = %s", [function_id])
    return await _page(ctx, "functions_variable b", "b.*", [scope[0], *p.where], [*scope[1], *p.params], p,
                       cursor_scope=scope)


async def variable_get(ctx, *, function_id: int, variable_uid: str) -> dict:
    """Raises 404 ``variable_not_found``."""
    row = await ctx.db.fetchone(
        "SELECT v.*, f.uid AS function_uid FROM functions_variable v JOIN functions_function f "
        "ON f.id = v.function_id WHERE v.function_id = %s AND v.uid = %s", (function_id, variable_uid))
    if row is None:
        raise AppwriteError("variable_not_found")
    return row


async def deployment_get(ctx, function: dict, deployment_uid: str) -> dict:
    """Raises 404 ``deployment_not_found``."""
    row = await ctx.db.fetchone("SELECT * FROM functions_deployment WHERE function_id = %s AND uid = %s",
                                (function["id"], deployment_uid))
    if row is None:
        raise AppwriteError("deployment_not_found")
    return row


async def deployment_list(ctx, function: dict, *, queries, search: str) -> tuple[int, list[dict]]:
    p = plan(queries, _qualified(DEPLOYMENT_COLUMNS), ctx.db)
    where, params = ["b.function_id = %s", *p.where], [function["id"], *p.params]
    if search:
        where.append("LOWER(b.uid) LIKE %s ESCAPE '\\'")
        params.append("%" + like_escape(search.lower()) + "%")
    return await _page(ctx, "functions_deployment b", "b.*", where, params, p,
                       cursor_scope=("b.function_id = %s", [function["id"]]))


async def execution_get(ctx, function: dict, execution_uid: str) -> dict:
    """Raises 404 ``execution_not_found``."""
    row = await ctx.db.fetchone("SELECT * FROM functions_execution WHERE function_id = %s AND uid = %s",
                                (function["id"], execution_uid))
    if row is None:
        raise AppwriteError("execution_not_found")
    return row


async def execution_list(ctx, function: dict, *, queries, user_uid: str | None) -> tuple[int, list[dict]]:
    """``user_uid`` (not ``None``): only the executions that user started (their read permission
    is ``read("user:<id>")``, Appwrite's rule); ``""`` (a guest) sees none."""
    p = plan(queries, _qualified(EXECUTION_COLUMNS), ctx.db)
    where, params = ["b.function_id = %s", *p.where], [function["id"], *p.params]
    if user_uid is not None:
        if not user_uid:
            return 0, []
        where.append("b.user_uid = %s")
        params.append(user_uid)
    return await _page(ctx, "functions_execution b", "b.*", where, params, p,
                       cursor_scope=("b.function_id = %s", [function["id"]]))
