"""Row (document) endpoints: create (single and bulk), get, list, PATCH, PUT, delete, and the
bulk update/upsert/delete routes.

With ``transactionId`` the write routes stage the write into the transaction and answer what
Appwrite answers then (no event, nothing written): create/upsert 201 and update/increment 200
with a row holding only the given values, delete 204, bulk routes ``{total, rows: []}``. Reads
with ``transactionId`` see committed rows plus the staged writes. Without it, the only added
work is one attribute test.
"""

from __future__ import annotations

from apps.core.domain.ids import resolve_id
from apps.core.errors import AppwriteError
from apps.core.http import formats
from apps.core.http.context import json_response, no_content
from apps.databases import relations
from apps.databases.api.common import queries_of, table_and_row_of, table_of
from apps.databases.naming import LEGACY, Naming
from apps.databases.relations import reads
from apps.databases.responses import row_model
from apps.databases.selectors import rows as selectors
from apps.databases.services import bulk, increments
from apps.databases.services import rows as svc
from apps.databases.services.commit import read_staged
from apps.databases.services.staging import stage_one


def _row_uid(ctx, naming: Naming) -> str:
    return getattr(ctx.params, naming.row_id)


def _list(naming: Naming, database: dict, table: dict, rows: list[dict], total: int, select=None, related=None):
    related = related or {}
    return json_response({"total": total,
                          naming.rows: [row_model(naming, database, table, r, select, related.get(r["uid"]))
                                        for r in rows]})


async def _related(ctx, naming: Naming, table: dict, rows: list[dict], select):
    """``(select, related rows by row ID)``: loads the relationships ``select`` names (none for
    tables without relationships: no work on the plain path)."""
    if not rows or not relations.has(table):
        return select, None
    if naming is LEGACY and formats.older_than(ctx, "1.8.0") and (select is None or "*" in select):
        # Clients older than 1.8 got related rows without selecting them (Appwrite's V20 filter).
        select = ["*", *await reads.every_relationship(ctx, table)]
    if not reads.nested(select):
        return select, None
    return select, await reads.load(ctx, naming, table, rows, select)


def _mock(naming: Naming, database: dict, table: dict, row_uid: str, data: dict | None,
          permissions: list[str] | None, status: int):
    """The row Appwrite answers for a staged write: its ID, table, database and the values sent."""
    out = {"$id": row_uid, naming.row_table_key: table["uid"], "$databaseId": database["uid"]}
    if permissions is not None:
        out["$permissions"] = permissions
    out.update({k: v for k, v in (data or {}).items() if not k.startswith("$")})
    return json_response(out, status)


def _staged_list(naming: Naming, total: int):
    return json_response({"total": total, naming.rows: []})


async def row_list(ctx, naming: Naming):
    database, table = await table_of(ctx, naming)
    queries = queries_of(ctx)
    if ctx.params.transactionId:
        total, rows, select = await read_staged(
            ctx, naming=naming, uid=ctx.params.transactionId,
            read=lambda view: selectors.row_list(view, table=table, queries=queries, total=ctx.params.total))
    else:
        total, rows, select = await selectors.row_list(ctx, table=table, queries=queries, total=ctx.params.total)
    select, related = await _related(ctx, naming, table, rows, select)
    return _list(naming, database, table, rows, total, select, related)


async def row_create(ctx, naming: Naming):
    p = ctx.params
    database, table = await table_of(ctx, naming)
    items = getattr(p, naming.rows)
    if items is not None:
        if p.transactionId:
            await stage_one(ctx, naming=naming, table=table, action="bulkCreate", payload={"rows": items})
            return _staged_list(naming, len(items))
        rows = await bulk.rows_create(ctx, naming=naming, database=database, table=table, items=items)
        return json_response({"total": len(rows), naming.rows: [row_model(naming, database, table, r) for r in rows]},
                             201)
    row_uid = getattr(p, naming.row_id)
    if row_uid is None:
        raise AppwriteError("general_argument_invalid", f'Param "{naming.row_id}" is not optional.')
    if p.data is None:
        raise AppwriteError("general_argument_invalid", 'Param "data" is not optional.')
    if p.transactionId:
        row_uid = resolve_id(row_uid, naming.row_id)
        op = await stage_one(ctx, naming=naming, table=table, action="create", row_uid=row_uid,
                             payload={"data": p.data, "permissions": p.permissions})
        return _mock(naming, database, table, row_uid, p.data, op.data["permissions"], 201)
    row = await svc.row_create(ctx, naming=naming, database=database, table=table, row_uid=row_uid, data=p.data,
                               permissions=p.permissions)
    return json_response(row_model(naming, database, table, row), 201)


