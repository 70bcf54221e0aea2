"""Queue sizes for ``/v1/health/queue/*``: one hook, so the background worker can plug in.

``HEALTH_QUEUE_PROVIDER`` names a function ``(queue: str) -> (size, failed)`` (ints: jobs waiting,
jobs that failed) where ``queue`` is one of :data:`QUEUES`. It is called in a worker thread (it may
block on the database) and must not raise for a known queue name. With no provider every queue
is empty, which is the truth while no background worker exists.
"""

from __future__ import annotations

from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

# Appwrite's queues, by the names of its /v1/health/queue/<name> routes.
QUEUES = ("audits", "builds", "certificates", "databases", "deletes", "functions", "logs", "mails",
          "messaging", "migrations", "stats-resources", "stats-usage", "webhooks")
# /v1/health/queue/failed/<name> takes Appwrite's internal queue names.
FAILED_NAMES = {
    "v1-database": "databases", "v1-deletes": "deletes", "v1-audits": "audits", "v1-mails": "mails",
    "v1-functions": "functions", "v1-stats-resources": "stats-resources", "v1-stats-usage": "stats-usage",
    "v1-webhooks": "webhooks", "v1-certificates": "certificates", "v1-builds": "builds",
    "v1-screenshots": "screenshots", "v1-messaging": "messaging", "v1-migrations": "migrations",
    "v1-notifications": "notifications",
}


def served() -> tuple[str, ...]:
    """The :data:`QUEUES` this server runs: those of the background worker (``TASK_QUEUES``).
    Appwrite's other queues carry work this server does not offer or does within the request."""
    return tuple(q for q in QUEUES if q in settings.TASK_QUEUES)


def no_queues(queue: str) -> tuple[int, int]:
    """The provider in force until a worker exists: every queue empty, nothing failed."""
    return 0, 0


@cache
def provider():
    return import_string(settings.HEALTH_QUEUE_PROVIDER) if settings.HEALTH_QUEUE_PROVIDER else no_queues


def queue_stats(queue: str) -> tuple[int, int]:
    """``(size, failed)`` of ``queue`` from the configured provider (blocking)."""
    size, failed = provider()(queue)
    return int(size), int(failed)
