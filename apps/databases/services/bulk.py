"""Bulk writes on rows: create many, and update or delete every row matched by queries.

Same rules as the single-row services (``services.rows``): validation before any write, one
transaction, permissions per row, events recorded in it and announced after commit. Bulk update/delete touch only the
rows the caller may update/delete.
"""

from __future__ import annotations

from apps.core.domain import permissions as perm
from apps.core.domain.events import announce_all
from apps.core.domain.ids import resolve_id
from apps.core.domain.queries import Query
from apps.core.errors import AppwriteError
from apps.databases import querying as qp
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.relations import has as has_relationships
from apps.databases.rowstore import (
    allowed,
    data_of,
    insert_rows,
    item_permissions,
    perm_list,
    prepare_new,
    record_rows,
    require_create,
    stored_data,
    structure_error,
    write_row,
)
from apps.databases.schema import validate_data
from apps.databases.selectors.meta import run_plan
from apps.databases.selectors.rows import ROW_COLUMNS, fields_of, rows_for_write
from apps.databases.services.rows import upsert_in

MAX_BULK = 1000


def no_bulk(naming: Naming, table: dict) -> None:
    """Bulk writes skip relationship handling: refused on such tables, as Appwrite does.
    Raises 400 ``general_bad_request``."""
    if has_relationships(table):
        raise AppwriteError("general_bad_request",
                            f"Bulk operations are not supported for {naming.tables} with relationship {naming.columns}.")


async def rows_create(ctx, *, naming: Naming, database: dict, table: dict, items: list) -> list[dict]:
    """Create many rows in one transaction (``rows[]``: each its data plus optional ``$id`` and
    ``$permissions``); all or nothing."""
    no_bulk(naming, table)
    require_create(ctx, table)
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK:
        raise AppwriteError("general_argument_invalid", f"Invalid `{naming.rows}` param: 1 to {MAX_BULK} items.")
    prepared = []
    for item in items:
        if not isinstance(item, dict):
            raise naming.error("row", "invalid_structure")
        uid = resolve_id(str(item.get("$id") or "unique()"), "$id")
        prepared.append((uid, *prepare_new(ctx, naming, table, item, item.get("$permissions"))))
    if len({uid for uid, _, _ in prepared}) != len(prepared):
        raise naming.error("row", "already_exists")
    async with ctx.db.transaction() as tx:
        rows = await insert_rows(tx, naming, table, prepared)
        events = await record_rows(ctx, tx, database, table, rows, "create")
    await announce_all(ctx, events)
    return rows


async def rows_upsert(ctx, *, naming: Naming, database: dict, table: dict, items: list) -> list[dict]:
    """Upsert many rows (``rows[]``: each its data plus optional ``$id`` and ``$permissions``) in
    one transaction: all or nothing, events after commit."""
    no_bulk(naming, table)
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK:
        raise AppwriteError("general_argument_invalid", f"Invalid `{naming.rows}` param: 1 to {MAX_BULK} items.")
    prepared = []
    for item in items:
        if not isinstance(item, dict):
            raise naming.error("row", "invalid_structure")
        permissions = item.get("$permissions")
        uid = resolve_id(str(item.get("$id") or "unique()"), naming.row_id)
        data = {k: v for k, v in item.items() if not k.startswith("$")}
        prepared.append((uid, data, None if permissions is None else item_permissions(ctx, permissions)))
    async with ctx.db.transaction() as tx:
        results = [await upsert_in(ctx, tx, naming, table, uid, data, perms) for uid, data, perms in prepared]
        events = await record_rows(ctx, tx, database, table, [row for row, _ in results],
                                   ["create" if created else "update" for _, created in results])
    await announce_all(ctx, events)
    return [row for row, _ in results]


async def matching_rows(ctx, table: dict, queries: list[Query], action: str) -> list[dict]:
    """Rows matched by ``queries`` that the caller may ``action`` (all of them unless a
    ``limit`` query says otherwise, up to :data:`qp.MAX_COUNT`)."""
    if not (ctx.auth.is_key or perm.allows(ctx.auth, table["permissions"], action) or table["row_security"]):
        raise AppwriteError("user_unauthorized")
    lst = qp.Listing(f"{dialect.ROWS} r", [f"r.table_id = {int(table['id'])}"], [], fields_of(ctx.db, table))
    p = qp.plan(ctx.db, lst, queries, allow_select=False)
    if not any(q.method == "limit" for q in queries):
        p.limit = qp.MAX_COUNT
    _, rows = await run_plan(ctx, lst, p, ROW_COLUMNS, False)
    return [r for r in rows if allowed(ctx.auth, table, perm_list(r), action)]


async def rows_update(ctx, *, naming: Naming, database: dict, table: dict, data: dict | None,
                      queries: list[Query]) -> list[dict]:
    """Apply the same partial ``data`` to every matching row the caller may update."""
    no_bulk(naming, table)
    changes = validate_data(table["columns"], data or {}, partial=True, invalid=structure_error(naming))
    targets = await matching_rows(ctx, table, queries, "update")
    out = []
    async with ctx.db.transaction() as tx:
        current = await rows_for_write(tx, table=table, ids=[r["id"] for r in targets])
        for row in targets:
            row = current.get(row["id"])
            if row is None or not allowed(ctx.auth, table, perm_list(row), "update"):
                continue  # deleted, or its permissions changed, since it matched
            merged = stored_data(naming, {**data_of(row), **changes})
            out.append(await write_row(tx, naming, row, merged, perm_list(row)))
        events = await record_rows(ctx, tx, database, table, out, "update")
    await announce_all(ctx, events)
    return out


async def rows_delete(ctx, *, naming: Naming, database: dict, table: dict, queries: list[Query]) -> list[dict]:
    """Delete every matching row the caller may delete; returns the deleted rows."""
    no_bulk(naming, table)
    targets = await matching_rows(ctx, table, queries, "delete")
    if not targets:
        return targets
    gone: set[int] = set()
    async with ctx.db.transaction() as tx:
        ids = [r["id"] for r in targets]
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            deleted = await tx.fetchall(
                f"DELETE FROM {dialect.ROWS} WHERE id IN ({', '.join(['%s'] * len(chunk))}) RETURNING id", chunk)
            gone.update(r["id"] for r in deleted)
        targets = [r for r in targets if r["id"] in gone]  # not those a concurrent request deleted first
        events = await record_rows(ctx, tx, database, table, targets, "delete")
    await announce_all(ctx, events)
    return targets