async def row_get(ctx, naming: Naming):
    if ctx.params.transactionId:
        database, table = await table_of(ctx, naming)
        row_uid, queries = _row_uid(ctx, naming), queries_of(ctx)

        async def read(view):
            found = await view.db.fetchone(
                f"SELECT {selectors.ROW_COLUMNS} FROM databases_row r WHERE r.table_id = {int(table['id'])} "
                "AND r.uid = %s", (row_uid,))
            return selectors.row_readable(view, table=table, row=found, queries=queries)

        row, select = await read_staged(ctx, naming=naming, uid=ctx.params.transactionId, read=read)
    else:
        database, table, row = await table_and_row_of(ctx, naming, _row_uid(ctx, naming))
        row, select = selectors.row_readable(ctx, table=table, row=row, queries=queries_of(ctx))
    if row is None:
        raise naming.error("row", "not_found")
    select, related = await _related(ctx, naming, table, [row], select)
    return json_response(row_model(naming, database, table, row, select, (related or {}).get(row["uid"])))


async def row_update(ctx, naming: Naming):
    p = ctx.params
    if p.transactionId:
        database, table = await table_of(ctx, naming)
        await stage_one(ctx, naming=naming, table=table, action="update", row_uid=_row_uid(ctx, naming),
                        payload={"data": p.data, "permissions": p.permissions})
        return _mock(naming, database, table, _row_uid(ctx, naming), p.data, p.permissions, 200)
    database, table, loaded = await table_and_row_of(ctx, naming, _row_uid(ctx, naming))
    row = await svc.row_update(ctx, naming=naming, database=database, table=table, row_uid=_row_uid(ctx, naming),
                               data=p.data, permissions=p.permissions, loaded=loaded)
    return json_response(row_model(naming, database, table, row))


async def row_upsert(ctx, naming: Naming):
    p = ctx.params
    database, table = await table_of(ctx, naming)
    if p.transactionId:
        row_uid = resolve_id(_row_uid(ctx, naming), naming.row_id)
        await stage_one(ctx, naming=naming, table=table, action="upsert", row_uid=row_uid,
                        payload={"data": p.data, "permissions": p.permissions})
        return _mock(naming, database, table, row_uid, p.data, p.permissions, 201)
    row, created = await svc.row_upsert(ctx, naming=naming, database=database, table=table,
                                        row_uid=_row_uid(ctx, naming), data=p.data, permissions=p.permissions)
    return json_response(row_model(naming, database, table, row), 201 if created else 200)


async def row_delete(ctx, naming: Naming):
    if ctx.params.transactionId:
        _, table = await table_of(ctx, naming)
        await stage_one(ctx, naming=naming, table=table, action="delete", row_uid=_row_uid(ctx, naming), payload={})
        return no_content()
    database, table, loaded = await table_and_row_of(ctx, naming, _row_uid(ctx, naming))
    await svc.row_delete(ctx, naming=naming, database=database, table=table, row_uid=_row_uid(ctx, naming),
                         loaded=loaded)
    return no_content()


async def rows_update(ctx, naming: Naming):
    database, table = await table_of(ctx, naming)
    if ctx.params.transactionId:
        await stage_one(ctx, naming=naming, table=table, action="bulkUpdate",
                        payload={"data": ctx.params.data or {}, "queries": ctx.params.queries or []})
        return _staged_list(naming, 0)
    rows = await bulk.rows_update(ctx, naming=naming, database=database, table=table, data=ctx.params.data,
                                 queries=queries_of(ctx))
    return _list(naming, database, table, rows, len(rows))


async def rows_upsert(ctx, naming: Naming):
    database, table = await table_of(ctx, naming)
    items = getattr(ctx.params, naming.rows)
    if ctx.params.transactionId:
        await stage_one(ctx, naming=naming, table=table, action="bulkUpsert", payload={"rows": items})
        return _staged_list(naming, len(items))
    rows = await bulk.rows_upsert(ctx, naming=naming, database=database, table=table, items=items)
    return _list(naming, database, table, rows, len(rows))


async def rows_delete(ctx, naming: Naming):
    database, table = await table_of(ctx, naming)
    if ctx.params.transactionId:
        await stage_one(ctx, naming=naming, table=table, action="bulkDelete",
                        payload={"queries": ctx.params.queries or []})
        return _staged_list(naming, 0)
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
    if p.transactionId:
        key = getattr(p, naming.column)
        await stage_one(ctx, naming=naming, table=table, action="increment" if sign > 0 else "decrement",
                        row_uid=_row_uid(ctx, naming), payload={"column": key, "value": value, "bound": getattr(p, bound)})
        return _mock(naming, database, table, _row_uid(ctx, naming), {}, None, 200)
    row = await increments.row_increment(ctx, naming=naming, database=database, table=table, row_uid=_row_uid(ctx, naming),
                                  key=getattr(p, naming.column), delta=sign * value, bound=getattr(p, bound))
    return json_response(row_model(naming, database, table, row))


async def row_increment(ctx, naming: Naming):
    return await _step(ctx, naming, 1, "max")


async def row_decrement(ctx, naming: Naming):
    return await _step(ctx, naming, -1, "min")
