"""Housekeeping of the functions app, run by every worker at its start and on each heartbeat
(``apps.core.tasks.worker.every_heartbeat``), and in part by each ASGI process at its start.

* **Executions whose process stopped.** A synchronous execution is run by the API process that
  received it; if that process dies (``kill -9``, a crash, a restart) nobody finishes it. Such an
  execution is failed (status code 500, ``errors`` saying so) when its runner (``<host>:<pid>``,
  recorded when it starts) is a dead process of this host, right away; and any execution still
  ``processing`` longer than its function's timeout plus ``FUNCTIONS_EXECUTION_GRACE`` seconds,
  whichever process ran it. A queued run whose worker died is the queue's: it is run again
  (at least once), and only fails here if it is not finished within that time either.
* **Deployment retention.** A function's ``deploymentRetention`` (days, 0 = keep forever):
  deployments created longer ago than that which are not the active one are deleted, with
  their code, build output and warm containers (Appwrite's maintenance rule).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket

from django.conf import settings

from apps.functions.executor.docker import pid_alive

log = logging.getLogger("apps.functions")

STOPPED = ("The process running this execution stopped before it finished (killed or restarted); "
           "its outcome is unknown.")
OVERDUE = ("No outcome was recorded within the function's timeout plus {grace} seconds: the process "
           "running this execution stopped.")


def _dead_here(runner: str) -> bool:
    host, _, pid = runner.rpartition(":")
    return host == socket.gethostname() and pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid))


def fail_stopped_executions(*, overdue: bool = True) -> int:
    """Fail the executions left ``processing`` by dead processes of this host and, with
    ``overdue``, those past their function's timeout plus the grace period; how many (blocking,
    Django's connection)."""
    from apps.core.drivers.db import as_dt, now
    from apps.core.drivers.db.django_sync import DjangoSync
    from apps.core.drivers.runtime import run_sync
    from apps.functions.executions import fail_stopped
    from apps.functions.tasks import _ctx, _function

    db = DjangoSync()
    grace = settings.FUNCTIONS_EXECUTION_GRACE
    found = run_sync(db.fetchall(
        "SELECT e.id, e.uid, e.project_id, e.function_id, e.runner, e.updated_at, f.timeout "
        "FROM functions_execution e JOIN functions_function f ON f.id = e.function_id "
        "WHERE e.status = 'processing' AND (e.runner LIKE %s OR e.updated_at < %s)",
        (socket.gethostname() + ":%", db.dt(now() - dt.timedelta(seconds=grace)))))
    failed = 0
    for row in found:
        if _dead_here(row["runner"] or ""):
            errors = STOPPED
        elif overdue and as_dt(row["updated_at"]) + dt.timedelta(seconds=int(row["timeout"]) + grace) < now():
            errors = OVERDUE.format(grace=grace)
        else:
            continue
        ctx = _ctx(row["project_id"])
        function = _function(ctx, row["function_id"]) if ctx is not None else None
        if function is not None and run_sync(fail_stopped(ctx, function, row, errors)):
            failed += 1
            log.warning("execution %s failed: %s", row["uid"], errors)
    return failed


def delete_expired_deployments() -> int:
    """Delete the deployments past their function's ``deploymentRetention`` that are not its
    active one (rows, then code and warm containers); how many (blocking)."""
    from apps.core.drivers.db import as_dt, now
    from apps.core.drivers.db.django_sync import DjangoSync
    from apps.core.drivers.runtime import run_sync
    from apps.functions import code
    from apps.functions.deployments import deployment_event
    from apps.functions.executor import get_executor
    from apps.functions.tasks import _ctx, _function

    db = DjangoSync()
    candidates = run_sync(db.fetchall(
        "SELECT d.*, f.deployment_retention FROM functions_deployment d JOIN functions_function f "
        "ON f.id = d.function_id WHERE f.deployment_retention > 0 "
        "AND d.created_at < %s AND (f.deployment_id IS NULL OR d.id <> f.deployment_id)",
        (db.dt(now() - dt.timedelta(days=1)),)))
    gone = []
    for row in candidates:
        if as_dt(row["created_at"]) >= now() - dt.timedelta(days=int(row["deployment_retention"])):
            continue
        # Still not the active one at the moment of the delete (an activation may have raced).
        deleted = run_sync(db.execute(
            "DELETE FROM functions_deployment WHERE id = %s AND NOT EXISTS (SELECT 1 FROM functions_function f "
            "WHERE f.deployment_id = %s)", (row["id"], row["id"])))
        if not deleted:
            continue
        gone.append(row["id"])
        ctx = _ctx(row["project_id"])
        function = _function(ctx, row["function_id"]) if ctx is not None else None
        if function is not None:
            run_sync(deployment_event(ctx, function, row, "delete"))
        log.info("deployment %s deleted: older than its function's retention", row["uid"])
    if gone:
        executor = get_executor()
        if executor is not None:
            executor.forget(gone)
        for deployment_id in gone:
            code.remove(deployment_id)
    return len(gone)


def periodic() -> None:
    """The worker's periodic job (``every_heartbeat``)."""
    fail_stopped_executions()
    delete_expired_deployments()


def at_startup() -> None:
    """An ASGI process's start: fail the executions of this host's dead processes at once
    (the worker would otherwise do it at its next heartbeat, or never on a host without one)."""
    from django.db import connection

    try:
        fail_stopped_executions(overdue=False)
    except Exception:  # noqa: BLE001 - a start is not refused for housekeeping
        log.exception("could not check for executions of stopped processes")
    finally:
        connection.close()


_started: list = []


def start_recovery() -> None:
    """Lifespan start of an ASGI process (``serve_in_background``): :func:`at_startup` on a thread."""
    import asyncio

    # Import here, on the loop's thread, what the job's thread needs: a module (redis) imported
    # for the first time by two threads at once can fail with a partially initialized module.
    from apps.core.drivers.db.django_sync import DjangoSync  # noqa: F401
    from apps.core.drivers.kv import get_kv
    from apps.functions import executions, tasks  # noqa: F401

    get_kv("sync")  # imports redis; connects only when used
    _started.append(asyncio.get_running_loop().run_in_executor(None, at_startup))


async def stop_recovery() -> None:
    import asyncio

    pending = [f for f in _started if not f.done()]
    _started.clear()
    if pending:
        await asyncio.wait(pending, timeout=10)
