"""Topic and subscriber endpoints (scopes ``topics.*``, ``subscribers.*``).

A session may subscribe only its own targets, and only to topics whose ``subscribe`` roles it
holds (else 401 ``user_unauthorized``, Appwrite's answer); it may delete only its own
subscribers. Keys may do anything.
"""

from __future__ import annotations

from apps.core.domain import listing
from apps.core.domain.ids import resolve_id
from apps.core.domain.queries import parse_queries
from apps.core.drivers.db import UniqueViolation, as_json, now
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.messaging.events import announce_write
from apps.messaging.responses import subscriber_model, topic_model

_COUNT = ("(SELECT COUNT(*) FROM messaging_subscriber s JOIN messaging_target tg ON tg.id = s.target_id "
          "WHERE s.topic_id = t.id AND tg.provider_type = '{}')")
TOPIC_COLUMNS = ("t.*, " + ", ".join(f"{_COUNT.format(c)} AS {c}_total" for c in ("email", "sms", "push")))
TOPIC_ATTRIBUTES = {
    "$id": listing.Column("t.uid", "string"),
    "$sequence": listing.Column("t.id", "integer"),
    "$createdAt": listing.Column("t.created_at", "datetime"),
    "$updatedAt": listing.Column("t.updated_at", "datetime"),
    "name": listing.Column("t.name", "string"),
    "description": listing.Column("t.description", "string"),
    "emailTotal": listing.Column(_COUNT.format("email"), "integer"),
    "smsTotal": listing.Column(_COUNT.format("sms"), "integer"),
    "pushTotal": listing.Column(_COUNT.format("push"), "integer"),
}
SUB_COLUMNS = ("s.*, tp.uid AS topic_uid, tg.uid AS target_uid, tg.created_at AS target_created_at, "
               "tg.updated_at AS target_updated_at, tg.name AS target_name, tg.provider_type, tg.identifier, "
               "tg.expired, u.uid AS user_uid, u.name AS user_name, pr.uid AS provider_uid")
SUB_SOURCE = ("messaging_subscriber s JOIN messaging_topic tp ON tp.id = s.topic_id "
              "JOIN messaging_target tg ON tg.id = s.target_id "
              "JOIN accounts_user u ON u.id = tg.user_id AND u.project_id = tg.project_id "
              "LEFT JOIN messaging_provider pr ON pr.id = tg.provider_id")
SUB_ATTRIBUTES = {
    "$id": listing.Column("s.uid", "string"),
    "$sequence": listing.Column("s.id", "integer"),
    "$createdAt": listing.Column("s.created_at", "datetime"),
    "$updatedAt": listing.Column("s.updated_at", "datetime"),
    "targetId": listing.Column("tg.uid", "string"),
    "userId": listing.Column("u.uid", "string"),
    "providerType": listing.Column("tg.provider_type", "string"),
}


async def topic_row(ctx, uid: str) -> dict:
    """The project's topic ``uid`` with its totals. Raises 404 ``topic_not_found``."""
    row = await ctx.db.fetchone(f"SELECT {TOPIC_COLUMNS} FROM messaging_topic t WHERE t.project_id = %s AND t.uid = %s",
                                (ctx.project["id"], uid))
    if row is None:
        raise AppwriteError("topic_not_found")
    return row


async def topics_list(ctx):
    p = ctx.params
    plan = listing.plan(ctx.db, parse_queries(p.queries), TOPIC_ATTRIBUTES, seq="t.id")
    listing.add_search(ctx.db, plan, ["t.uid", "t.name", "t.description"], p.search)
    total, rows = await listing.run(ctx, source="messaging_topic t", where=["t.project_id = %s"],
                                    params=[ctx.project["id"]], p=plan, select=TOPIC_COLUMNS, uid="t.uid", total=p.total)
    return json_response({"total": total, "topics": [topic_model(r) for r in rows]})


