"""From a published event to the frames one connection receives.

Authorisation happens here, at delivery: an event reaches a connection only if the
connection's *current* roles (re-resolved from its credential at most every
``REALTIME_AUTH_TTL`` seconds) intersect the event's read roles. The read roles are computed by
the writer at commit time with the same rules as a REST read (container read roles, plus the
item's read roles when rowSecurity/fileSecurity is on; ``user:<id>`` for account events), so
this is the REST read check reduced to a role intersection.

Then each family of the event (rows, documents, files, account) is matched against the
connection's subscriptions (channel overlap, then the subscription's queries against that
family's payload); one ``event`` frame per family lists the matching subscription IDs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import orjson

from apps.core.domain.channels import PUBLISHED, document_payload, family_names, read_roles_for
from apps.core.domain.events import WriteEvent
from apps.core.domain.queries import Query
from apps.core.domain.timefmt import iso
from apps.core.drivers.db import now
from apps.realtime.filters import matches

MESSAGE_TYPE = "rt.event"

log = logging.getLogger("apps.realtime")


@dataclass(slots=True)
class Subscription:
    """One subscription: ``channels`` as requested and as matched (``account`` rewritten)."""

    id: str
    requested: list[str]
    channels: frozenset[str]
    queries: list[Query] = field(default_factory=list)
    raw_queries: list[str] = field(default_factory=list)

    def describe(self) -> dict:
        """The ``{subscriptionId, channels, queries}`` object of ``response`` frames."""
        return {"subscriptionId": self.id, "channels": sorted(self.channels), "queries": self.raw_queries}


# The User model's fields the Users service shows to API keys only (the stored password hash):
# never sent to sockets, which are users' (an ``account`` channel, an impersonator's socket).
_KEY_ONLY_FIELDS = frozenset({"password", "hash", "hashOptions"})
_USER_RESOURCES = frozenset({"account", "session", "user"})  # events whose payload may be a User


def build_message(event: WriteEvent, roles: list[str], timestamp: str) -> dict:
    """The published message for ``event`` (JSON-safe plain data): the event itself, not
    its channels and event names. Those are a pure function of the event
    (:func:`~apps.core.domain.channels.family_names`), derived at delivery once per event per
    process; publishing them made a bulk write of 100 rows build and send 4,400 event names."""
    payload = event.payload
    if event.resource in _USER_RESOURCES and isinstance(payload, dict) and _KEY_ONLY_FIELDS & payload.keys():
        payload = {k: v for k, v in payload.items() if k not in _KEY_ONLY_FIELDS}
    body = {"resource": event.resource, "action": event.action, "ids": event.ids, "payload": payload}
    detail = event.extra.get("detail")
    if detail:
        body["detail"] = detail
    return {"type": MESSAGE_TYPE, "roles": roles, "timestamp": timestamp, "event": body}


def message_families(message: dict) -> list[tuple[str, tuple | list, tuple | list, dict]]:
    """``(name, channels, events, payload)`` of each family of a published ``message``. Messages
    that carry their families (published by a release before the event-only form) are read as
    they are. The reverse does not hold: a process of that older release cannot read this form
    (its sockets close with 1011 and the SDKs reconnect), so realtime clients on old processes
    reconnect once during a rolling upgrade."""
    if "families" in message:
        return [(f["name"], f["channels"], f["events"], f["payload"]) for f in message["families"]]
    event = message["event"]
    payload = event["payload"]
    names = family_names(event["resource"], event["action"], tuple(sorted(event["ids"].items())), event.get("detail"))
    return [(name, channels, events, document_payload(payload) if name == "documents" else payload)
            for name, channels, events in names]


def may_read(message: dict, roles: list[str]) -> bool:
    """True when one of the subscriber's ``roles`` is among the event's read roles."""
    allowed = message.get("roles") or ()
    return any(role in allowed for role in roles)


def frames_for(message: dict, subscriptions: dict[str, Subscription], legacy: frozenset[str],
               roles: list[str]) -> list[bytes]:
    """The encoded ``event`` frames for one connection (``[]`` when nothing matches).

    ``legacy`` are the channels given as ``channels[]=`` URL params (an implicit subscription
    without an ID, without queries).
    """
    if not may_read(message, roles):
        return []
    frames = []
    try:
        families = message_families(message)
    except (KeyError, TypeError):  # a malformed message must not close the connection
        log.warning("realtime: undeliverable message dropped (%s)", sorted(message))
        return []
    for _, channels, events, payload in families:
        wanted = frozenset(channels)
        ids = [sub.id for sub in subscriptions.values()
               if not wanted.isdisjoint(sub.channels) and matches(payload, sub.queries)]
        if not ids and (not legacy or wanted.isdisjoint(legacy)):
            continue
        frames.append(orjson.dumps({
            "type": "event",
            "data": {
                "events": events,
                "channels": channels,
                "timestamp": message["timestamp"],
                "payload": payload,
                "subscriptions": ids,
            },
        }))
    return frames


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
