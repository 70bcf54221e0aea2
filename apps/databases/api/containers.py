"""Database and table (collection) endpoints."""

from __future__ import annotations

from apps.core.domain.ids import resolve_id
from apps.core.http.context import json_response, no_content
from apps.databases.api.common import database_of, queries_of, table_of
from apps.databases.api.tables_init import create_initial_schema
from apps.databases.naming import Naming
from apps.databases.responses import database_model, table_model
from apps.databases.selectors import meta
from apps.databases.services import containers as svc


async def database_list(ctx, naming: Naming):
    p = ctx.params
    total, rows = await meta.database_list(ctx, queries=queries_of(ctx), search=p.search, total=p.total)
    return json_response({"total": total, "databases": [database_model(d) for d in rows]})


async def database_create(ctx, naming: Naming):
    p = ctx.params
    d = await svc.database_create(ctx, naming=naming, database_uid=resolve_id(p.databaseId, "databaseId"),
                                  name=p.name, enabled=p.enabled, description=p.description or "")
    return json_response(database_model(d), 201)


async def database_get(ctx, naming: Naming):
    return json_response(database_model(await database_of(ctx)))


async def database_update(ctx, naming: Naming):
    p = ctx.params
    fields = {k: getattr(p, k) for k in ("name", "enabled", "description") if getattr(p, k) is not None}
    d = await svc.database_update(ctx, database=await database_of(ctx), fields=fields)
    return json_response(database_model(d))


async def database_delete(ctx, naming: Naming):
    await svc.database_delete(ctx, database=await database_of(ctx))
    return no_content()


async def table_list(ctx, naming: Naming):
    p = ctx.params
    database = await database_of(ctx)
    total, rows = await meta.table_list(ctx, database=database, queries=queries_of(ctx), search=p.search,
                                        total=p.total)
    return json_response({"total": total, naming.tables: [table_model(naming, database, t) for t in rows]})


async def table_create(ctx, naming: Naming):
    p = ctx.params
    database = await database_of(ctx)
    table = await svc.table_create(
        ctx, naming=naming, database=database, table_uid=resolve_id(getattr(p, naming.table_id), naming.table_id),
        name=p.name, permissions=p.permissions, row_security=getattr(p, naming.security), enabled=p.enabled,
        description=p.description or "")
    columns, indexes = getattr(p, naming.columns), p.indexes
    if columns or indexes:
        try:
            table = await create_initial_schema(ctx, naming, database, table, columns or [], indexes or [])
        except Exception:
            # A bad columns[]/indexes[] item fails the whole create: no half-built table remains
            # (its id would then be taken, and a retry answer 409).
            await svc.table_delete(ctx, naming=naming, table=table)
            raise
    return json_response(table_model(naming, database, table), 201)


async def table_get(ctx, naming: Naming):
    database, table = await table_of(ctx, naming)
    return json_response(table_model(naming, database, table))


async def table_update(ctx, naming: Naming):
    p = ctx.params
    database, table = await table_of(ctx, naming)
    fields = {}
    for param, column in (("name", "name"), ("permissions", "permissions"), (naming.security, "row_security"),
                          ("enabled", "enabled"), ("description", "description")):
        if getattr(p, param) is not None:
            fields[column] = getattr(p, param)
    table = await svc.table_update(ctx, naming=naming, database=database, table=table, fields=fields)
    return json_response(table_model(naming, database, table))


async def table_delete(ctx, naming: Naming):
    _, table = await table_of(ctx, naming)
    await svc.table_delete(ctx, naming=naming, table=table)
    return no_content()