async def topic_create(ctx):
    p = ctx.params
    uid = resolve_id(p.topicId, "topicId")
    ts = ctx.db.dt(now())
    try:
        await ctx.db.execute(
            "INSERT INTO messaging_topic (project_id, uid, name, description, subscribe, created_at, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (ctx.project["id"], uid, p.name, p.description, ctx.db.json(list(dict.fromkeys(p.subscribe))), ts, ts))
    except UniqueViolation:
        raise AppwriteError("topic_already_exists") from None
    model = topic_model(await topic_row(ctx, uid))
    await announce_write(ctx, "topic", "create", {"topicId": uid}, model)
    return json_response(model, 201)


async def topic_get(ctx):
    return json_response(topic_model(await topic_row(ctx, ctx.params.topicId)))


async def topic_update(ctx):
    p = ctx.params
    row = await topic_row(ctx, p.topicId)
    subscribe = list(dict.fromkeys(p.subscribe)) if p.subscribe is not None else as_json(row["subscribe"]) or []
    await ctx.db.execute(
        "UPDATE messaging_topic SET name = %s, description = %s, subscribe = %s, updated_at = %s WHERE id = %s",
        (p.name if p.name else row["name"], row["description"] if p.description is None else p.description,
         ctx.db.json(subscribe), ctx.db.dt(now()), row["id"]))
    model = topic_model(await topic_row(ctx, row["uid"]))
    await announce_write(ctx, "topic", "update", {"topicId": row["uid"]}, model)
    return json_response(model)


async def topic_delete(ctx):
    row = await topic_row(ctx, ctx.params.topicId)
    async with ctx.db.transaction() as tx:
        await tx.execute("DELETE FROM messaging_subscriber WHERE topic_id = %s", (row["id"],))
        await tx.execute("DELETE FROM messaging_topic WHERE id = %s", (row["id"],))
    await announce_write(ctx, "topic", "delete", {"topicId": row["uid"]}, topic_model(row))
    return no_content()


async def _subscriber_row(ctx, topic: dict, uid: str) -> dict:
    row = await ctx.db.fetchone(f"SELECT {SUB_COLUMNS} FROM {SUB_SOURCE} WHERE s.topic_id = %s AND s.uid = %s",
                                (topic["id"], uid))
    if row is None or (not ctx.auth.is_key and row["user_uid"] != (ctx.auth.user or {}).get("uid")):
        raise AppwriteError("subscriber_not_found")
    return row


async def subscribers_list(ctx):
    p = ctx.params
    topic = await topic_row(ctx, p.topicId)
    plan = listing.plan(ctx.db, parse_queries(p.queries), SUB_ATTRIBUTES, seq="s.id")
    listing.add_search(ctx.db, plan, ["s.uid", "tg.uid", "u.uid", "tg.provider_type"], p.search)
    total, rows = await listing.run(ctx, source=SUB_SOURCE, where=["s.topic_id = %s"], params=[topic["id"]], p=plan,
                                    select=SUB_COLUMNS, uid="s.uid", total=p.total)
    return json_response({"total": total, "subscribers": [subscriber_model(r) for r in rows]})


async def subscriber_create(ctx):
    p = ctx.params
    topic = await topic_row(ctx, p.topicId)
    if not ctx.auth.is_key and not set(as_json(topic["subscribe"]) or []) & set(ctx.auth.roles):
        raise AppwriteError("user_unauthorized")
    target = await ctx.db.fetchone(
        "SELECT tg.id, u.uid AS user_uid FROM messaging_target tg JOIN accounts_user u ON u.id = tg.user_id "
        "AND u.project_id = tg.project_id WHERE tg.project_id = %s AND tg.uid = %s", (ctx.project["id"], p.targetId))
    if target is None or (not ctx.auth.is_key and target["user_uid"] != (ctx.auth.user or {}).get("uid")):
        raise AppwriteError("user_target_not_found")
    uid = resolve_id(p.subscriberId, "subscriberId")
    ts = ctx.db.dt(now())
    try:
        await ctx.db.execute(
            "INSERT INTO messaging_subscriber (project_id, topic_id, target_id, uid, created_at, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, %s)", (ctx.project["id"], topic["id"], target["id"], uid, ts, ts))
    except UniqueViolation:
        raise AppwriteError("subscriber_already_exists") from None
    model = subscriber_model(await _subscriber_row(ctx, topic, uid))
    await announce_write(ctx, "subscriber", "create", {"topicId": topic["uid"], "subscriberId": uid}, model)
    return json_response(model, 201)


async def subscriber_get(ctx):
    topic = await topic_row(ctx, ctx.params.topicId)
    return json_response(subscriber_model(await _subscriber_row(ctx, topic, ctx.params.subscriberId)))


async def subscriber_delete(ctx):
    topic = await topic_row(ctx, ctx.params.topicId)
    row = await _subscriber_row(ctx, topic, ctx.params.subscriberId)
    await ctx.db.execute("DELETE FROM messaging_subscriber WHERE id = %s", (row["id"],))
    await announce_write(ctx, "subscriber", "delete", {"topicId": topic["uid"], "subscriberId": row["uid"]},
                         subscriber_model(row))
    return no_content()
