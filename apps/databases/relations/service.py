"""The row services' entry points for tables with relationships: one SQL transaction per request,
the work done by :class:`apps.databases.relations.writes.Writer`, events recorded in it and announced after the commit."""

from __future__ import annotations

from apps.core.domain.ids import resolve_id
from apps.core.errors import AppwriteError
from apps.databases.naming import Naming
from apps.databases.relations.writes import Writer
from apps.databases.rowstore import allowed, perm_list
from apps.databases.selectors.rows import row_for_write


async def row_create(ctx, *, naming: Naming, database: dict, table: dict, row_uid: str, data: dict,
                     permissions: list[str] | None) -> dict:
    async with ctx.db.transaction() as tx:
        w = Writer(ctx, tx, naming)
        row = await w.create(database, table, resolve_id(row_uid, naming.row_id), data, permissions)
        await w.record()
    await w.announce()
    return row


async def row_update(ctx, *, naming: Naming, database: dict, table: dict, row_uid: str, data: dict | None,
                     permissions: list[str] | None) -> dict:
    if not data and permissions is None:
        raise naming.error("row", "missing_payload")
    async with ctx.db.transaction() as tx:
        row = await row_for_write(tx, table=table, row_uid=row_uid)
        if row is None:
            raise naming.error("row", "not_found")
        w = Writer(ctx, tx, naming)
        row = await w.update(database, table, row, data or {}, permissions)
        await w.record()
    await w.announce()
    return row


async def row_upsert(ctx, *, naming: Naming, database: dict, table: dict, row_uid: str, data: dict | None,
                     permissions: list[str] | None) -> tuple[dict, bool]:
    async with ctx.db.transaction() as tx:
        w = Writer(ctx, tx, naming)
        row, created = await w.upsert(database, table, resolve_id(row_uid, naming.row_id), data or {}, permissions)
        await w.record()
    await w.announce()
    return row, created


async def row_delete(ctx, *, naming: Naming, database: dict, table: dict, row_uid: str) -> None:
    async with ctx.db.transaction() as tx:
        row = await row_for_write(tx, table=table, row_uid=row_uid)
        if row is None:
            raise naming.error("row", "not_found")
        if not allowed(ctx.auth, table, perm_list(row), "delete"):
            raise AppwriteError("user_unauthorized")
        w = Writer(ctx, tx, naming)
        await w.delete(database, table, row)
        await w.record()
    await w.announce()


