"""Models of the core app: the background workers' heartbeats (:mod:`apps.core.worker`)."""

from __future__ import annotations

from django.db import models


class TaskWorker(models.Model):
    """A running background worker. ``seen_at`` is refreshed every ``TASKS_HEARTBEAT`` seconds;
    tasks left running by a worker not seen for ``TASKS_WORKER_TIMEOUT`` seconds are run again."""

    worker_id = models.CharField(max_length=64, primary_key=True)
    host = models.CharField(max_length=255, blank=True, default="")
    pid = models.PositiveIntegerField(default=0)
    seen_at = models.DateTimeField()

    class Meta:
        db_table = "core_taskworker"

    def __str__(self) -> str:
        return f"{self.worker_id} ({self.host}:{self.pid})"
