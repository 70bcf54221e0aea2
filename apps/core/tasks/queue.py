"""Enqueueing background tasks from /v1 handlers, and the queue's numbers for health checks.

Tasks are Django tasks (``django.tasks.task``) stored by the django-tasks-db backend in its table
``django_tasks_database_dbtaskresult`` and run by ``manage.py worker`` (:mod:`apps.core.tasks.worker`).
Code outside a request enqueues the framework's way (``task.enqueue(...)``, Django's ORM). A
handler uses :func:`enqueue` instead: the row is written through the request's own SQL driver
(``ctx.db`` or a transaction of it), so it costs one statement, no thread hop and no second
connection, and it commits or rolls back together with the write that needs it (a token and the
mail that carries its secret are stored in one transaction, or neither is).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.utils.json import normalize_json

from apps.core.drivers.db import Database, now

TABLE = "django_tasks_database_dbtaskresult"
# Columns written by :func:`enqueue`; a test compares them with the backend's model, so an upgrade
# of django-tasks-db that changes the table fails loudly instead of writing bad rows.
COLUMNS = ("id", "status", "args_kwargs", "priority", "task_path", "queue_name", "backend_name", "run_after",
           "enqueued_at", "started_at", "finished_at", "return_value", "exception_class_path", "traceback",
           "worker_ids")


async def enqueue(db: Database, task: Any, *args: Any, **kwargs: Any) -> str:
    """Store a run of ``task(*args, **kwargs)`` (JSON-serialisable arguments) with ``db`` (a
    request's ``ctx.db`` or an open transaction of it); returns the task result ID (a UUID).

    The task's priority, queue and ``run_after`` are honoured as the backend would. Raises
    ``django.tasks.exceptions.InvalidTask`` for a task the backend refuses (e.g. not at module
    level, or an unknown queue).
    """
    from django_tasks_db.models import get_date_max

    backend = task.get_backend()
    backend.validate_task(task)
    result_id = uuid.uuid4()
    run_after = task.run_after or get_date_max()
    payload = normalize_json({"args": list(args), "kwargs": kwargs})
    created = now()
    key = result_id if db.vendor == "postgresql" else result_id.hex  # how Django stores a UUIDField
    await db.execute(
        f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) "
        "VALUES (%s, 'READY', %s, %s, %s, %s, %s, %s, %s, NULL, NULL, NULL, '', '', %s)",
        (key, db.json(payload), task.priority, task.module_path, task.queue_name, backend.alias,
         db.dt(run_after), db.dt(created), db.json([])),
    )
    return str(result_id)


async def queue_size(ctx: Any, queue: str) -> int:
    """Tasks of ``queue`` (``mails``, ``deletes``...) waiting to run or running now."""
    return int(await ctx.db.fetchval(
        f"SELECT count(*) AS n FROM {TABLE} WHERE queue_name = %s AND status IN ('READY', 'RUNNING')", (queue,)
    ))


async def failed_count(ctx: Any, queue: str) -> int:
    """Tasks of ``queue`` that failed on their last attempt and will not run again."""
    return int(await ctx.db.fetchval(
        f"SELECT count(*) AS n FROM {TABLE} WHERE queue_name = %s AND status = 'FAILED'", (queue,)
    ))


def health_queue_stats(queue: str) -> tuple[int, int]:
    """``(size, failed)`` of ``queue`` for ``/v1/health/queue/*`` (the health app's
    ``HEALTH_QUEUE_PROVIDER`` signature; blocking, Django's ORM). Queues this server does not
    run (``audits``, ``builds``...) are empty."""
    from django_tasks_db.models import DBTaskResult

    rows = DBTaskResult.objects.filter(queue_name=queue)
    return rows.filter(status__in=("READY", "RUNNING")).count(), rows.filter(status="FAILED").count()
