"""Channel and event names for a committed write.

Appwrite's ``Realtime::fromPayload`` publishes a row/document to both API families and every
item to a generic channel, its container channel and its own channel; channels that end in a
resource name, or sit one level below it, also get ``.create``/``.update``/``.upsert``/``.delete``
copies, so ``Channel.tablesdb('db').table('t').row().create()`` only sees creations. The
``events`` list holds the concrete event name plus its wildcard variants (Appwrite
``Event::generateEvents``; the exact set is unverified, see the contract).

A write becomes one or more *families*: the same event seen through one API. Each family has its
own channels, events and payload (documents carry ``$collectionId``, rows ``$tableId``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from apps.core.domain.events import WriteEvent

RESOURCE_NAMES = frozenset({"rows", "documents", "files", "teams", "memberships"})
ACTIONS = ("create", "update", "upsert", "delete")


@dataclass(slots=True)
class Family:
    """One view of an event: ``name`` is ``rows``, ``documents``, ``files`` or ``account``."""

    name: str
    channels: list[str]
    events: list[str]
    payload: dict[str, Any]


def with_action_copies(channels: list[str], action: str) -> list[str]:
    """``channels`` plus ``<channel>.<action>`` for those ending in, or one level below, a
    resource name."""
    out = list(channels)
    if action not in ACTIONS:
        return out
    for channel in channels:
        parts = channel.split(".")
        if parts[-1] in RESOURCE_NAMES or (len(parts) > 1 and parts[-2] in RESOURCE_NAMES):
            out.append(f"{channel}.{action}")
    return out


def event_names(path: list[tuple[str, str]], action: str) -> list[str]:
    """Concrete and wildcard event names for a resource ``path`` of ``(segment, id)`` pairs.

    ``[("databases", "db"), ("collections", "c"), ("documents", "d")]`` with ``create`` gives
    ``databases.db.collections.c.documents.d.create`` first, then every variant with some IDs
    replaced by ``*``, with and without the action, then the shorter prefixes.
    """
    # Each level extends every name of the level above with the concrete ID, then with "*"
    # (string concatenation only). Computed once per event per process (family_names is cached).
    levels: list[list[str]] = []
    names: list[str] = [""]
    for seg, ident in path:
        concrete, star = f".{seg}.{ident}", f".{seg}.*"
        names = [n + part for n in names for part in (concrete, star)]
        levels.append([n[1:] for n in names])
    out = [f"{n}.{action}" for n in levels[-1]] if action and levels else []
    for level in reversed(levels):
        out.extend(level)
    return list(dict.fromkeys(out))


def document_payload(row: dict[str, Any]) -> dict[str, Any]:
    """A row model (TablesDB form) as a document model: ``$tableId`` becomes ``$collectionId``."""
    return {("$collectionId" if key == "$tableId" else key): value for key, value in row.items()}


# Resources realtime publishes, with the IDs their channels and event names need.
PUBLISHED = {"row": ("databaseId", "tableId", "rowId"), "file": ("bucketId", "fileId"), "account": ("userId",),
             "team": ("teamId",), "membership": ("teamId", "membershipId"),
             "execution": ("functionId", "executionId")}


def families_for(event: WriteEvent) -> list[Family]:
    """The families of ``event``; ``[]`` for resources realtime does not publish.

    Raises ``KeyError`` when ``event.ids`` lacks an ID the resource needs.
    """
    if event.resource not in PUBLISHED:
        return []
    names = family_names(event.resource, event.action, tuple(sorted(event.ids.items())), event.extra.get("detail"))
    return [Family(name, list(channels), list(events),
                   document_payload(event.payload) if name == "documents" else event.payload)
            for name, channels, events in names]


@lru_cache(maxsize=2048)
def family_names(resource: str, action: str, ids: tuple[tuple[str, str], ...],
                 detail: str | None) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """``(family name, channels, events)`` of each family of an event: a pure function of the
    event's resource, action, IDs (sorted ``(key, id)`` pairs) and detail, so every connection
    of a process that delivers the same event shares one computation. ``()`` for resources
    realtime does not publish. Raises ``KeyError`` when ``ids`` lacks an ID the resource needs."""
    by_key = dict(ids)
    if resource == "row":
        db, table, row = by_key["databaseId"], by_key["tableId"], by_key["rowId"]
        rows = with_action_copies([
            "rows",
            f"databases.{db}.tables.{table}.rows", f"databases.{db}.tables.{table}.rows.{row}",
            f"tablesdb.{db}.tables.{table}.rows", f"tablesdb.{db}.tables.{table}.rows.{row}",
        ], action)
        documents = with_action_copies([
            "documents",
            f"databases.{db}.collections.{table}.documents", f"databases.{db}.collections.{table}.documents.{row}",
        ], action)
        return (
            ("rows", tuple(rows), tuple(event_names([("databases", db), ("tables", table), ("rows", row)], action))),
            ("documents", tuple(documents),
             tuple(event_names([("databases", db), ("collections", table), ("documents", row)], action))),
        )
    if resource == "file":
        bucket, file = by_key["bucketId"], by_key["fileId"]
        channels = with_action_copies(["files", f"buckets.{bucket}.files", f"buckets.{bucket}.files.{file}"], action)
        return (("files", tuple(channels), tuple(event_names([("buckets", bucket), ("files", file)], action))),)
    if resource == "team":
        team = by_key["teamId"]
        events = event_names([("teams", team)], action)
        if detail:
            events = [f"teams.{team}.{action}.{detail}", f"teams.*.{action}.{detail}", *events]
        return (("teams", tuple(with_action_copies(["teams", f"teams.{team}"], action)), tuple(events)),)
    if resource == "membership":
        team, membership = by_key["teamId"], by_key["membershipId"]
        events = event_names([("teams", team), ("memberships", membership)], action)
        if detail:
            events = [f"teams.{team}.memberships.{membership}.{action}.{detail}",
                      f"teams.*.memberships.*.{action}.{detail}", *events]
        channels = with_action_copies(["memberships", f"memberships.{membership}"], action)
        return (("memberships", tuple(channels), tuple(events)),)
    if resource == "execution":  # Appwrite: to the user who started it (the writer's read_roles)
        fn, execution = by_key["functionId"], by_key["executionId"]
        return (("executions", ("executions", f"executions.{execution}", f"functions.{fn}"), tuple(event_names([("functions", fn), ("executions", execution)], action))),)
    if resource == "account":
        user = by_key["userId"]
        events = event_names([("users", user)], action)
        if detail:
            events = [f"users.{user}.{action}.{detail}", f"users.*.{action}.{detail}", *events]
        return (("account", ("account", f"account.{user}"), tuple(events)),)
    return ()


def read_roles_for(event: WriteEvent) -> list[str] | None:
    """The roles that may receive ``event``: ``user:<id>`` for account events, else the
    writer's ``extra["read_roles"]``; ``None`` when the writer did not say (nobody receives it)."""
    if event.resource == "account":
        return [f"user:{event.ids['userId']}"]
    if event.resource in ("team", "membership"):  # Appwrite: the team's members
        return [f"team:{event.ids['teamId']}"]
    roles = event.extra.get("read_roles")
    if roles is None:
        return None
    return [str(role) for role in roles]


def rewrite_account(channels: list[str], user_id: str) -> list[str]:
    """A subscription's channels with ``account`` rewritten to ``account.<userId>`` for a
    signed-in subscriber (Appwrite ``Realtime::convertChannels``)."""
    if not user_id:
        return list(channels)
    return [f"account.{user_id}" if channel == "account" else channel for channel in channels]
