"""The write-event hook: domain apps announce committed writes; realtime subscribes.

Domain apps never import ``realtime``. A write that runs a transaction calls :func:`record`
with its events *inside* that transaction, so recorders (the realtime outbox, registered in its
``AppConfig.ready``) keep them durably with the write: both commit or neither does. After the
commit every write calls :func:`announce` / :func:`announce_all`; subscribers (realtime, the
audit log) turn the events into channel messages and log entries. A write without a transaction
(one autocommitted statement) only announces; a subscriber that must not lose its event keeps it
durably then, before the response is sent.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from apps.core.domain.throttle import Throttle
from apps.core.drivers.db import Database
from apps.core.drivers.kv import KVUnavailable
from apps.core.http.context import RequestContext

log = logging.getLogger("apps.core.domain.events")

# First segments of the events this server's resources emit, and Appwrite's other services'
# (accepted so a webhook or function configured for Appwrite is not refused; they never fire here).
EVENT_ROOTS = frozenset({"users", "teams", "databases", "tablesdb", "buckets", "functions", "sites", "messaging",
                         "migrations", "rules", "projects", "tokens"})
_SEGMENT = re.compile(r"^(\*|[A-Za-z0-9][A-Za-z0-9._-]{0,35})$")


def event_name(value: str) -> str:
    """``value`` when it is an event name a webhook or a function can listen to (``users.*.create``,
    ``databases.db.tables.*.rows.*``: dot-separated segments, IDs, ``*``, resource and action
    names, under a known service); else ``ValueError`` (400 ``general_argument_invalid``)."""
    parts = value.split(".")
    if len(value) > 256 or len(parts) > 10 or parts[0] not in EVENT_ROOTS or not all(_SEGMENT.fullmatch(p) for p in parts):
        raise ValueError(f"Event '{value}' is not valid.")
    return value


@dataclass(slots=True)
class WriteEvent:
    """A committed write.

    ``resource`` is ``"row"``, ``"file"``, ``"account"`` (or one of the others below); ``action`` is ``"create"``,
    ``"update"``, ``"upsert"`` or ``"delete"``; ``ids`` holds the path of the resource
    (``databaseId``/``tableId``/``rowId``, ``bucketId``/``fileId``, ``userId``); ``payload`` is the
    full Appwrite model as returned by the REST API (a row in its TablesDB form, with
    ``$tableId``, ``$databaseId`` and ``$permissions``).

    ``project_id`` is the public project ID (``ctx.project_id``, the ``uid``).

    ``extra`` (contract with the realtime subscriber):

    * ``"read_roles"`` - **required for rows and files**: the list of role strings that may read
      the item at commit time, computed by the writer with the same rules as its REST read:
      the container's read roles (table/collection or bucket ``$permissions`` with ``read``),
      plus the item's own read roles when ``rowSecurity``/``documentSecurity``/``fileSecurity``
      is on (``apps.core.domain.permissions.roles_of(perms, "read")``). ``"any"`` reaches everyone.
      For a delete, the roles the item had before it was deleted. A row/file event without
      ``read_roles`` is delivered to nobody (fail closed). Account events need none: they go to
      ``user:<userId>`` only.
    * ``"detail"`` - optional event-name detail, e.g. ``"prefs"`` for
      ``users.<id>.update.prefs`` (account updates).
    * ``"audit"`` - optional: the audit log event of this write (Appwrite's ``audits.event``
      names: ``session.create``, ``user.update``, ``membership.create``...); the audit app logs
      it for the user ``ids["userId"]``. Events without it are not logged.
    * ``"audit_resource"`` - optional: what the write touched (Appwrite's ``audits.resource``:
      ``provider/<id>``, ``message/<id>``...); an event with one is logged even without a
      ``userId`` (a write made with an API key), and the messaging ``.../logs`` routes read by it.

    Resources besides rows, files and accounts: ``team`` (ids ``teamId``) and ``membership``
    (``teamId``, ``membershipId``, ``userId`` of the member), delivered to ``team:<teamId>``;
    ``session``, ``token`` and ``jwt`` (``userId``) are only logged, not published.
    """

    project_id: str
    resource: str
    action: str
    ids: dict[str, str]
    payload: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)
    # What a recorder kept of this event inside the write's transaction (the realtime outbox:
    # its row and message), for the same app's subscriber after the commit; None when not recorded.
    recorded: object = None


Subscriber = Callable[[object, list[WriteEvent]], Awaitable[None]]
Recorder = Callable[[object, object, list[WriteEvent]], Awaitable[None]]
_subscribers: list[Subscriber] = []
_recorders: list[Recorder] = []
LOG_INTERVAL = 60  # seconds between two warnings about events a subscriber could not take
_unpublished = Throttle()


def subscribe(fn: Subscriber) -> None:
    """Register ``fn(ctx, events)``; called with every announced batch of events, in order."""
    if fn not in _subscribers:
        _subscribers.append(fn)


def record_with(fn: Recorder) -> None:
    """Register ``fn(ctx, tx, events)``; called by :func:`record` inside writes' transactions."""
    if fn not in _recorders:
        _recorders.append(fn)


async def record(ctx: RequestContext, tx: Database, events: list[WriteEvent]) -> None:
    """Inside the write's transaction ``tx``: let every recorder keep ``events`` with the write
    (the realtime outbox inserts one row per published event). Call it after the write's own
    statements, then :func:`announce_all` the same events after the commit. Whatever a recorder
    raises propagates, so the write rolls back rather than commit without its events."""
    if events:
        for fn in _recorders:
            await fn(ctx, tx, events)


async def announce(ctx: RequestContext, event: WriteEvent) -> None:
    """Hand ``event`` to every subscriber (see :func:`announce_all`)."""
    await announce_all(ctx, [event])


async def announce_all(ctx: RequestContext, events: list[WriteEvent]) -> None:
    """Hand ``events`` (one request's committed writes, in commit order) to every subscriber as
    one batch, so a bulk write costs one publish round trip, not one per row. A failing
    subscriber is logged, never raised: the writes have already committed and the response must
    not fail. Subscribers that must survive a key-value store outage handle it themselves (the
    realtime publisher leaves the events in its outbox); a ``KVUnavailable`` that still reaches
    here (a caller without a database, such as a script) is counted and warned about once per
    :data:`LOG_INTERVAL`, not logged with a traceback per write."""
    if not events:
        return
    for fn in _subscribers:
        try:
            await fn(ctx, events)
        except KVUnavailable as exc:
            _lost(len(events), str(exc))
        except Exception:
            log.exception("event subscriber %r failed", fn)


def _lost(count: int, reason: str) -> None:
    """Count ``count`` events lost to an outage; warn at most once per :data:`LOG_INTERVAL`."""
    lost = _unpublished.hit(LOG_INTERVAL, count)
    if lost is not None:
        log.warning("%d event(s) not published in the last %d s: %s", lost, LOG_INTERVAL, reason)
