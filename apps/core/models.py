"""Models of the core app: the background workers' heartbeats (:mod:`apps.core.tasks.worker`) and
the request log (:mod:`apps.core.http.requestlog`)."""

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


class RequestLog(models.Model):
    """One /v1 request, kept when ``REQUEST_LOG`` is on (:mod:`apps.core.http.requestlog` writes
    them in batches; the worker deletes those older than ``REQUEST_LOG_DAYS``). ``project`` is the
    project's public ID as text, not a foreign key: an entry outlives its project, and writing one
    looks nothing up. ``route`` is the endpoint's path template (``/v1/tablesdb/{databaseId}``),
    the request's path when no route matched; ``actor`` is ``user:<id>``, ``key:<id>`` or
    ``guest``."""

    time = models.DateTimeField()
    project = models.CharField("project ID", max_length=36, blank=True, default="")
    method = models.CharField(max_length=10)
    route = models.CharField(max_length=255)
    path = models.CharField(max_length=255)
    status = models.PositiveSmallIntegerField()
    duration_ms = models.FloatField("duration (ms)")
    ip = models.CharField("IP", max_length=64, blank=True, default="")
    actor = models.CharField(max_length=64, blank=True, default="")
    request_id = models.CharField("request ID", max_length=32)
    user_agent = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        db_table = "core_requestlog"
        verbose_name = "request log entry"
        verbose_name_plural = "request log entries"
        indexes = [
            models.Index(fields=["time"], name="core_reqlog_time"),
            models.Index(fields=["project", "time"], name="core_reqlog_project_time"),
        ]

    def __str__(self) -> str:
        return f"{self.method} {self.path} {self.status}"
