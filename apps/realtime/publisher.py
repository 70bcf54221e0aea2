"""Publishing committed writes to realtime subscribers.

:func:`on_writes` is subscribed to ``apps.core.events`` (see ``apps.py``), and
``apps.realtime.outbox.record`` records events inside writes' transactions. Each
:class:`~apps.core.events.WriteEvent` becomes one message (``delivery.build_message``) for the
sockets of the event's project:

* with ``REDIS_URL``: one ``XADD`` per event to the deployment's event stream
  (``hub.stream_key()``), all of a request's events in one round trip, on the request's store
  client (``ctx.kv``: the pipelined client under ASGI, the pooled sync client under WSGI). Every
  ASGI process reads the stream (``hub.Hub``), so a write served by any process, ASGI or WSGI,
  reaches every socket, also one whose process was reconnecting to Redis at that moment. An
  event Redis cannot take waits in the database outbox (``apps.realtime.outbox``) and is relayed
  when Redis is back: an acknowledged write never loses its event.
* without Redis (one process): straight to this event loop's sockets; a WSGI process without
  Redis has none, so nothing is sent.
"""

from __future__ import annotations

import logging

from django.conf import settings

from apps.core.db import now
from apps.core.events import WriteEvent
from apps.core.kv import get_kv
from apps.core.timefmt import iso
from apps.realtime import outbox
from apps.realtime.channels import PUBLISHED, read_roles_for
from apps.realtime.delivery import build_message
from apps.realtime.hub import deliver_local

log = logging.getLogger("apps.realtime")


def message_for(event: WriteEvent, timestamp: str | None = None) -> dict | None:
    """The message for ``event``, or ``None`` when it is not published.
    ``timestamp`` (ISO-8601) defaults to now."""
    needed = PUBLISHED.get(event.resource)
    if needed is None:
        return None
    if any(key not in event.ids for key in needed):  # caught here, not in every receiving socket
        log.warning("%s event without the ids %s is not published", event.resource, needed)
        return None
    roles = read_roles_for(event)
    if roles is None:
        log.warning("%s event without extra['read_roles'] is delivered to nobody", event.resource)
        roles = []
    return build_message(event, roles, timestamp or iso(now()))


async def on_write(ctx, event: WriteEvent) -> None:
    """Publish one event (see :func:`on_writes`)."""
    await on_writes(ctx, [event])


async def on_writes(ctx, events: list[WriteEvent]) -> None:
    """The ``apps.core.events`` subscriber: publish ``events`` for their projects' sockets, in
    order (see the module docstring). With Redis and a request's database (``ctx.db``) an
    outage leaves the events in the outbox (nothing raised); a caller without ``ctx.db`` (a
    script) gets ``KVUnavailable`` when Redis fails."""
    if settings.REDIS_URL:
        entries = outbox.entries_for(ctx, events)
        if not entries:
            return
        if getattr(ctx, "db", None) is not None:
            await outbox.publish(ctx, entries)
            return
        await outbox.append(getattr(ctx, "kv", None) or get_kv(getattr(ctx, "mode", "async")), entries)
        return
    if getattr(ctx, "mode", "async") == "sync":
        return  # no Redis: a WSGI process has no sockets to tell
    timestamp = iso(now())  # one request's writes committed together
    for event in events:
        message = message_for(event, timestamp)
        if message is not None:
            deliver_local(outbox.project_uid(ctx, event), [message])
