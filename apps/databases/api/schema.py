"""Column (attribute) and index endpoints. Creates answer 202 with ``status: available``
(the work is done synchronously)."""

from __future__ import annotations

from apps.core.http.context import json_response, no_content
from apps.databases import listfilter
from apps.databases.api.common import queries_of, table_of
from apps.databases.naming import Naming
from apps.databases.relations import schema as relationship_schema
from apps.databases.relations import visible
from apps.databases.responses import column_model, index_model
from apps.databases.services import columns as column_svc
from apps.databases.services import indexes as index_svc

_PATH = ("databaseId", "tableId", "collectionId", "key", "description")


def _list_window(ctx, items: list, model, fields: dict[str, str]) -> tuple[int, list]:
    """The list route's queries over ``items`` (columns or indexes, few): see ``listfilter``."""
    models = {id(i): model(i) for i in items}
    rows = [{"$id": i["key"], **models[id(i)], "$sequence": i["id"], "_item": id(i)} for i in items]
    total, page = listfilter.apply(rows, queries_of(ctx), fields)
    return total, [models[row["_item"]] for row in page]


async def column_list(ctx, naming: Naming):
    _, table = await table_of(ctx, naming)
    columns = [c for c in table["columns"] if visible(c)]
    total, items = _list_window(ctx, columns, lambda c: column_model(c, naming), listfilter.COLUMN_FIELDS)
    return json_response({"total": total if ctx.params.total else 0, naming.columns: items})


async def column_create(ctx, naming: Naming, kind: str):
    _, table = await table_of(ctx, naming)
    params = {k: v for k, v in ctx.params.model_dump().items() if k not in _PATH}
    params["key"] = ctx.params.key
    column = await column_svc.column_create(ctx, naming=naming, table=table, kind=kind, params=params)
    return json_response(column_model(column, naming), 202)


async def column_get(ctx, naming: Naming):
    _, table = await table_of(ctx, naming)
    return json_response(column_model(column_svc.find_column(naming, table, ctx.params.key), naming))


async def column_update(ctx, naming: Naming, kind: str):
    _, table = await table_of(ctx, naming)
    params = {k: v for k, v in ctx.params.model_dump(exclude_unset=True).items() if k not in _PATH}
    column = await column_svc.column_update(ctx, naming=naming, table=table, kind=kind, key=ctx.params.key,
                                            params=params)
    return json_response(column_model(column, naming))


async def column_delete(ctx, naming: Naming):
    _, table = await table_of(ctx, naming)
    await column_svc.column_delete(ctx, naming=naming, table=table, key=ctx.params.key)
    return no_content()


async def index_list(ctx, naming: Naming):
    _, table = await table_of(ctx, naming)

    def model(i):
        out = index_model(naming, i)
        return {**out, "attributes": i["columns"], "columns": i["columns"]}

    total, items = _list_window(ctx, table["indexes"], model, listfilter.INDEX_FIELDS)
    other = "columns" if naming.index_columns == "attributes" else "attributes"
    return json_response({"total": total if ctx.params.total else 0,
                          "indexes": [{k: v for k, v in i.items() if k != other} for i in items]})


async def index_create(ctx, naming: Naming):
    p = ctx.params
    _, table = await table_of(ctx, naming)
    index = await index_svc.index_create(ctx, naming=naming, table=table, key=p.key, kind=p.type,
                                         columns=getattr(p, naming.index_columns), orders=p.orders,
                                         lengths=p.lengths)
    return json_response(index_model(naming, index), 202)


async def index_get(ctx, naming: Naming):
    _, table = await table_of(ctx, naming)
    return json_response(index_model(naming, index_svc.find_index(table, ctx.params.key)))


async def index_delete(ctx, naming: Naming):
    _, table = await table_of(ctx, naming)
    await index_svc.index_delete(ctx, naming=naming, table=table, key=ctx.params.key)
    return no_content()


async def relationship_create(ctx, naming: Naming):
    """POST .../columns/relationship: 202 with the parent side's column."""
    p = ctx.params
    database, table = await table_of(ctx, naming)
    column = await relationship_schema.relationship_create(
        ctx, naming=naming, database=database, table=table,
        related_uid=getattr(p, f"related{naming.table.capitalize()}Id"), type=p.type, two_way=p.twoWay, key=p.key,
        two_way_key=p.twoWayKey, on_delete=p.onDelete)
    return json_response(column_model(column, naming), 202)


async def relationship_update(ctx, naming: Naming):
    """PATCH .../columns/{key}/relationship: ``onDelete`` and/or ``newKey``."""
    p = ctx.params
    _, table = await table_of(ctx, naming)
    column = column_svc.find_column(naming, table, p.key)
    if column["kind"] != "relationship":
        raise naming.error("column", "type_invalid", f'{naming.column.capitalize()} "{p.key}" is not a relationship.')
    column = await relationship_schema.relationship_update(ctx, naming=naming, table=table, column=column,
                                                           on_delete=p.onDelete, new_key=p.newKey)
    return json_response(column_model(column, naming))
