"""User targets: ``/users/{userId}/targets`` (API keys, scopes ``targets.read``/``targets.write``)
and ``/account/targets/push`` (the signed-in user's push tokens, scope ``account``).

An identifier is checked by its type: an email address, an E.164 phone number, or (push) any
token. It is unique per type in the project (409 ``user_target_already_exists``).
"""

from __future__ import annotations

import re

from apps.core.domain import listing
from apps.core.domain.ids import resolve_id
from apps.core.domain.queries import parse_queries
from apps.core.drivers import cache
from apps.core.drivers.db import UniqueViolation, now
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import json_response, no_content
from apps.messaging.events import announce_write
from apps.messaging.responses import target_model

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_PHONE = re.compile(r"^\+[1-9]\d{6,14}$")
COLUMNS = "tg.*, u.uid AS user_uid, pr.uid AS provider_uid"
SOURCE = ("messaging_target tg JOIN accounts_user u ON u.id = tg.user_id AND u.project_id = tg.project_id "
          "LEFT JOIN messaging_provider pr ON pr.id = tg.provider_id")
ATTRIBUTES = {
    "$id": listing.Column("tg.uid", "string"),
    "$sequence": listing.Column("tg.id", "integer"),
    "$createdAt": listing.Column("tg.created_at", "datetime"),
    "$updatedAt": listing.Column("tg.updated_at", "datetime"),
    "name": listing.Column("tg.name", "string"),
    "userId": listing.Column("u.uid", "string"),
    "providerId": listing.Column("pr.uid", "string"),
    "providerType": listing.Column("tg.provider_type", "string"),
    "identifier": listing.Column("tg.identifier", "string"),
    "expired": listing.Column("tg.expired", "boolean"),
}


def check_identifier(provider_type: str, identifier: str) -> str:
    """The identifier, normalised (emails lower-cased). Raises 400 ``general_argument_invalid``."""
    if provider_type == "email":
        identifier = identifier.strip().lower()
        if not _EMAIL.fullmatch(identifier):
            raise invalid_argument("identifier", "Value must be a valid email address")
    elif provider_type == "sms" and not _PHONE.fullmatch(identifier):
        raise invalid_argument("identifier", "Phone number must start with a '+' and can have a maximum of "
                                             "fifteen digits.")
    return identifier


async def _provider_pk(ctx, provider_uid: str, provider_type: str) -> int | None:
    if not provider_uid:
        return None
    row = await ctx.db.fetchone("SELECT id, provider_type FROM messaging_provider WHERE project_id = %s AND uid = %s",
                                (ctx.project["id"], provider_uid))
    if row is None:
        raise AppwriteError("provider_not_found")
    if row["provider_type"] != provider_type:
        raise AppwriteError("provider_incorrect_type")
    return row["id"]


async def _user(ctx, user_uid: str) -> dict:
    from apps.accounts.selectors.users import user_require

    return await user_require(ctx, user_uid=user_uid)


async def target_row(ctx, user: dict, uid: str) -> dict:
    row = await ctx.db.fetchone(f"SELECT {COLUMNS} FROM {SOURCE} WHERE tg.user_id = %s AND tg.uid = %s",
                                (user["id"], uid))
    if row is None:
        raise AppwriteError("user_target_not_found")
    return row


