"""``/v1/health/queue/<queue>`` and ``/v1/health/queue/failed/<name>``: ``{size}`` from the queue
provider (``apps.health.queues``); at or above ``threshold`` 503 ``health_queue_size_exceeded``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from apps.core.errors import AppwriteError
from apps.core.http.context import json_response
from apps.core.runtime import run_blocking
from apps.health import queues

Threshold = Annotated[int, Field(ge=0, le=2**53)]


class QueueParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
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


def queue_size(queue: str):
    """The handler of ``/v1/health/queue/<queue>``."""

    async def handler(ctx):
        size, _ = await run_blocking(ctx.mode, queues.queue_stats, queue)
        _check(size, ctx.params.threshold, failed=False)
        return json_response({"size": size})

    handler.__name__ = f"queue_{queue.replace('-', '_')}"
    return handler


async def queue_failed(ctx):
    _, failed = await run_blocking(ctx.mode, queues.queue_stats, queues.FAILED_NAMES[ctx.params.name])
    _check(failed, ctx.params.threshold, failed=True)
    return json_response({"size": failed})
