"""Message endpoints: create and update email, SMS and push messages; list, get, delete; the
message's targets (scopes ``messages.read``/``messages.write``).

A message is a draft (``draft: true``, never sent until updated), scheduled (``scheduledAt`` in
the future: the worker sends it then), or processing (sent by the worker now). Sent, failed and
processing messages can no longer be updated (400 ``message_already_*``, Appwrite's rule).
Recipients are topics, users and targets (public IDs), and for email raw addresses (``emails``,
kept in the message's ``data``); a message to none of them is refused unless it is a draft
(400 ``message_missing_target``), and each named target must exist (404
``user_target_not_found``) and be of the message's channel (400 ``message_target_not_<type>``).
"""

from __future__ import annotations

import datetime as dt

from apps.core.domain import listing
from apps.core.domain.ids import resolve_id
from apps.core.domain.queries import parse_queries
from apps.core.drivers.db import UniqueViolation, as_dt, as_json, now
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import json_response, no_content
from apps.messaging.api.inputs import PUSH_FIELDS
from apps.messaging.api.targets import ATTRIBUTES as TARGET_ATTRIBUTES
from apps.messaging.api.targets import COLUMNS as TARGET_COLUMNS
from apps.messaging.api.targets import SOURCE as TARGET_SOURCE
from apps.messaging.events import announce_write
from apps.messaging.responses import message_model, target_model

ATTRIBUTES = {
    "$id": listing.Column("m.uid", "string"),
    "$sequence": listing.Column("m.id", "integer"),
    "$createdAt": listing.Column("m.created_at", "datetime"),
    "$updatedAt": listing.Column("m.updated_at", "datetime"),
    "scheduledAt": listing.Column("m.scheduled_at", "datetime"),
    "deliveredAt": listing.Column("m.delivered_at", "datetime"),
    "deliveredTotal": listing.Column("m.delivered_total", "integer"),
    "status": listing.Column("m.status", "string"),
    "providerType": listing.Column("m.provider_type", "string"),
    "topics": listing.Column("m.topics", "array"),
    "users": listing.Column("m.users", "array"),
    "targets": listing.Column("m.targets", "array"),
}
_LOCKED = {"sent": "message_already_sent", "processing": "message_already_processing",
           "failed": "message_already_failed"}


async def message_row(ctx, uid: str, db=None) -> dict:
    """The project's message ``uid``. Raises 404 ``message_not_found``."""
    row = await (db or ctx.db).fetchone("SELECT * FROM messaging_message WHERE project_id = %s AND uid = %s",
                                        (ctx.project["id"], uid))
    if row is None:
        raise AppwriteError("message_not_found")
    return row


def _content(channel: str, p, old: dict | None) -> dict:
    """The message's ``data`` from the parameters given (``None`` keeps the stored value)."""
    data = dict(old or {})
    names = {"email": ("subject", "content", "html", "cc", "bcc", "attachments", "replyToEmail", "replyToName",
                       "emails"),
             "sms": ("content",), "push": PUSH_FIELDS}[channel]
    for name in names:
        value = getattr(p, name, None)
        if value is not None:
            data[name] = value
        elif old is None and channel == "email" and name in ("cc", "bcc", "attachments"):
            data[name] = []
    return data


async def _check_targets(ctx, channel: str, uids: list[str]) -> None:
    if not uids:
        return
    rows = await ctx.db.fetchall(
        f"SELECT uid, provider_type FROM messaging_target WHERE project_id = %s AND uid IN "
        f"({', '.join(['%s'] * len(uids))})", (ctx.project["id"], *uids))
    found = {r["uid"]: r["provider_type"] for r in rows}
    for uid in uids:
        if uid not in found:
            raise AppwriteError("user_target_not_found", f"Target {uid} could not be found.")
        if found[uid] != channel:
            raise AppwriteError(f"message_target_not_{channel}")


MAX_ATTACHMENTS_BYTES = 25 * 1024 * 1024  # all of a message's attachments together


async def _check_attachments(ctx, attachments: list[str] | None) -> None:
    """Each ``bucketId:fileId`` names an uploaded file of the project, 25 MiB at most together.
    Raises 400 ``general_argument_invalid``, 404 ``storage_bucket_not_found`` /
    ``storage_file_not_found`` (Appwrite's answers)."""
    total = 0
    for item in attachments or []:
        bucket_uid, sep, file_uid = item.partition(":")
        if not sep or not bucket_uid or not file_uid:
            raise invalid_argument("attachments", "Each attachment must be a string of the form bucketId:fileId")
        bucket = await ctx.db.fetchone("SELECT id FROM storage_bucket WHERE project_id = %s AND uid = %s",
                                       (ctx.project["id"], bucket_uid))
        if bucket is None:
            raise AppwriteError("storage_bucket_not_found")
        file = await ctx.db.fetchone("SELECT size_original FROM storage_file WHERE bucket_id = %s AND uid = %s "
                                     "AND status = 'ready'", (bucket["id"], file_uid))
        if file is None:
            raise AppwriteError("storage_file_not_found")
        total += int(file["size_original"] or 0)
    if total > MAX_ATTACHMENTS_BYTES:
        raise invalid_argument("attachments", "The attachments may hold 25 MiB at most together")


def _status(draft: bool, scheduled_at: dt.datetime | None) -> str:
    return "draft" if draft else "scheduled" if scheduled_at is not None else "processing"


