"""The events of messaging writes (Appwrite's ``providers.*``, ``topics.*``,
``topics.*.subscribers.*``, ``users.*.targets.*``, ``messages.*``), announced after commit.

Realtime publishes none of them (Appwrite sends them to webhooks and functions only). The audit
log keeps each of them under Appwrite's ``audits.event`` and ``audits.resource`` labels
(``provider.create`` on ``provider/<providerId>``, ``subscriber.delete`` on
``subscriber/<subscriberId>``...), which the ``.../logs`` routes read; an entry belongs to the
signed-in user who made the write, to the target's user, or to no user (a write made with an API
key).
"""

from __future__ import annotations

from apps.core.domain.events import WriteEvent, announce


async def announce_write(ctx, resource: str, action: str, ids: dict, model: dict) -> None:
    """Announce ``<resource>.<id>.<action>`` (e.g. ``provider``/``create``)."""
    ids = dict(ids)
    if ctx.auth.user is not None and "userId" not in ids:
        ids["userId"] = ctx.auth.user["uid"]
    await announce(ctx, WriteEvent(ctx.project_id, resource, action, ids, model,
                                   extra={"audit": f"{resource}.{action}",
                                          "audit_resource": f"{resource}/{ids[resource + 'Id']}"}))
