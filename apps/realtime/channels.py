"""Channel and event names for a committed write (contract §11).

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

from apps.core.events import WriteEvent

RESOURCE_NAMES = frozenset({"rows", "documents", "files"})
ACTIONS = ("create", "update", "upsert", "delete")


@dataclass(slots=True)
class Family:
    """One view of an event: ``name`` is ``rows``, ``documents``, ``files`` or ``account``."""

    name: str
    channels: list[str]
    events: list[str]
    payload: dict


def with_action_copies(channels: list[str], action: str) -> list[str]:
    """``channels`` plus ``<channel>.<action>`` for those ending in, or one level below, a
    resource name (contract §11)."""
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
    # (string concatenation only: a bulk write of 100 rows builds 44 names per row).
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


def document_payload(row: dict) -> dict:
    """A row model (TablesDB form) as a document model: ``$tableId`` becomes ``$collectionId``."""
    return {("$collectionId" if key == "$tableId" else key): value for key, value in row.items()}


def families_for(event: WriteEvent) -> list[Family]:
    """The families of ``event``; ``[]`` for resources realtime does not publish.

    Raises ``KeyError`` when ``event.ids`` lacks an ID the resource needs.
    """
    action = event.action
    if event.resource == "row":
        db, table, row = event.ids["databaseId"], event.ids["tableId"], event.ids["rowId"]
        rows = with_action_copies([
            "rows",
            f"databases.{db}.tables.{table}.rows", f"databases.{db}.tables.{table}.rows.{row}",
            f"tablesdb.{db}.tables.{table}.rows", f"tablesdb.{db}.tables.{table}.rows.{row}",
        ], action)
        documents = with_action_copies([
            "documents",
            f"databases.{db}.collections.{table}.documents", f"databases.{db}.collections.{table}.documents.{row}",
        ], action)
        return [
            Family("rows", rows, event_names([("databases", db), ("tables", table), ("rows", row)], action),
                   event.payload),
            Family("documents", documents,
                   event_names([("databases", db), ("collections", table), ("documents", row)], action),
                   document_payload(event.payload)),
        ]
    if event.resource == "file":
        bucket, file = event.ids["bucketId"], event.ids["fileId"]
        channels = with_action_copies(["files", f"buckets.{bucket}.files", f"buckets.{bucket}.files.{file}"], action)
        return [Family("files", channels, event_names([("buckets", bucket), ("files", file)], action), event.payload)]
    if event.resource == "account":
        user = event.ids["userId"]
        detail = event.extra.get("detail")
        events = event_names([("users", user)], action)
        if detail:
            events = [f"users.{user}.{action}.{detail}", f"users.*.{action}.{detail}", *events]
        return [Family("account", ["account", f"account.{user}"], events, event.payload)]
    return []


def read_roles_for(event: WriteEvent) -> list[str] | None:
    """The roles that may receive ``event``: ``user:<id>`` for account events, else the
    writer's ``extra["read_roles"]``; ``None`` when the writer did not say (nobody receives it)."""
    if event.resource == "account":
        return [f"user:{event.ids['userId']}"]
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
