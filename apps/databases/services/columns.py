"""Writes for columns (attributes). Synchronous: a created column is ``available`` at once.

Appwrite rules kept here: a default is refused on required and array columns
(``attribute_default_unsupported``); a required column cannot be added to a table that
already has rows; a new column's default is written into existing rows; deleting a column
removes its values from every row and drops the indexes that use it.
"""

from __future__ import annotations

from apps.core.drivers.db import now, present, races
from apps.core.errors import AppwriteError
from apps.databases import spatial
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.relations import visible
from apps.databases.schema import KINDS, MAX_COLUMNS, build_spec, check_key, column_from_row
from apps.databases.selectors import meta
from apps.databases.selectors.rows import table_has_rows
from apps.databases.services import ddl


def find_column(naming: Naming, table: dict, key: str) -> dict:
    """The column ``key`` of ``table``. Raises 404 ``column_not_found`` / ``attribute_not_found``
    (also for the hidden side of a one-way relationship)."""
    for c in table["columns"]:
        if c["key"] == key and visible(c):
            return c
    raise naming.error("column", "not_found")


async def column_create(ctx, *, naming: Naming, table: dict, kind: str, params: dict) -> dict:
    """Create a column of ``kind`` from its create ``params`` (``key``, ``required``, ``default``,
    ``array``, ``size``, ``min``, ``max``, ``elements``, ``encrypt``); returns it."""
    key = check_key(params.get("key"), "key")
    size, spec = build_spec(kind, params)
    if KINDS[kind].base == "spatial":
        await spatial.require_support(ctx.db)
    required = bool(params.get("required"))
    if required and await table_has_rows(ctx, table_pk=table["id"]):
        raise AppwriteError("attribute_value_invalid",
                            f'Cannot add required {naming.column} "{key}" to a {naming.table} that has {naming.rows}.')
    ts = ctx.db.dt(now())
    with races(exists=lambda: naming.error("column", "already_exists")):
        async with ctx.db.transaction() as tx:
            fresh = await meta.lock_table(tx, naming, table)
            if any(c["key"] == key for c in fresh["columns"]):
                raise naming.error("column", "already_exists")
            if len(fresh["columns"]) >= MAX_COLUMNS:
                raise naming.error("column", "limit_exceeded")
            row = await tx.fetchone(
                'INSERT INTO databases_column (table_id, key, kind, required, "array", size, spec, created_at, '
                'updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *',
                (table["id"], key, kind, required, bool(params.get("array")), size, ctx.db.json(spec), ts, ts),
            )
            if spec.get("default") is not None:
                await tx.execute(dialect.set_default(tx, table["id"], key), (tx.json(spec["default"]),))
    await meta.forget_table(ctx, table)
    return column_from_row(row)


async def column_update(ctx, *, naming: Naming, table: dict, kind: str, key: str, params: dict) -> dict:
    """PATCH a column: ``required``, ``default``, ``size``/``min``/``max``/``elements``, ``newKey``.

    Raises 404 for an unknown key, 400 ``column_type_invalid`` / ``attribute_type_invalid``
    when ``kind`` is not the column's kind, 409 when ``newKey`` is taken.
    """
    find_column(naming, table, key)  # 404 before any lock for a key that never existed
    with races(missing=lambda: naming.error("column", "not_found"),
               exists=lambda: naming.error("column", "already_exists")):
        async with ctx.db.transaction() as tx:
            table = await meta.lock_table(tx, naming, table)
            row = await _update_locked(tx, naming, table, kind, key, params)
    await meta.forget_table(ctx, table)
    return column_from_row(row)


async def _update_locked(tx, naming: Naming, table: dict, kind: str, key: str, params: dict) -> dict:
    """:func:`column_update`'s checks and writes, on ``table`` as re-read under its lock."""
    column = find_column(naming, table, key)
    if column["kind"] != kind and not {column["kind"], kind} <= {"string", "varchar"}:
        raise naming.error("column", "type_invalid", f'{naming.column.capitalize()} "{key}" is not of kind {kind}.')
    size, spec = build_spec(column["kind"], params, existing=column)
    required = params["required"] if params.get("required") is not None else column["required"]
    new_key = params.get("newKey") or key
    if new_key != key:
        check_key(new_key, "newKey")
        if any(c["key"] == new_key for c in table["columns"]):
            raise naming.error("column", "already_exists")
    row = present(await tx.fetchone(
        "UPDATE databases_column SET key = %s, required = %s, size = %s, spec = %s, updated_at = %s "
        "WHERE id = %s RETURNING *",
        (new_key, required, size, tx.json(spec), tx.dt(now()), column["id"]),
    ))
    if new_key != key:
        await tx.execute(dialect.rename_key(tx, table["id"], key, new_key))
        for index in table["indexes"]:
            if key in index["columns"]:
                cols = [new_key if c == key else c for c in index["columns"]]
                await tx.execute("UPDATE databases_index SET columns = %s WHERE id = %s",
                                 (tx.json(cols), index["id"]))
                await ddl.drop(tx, table["id"], index["id"])
                kinds = {(new_key if k == key else k): v for k, v in ddl.spatial_kinds(table).items()}
                await ddl.create(tx, table["id"], {**index, "columns": cols},
                                 ddl.array_keys(table) | ({new_key} if column["array"] else set()), kinds)
    return row


async def column_delete(ctx, *, naming: Naming, table: dict, key: str) -> None:
    """Delete a column, its values in every row, and the indexes that use it (a relationship:
    both of its sides)."""
    column = find_column(naming, table, key)
    if column["kind"] == "relationship":
        from apps.databases.relations.schema import relationship_delete

        await relationship_delete(ctx, naming=naming, table=table, column=column)
        return
    with races(missing=lambda: naming.error("column", "not_found")):
        async with ctx.db.transaction() as tx:
            table = await meta.lock_table(tx, naming, table)
            column = find_column(naming, table, key)  # 404: deleted by a request that held the lock first
            for index in table["indexes"]:
                if key in index["columns"]:
                    await ddl.drop(tx, table["id"], index["id"])
                    await tx.execute("DELETE FROM databases_index WHERE id = %s", (index["id"],))
            present(await tx.fetchval("DELETE FROM databases_column WHERE id = %s RETURNING id", (column["id"],)))
            await tx.execute(dialect.remove_key(tx, table["id"], key))
    await meta.forget_table(ctx, table)


def column_kind_check(kind: str) -> None:
    if kind not in KINDS:
        raise AppwriteError("general_route_not_found")