def _future(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    if value <= now():
        raise invalid_argument("scheduledAt", "Value must be valid date in the future.")
    return value


async def _queue(ctx, tx, row_id: int, status: str, scheduled_at: dt.datetime | None) -> None:
    from apps.core.tasks.queue import enqueue
    from apps.messaging.tasks import send_message

    if status == "processing":
        await enqueue(tx, send_message, message_id=row_id, scheduled="")
    elif status == "scheduled":
        await enqueue(tx, send_message.using(run_after=scheduled_at), message_id=row_id,
                      scheduled=scheduled_at.isoformat())


def message_create(channel: str):
    async def create(ctx):
        p = ctx.params
        uid = resolve_id(p.messageId, "messageId")
        topics, users, targets = p.topics or [], p.users or [], p.targets or []
        emails = (p.emails or []) if channel == "email" else []
        scheduled_at = _future(p.scheduledAt)
        status = _status(bool(p.draft), scheduled_at)
        if status != "draft" and not (topics or users or targets or emails):
            raise AppwriteError("message_missing_target")
        await _check_targets(ctx, channel, targets)
        if channel == "email":
            await _check_attachments(ctx, p.attachments)
        ts = now()
        async with ctx.db.transaction() as tx:
            try:
                row = await tx.fetchone(
                    "INSERT INTO messaging_message (project_id, uid, provider_type, topics, users, targets, data, "
                    "status, scheduled_at, delivered_at, delivered_total, delivery_errors, created_at, updated_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, NULL, 0, %s, %s, %s) RETURNING *",
                    (ctx.project["id"], uid, channel, tx.json(topics), tx.json(users), tx.json(targets),
                     tx.json(_content(channel, p, None)), status, tx.dt(scheduled_at) if scheduled_at else None,
                     tx.json([]), tx.dt(ts), tx.dt(ts)))
            except UniqueViolation:
                raise AppwriteError("message_already_exists") from None
            await _queue(ctx, tx, row["id"], status, scheduled_at)
        model = message_model(row)
        await announce_write(ctx, "message", "create", {"messageId": uid}, model)
        return json_response(model, 201)

    return create


def message_update(channel: str):
    async def update(ctx):
        p = ctx.params
        row = await message_row(ctx, p.messageId)
        if row["provider_type"] != channel:
            raise AppwriteError("message_not_found")
        if row["status"] in _LOCKED:
            raise AppwriteError(_LOCKED[row["status"]])
        topics = p.topics if p.topics is not None else as_json(row["topics"]) or []
        users = p.users if p.users is not None else as_json(row["users"]) or []
        targets = p.targets if p.targets is not None else as_json(row["targets"]) or []
        scheduled_at = _future(p.scheduledAt) if p.scheduledAt is not None else as_dt(row["scheduled_at"])
        draft = p.draft if p.draft is not None else row["status"] == "draft"
        status = _status(draft, scheduled_at)
        data = _content(channel, p, as_json(row["data"]) or {})
        if status != "draft" and not (topics or users or targets or data.get("emails")):
            raise AppwriteError("message_missing_target")
        if p.targets is not None:
            await _check_targets(ctx, channel, targets)
        if channel == "email" and p.attachments is not None:
            await _check_attachments(ctx, p.attachments)
        async with ctx.db.transaction() as tx:
            changed = await tx.execute(
                "UPDATE messaging_message SET topics = %s, users = %s, targets = %s, data = %s, status = %s, "
                "scheduled_at = %s, updated_at = %s WHERE id = %s AND status = %s",
                (tx.json(topics), tx.json(users), tx.json(targets), tx.json(data), status,
                 tx.dt(scheduled_at) if scheduled_at else None, tx.dt(now()), row["id"], row["status"]))
            if not changed:  # the worker took it meanwhile
                raise AppwriteError("message_already_processing")
            if status != row["status"] or (status == "scheduled" and scheduled_at != as_dt(row["scheduled_at"])):
                await _queue(ctx, tx, row["id"], status, scheduled_at)
        model = message_model(await message_row(ctx, row["uid"]))
        await announce_write(ctx, "message", "update", {"messageId": row["uid"]}, model)
        return json_response(model)

    return update


async def messages_list(ctx):
    p = ctx.params
    plan = listing.plan(ctx.db, parse_queries(p.queries), ATTRIBUTES, seq="m.id")
    listing.add_search(ctx.db, plan, ["m.uid", "m.provider_type", "m.status"], p.search)
    total, rows = await listing.run(ctx, source="messaging_message m", where=["m.project_id = %s"],
                                    params=[ctx.project["id"]], p=plan, select="m.*", uid="m.uid", total=p.total)
    return json_response({"total": total, "messages": [message_model(r) for r in rows]})


async def message_get(ctx):
    return json_response(message_model(await message_row(ctx, ctx.params.messageId)))


async def message_delete(ctx):
    row = await message_row(ctx, ctx.params.messageId)
    async with ctx.db.transaction() as tx:
        await tx.execute("DELETE FROM messaging_delivery WHERE message_id = %s", (row["id"],))
        await tx.execute("DELETE FROM messaging_message WHERE id = %s", (row["id"],))
    await announce_write(ctx, "message", "delete", {"messageId": row["uid"]}, message_model(row))
    return no_content()


async def message_targets_list(ctx):
    """The targets the message names in ``targets`` (Appwrite's ``listTargets``)."""
    p = ctx.params
    row = await message_row(ctx, p.messageId)
    uids = as_json(row["targets"]) or []
    if not uids:
        return json_response({"total": 0, "targets": []})
    plan = listing.plan(ctx.db, parse_queries(p.queries), TARGET_ATTRIBUTES, seq="tg.id")
    total, rows = await listing.run(
        ctx, source=TARGET_SOURCE, where=["tg.project_id = %s", f"tg.uid IN ({', '.join(['%s'] * len(uids))})"],
        params=[ctx.project["id"], *uids], p=plan, select=TARGET_COLUMNS, uid="tg.uid", total=p.total)
    return json_response({"total": total, "targets": [target_model(r) for r in rows]})
