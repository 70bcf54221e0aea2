"""Client -> server frames of the realtime protocol, one handler per type.

``{"type": "ping"}`` -> ``pong``; ``{"type": "authentication", "data": {"session": token}}``;
``{"type": "subscribe", "data": [{"subscriptionId", "channels", "queries"}]}`` (an existing ID is
replaced, as the web SDK's ``update`` expects); ``{"type": "unsubscribe", "data":
[{"subscriptionId"}]}``. Bad frames get an ``error`` frame with code 1003
(``realtime_message_format_invalid``) and the connection stays open, as in Appwrite's
``app/realtime.php`` onMessage.
"""

from __future__ import annotations

import orjson
from django.conf import settings

from apps.accounts.responses import user_model
from apps.core.domain.channels import rewrite_account
from apps.core.domain.ids import unique_id
from apps.core.errors import AppwriteError
from apps.realtime.delivery import Subscription
from apps.realtime.filters import compile_queries
from apps.realtime.handshake import FORMAT_INVALID, resolve_auth

MAX_CHANNELS = 100  # per subscription
MAX_ID_LENGTH = 64


class BadMessage(Exception):
    """A client frame that breaks the protocol; answered with an ``error`` frame (1003)."""


async def handle(conn, text: str) -> None:
    """Dispatch one client frame for connection ``conn``."""
    try:
        if len(text) > settings.REALTIME_MAX_MESSAGE_BYTES:
            raise BadMessage("Message is too large.")
        try:
            message = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise BadMessage("Message format is not valid.") from None
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise BadMessage("Message format is not valid.")
        handler = HANDLERS.get(message["type"])
        if handler is None:
            raise BadMessage("Message type is not valid.")
        await handler(conn, message.get("data"))
    except BadMessage as bad:
        await conn.error(FORMAT_INVALID, str(bad))
    except AppwriteError as err:
        await conn.error(FORMAT_INVALID, err.message)


async def on_ping(conn, data) -> None:
    await conn.send_frame("pong")


async def on_authentication(conn, data) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("session"), str) or not data["session"]:
        raise BadMessage("Payload is not valid.")
    credential = {"x-appwrite-session": data["session"]}
    auth = await resolve_auth(conn.ctx, credential)
    if auth.user is None:
        raise BadMessage("Session is not valid.")
    conn.set_auth(auth, credential)
    await conn.send_frame("response", {"to": "authentication", "success": True, "user": user_model(auth.user)})


def _subscription(conn, row) -> Subscription:
    if not isinstance(row, dict):
        raise BadMessage("Payload is not valid.")
    sub_id = row.get("subscriptionId") or unique_id()
    channels = row.get("channels")
    if not isinstance(sub_id, str) or len(sub_id) > MAX_ID_LENGTH:
        raise BadMessage("subscriptionId is not valid.")
    if (not isinstance(channels, list) or not channels or len(channels) > MAX_CHANNELS
            or not all(isinstance(c, str) and 0 < len(c) <= 256 for c in channels)):
        raise BadMessage("Channels are not valid.")
    raw_queries = row.get("queries") or []
    queries = compile_queries(raw_queries)
    return Subscription(id=sub_id, requested=list(channels), channels=frozenset(rewrite_account(channels, conn.user_id)),
                        queries=queries, raw_queries=list(raw_queries))


async def on_subscribe(conn, data) -> None:
    rows = data if isinstance(data, list) else [data]
    subs = [_subscription(conn, row) for row in rows]
    new_ids = {s.id for s in subs} - set(conn.subscriptions)
    if len(conn.subscriptions) + len(new_ids) > settings.REALTIME_MAX_SUBSCRIPTIONS:
        raise BadMessage(f"At most {settings.REALTIME_MAX_SUBSCRIPTIONS} subscriptions per connection.")
    for sub in subs:
        conn.subscriptions[sub.id] = sub
    await conn.send_frame("response", {"to": "subscribe", "success": True,
                                       "subscriptions": [s.describe() for s in subs]})


async def on_unsubscribe(conn, data) -> None:
    rows = data if isinstance(data, list) else [data]
    removed = []
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("subscriptionId"), str):
            raise BadMessage("Payload is not valid.")
        sub = conn.subscriptions.pop(row["subscriptionId"], None)
        removed.append(sub.describe() if sub else {"subscriptionId": row["subscriptionId"], "channels": [], "queries": []})
    await conn.send_frame("response", {"to": "unsubscribe", "success": True, "subscriptions": removed})


HANDLERS = {
    "ping": on_ping,
    "authentication": on_authentication,
    "subscribe": on_subscribe,
    "unsubscribe": on_unsubscribe,
}
