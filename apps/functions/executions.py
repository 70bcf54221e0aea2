"""Executions: created by the API (synchronous, asynchronous, scheduled), by events and by cron
schedules; run through the executor (:mod:`apps.functions.executor`) and recorded.

Every path shares :func:`create` (the row and its checks) and :func:`run` (the execution of a
stored row: the request the function sees, its environment and dynamic key, the result). The
API runs a synchronous execution in its own process; the worker runs the others
(``apps.functions.tasks.run_execution``). ``ctx`` is a request context or the worker's stand-in
(``apps.functions.tasks._ctx``): both carry ``db``, ``mode``, ``project``, ``project_id``.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
import os
import socket

from django.conf import settings

from apps.core.domain.events import WriteEvent, announce
from apps.core.domain.ids import unique_id
from apps.core.drivers.db import as_dt, as_json, now
from apps.core.errors import AppwriteError
from apps.functions import code, keys, selectors
from apps.functions.responses import execution_model
from apps.functions.runtimes import DEFAULT_SPECIFICATION, RUNTIMES, SPECIFICATIONS

log = logging.getLogger("apps.functions")

# Request headers the function never sees from the caller (credentials of the caller), and
# headers the server sets itself (Appwrite's executor does the same).
_DROPPED = {"x-appwrite-key", "x-appwrite-session", "x-appwrite-jwt", "cookie", "authorization",
            "x-fallback-cookies", "x-appwrite-trigger", "x-appwrite-event", "x-appwrite-user-id",
            "x-appwrite-user-jwt", "x-appwrite-execution-id", "x-appwrite-function-id", "content-length"}


def executor_or_503():
    """The executor; 503 ``function_executor_unavailable`` without one, or when the configured
    engine does not answer (e.g. a compose deployment whose engine socket is not there)."""
    from apps.functions.executor import get_executor

    try:
        executor = get_executor()
    except Exception as exc:  # noqa: BLE001 - the docker package's connection errors, said in the 503
        log.warning("the container engine at FUNCTIONS_DOCKER_HOST does not answer: %s", exc)
        raise AppwriteError("function_executor_unavailable", "Functions cannot run on this server: the container "
                            "engine at FUNCTIONS_DOCKER_HOST does not answer. Check its socket and permissions, "
                            "see docs/functions.md.") from None
    if executor is None:
        raise AppwriteError("function_executor_unavailable")
    return executor


def clean_headers(headers: dict | None) -> dict[str, str]:
    """Caller-given headers as the function gets them: lower-case names, string values, no
    credentials. Raises 400 ``general_argument_invalid`` for a non-scalar value."""
    out = {}
    for name, value in (headers or {}).items():
        if isinstance(value, (dict, list)) or value is None:
            raise AppwriteError("general_argument_invalid", "Invalid `headers` param: values must be strings.")
        key = str(name).strip().lower()
        if key and key not in _DROPPED:
            out[key] = str(value)
    return out


async def active_deployment(ctx, function: dict) -> dict:
    """The function's active, built deployment. Raises 404 ``deployment_not_found``,
    400 ``build_not_ready``."""
    if not function.get("deployment_id"):
        raise AppwriteError("deployment_not_found", "The function has no active deployment.")
    row = await ctx.db.fetchone("SELECT * FROM functions_deployment WHERE id = %s", (function["deployment_id"],))
    if row is None:
        raise AppwriteError("deployment_not_found")
    if row["status"] != "ready":
        raise AppwriteError("build_not_ready")
    return row


async def create(ctx, function: dict, *, trigger: str, method: str, path: str, headers: dict[str, str],
                 body: bytes, user_uid: str = "", status: str = "waiting",
                 scheduled_at: dt.datetime | None = None) -> dict:
    """Store a new execution row for the active deployment; returns it."""
    deployment = await active_deployment(ctx, function)
    ts = ctx.db.dt(now())
    uid = unique_id()
    permissions = [f'read("user:{user_uid}")'] if user_uid else []
    await ctx.db.execute(
        "INSERT INTO functions_execution (project_id, function_id, uid, deployment_uid, permissions, trigger, status, "
        "request_method, request_path, request_headers, request_body, user_uid, response_status_code, "
        "response_body, response_headers, logs, errors, duration, scheduled_at, created_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 0, '', %s, '', '', 0, %s, %s, %s)",
        (ctx.project["id"], function["id"], uid, deployment["uid"], ctx.db.json(permissions), trigger, status,
         method, path, ctx.db.json([{"name": k, "value": v} for k, v in headers.items()]),
         base64.b64encode(body).decode(), user_uid, ctx.db.json([]),
         ctx.db.dt(scheduled_at) if scheduled_at else None, ts, ts))
    row = await selectors.execution_get(ctx, function, uid)
    await execution_event(ctx, function, row, "create")
    return row


async def execution_event(ctx, function: dict, row: dict, action: str) -> None:
    user = row.get("user_uid") or ""
    await announce(ctx, WriteEvent(project_id=ctx.project_id, resource="execution", action=action,
                                   ids={"functionId": function["uid"], "executionId": row["uid"]},
                                   payload=execution_model(row, function["uid"]),
                                   extra={"read_roles": [f"user:{user}"] if user else []}))


async def _environment(ctx, function: dict, deployment: dict) -> dict[str, str]:
    """The container's environment: project variables, then the function's (which win), then
    the ``APPWRITE_FUNCTION_*`` values (which win over both)."""
    spec = SPECIFICATIONS.get(function.get("specification") or "", SPECIFICATIONS[DEFAULT_SPECIFICATION])
    env = {v["key"]: v["value"] for v in await selectors.project_variables(ctx)}
    env.update({v["key"]: v["value"] for v in await selectors.variables_of(ctx, function["id"])})
    runtime = RUNTIMES[function["runtime"]]
    env.update({
        "APPWRITE_FUNCTION_API_ENDPOINT": settings.FUNCTIONS_API_ENDPOINT,
        "APPWRITE_FUNCTION_ID": function["uid"], "APPWRITE_FUNCTION_NAME": function["name"],
        "APPWRITE_FUNCTION_DEPLOYMENT": deployment["uid"], "APPWRITE_FUNCTION_PROJECT_ID": ctx.project_id,
        "APPWRITE_FUNCTION_RUNTIME_NAME": runtime["name"], "APPWRITE_FUNCTION_RUNTIME_VERSION": runtime["version"],
        "APPWRITE_FUNCTION_CPUS": str(spec["cpus"]), "APPWRITE_FUNCTION_MEMORY": str(spec["memory"]),
        "APPWRITE_VERSION": "1.8.0", "APPWRITE_REGION": "default",
    })
    return env


async def run(ctx, function: dict, row: dict, *, timeout: int | None = None, sync: bool = False,
              event: str = "") -> dict:
    """Run the stored execution ``row`` (status ``waiting``/``scheduled``/``processing``) and
    record its outcome; returns the updated row. ``sync``: keep the response body and headers
    (synchronous executions only, as Appwrite); ``event``: the event name that triggered it. Never raises for the function's own failure
    (timeout, crash, error): the row says ``failed`` with the reason in ``errors``."""
    from apps.functions.executor import Request, Target

    executor = executor_or_503()
    # A synchronous run names its process: if that process dies, nobody runs it again, and
    # apps.functions.maintenance fails it (a queued run is the worker's: run again, at least once).
    await ctx.db.execute("UPDATE functions_execution SET status = 'processing', runner = %s, updated_at = %s "
                         "WHERE id = %s", (runner_id() if sync else "", ctx.db.dt(now()), row["id"]))
    deployment = await ctx.db.fetchone("SELECT * FROM functions_deployment WHERE function_id = %s AND uid = %s",
                                       (function["id"], row["deployment_uid"]))
    if deployment is None or deployment["status"] != "ready" or not os.path.exists(code.build_path(deployment["id"])):
        return await _record(ctx, function, row, status="failed", status_code=500, errors="The deployment of this "
                             "execution is gone or not built.", duration=0.0)
    spec = SPECIFICATIONS.get(function.get("specification") or "", SPECIFICATIONS[DEFAULT_SPECIFICATION])
    limit = int(timeout or function["timeout"])
    headers = {h["name"]: h["value"] for h in as_json(row["request_headers"]) or []}
    key = keys.make_key(project_uid=ctx.project_id, function_uid=function["uid"], execution_uid=row["uid"],
                        scopes=as_json(function["scopes"]) or [], duration=limit + settings.FUNCTIONS_KEY_GRACE)
    headers.update({"x-appwrite-trigger": row["trigger"], "x-appwrite-execution-id": row["uid"],
                    "x-appwrite-user-id": row.get("user_uid") or "", "x-appwrite-key": key})
    if event:
        headers["x-appwrite-event"] = event
    target = Target(deployment_id=deployment["id"], runtime=function["runtime"],
                    entrypoint=deployment["entrypoint"], build_path=code.build_path(deployment["id"]),
                    env=await _environment(ctx, function, deployment), cpus=spec["cpus"], memory=spec["memory"],
                    timeout=limit)
    request = Request(method=row["request_method"], path=row["request_path"], headers=headers,
                      body=base64.b64decode(row["request_body"] or ""),
                      env={"APPWRITE_FUNCTION_API_KEY": key, "APPWRITE_FUNCTION_TRIGGER": row["trigger"],
                           "APPWRITE_FUNCTION_EXECUTION_ID": row["uid"]})
    result = await _in_pool(ctx, executor.execute, target, request)
    keep_response = sync
    return await _record(
        ctx, function, row, status="failed" if result.failed or result.status_code >= 500 else "completed",
        status_code=result.status_code, errors=result.errors, logs=result.logs, duration=result.duration,
        body=result.body.decode("utf-8", "replace") if keep_response else "",
        headers=[{"name": k, "value": v} for k, v in result.headers.items()] if keep_response else [])


async def _record(ctx, function: dict, row: dict, *, status: str, status_code: int, errors: str = "",
                  logs: str = "", duration: float, body: str = "", headers: list | None = None) -> dict:
    if not function.get("logging", True):
        logs = errors = ""
    await ctx.db.execute(
        "UPDATE functions_execution SET status = %s, response_status_code = %s, response_body = %s, "
        "response_headers = %s, logs = %s, errors = %s, duration = %s, request_body = '', updated_at = %s "
        "WHERE id = %s",
        (status, status_code, body, ctx.db.json(headers or []), logs[-1_000_000:], errors[-1_000_000:],
         round(duration, 4), ctx.db.dt(now()), row["id"]))
    fresh = await selectors.execution_get(ctx, function, row["uid"])
    await execution_event(ctx, function, fresh, "update")
    return fresh


def runner_id() -> str:
    """This process, as recorded on the synchronous executions it runs: ``<host>:<pid>``."""
    return f"{socket.gethostname()}:{os.getpid()}"


async def fail_stopped(ctx, function: dict, row: dict, errors: str) -> bool:
    """Fail an execution left ``processing`` by a process that stopped (status code 500,
    ``errors`` saying so) and announce it; ``False`` when it was no longer ``processing``."""
    done = await ctx.db.execute(
        "UPDATE functions_execution SET status = 'failed', response_status_code = 500, errors = %s, "
        "request_body = '', updated_at = %s WHERE id = %s AND status = 'processing'",
        (errors if function.get("logging", True) else "", ctx.db.dt(now()), row["id"]))
    if done:
        await execution_event(ctx, function, await selectors.execution_get(ctx, function, row["uid"]), "update")
    return bool(done)


_pool = None
POOL_THREADS = 16  # synchronous executions one ASGI process runs at once; more wait for a thread


async def _in_pool(ctx, fn, *args):
    """Run the blocking ``fn`` on the functions' own threads under ASGI (a 30 s execution never
    holds the shared pool that password hashing and file I/O use); inline under WSGI."""
    global _pool
    if ctx.mode == "sync":
        return fn(*args)
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="functions")
    return await asyncio.get_running_loop().run_in_executor(_pool, fn, *args)


def parse_schedule(value: str) -> dt.datetime:
    """``scheduledAt`` (ISO 8601) as an aware UTC datetime at least a minute from now (Appwrite's
    rule). Raises 400 ``general_argument_invalid``."""
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise AppwriteError("general_argument_invalid", "Invalid `scheduledAt` param: value must be a valid "
                            "ISO 8601 date.") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    if when < now() + dt.timedelta(seconds=59):
        raise AppwriteError("general_argument_invalid", "Invalid `scheduledAt` param: the date must be at least "
                            "one minute in the future.")
    return as_dt(when)
