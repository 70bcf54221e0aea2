"""Writing the audit log: the core write-event subscriber (``AuditConfig.ready``).

A writer names the audit event of a committed write in ``WriteEvent.extra["audit"]``
(Appwrite's route label ``audits.event``: ``session.create``, ``user.update``...), the user
the entry belongs to in ``ids["userId"]`` and, optionally, what it touched in
``extra["audit_resource"]`` (Appwrite's ``audits.resource``: ``provider/<id>``...; by default
``team/<teamId>`` or ``user/<userId>``). An event with a resource and no user (a messaging write
made with an API key) is logged without one. One ``INSERT ... SELECT`` per announced batch, after
the write committed: reads never write, and row reads and lists never reach this code.
"""

from __future__ import annotations

import logging

from apps.core.domain.events import WriteEvent
from apps.core.drivers.db import now

log = logging.getLogger("apps.audit")


def actor(ctx, subject_uid: str) -> tuple[str, str, str, str]:
    """``(type, uid, email, name)`` of who made the request: the signed-in user, the API key
    (Appwrite's ``keyProject`` actor, ``app.<project>@service.<host>`` named after the key), or,
    for a guest request (a sign-in, an invitation accepted without a session), the subject user
    themself, as Appwrite records sign-ins. While impersonating, the impersonator (Appwrite
    attributes impersonated actions to them)."""
    auth = ctx.auth
    user = auth.actor
    if user is not None:
        return "user", user["uid"], user["email"], user["name"]
    if auth.is_key:
        host = ctx.headers.get("host", "").split(":", 1)[0] if hasattr(ctx, "headers") else ""
        return "keyProject", "", f"app.{ctx.project_id}@service.{host}", auth.key.get("name", "")
    return "user", subject_uid, "", ""


async def on_writes(ctx, events: list[WriteEvent]) -> None:
    """Append a log entry for each event that names one (see the module docstring)."""
    entries = [e for e in events if e.extra.get("audit") and (e.ids.get("userId") or e.extra.get("audit_resource"))]
    if not entries or getattr(ctx, "project", None) is None:
        return
    db = ctx.db
    ts = db.dt(now())
    ip = getattr(ctx, "client_ip", "")
    agent = ctx.headers.get("user-agent", "")[:512] if hasattr(ctx, "headers") else ""
    selects, params = [], []
    for event in entries:
        subject = event.ids.get("userId") or ""
        kind, uid, email, name = actor(ctx, subject)
        resource = event.extra.get("audit_resource") or (
            f"team/{event.ids['teamId']}" if "teamId" in event.ids else f"user/{subject}")
        params.extend([ctx.project["id"], event.extra["audit"], resource, kind, uid])
        if not subject:  # a write no user owns, made with an API key
            selects.append("SELECT %s, CAST(NULL AS BIGINT), %s, %s, 'default', %s, %s, %s, %s, %s, %s, %s")
            params.extend([email, name, ip, agent, ts])
            continue
        # A guest's entry names the subject: its email and name come from the user row.
        selects.append(
            "SELECT %s, u.id, %s, %s, 'default', %s, %s, "
            + ("u.email, u.name" if kind == "user" and not email and uid == subject else "%s, %s")
            + ", %s, %s, %s FROM accounts_user u WHERE u.project_id = %s AND u.uid = %s"
        )
        if not (kind == "user" and not email and uid == subject):
            params.extend([email, name])
        params.extend([ip, agent, ts, ctx.project["id"], subject])
    await db.execute(
        "INSERT INTO audit_log (project_id, user_id, event, resource, mode, actor_type, actor_uid, actor_email, "
        "actor_name, ip, user_agent, time) " + " UNION ALL ".join(selects),
        params,
    )
