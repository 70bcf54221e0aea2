"""Writes for user indexes (key, unique, fulltext, trigram), backed by real SQL indexes (``ddl``)."""

from __future__ import annotations

from apps.core.drivers.db import UniqueViolation, now, present, races
from apps.core.errors import AppwriteError
from apps.databases import extensions
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.schema import KINDS, check_key
from apps.databases.selectors import meta
from apps.databases.services import ddl

TYPES = ("key", "unique", "fulltext", "trigram", "spatial")
MAX_INDEXES = 64
_SYSTEM = ("$id", "$createdAt", "$updatedAt", "$sequence")


def find_index(table: dict, key: str) -> dict:
    for i in table["indexes"]:
        if i["key"] == key:
            return i
    raise AppwriteError("index_not_found")


def _check(naming: Naming, table: dict, kind: str, columns: list, orders: list | None) -> list[str]:
    if kind not in TYPES:
        raise AppwriteError("index_invalid", f"Index type {kind!r} is not supported; use key, unique, fulltext, "
                                             "trigram or spatial.")
    if not isinstance(columns, list) or not 1 <= len(columns) <= 32:
        raise AppwriteError("index_invalid", f"An index needs 1 to 32 {naming.columns}.")
    by_key = {c["key"]: c for c in table["columns"]}
    if len(set(columns)) != len(columns):
        raise AppwriteError("index_invalid", f"Duplicate {naming.columns} in index.")
    for key in columns:
        if key in _SYSTEM:
            if kind in ("fulltext", "trigram", "spatial"):
                raise AppwriteError("index_invalid", f"A {kind} index works on string columns only.")
            continue
        column = by_key.get(key)
        if column is None:
            raise AppwriteError("index_invalid", f'Invalid index {naming.column} "{key}" not found.')
        if kind in ("fulltext", "trigram") and (KINDS[column["kind"]].base != "string" or column["array"]):
            raise AppwriteError("index_invalid", f"A {kind} index works on string columns only.")
        is_spatial = KINDS[column["kind"]].base == "spatial"
        if kind == "spatial" and (not is_spatial or len(columns) != 1):
            raise AppwriteError("index_invalid", "A spatial index takes exactly one point, line or polygon column.")
        if is_spatial and kind != "spatial":
            raise AppwriteError("index_invalid", f"Spatial {naming.columns} take spatial indexes only.")
        if column["kind"] == "relationship":
            raise AppwriteError("index_invalid", f"Relationship {naming.columns} are indexed already.")
    out_orders = []
    for o in orders or []:
        if not isinstance(o, str) or o.lower() not in ("asc", "desc"):
            raise AppwriteError("index_invalid", "Orders must be ASC or DESC.")
        out_orders.append(o.upper())
    if len(out_orders) > len(columns):
        raise AppwriteError("index_invalid", "More orders than columns.")
    return out_orders


async def index_create(ctx, *, naming: Naming, table: dict, key: str, kind: str, columns: list,
                       orders: list | None, lengths: list | None) -> dict:
    """Create the index and its SQL index in one transaction.

    Raises 409 ``index_already_exists``; 400 ``index_invalid`` for bad types/columns/orders or
    a unique index over values that already repeat; 400 ``index_limit_exceeded``.
    """
    check_key(key, "key")
    _check(naming, table, kind, columns, orders)  # refused before any lock
    if kind == "trigram" and dialect.is_pg(ctx.db):
        await extensions.ensure(ctx.db, "pg_trgm", "Trigram indexes")
    ts = ctx.db.dt(now())
    try:
        async with ctx.db.transaction() as tx:
            table = await meta.lock_table(tx, naming, table)
            if any(i["key"] == key for i in table["indexes"]):
                raise AppwriteError("index_already_exists")
            if len(table["indexes"]) >= MAX_INDEXES:
                raise AppwriteError("index_limit_exceeded")
            orders = _check(naming, table, kind, columns, orders)  # the columns as they are now
            try:
                row = await tx.fetchone(
                    "INSERT INTO databases_index (table_id, key, type, columns, orders, lengths, created_at, updated_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                    (table["id"], key, kind, tx.json(columns), tx.json(orders), tx.json(lengths or []), ts, ts),
                )
            except UniqueViolation:
                raise AppwriteError("index_already_exists") from None
            await ddl.create(tx, table["id"], {"id": row["id"], "type": kind, "columns": columns, "orders": orders},
                             ddl.array_keys(table), ddl.spatial_kinds(table))
    except UniqueViolation:
        raise AppwriteError("index_invalid", "Cannot create a unique index: existing values repeat.") from None
    await meta.forget_table(ctx, table)
    return {"id": row["id"], "key": key, "type": kind, "columns": columns, "orders": orders,
            "lengths": lengths or [], "created_at": ts, "updated_at": ts}


async def index_delete(ctx, *, naming: Naming, table: dict, key: str) -> None:
    """Delete the index ``key`` and its SQL index. Raises 404 ``index_not_found`` (also when a
    concurrent request deleted it first)."""
    find_index(table, key)
    with races(missing=lambda: AppwriteError("index_not_found")):
        async with ctx.db.transaction() as tx:
            table = await meta.lock_table(tx, naming, table)
            index = find_index(table, key)
            await ddl.drop(tx, table["id"], index["id"])
            present(await tx.fetchval("DELETE FROM databases_index WHERE id = %s RETURNING id", (index["id"],)))
    await meta.forget_table(ctx, table)
