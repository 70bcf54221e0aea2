"""The background worker and its queues as the admin's home page shows them.

* **Workers**: the heartbeats the workers record (:class:`apps.core.models.TaskWorker`, refreshed
  every ``TASKS_HEARTBEAT`` seconds by :mod:`apps.core.tasks.worker`). A worker is alive when seen within
  ``TASKS_WORKER_TIMEOUT`` seconds, the same rule by which its running tasks are recovered. The
  check fails when no worker is alive: queued mail then waits for ever.
* **Queues**: the numbers ``GET /v1/health/queue/<name>`` and ``/v1/health/queue/failed/<name>``
  answer, from the same provider (``apps.health.queues.queue_stats``); a queue fails at
  ``THRESHOLD`` waiting tasks, the API's default ``threshold``.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.health import queues

THRESHOLD = 5000  # the default ``threshold`` of /v1/health/queue/*


def workers() -> dict:
    """``{"status": "pass" | "fail", "message": str, "alive": [{"worker_id", "host", "pid",
    "seen_ago": float seconds}], "timeout": float seconds}``."""
    from apps.core.models import TaskWorker

    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.TASKS_WORKER_TIMEOUT)
    alive = [{"worker_id": w.worker_id, "host": w.host, "pid": w.pid,
              "seen_ago": round((now - w.seen_at).total_seconds(), 1)}
             for w in TaskWorker.objects.filter(seen_at__gte=cutoff).order_by("worker_id")]
    if alive:
        message = f"{len(alive)} worker(s) alive"
    else:
        message = (f"no worker seen in the last {settings.TASKS_WORKER_TIMEOUT:g} s: queued tasks (mail, "
                   "deletes, messages, webhooks, functions) wait until one runs (manage.py worker)")
    return {"status": "pass" if alive else "fail", "message": message, "alive": alive,
            "timeout": settings.TASKS_WORKER_TIMEOUT}


def queue_rows() -> list[dict]:
    """One ``{"name", "route", "failed_route", "size", "failed", "status", "message", "runs"}`` per
    queue of ``apps.health.queues.QUEUES``; ``runs`` when this server has tasks on that queue
    (``TASK_QUEUES``), ``failed_route`` ``""`` when Appwrite has no failed-jobs route for it; ``status`` is ``"fail"`` at ``THRESHOLD`` waiting or failed tasks,
    as the API's check with its default threshold."""
    failed_route = {queue: name for name, queue in queues.FAILED_NAMES.items()}
    rows = []
    for name in queues.QUEUES:
        size, failed = queues.queue_stats(name)
        over = [what for what, n in (("waiting", size), ("failed", failed)) if n >= THRESHOLD]
        rows.append({"name": name, "route": f"/v1/health/queue/{name}", "size": size, "failed": failed,
                     "failed_route": f"/v1/health/queue/failed/{failed_route[name]}" if name in failed_route else "",
                     "status": "fail" if over else "pass", "runs": name in settings.TASK_QUEUES,
                     "message": f"{' and '.join(over)} tasks at or above {THRESHOLD}" if over else ""})
    return rows


def snapshot() -> dict:
    """``{"worker": workers(), "queues": queue_rows(), "waiting": int, "stuck": bool}``; ``stuck``
    when tasks wait and no worker is alive to run them."""
    worker = workers()
    rows = queue_rows()
    waiting = sum(row["size"] for row in rows)
    return {"worker": worker, "queues": rows, "waiting": waiting, "stuck": bool(waiting) and worker["status"] == "fail"}
