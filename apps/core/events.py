"""The write-event hook: domain apps announce committed writes; realtime subscribes.

Domain apps never import ``realtime``: after a write commits they call :func:`announce` with
what happened; subscribers (the realtime app, registered in its ``AppConfig.ready``) turn it into
channel messages. Announce only after the transaction committed, never inside it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from django.conf import settings

from apps.core.kv import KVUnavailable
from apps.core.throttle import Throttle

log = logging.getLogger("apps.core.events")


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
      is on (``apps.core.permissions.roles_of(perms, "read")``). ``"any"`` reaches everyone.
      For a delete, the roles the item had before it was deleted. A row/file event without
      ``read_roles`` is delivered to nobody (fail closed). Account events need none: they go to
      ``user:<userId>`` only.
    * ``"detail"`` - optional event-name detail, e.g. ``"prefs"`` for
      ``users.<id>.update.prefs`` (account updates).
    * ``"audit"`` - optional: the audit log event of this write (Appwrite's ``audits.event``
      names: ``session.create``, ``user.update``, ``membership.create``...); the audit app logs
      it for the user ``ids["userId"]``. Events without it are not logged.

    Resources besides rows, files and accounts: ``team`` (ids ``teamId``) and ``membership``
    (``teamId``, ``membershipId``, ``userId`` of the member), delivered to ``team:<teamId>``;
    ``session``, ``token`` and ``jwt`` (``userId``) are only logged, not published.
    """

    project_id: str
    resource: str
    action: str
    ids: dict[str, str]
    payload: dict
    extra: dict = field(default_factory=dict)


Subscriber = Callable[[object, list[WriteEvent]], Awaitable[None]]
_subscribers: list[Subscriber] = []
LOG_INTERVAL = 60  # seconds between two warnings about events lost to a key-value store outage
_unpublished = Throttle()
_paused_until: dict[Subscriber, float] = {}  # subscriber -> monotonic time its outage pause ends


def subscribe(fn: Subscriber) -> None:
    """Register ``fn(ctx, events)``; called with every announced batch of events, in order."""
    if fn not in _subscribers:
        _subscribers.append(fn)


async def announce(ctx, event: WriteEvent) -> None:
    """Hand ``event`` to every subscriber (see :func:`announce_all`)."""
    await announce_all(ctx, [event])


async def announce_all(ctx, events: list[WriteEvent]) -> None:
    """Hand ``events`` (one request's committed writes, in commit order) to every subscriber as
    one batch, so a bulk write costs one publish round trip, not one per row. A failing
    subscriber is logged, never raised: the writes have already committed and the response must
    not fail. A subscriber that failed for a key-value store outage (``KVUnavailable``) is skipped
    for ``REALTIME_PUBLISH_RETRY_SECONDS``, its events counted as lost, so a stalled store costs
    one ``REDIS_TIMEOUT`` per pause instead of one per write."""
    if not events:
        return
    for fn in _subscribers:
        if _paused_until and time.monotonic() < _paused_until.get(fn, 0.0):
            _lost(len(events), "the key-value store failed less than "
                  f"{settings.REALTIME_PUBLISH_RETRY_SECONDS:g} s ago (REALTIME_PUBLISH_RETRY_SECONDS)")
            continue
        try:
            await fn(ctx, events)
        except KVUnavailable as exc:  # an outage: one line per LOG_INTERVAL, not a traceback per write
            _paused_until[fn] = time.monotonic() + max(0.0, settings.REALTIME_PUBLISH_RETRY_SECONDS)
            _lost(len(events), str(exc))
        except Exception:
            log.exception("event subscriber %r failed", fn)
        else:
            _paused_until.pop(fn, None)


def _lost(count: int, reason: str) -> None:
    """Count ``count`` events lost to an outage; warn at most once per :data:`LOG_INTERVAL`."""
    lost = _unpublished.hit(LOG_INTERVAL, count)
    if lost is not None:
        log.warning("%d event(s) not published in the last %d s: %s", lost, LOG_INTERVAL, reason)
