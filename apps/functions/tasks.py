"""Background work of the functions app (queue ``functions``): builds, asynchronous, scheduled,
event and cron executions, and removing deleted deployments' code.

Tasks run the same async service code as the API, driven by :func:`apps.core.drivers.runtime.run_sync`
over Django's connection (``apps.core.drivers.db.django_sync``), with a small stand-in for the request
context (:func:`_ctx`). Each task is idempotent: a task the worker recovers after a crash finds
the row already past the state it expects and does nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from types import SimpleNamespace

from django.conf import settings
from django.tasks import task

from apps.core.http.auth import Auth

log = logging.getLogger("apps.worker")


def _ctx(project_id: int):
    """A context for service code outside a request: the project's row, sync mode."""
    from apps.core.drivers.db.django_sync import DjangoSync
    from apps.core.drivers.kv import get_kv
    from apps.core.drivers.runtime import run_sync

    db = DjangoSync()
    project = run_sync(db.fetchone("SELECT * FROM projects_project WHERE id = %s", (project_id,)))
    if project is None:
        return None
    return SimpleNamespace(db=db, mode="sync", kv=get_kv("sync"), project=project, project_id=project["uid"],
                           auth=Auth(kind="key", roles=[]), headers={}, request_id="")


def _function(ctx, function_id: int) -> dict | None:
    from apps.core.drivers.runtime import run_sync
    from apps.functions import selectors

    row = run_sync(ctx.db.fetchone("SELECT uid FROM functions_function WHERE id = %s", (function_id,)))
    if row is None:
        return None
    return run_sync(selectors.function_get(ctx, row["uid"]))


@task(queue_name="functions")
def build_deployment(*, deployment_id: int) -> None:
    """Build a ``waiting`` deployment; activate it when asked (or when the function has none)."""
    from django.db import connection

    from apps.core.drivers.db import now
    from apps.core.drivers.runtime import run_sync
    from apps.functions import code
    from apps.functions.deployments import deployment_event
    from apps.functions.executor import get_executor
    from apps.functions.runtimes import DEFAULT_SPECIFICATION, SPECIFICATIONS

    with connection.cursor() as cur:
        cur.execute("SELECT project_id, function_id FROM functions_deployment WHERE id = %s", [deployment_id])
        found = cur.fetchone()
    if found is None:
        return
    ctx = _ctx(found[0])
    db = ctx.db
    claimed = run_sync(db.execute("UPDATE functions_deployment SET status = 'building', updated_at = %s "
                                  "WHERE id = %s AND status IN ('waiting', 'processing', 'building')",
                                  (db.dt(now()), deployment_id)))
    if not claimed:
        return  # canceled, deleted, or built by an earlier attempt
    # ('building' is claimed again: the worker only re-runs a task whose worker died mid-build.)
    function = _function(ctx, found[1])
    executor = get_executor()
    fetched = _fetch_template(db, deployment_id)
    if fetched is not None:
        status, logs, size, duration = "failed", fetched, 0, 0.0
    elif executor is None:
        status, logs, size, duration = ("failed", "No container engine is configured on this server: set "
                                        "FUNCTIONS_EXECUTOR=docker and FUNCTIONS_DOCKER_HOST (docs/functions.md).",
                                        0, 0.0)
    else:
        row = run_sync(db.fetchone("SELECT * FROM functions_deployment WHERE id = %s", (deployment_id,)))
        spec = SPECIFICATIONS.get(function["specification"], SPECIFICATIONS[DEFAULT_SPECIFICATION])
        try:
            result = executor.build(
                deployment_id=deployment_id, runtime=function["runtime"], source=code.plain_tar(
                    code.source_path(deployment_id)), commands=row["commands"], output=code.build_path(deployment_id),
                cpus=spec["cpus"], memory=max(spec["memory"], 1024), timeout=settings.FUNCTIONS_BUILD_TIMEOUT)
            status = "ready" if result.ok else "failed"
            logs, size, duration = result.logs, result.size, result.duration
        except Exception as exc:  # noqa: BLE001 - the engine's error is the build's outcome
            log.exception("build of deployment %s failed", deployment_id)
            status, logs, size, duration = "failed", f"The build could not run: {exc}", 0, 0.0
        if status == "ready" and not os.path.exists(os.path.join(code.deployment_dir(deployment_id))):
            status = "failed"
    done = run_sync(db.execute(
        "UPDATE functions_deployment SET status = %s, build_logs = %s, build_size = %s, build_duration = %s, "
        "updated_at = %s WHERE id = %s AND status = 'building'",
        (status, logs[-1_000_000:], size, duration, db.dt(now()), deployment_id)))
    row = run_sync(db.fetchone("SELECT * FROM functions_deployment WHERE id = %s", (deployment_id,)))
    if not done or row is None:
        return  # canceled meanwhile
    if status == "ready" and (row["activate"] or not function["deployment_id"]):
        run_sync(db.execute("UPDATE functions_function SET deployment_id = %s, updated_at = %s WHERE id = %s",
                            (deployment_id, db.dt(now()), function["id"])))
    run_sync(deployment_event(ctx, function, row, "update"))


