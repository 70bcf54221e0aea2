"""Event triggers: a committed write whose event names match a function's ``events`` queues an
execution of that function (trigger ``event``, the write's model as the JSON body, the event
name in ``x-appwrite-event``), run by the worker.

Event names are the product's own, the same the realtime service sends
(``databases.<db>.tables.<table>.rows.<row>.create``, ``buckets.<b>.files.<f>.update``,
``users.<u>.sessions...``, ``functions.<f>.executions.<e>.update``...); a function's pattern
may use ``*`` for any ID, as Appwrite's do. An execution's own events never trigger the same
function (no loops). The subscriber reads a project's functions that have events
(``has_events``, indexed) at most once a second per process, so a new or changed function's
events take effect within a second.
"""

from __future__ import annotations

import logging
import time

import orjson

from apps.core.drivers.db import as_bool, as_json

log = logging.getLogger("apps.functions")


def event_names(event) -> list[str]:
    """The full event names of a write event (most specific first), as Appwrite emits them."""
    from apps.core.domain.channels import event_names as build
    from apps.core.domain.channels import family_names

    if event.resource == "function":
        return build([("functions", event.ids["functionId"])], event.action)
    if event.resource == "deployment":
        return build([("functions", event.ids["functionId"]), ("deployments", event.ids["deploymentId"])],
                     event.action)
    if event.resource == "execution":
        return build([("functions", event.ids["functionId"]), ("executions", event.ids["executionId"])],
                     event.action)
    try:
        families = family_names(event.resource, event.action, tuple(sorted(event.ids.items())),
                                event.extra.get("detail"))
    except KeyError:
        return []
    return [name for family in families for name in family[2]]


def matches(pattern: str, names: list[str]) -> str | None:
    """The first of ``names`` equal to ``pattern`` (whose ``*`` segments stand for any ID)."""
    wanted = pattern.split(".")
    for name in names:
        parts = name.split(".")
        if len(parts) == len(wanted) and all(w in ("*", p) for w, p in zip(wanted, parts, strict=True)):
            return name
    return None


async def on_events(ctx, events: list) -> None:
    """Subscriber of every committed batch of write events (``apps.core.domain.events``)."""
    project = getattr(ctx, "project", None)
    if not events or not project:
        return
    rows = await _event_functions(ctx, project["id"])
    if not rows:
        return
    for event in events:
        names = event_names(event)
        if not names:
            continue
        for fn in rows:
            if not as_bool(fn["enabled"]) or not fn["deployment_id"]:
                continue
            if event.resource == "execution" and event.ids.get("functionId") == fn["uid"]:
                continue
            if any(matches(p, names) for p in as_json(fn["events"]) or []):
                await _queue(ctx, fn, names[0], event.payload)


CACHE_SECONDS = 1.0  # how stale a process's view of a project's event functions may be
_cache: dict[int, tuple[float, list[dict]]] = {}


async def _event_functions(ctx, project_id: int) -> list[dict]:
    """The project's functions that have events, read at most once a second per process: a
    burst of writes costs one indexed query a second, not one per write; a function created or
    changed is seen by every process within :data:`CACHE_SECONDS`."""
    now = time.monotonic()
    hit = _cache.get(project_id)
    if hit is not None and hit[0] > now:
        return hit[1]
    rows = await ctx.db.fetchall(
        "SELECT id, uid, events, enabled, deployment_id FROM functions_function WHERE project_id = %s "
        "AND has_events = %s", (project_id, True))
    if len(_cache) > 10000:
        _cache.clear()
    _cache[project_id] = (now + CACHE_SECONDS, rows)
    return rows


async def _queue(ctx, fn: dict, event_name: str, payload: dict) -> None:
    from apps.core.tasks.queue import enqueue
    from apps.functions import executions, selectors
    from apps.functions.tasks import run_execution

    try:
        function = await selectors.function_get(ctx, fn["uid"])
        row = await executions.create(ctx, function, trigger="event", method="POST", path="/",
                                      headers={"content-type": "application/json"}, body=orjson.dumps(payload))
        await enqueue(ctx.db, run_execution, execution_id=row["id"], event=event_name)
    except Exception:  # noqa: BLE001 - the write has committed: never fail it over a trigger
        log.exception("event %s could not trigger function %s", event_name, fn["uid"])