async def _create(ctx, user: dict, *, uid: str, provider_type: str, identifier: str, provider_uid: str,
                  name: str) -> dict:
    identifier = check_identifier(provider_type, identifier)
    provider_pk = await _provider_pk(ctx, provider_uid, provider_type)
    uid = resolve_id(uid, "targetId")
    ts = ctx.db.dt(now())
    try:
        await ctx.db.execute(
            "INSERT INTO messaging_target (project_id, user_id, provider_id, uid, name, provider_type, identifier, "
            "expired, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (ctx.project["id"], user["id"], provider_pk, uid, name, provider_type, identifier, False, ts, ts))
    except UniqueViolation:
        raise AppwriteError("user_target_already_exists") from None
    await cache.invalidate(ctx, targets_tag(user["id"]))
    model = target_model(await target_row(ctx, user, uid))
    await announce_write(ctx, "target", "create", {"userId": user["uid"], "targetId": uid}, model)
    return model


async def _update(ctx, user: dict, row: dict, *, identifier: str | None, provider_uid: str | None,
                  name: str | None) -> dict:
    identifier = row["identifier"] if identifier is None else check_identifier(row["provider_type"], identifier)
    provider_pk = row["provider_id"] if provider_uid is None else await _provider_pk(ctx, provider_uid,
                                                                                     row["provider_type"])
    try:
        await ctx.db.execute(
            "UPDATE messaging_target SET identifier = %s, provider_id = %s, name = %s, expired = %s, updated_at = %s "
            "WHERE id = %s",
            (identifier, provider_pk, row["name"] if name is None else name,
             False if identifier != row["identifier"] else row["expired"], ctx.db.dt(now()), row["id"]))
    except UniqueViolation:
        raise AppwriteError("user_target_already_exists") from None
    await cache.invalidate(ctx, targets_tag(user["id"]))
    model = target_model(await target_row(ctx, user, row["uid"]))
    await announce_write(ctx, "target", "update", {"userId": user["uid"], "targetId": row["uid"]}, model)
    return model


async def _delete(ctx, user: dict, row: dict) -> None:
    async with ctx.db.transaction() as tx:
        await tx.execute("DELETE FROM messaging_subscriber WHERE target_id = %s", (row["id"],))
        await tx.execute("DELETE FROM messaging_target WHERE id = %s", (row["id"],))
    await cache.invalidate(ctx, targets_tag(user["id"]))
    await announce_write(ctx, "target", "delete", {"userId": user["uid"], "targetId": row["uid"]}, target_model(row))


# user pk -> the user's Target models, so that GET /account and GET /users/{userId} cost no query
# on a hit. Dropped in every process by ``targets_tag(user pk)`` (each target write here) and by
# ``project_targets_tag`` (a provider deleted, push targets marked expired by the worker).
_by_user = cache.LocalCache("user_targets")


def targets_tag(user_id: int) -> str:
    return f"targets:{user_id}"


def project_targets_tag(project_id: int) -> str:
    return f"targets:project:{project_id}"


async def _load_targets(ctx, uids: dict[int, str]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {pk: [] for pk in uids}
    where = "tg.user_id = %s" if len(uids) == 1 else f"tg.user_id IN ({', '.join(['%s'] * len(uids))})"
    rows = await ctx.db.fetchall("SELECT tg.*, pr.uid AS provider_uid FROM messaging_target tg LEFT JOIN "
                                 f"messaging_provider pr ON pr.id = tg.provider_id WHERE {where} ORDER BY tg.id",
                                 list(uids))
    for row in rows:
        out[row["user_id"]].append(target_model({**row, "user_uid": uids[row["user_id"]]}))
    return out


async def user_targets(ctx, users: list[dict]) -> dict[int, list[dict]]:
    """The Target models of each user row (keyed by its pk), oldest first: the ``targets`` field
    of Appwrite's User model. One query for all the users (a list's page included); one user's
    come from the process cache when it has them. The lists are shared: never mutate them."""
    uids = {u["id"]: u["uid"] for u in users}
    if len(uids) != 1:
        return await _load_targets(ctx, uids) if uids else {}
    (pk, uid), = uids.items()
    found = await _by_user.fetch(pk, lambda: _load_targets(ctx, {pk: uid}),
                                 lambda _: (targets_tag(pk), project_targets_tag(ctx.project["id"])))
    return found


# --- /users/{userId}/targets ----------------------------------------------------------------------

async def targets_list(ctx):
    p = ctx.params
    user = await _user(ctx, p.userId)
    plan = listing.plan(ctx.db, parse_queries(p.queries), ATTRIBUTES, seq="tg.id")
    total, rows = await listing.run(ctx, source=SOURCE, where=["tg.user_id = %s"], params=[user["id"]], p=plan,
                                    select=COLUMNS, uid="tg.uid", total=p.total)
    return json_response({"total": total, "targets": [target_model(r) for r in rows]})


async def target_create(ctx):
    p = ctx.params
    user = await _user(ctx, p.userId)
    model = await _create(ctx, user, uid=p.targetId, provider_type=p.providerType, identifier=p.identifier,
                          provider_uid=p.providerId, name=p.name)
    return json_response(model, 201)


async def target_get(ctx):
    user = await _user(ctx, ctx.params.userId)
    return json_response(target_model(await target_row(ctx, user, ctx.params.targetId)))


async def target_update(ctx):
    p = ctx.params
    user = await _user(ctx, p.userId)
    row = await target_row(ctx, user, p.targetId)
    return json_response(await _update(ctx, user, row, identifier=p.identifier, provider_uid=p.providerId,
                                       name=p.name))


async def target_delete(ctx):
    user = await _user(ctx, ctx.params.userId)
    await _delete(ctx, user, await target_row(ctx, user, ctx.params.targetId))
    return no_content()


# --- /account/targets/push ------------------------------------------------------------------------

async def push_target_create(ctx):
    p = ctx.params
    model = await _create(ctx, ctx.auth.user, uid=p.targetId, provider_type="push", identifier=p.identifier,
                          provider_uid=p.providerId, name="")
    return json_response(model, 201)


async def _own_push(ctx) -> dict:
    row = await target_row(ctx, ctx.auth.user, ctx.params.targetId)
    if row["provider_type"] != "push":
        raise AppwriteError("user_target_not_found")
    return row


async def push_target_update(ctx):
    row = await _own_push(ctx)
    return json_response(await _update(ctx, ctx.auth.user, row, identifier=ctx.params.identifier, provider_uid=None,
                                       name=None))


async def push_target_delete(ctx):
    await _delete(ctx, ctx.auth.user, await _own_push(ctx))
    return no_content()
