"""Row (document) endpoints: create (single and bulk), get, list, PATCH, PUT, delete, and the
bulk update/upsert/delete routes (contract §5.1)."""

from __future__ import annotations

from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.databases.api.common import queries_of, table_and_row_of, table_of
from apps.databases.naming import Naming
from apps.databases.responses import row_model
from apps.databases.selectors import rows as selectors
from apps.databases.services import bulk
from apps.databases.services import rows as svc


def _row_uid(ctx, naming: Naming) -> str:
    return getattr(ctx.params, naming.row_id)


def _list(naming: Naming, database: dict, table: dict, rows: list[dict], total: int, select=None):
    return json_response({"total": total,
                          naming.rows: [row_model(naming, database, table, r, select) for r in rows]})


async def row_list(ctx, naming: Naming):
    database, table = await table_of(ctx, naming)
    total, rows, select = await selectors.row_list(ctx, table=table, queries=queries_of(ctx), total=ctx.params.total)
    return _list(naming, database, table, rows, total, select)


async def row_create(ctx, naming: Naming):
    p = ctx.params
    database, table = await table_of(ctx, naming)
    items = getattr(p, naming.rows)
    if items is not None:
        rows = await bulk.rows_create(ctx, naming=naming, database=database, table=table, items=items)
        return json_response({"total": len(rows), naming.rows: [row_model(naming, database, table, r) for r in rows]},
                             201)
    row_uid = getattr(p, naming.row_id)
    if row_uid is None:
        raise AppwriteError("general_argument_invalid", f'Param "{naming.row_id}" is not optional.')
    if p.data is None:
        raise AppwriteError("general_argument_invalid", 'Param "data" is not optional.')
    row = await svc.row_create(ctx, naming=naming, database=database, table=table, row_uid=row_uid, data=p.data,
                               permissions=p.permissions)
    return json_response(row_model(naming, database, table, row), 201)


async def row_get(ctx, naming: Naming):
    database, table, row = await table_and_row_of(ctx, naming, _row_uid(ctx, naming))
    row, select = selectors.row_readable(ctx, table=table, row=row, queries=queries_of(ctx))
    if row is None:
        raise naming.error("row", "not_found")
    return json_response(row_model(naming, database, table, row, select))


async def row_update(ctx, naming: Naming):
    p = ctx.params
    database, table, loaded = await table_and_row_of(ctx, naming, _row_uid(ctx, naming))
    row = await svc.row_update(ctx, naming=naming, database=database, table=table, row_uid=_row_uid(ctx, naming),
                               data=p.data, permissions=p.permissions, loaded=loaded)
    return json_response(row_model(naming, database, table, row))


async def row_upsert(ctx, naming: Naming):
    p = ctx.params
    database, table = await table_of(ctx, naming)
    row, created = await svc.row_upsert(ctx, naming=naming, database=database, table=table,
                                        row_uid=_row_uid(ctx, naming), data=p.data, permissions=p.permissions)
    return json_response(row_model(naming, database, table, row), 201 if created else 200)


async def row_delete(ctx, naming: Naming):
    database, table, loaded = await table_and_row_of(ctx, naming, _row_uid(ctx, naming))
    await svc.row_delete(ctx, naming=naming, database=database, table=table, row_uid=_row_uid(ctx, naming),
                         loaded=loaded)
    return no_content()


async def rows_update(ctx, naming: Naming):
    database, table = await table_of(ctx, naming)
    rows = await bulk.rows_update(ctx, naming=naming, database=database, table=table, data=ctx.params.data,
                                 queries=queries_of(ctx))
    return _list(naming, database, table, rows, len(rows))


async def rows_upsert(ctx, naming: Naming):
    database, table = await table_of(ctx, naming)
    rows = await bulk.rows_upsert(ctx, naming=naming, database=database, table=table,
                                  items=getattr(ctx.params, naming.rows))
    return _list(naming, database, table, rows, len(rows))


async def rows_delete(ctx, naming: Naming):
    database, table = await table_of(ctx, naming)
    rows = await bulk.rows_delete(ctx, naming=naming, database=database, table=table, queries=queries_of(ctx))
    return _list(naming, database, table, rows, len(rows))


async def rows_query(ctx, naming: Naming):
    """POST .../rows/query: a list with the queries in the body."""
    return await row_list(ctx, naming)


async def _step(ctx, naming: Naming, sign: int, bound: str):
    p = ctx.params
    value = 1 if p.value is None else p.value
    if value <= 0:
        raise AppwriteError("general_argument_invalid", "Invalid `value` param: Value must be greater than 0")
    database, table = await table_of(ctx, naming)
    row = await svc.row_increment(ctx, naming=naming, database=database, table=table, row_uid=_row_uid(ctx, naming),
                                  key=getattr(p, naming.column), delta=sign * value, bound=getattr(p, bound))
    return json_response(row_model(naming, database, table, row))


async def row_increment(ctx, naming: Naming):
    return await _step(ctx, naming, 1, "max")


async def row_decrement(ctx, naming: Naming):
    return await _step(ctx, naming, -1, "min")
