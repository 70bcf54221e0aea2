"""Provider endpoints: create and update per type, list, get, delete (API keys; scopes
``providers.read``/``providers.write``)."""

from __future__ import annotations

import orjson

from apps.core.domain import listing
from apps.core.domain.ids import resolve_id
from apps.core.domain.queries import parse_queries
from apps.core.drivers import cache
from apps.core.drivers.db import UniqueViolation, as_json, now
from apps.core.errors import AppwriteError, invalid_argument
from apps.core.http.context import json_response, no_content
from apps.messaging import crypto
from apps.messaging.api.targets import project_targets_tag
from apps.messaging.catalog import KINDS, missing
from apps.messaging.events import announce_write
from apps.messaging.responses import credentials_of, provider_model

ATTRIBUTES = {
    "$id": listing.Column("p.uid", "string"),
    "$sequence": listing.Column("p.id", "integer"),
    "$createdAt": listing.Column("p.created_at", "datetime"),
    "$updatedAt": listing.Column("p.updated_at", "datetime"),
    "name": listing.Column("p.name", "string"),
    "provider": listing.Column("p.provider", "string"),
    "type": listing.Column("p.provider_type", "string"),
    "enabled": listing.Column("p.enabled", "boolean"),
}


async def provider_get_row(ctx, uid: str, db=None) -> dict:
    """The project's provider ``uid``. Raises 404 ``provider_not_found``."""
    row = await (db or ctx.db).fetchone("SELECT * FROM messaging_provider WHERE project_id = %s AND uid = %s",
                                        (ctx.project["id"], uid))
    if row is None:
        raise AppwriteError("provider_not_found")
    return row


def _split(kind, params, *, create: bool) -> tuple[dict, dict]:
    """The given parameters as ``(credentials, options)``; on update only those given (not
    ``None``, and not empty text: Appwrite keeps the stored value then)."""
    creds, opts = {}, {}
    for name in (*kind.credentials, *kind.options):
        value = getattr(params, "from_" if name == "from" else name)
        if name == "serviceAccountJSON" and isinstance(value, str) and value:
            try:
                value = orjson.loads(value)
            except orjson.JSONDecodeError:
                raise invalid_argument("serviceAccountJSON", "Value must be a valid JSON object") from None
            if not isinstance(value, dict):
                raise invalid_argument("serviceAccountJSON", "Value must be a valid JSON object")
        if name == "encryption" and value == "none":
            value = ""
        if value is None or (not create and value == ""):
            continue
        if create and value in ("", {}) and name in kind.credentials:
            continue  # Appwrite stores only given credentials
        (creds if name in kind.credentials else opts)[name] = value
    return creds, opts


def provider_create(kind_name: str):
    kind = KINDS[kind_name]

    async def create(ctx):
        p = ctx.params
        uid = resolve_id(p.providerId, "providerId")
        creds, opts = _split(kind, p, create=True)
        enabled = bool(p.enabled) and not missing(kind, creds, opts)
        ts = ctx.db.dt(now())
        try:
            await ctx.db.execute(
                "INSERT INTO messaging_provider (project_id, uid, name, provider, provider_type, enabled, credentials, "
                "options, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (ctx.project["id"], uid, p.name, kind.name, kind.channel, enabled,
                 crypto.seal(creds, bound_to=f"{ctx.project['id']}/{uid}"), ctx.db.json(opts), ts, ts))
        except UniqueViolation:
            raise AppwriteError("provider_already_exists") from None
        model = provider_model(await provider_get_row(ctx, uid))
        await announce_write(ctx, "provider", "create", {"providerId": uid}, model)
        return json_response(model, 201)

    return create


def provider_update(kind_name: str):
    kind = KINDS[kind_name]

    async def update(ctx):
        p = ctx.params
        row = await provider_get_row(ctx, p.providerId)
        if row["provider"] != kind.name:
            raise AppwriteError("provider_incorrect_type")
        try:
            creds = credentials_of(row)
        except crypto.CredentialsUnreadable:
            creds = {}
        opts = dict(as_json(row["options"]) or {})
        new_creds, new_opts = _split(kind, p, create=False)
        creds.update(new_creds)
        opts.update(new_opts)
        enabled = bool(row["enabled"]) if p.enabled is None else p.enabled
        if enabled and missing(kind, creds, opts):
            if p.enabled:
                raise AppwriteError("provider_missing_credentials")
            enabled = False
        await ctx.db.execute(
            "UPDATE messaging_provider SET name = %s, enabled = %s, credentials = %s, options = %s, updated_at = %s "
            "WHERE id = %s",
            (p.name or row["name"], enabled, crypto.seal(creds, bound_to=f"{ctx.project['id']}/{row['uid']}"),
             ctx.db.json(opts), ctx.db.dt(now()), row["id"]))
        model = provider_model(await provider_get_row(ctx, row["uid"]))
        await announce_write(ctx, "provider", "update", {"providerId": row["uid"]}, model)
        return json_response(model)

    return update


async def providers_list(ctx):
    p = ctx.params
    plan = listing.plan(ctx.db, parse_queries(p.queries), ATTRIBUTES, seq="p.id")
    listing.add_search(ctx.db, plan, ["p.uid", "p.name", "p.provider", "p.provider_type"], p.search)
    total, rows = await listing.run(ctx, source="messaging_provider p", where=["p.project_id = %s"],
                                    params=[ctx.project["id"]], p=plan, select="p.*", uid="p.uid", total=p.total)
    return json_response({"total": total, "providers": [provider_model(r) for r in rows]})


async def provider_get(ctx):
    return json_response(provider_model(await provider_get_row(ctx, ctx.params.providerId)))


async def provider_delete(ctx):
    row = await provider_get_row(ctx, ctx.params.providerId)
    async with ctx.db.transaction() as tx:
        await tx.execute("UPDATE messaging_target SET provider_id = NULL WHERE provider_id = %s", (row["id"],))
        await tx.execute("DELETE FROM messaging_provider WHERE id = %s", (row["id"],))
    await cache.invalidate(ctx, project_targets_tag(ctx.project["id"]))  # their providerId is gone
    await announce_write(ctx, "provider", "delete", {"providerId": row["uid"]}, provider_model(row))
    return no_content()