def _fetch_template(db, deployment_id: int) -> str | None:
    """A template deployment without its source yet: download it (``apps.functions.templates``)
    and record its size. ``None`` when the source is there; else the failure for the build log."""
    from apps.core.drivers.db import as_json, now
    from apps.core.drivers.runtime import run_sync
    from apps.functions import code, templates

    row = run_sync(db.fetchone("SELECT template FROM functions_deployment WHERE id = %s", (deployment_id,)))
    template = as_json(row["template"]) if row else None
    if not template or os.path.exists(code.source_path(deployment_id)):
        return None
    try:
        size = templates.fetch(deployment_id, template)
    except templates.TemplateError as exc:
        log.warning("template of deployment %s: %s", deployment_id, exc)
        return str(exc)
    run_sync(db.execute("UPDATE functions_deployment SET source_size = %s, updated_at = %s WHERE id = %s",
                        (size, db.dt(now()), deployment_id)))
    return None


@task(queue_name="functions")
def run_execution(*, execution_id: int, event: str = "") -> None:
    """Run a waiting (async, event) or scheduled execution. A ``processing`` one is run again:
    the worker re-runs a task only when the worker that ran it died (at least once)."""
    from django.db import connection

    from apps.core.drivers.runtime import run_sync
    from apps.functions import executions, selectors

    with connection.cursor() as cur:
        cur.execute("SELECT project_id, function_id, uid FROM functions_execution WHERE id = %s "
                    "AND status IN ('waiting', 'scheduled', 'processing')", [execution_id])
        found = cur.fetchone()
    if found is None:
        return
    ctx = _ctx(found[0])
    function = _function(ctx, found[1])
    row = run_sync(selectors.execution_get(ctx, function, found[2]))
    try:
        run_sync(executions.run(ctx, function, row, event=event))
    except Exception as exc:  # noqa: BLE001 - e.g. the engine went away: record it, do not retry
        log.exception("execution %s failed to run", execution_id)
        run_sync(executions._record(ctx, function, row, status="failed", status_code=500,
                                    errors=f"The execution could not run: {exc}", duration=0.0))


@task(queue_name="functions")
def run_schedule(*, function_id: int, planned: str) -> None:
    """One cron tick of a function: if its schedule still plans ``planned`` (no edit since),
    move ``schedule_next`` to the following time, queue that tick, and run an execution."""
    from django.db import connection

    from apps.core.drivers.db import as_dt, now
    from apps.core.drivers.runtime import run_sync
    from apps.core.tasks.queue import enqueue
    from apps.functions import executions
    from apps.functions.cron import next_after

    with connection.cursor() as cur:
        cur.execute("SELECT project_id FROM functions_function WHERE id = %s", [function_id])
        found = cur.fetchone()
    if found is None:
        return
    ctx = _ctx(found[0])
    function = _function(ctx, function_id)
    when = as_dt(dt.datetime.fromisoformat(planned))
    if when is None or not function["schedule"] or as_dt(function["schedule_next"]) != when:
        return  # the schedule changed: its own chain runs
    following = next_after(function["schedule"], max(when, now()))
    moved = run_sync(ctx.db.execute("UPDATE functions_function SET schedule_next = %s WHERE id = %s AND "
                                    "schedule_next = %s", (ctx.db.dt(following), function_id, ctx.db.dt(when))))
    if not moved:
        return
    run_sync(enqueue(ctx.db, run_schedule.using(run_after=following), function_id=function_id,
                     planned=following.isoformat()))
    if not function["enabled"] or not function["deployment_id"]:
        return
    try:
        row = run_sync(executions.create(ctx, function, trigger="schedule", method="POST", path="/",
                                         headers={}, body=b""))
    except Exception:  # noqa: BLE001 - no ready deployment: skip this tick
        return
    run_sync(executions.run(ctx, function, row))


@task(queue_name="functions", priority=-10)
def remove_code(*, deployment_ids: list[int]) -> None:
    """Remove deleted deployments' code and their warm containers."""
    from apps.functions import code
    from apps.functions.executor import get_executor

    executor = get_executor()
    if executor is not None:
        executor.forget(deployment_ids)
    for deployment_id in deployment_ids:
        code.remove(deployment_id)
