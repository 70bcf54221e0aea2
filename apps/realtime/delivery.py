"""From a published event to the frames one connection receives (contract §11; conventions #10).

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

from dataclasses import dataclass, field

import orjson

from apps.core.queries import Query
from apps.realtime.filters import matches

MESSAGE_TYPE = "rt.event"


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


def build_message(families: list, roles: list[str], timestamp: str) -> dict:
    """The channel-layer message for an event (msgpack-safe plain data)."""
    return {
        "type": MESSAGE_TYPE,
        "roles": roles,
        "timestamp": timestamp,
        "families": [
            {"name": f.name, "channels": f.channels, "events": f.events, "payload": f.payload} for f in families
        ],
    }


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
    for family in message["families"]:
        channels = family["channels"]
        wanted = set(channels)
        payload = family["payload"]
        ids = [sub.id for sub in subscriptions.values()
               if not wanted.isdisjoint(sub.channels) and matches(payload, sub.queries)]
        if not ids and (not legacy or wanted.isdisjoint(legacy)):
            continue
        frames.append(orjson.dumps({
            "type": "event",
            "data": {
                "events": family["events"],
                "channels": channels,
                "timestamp": message["timestamp"],
                "payload": payload,
                "subscriptions": ids,
            },
        }))
    return frames
