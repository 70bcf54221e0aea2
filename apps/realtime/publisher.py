"""Publishing committed writes to realtime subscribers through the channel layer.

:func:`on_write` is subscribed to ``apps.core.events`` (see ``apps.py``). It turns a
:class:`~apps.core.events.WriteEvent` into one channel-layer message and ``group_send``s it to the
project's group ``rt.<projectId>``; every connection of that project, in any process, is a member
and filters by its own subscriptions and roles (``delivery.py``).

* ASGI (``ctx.mode == "async"``): ``channel_layer.group_send`` - with ``REDIS_URL`` the
  ``RedisPubSubChannelLayer`` (one ``PUBLISH``, reaches every process), else the in-process layer.
* WSGI (``ctx.mode == "sync"``, no event loop): the same bytes are ``PUBLISH``ed with the sync
  redis client: the group's Redis channel is ``<prefix>__group__<group>`` and the body is the
  layer's own msgpack serialisation (channels_redis ``pubsub.py`` ``group_send``), so WSGI writes
  reach ASGI subscribers. Without Redis a WSGI process has no subscribers: nothing is sent.
"""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings

from apps.core.db import now
from apps.core.events import WriteEvent
from apps.core.timefmt import iso
from apps.realtime.channels import PUBLISHED, read_roles_for
from apps.realtime.delivery import build_message

log = logging.getLogger("apps.realtime")

_sync_client = None


def group_name(project_uid: str) -> str:
    """The channel-layer group of a project's connections."""
    return f"rt.{project_uid}"


def _project_uid(ctx, event: WriteEvent) -> str:
    # Writers should pass the public project ID; accept the internal primary key too.
    project = getattr(ctx, "project", None)
    if project and str(event.project_id) == str(project.get("id")) and project.get("uid"):
        return project["uid"]
    return str(event.project_id)


def message_for(event: WriteEvent, timestamp: str | None = None) -> dict | None:
    """The channel-layer message for ``event``, or ``None`` when it is not published.
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
    """The ``apps.core.events`` subscriber: publish ``events`` for the project's sockets.

    With the Redis pub/sub layer this is one ``PUBLISH`` per event of the layer's own
    serialisation, all of a batch pipelined in one round trip on the request's pooled Redis
    client (``ctx.kv``; sync client under WSGI): exactly what the layer's ``group_send`` would
    send, without its single shared connection (which queued publishes behind each other under
    load). Without Redis: the in-process layer's ``group_send``, one per event.
    """
    out = []
    timestamp = iso(now())  # one request's writes committed together
    for event in events:
        message = message_for(event, timestamp)
        if message is not None:
            out.append((group_name(_project_uid(ctx, event)), message))
    if not out:
        return
    from channels.layers import get_channel_layer

    if redis_group_channel(out[0][0]) is not None:
        kv = getattr(ctx, "kv", None)
        if kv is None:  # called outside a request (tests, management commands)
            for group, message in out:
                publish_sync(group, message)
            return
        layer = get_channel_layer()
        await kv.publish_many([(redis_group_channel(group), layer.serialize(message)) for group, message in out])
        return
    if getattr(ctx, "mode", "async") == "sync":
        return  # no Redis: a WSGI process has no sockets to tell
    layer = get_channel_layer()
    if layer is None:
        return
    for group, message in out:
        await asyncio.wait_for(layer.group_send(group, message), settings.REALTIME_PUBLISH_TIMEOUT)


def redis_group_channel(group: str) -> str | None:
    """The Redis channel the pub/sub layer uses for ``group``, or ``None`` without that layer."""
    config = settings.CHANNEL_LAYERS.get("default", {})
    if not config.get("BACKEND", "").endswith("RedisPubSubChannelLayer") or not settings.REDIS_URL:
        return None
    prefix = config.get("CONFIG", {}).get("prefix", "asgi")
    return f"{prefix}__group__{group}"


def publish_sync(group: str, message: dict) -> bool:
    """``PUBLISH`` ``message`` to ``group`` without an event loop; False when there is no
    Redis pub/sub layer to publish to."""
    global _sync_client
    channel = redis_group_channel(group)
    if channel is None:
        return False
    import redis
    from channels.layers import get_channel_layer

    if _sync_client is None:
        _sync_client = redis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=settings.REALTIME_PUBLISH_TIMEOUT,
            socket_connect_timeout=settings.REALTIME_PUBLISH_TIMEOUT,
        )
    _sync_client.publish(channel, get_channel_layer().serialize(message))
    return True
