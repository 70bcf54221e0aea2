"""``/v1/health/queue/<queue>`` and ``/v1/health/queue/failed/<name>``: ``{size}`` from the queue
provider (``apps.health.queues``); at or above ``threshold`` 503 ``health_queue_size_exceeded``.

A queue this server does not run (``functions``, ``builds``...: :func:`apps.health.queues.served`)
answers 503 ``general_service_disabled`` naming the queues it runs, rather than a size of 0 that
would read as healthy. The routes stay declared: the SDKs have these methods, and Appwrite answers
a disabled service the same way."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from apps.core.drivers.runtime import run_blocking
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response
from apps.core.http.inputs import Strict
from apps.health import queues

Threshold = Annotated[int, Field(ge=0, le=2**53)]


class QueueParams(Strict):
    threshold: Threshold = 5000


class DatabaseQueueParams(QueueParams):
    name: Annotated[str, StringConstraints(min_length=1, max_length=128)] = "database_db_main"


class FailedParams(QueueParams):
    name: Literal[tuple(queues.FAILED_NAMES)]  # type: ignore[valid-type]


def _check(size: int, threshold: int, failed: bool) -> None:
    if size >= threshold:
        what = "failed jobs" if failed else "jobs"
        raise AppwriteError("health_queue_size_exceeded",
                            f"Queue {what} threshold hit. Current value is {size} and threshold is {threshold}.")


def _require_served(queue: str) -> None:
    runs = queues.served()
    if queue not in runs:
        raise AppwriteError("general_service_disabled",
                            f"This server runs no `{queue}` queue; the queues it runs are "
                            f"{', '.join(runs) or 'none'}.")


def queue_size(queue: str):
    """The handler of ``/v1/health/queue/<queue>``."""

    async def handler(ctx):
        _require_served(queue)
        size, _ = await run_blocking(ctx.mode, queues.queue_stats, queue)
        _check(size, ctx.params.threshold, failed=False)
        return json_response({"size": size})

    handler.__name__ = f"queue_{queue.replace('-', '_')}"
    return handler


async def queue_failed(ctx):
    _require_served(queues.FAILED_NAMES[ctx.params.name])
    _, failed = await run_blocking(ctx.mode, queues.queue_stats, queues.FAILED_NAMES[ctx.params.name])
    _check(failed, ctx.params.threshold, failed=True)
    return json_response({"size": failed})
