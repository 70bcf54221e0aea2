"""Publishing committed writes to realtime subscribers.

:func:`on_writes` is subscribed to ``apps.core.domain.events`` (see ``apps.py``), and
``apps.realtime.outbox.record`` records events inside writes' transactions. Each
:class:`~apps.core.domain.events.WriteEvent` becomes one message (``delivery.build_message``) for the
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

from apps.core.domain.events import WriteEvent
from apps.core.domain.timefmt import iso
from apps.core.drivers.db import now
from apps.core.drivers.kv import get_kv
from apps.realtime import outbox
from apps.realtime.delivery import message_for
from apps.realtime.hub import deliver_local

log = logging.getLogger("apps.realtime")


async def on_write(ctx, event: WriteEvent) -> None:
    """Publish one event (see :func:`on_writes`)."""
    await on_writes(ctx, [event])


async def on_writes(ctx, events: list[WriteEvent]) -> None:
    """The ``apps.core.domain.events`` subscriber: publish ``events`` for their projects' sockets, in
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
