"""From a committed write to queued webhook deliveries (the core write-event subscriber).

The request path only enqueues: for each announced event whose names match a webhook's
``events``, one :func:`apps.webhooks.tasks.deliver` task is stored through the request's own SQL
driver (one ``INSERT`` per match, no network). A slow or failing receiver is the worker's
business and never delays a response. The enabled webhooks of a project (their internal IDs and
event filters) are kept per process in a :class:`apps.core.drivers.cache.LocalCache`, so a project
without webhooks pays no query per write; every webhook write invalidates :func:`webhooks_tag`.

Event names are the ones realtime publishes (Appwrite's ``Event::generateEvents``: the concrete
name and its wildcard variants, e.g. ``databases.db.tables.t.rows.r.create``,
``databases.*.tables.*.rows.*.create``, ``databases.*.tables.*.rows.*``), see
:func:`apps.core.domain.channels.family_names`.
"""

from __future__ import annotations

import logging

from apps.core.domain.events import WriteEvent
from apps.core.drivers.cache import LocalCache

log = logging.getLogger("apps.webhooks")
_hooks = LocalCache("webhooks")


def webhooks_tag(project_pk: int) -> str:
    """The cache tag of a project's webhook list (invalidated by every webhook write)."""
    return f"webhooks:{project_pk}"


def event_names(event: WriteEvent) -> list[str]:
    """Every event name of ``event`` (all its families), concrete first; ``[]`` for writes that
    have no Appwrite event name here (sessions, tokens)."""
    from apps.core.domain.channels import family_names

    try:
        families = family_names(event.resource, event.action, tuple(sorted(event.ids.items())),
                                event.extra.get("detail"))
    except KeyError:
        return []
    names: list[str] = []
    for _, _, events in families:
        names.extend(events)
    return list(dict.fromkeys(names))


async def _load(ctx, project_pk: int):
    from apps.core.drivers.db import as_json

    rows = await ctx.db.fetchall(
        "SELECT id, events FROM webhooks_webhook WHERE project_id = %s AND enabled = %s", (project_pk, True))
    return tuple((row["id"], frozenset(as_json(row["events"]) or ())) for row in rows)


async def on_writes(ctx, events: list[WriteEvent]) -> None:
    """Enqueue a delivery per (event, matching enabled webhook) of ``ctx.project``."""
    project = getattr(ctx, "project", None)
    if project is None or not events:
        return
    pk = project["id"]
    hooks = await _hooks.fetch(pk, lambda: _load(ctx, pk), lambda _: (webhooks_tag(pk),))
    if not hooks:
        return
    from apps.core.tasks.queue import enqueue
    from apps.webhooks.tasks import deliver

    user_id = ctx.auth.user["uid"] if getattr(ctx, "auth", None) is not None and ctx.auth.user else ""
    for event in events:
        names = event_names(event)
        if not names:
            continue
        wanted = set(names)
        for hook_pk, filters in hooks:
            if filters & wanted:
                await enqueue(ctx.db, deliver, webhook_pk=hook_pk, events=names, payload=event.payload,
                              user_id=user_id or event.ids.get("userId", ""), project_uid=event.project_id)
