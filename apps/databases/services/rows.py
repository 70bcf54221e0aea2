"""Writes for rows (documents): create, bulk create, update, upsert, delete, bulk update/delete.

Permissions: create is decided by the table's ``create`` permission; update and
delete by the table's permission or, with row security, the row's own. Non-key callers may
only grant roles they hold; a session user's row without permissions gets
``read/update/delete("user:<id>")``. Data is validated against the columns on every write
(``schema.validate_data``); nothing is written when validation fails. A write in a transaction
records its events in it (``apps.core.domain.events.record``: the realtime outbox) and announces them
after commit; a single-statement write announces after its statement.
"""

from __future__ import annotations

from apps.core.domain import permissions as perm
from apps.core.domain.events import announce_all
from apps.core.domain.ids import resolve_id
from apps.core.drivers.db import UniqueViolation, now
from apps.core.errors import AppwriteError
from apps.databases import relations
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.rowstore import (
    RETURNING,
    allowed,
    announce_row,
    data_of,
    insert_row,
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
from apps.databases.selectors.rows import row_for_write


async def row_create(ctx, *, naming: Naming, database: dict, table: dict, row_uid: str, data: dict,
                     permissions: list[str] | None) -> dict:
    """Create one row. Raises 401 ``user_unauthorized``, 400 ``*_invalid_structure`` /
    ``*_missing_data``, 409 ``*_already_exists`` (same ID or a unique index clash)."""
    if relations.has(table):
        from apps.databases.relations import service as writes

        return await writes.row_create(ctx, naming=naming, database=database, table=table, row_uid=row_uid, data=data,
                                       permissions=permissions)
    require_create(ctx, table)
    stored, permissions = prepare_new(ctx, naming, table, data, permissions)
    row = await insert_row(ctx.db, naming, table, resolve_id(row_uid, naming.row_id), stored, permissions)
    await announce_row(ctx, database, table, row, "create")
    return row


_UNLOADED = object()


async def _update_if_unchanged(db, naming: Naming, row: dict, data: dict, permissions: list[str]) -> dict | None:
    """One-statement update that applies only if the row still holds the data and permissions
    it was read with (optimistic concurrency); ``None`` when it changed meanwhile."""
    cast = dialect.json_cast(db)
    try:
        return await db.fetchone(
            f"UPDATE {dialect.ROWS} SET data = %s, permissions = %s, read_roles = %s, updated_at = %s "
            f"WHERE id = %s AND data = %s{cast} AND permissions = %s{cast} RETURNING {RETURNING}",
            (db.json(data), db.json(permissions), dialect.roles_value(db, perm.roles_of(permissions, "read")),
             db.dt(now()), row["id"], dialect.same_json(db, row["data"]), dialect.same_json(db, row["permissions"])),
        )
    except UniqueViolation:
        raise naming.error("row", "already_exists") from None


async def row_update(ctx, *, naming: Naming, database: dict, table: dict, row_uid: str, data: dict | None,
                     permissions: list[str] | None, loaded: dict | None = _UNLOADED) -> dict:
    """PATCH: merge ``data`` into the row (``null`` clears a column) and/or replace permissions.

    ``loaded`` is the row as read with the table metadata (``None``: it did not exist); with it
    the common case is one conditional UPDATE, falling back to a locked read-modify-write when
    the row changed in between. Raises 400 ``*_missing_payload``, 404 ``*_not_found``,
    401 ``user_unauthorized``.
    """
    if relations.has(table):
        from apps.databases.relations import service as writes

        return await writes.row_update(ctx, naming=naming, database=database, table=table, row_uid=row_uid, data=data,
                                       permissions=permissions)
    if not data and permissions is None:
        raise naming.error("row", "missing_payload")
    changes = validate_data(table["columns"], data or {}, partial=True, invalid=structure_error(naming))
    new_permissions = None if permissions is None else item_permissions(ctx, permissions)
    if loaded is None:
        raise naming.error("row", "not_found")
    if loaded is not _UNLOADED:
        old_permissions = perm_list(loaded)
        if not allowed(ctx.auth, table, old_permissions, "update"):
            raise AppwriteError("user_unauthorized")
        merged = stored_data(naming, {**data_of(loaded), **changes})
        row = await _update_if_unchanged(ctx.db, naming, loaded, merged,
                                         old_permissions if new_permissions is None else new_permissions)
        if row is not None:
            await announce_row(ctx, database, table, row, "update")
            return row
    async with ctx.db.transaction() as tx:
        row = await row_for_write(tx, table=table, row_uid=row_uid)
        if row is None:
            raise naming.error("row", "not_found")
        old_permissions = perm_list(row)
        if not allowed(ctx.auth, table, old_permissions, "update"):
            raise AppwriteError("user_unauthorized")
        merged = stored_data(naming, {**data_of(row), **changes})
        row = await write_row(tx, naming, row, merged, old_permissions if new_permissions is None else new_permissions)
        events = await record_rows(ctx, tx, database, table, [row], "update")
    await announce_all(ctx, events)
    return row


async def row_upsert(ctx, *, naming: Naming, database: dict, table: dict, row_uid: str, data: dict | None,
                     permissions: list[str] | None) -> tuple[dict, bool]:
    """PUT: update the row if it exists (merging ``data``), else create it. ``(row, created)``."""
    if relations.has(table):
        from apps.databases.relations import service as writes

        return await writes.row_upsert(ctx, naming=naming, database=database, table=table, row_uid=row_uid, data=data,
                                       permissions=permissions)
    row_uid = resolve_id(row_uid, naming.row_id)
    new_permissions = None if permissions is None else item_permissions(ctx, permissions)
    try:
        async with ctx.db.transaction() as tx:
            row, created = await upsert_in(ctx, tx, naming, table, row_uid, data or {}, new_permissions)
            events = await record_rows(ctx, tx, database, table, [row], "create" if created else "update")
    except AppwriteError as err:
        # A concurrent upsert of the same ID inserted it between our read and our insert: once
        # more, now as an update. A 409 then is a unique index clash (the row exists now).
        if err.type != f"{naming.row}_already_exists":
            raise
        async with ctx.db.transaction() as tx:
            row, created = await upsert_in(ctx, tx, naming, table, row_uid, data or {}, new_permissions)
            events = await record_rows(ctx, tx, database, table, [row], "create" if created else "update")
    await announce_all(ctx, events)
    return row, created


async def upsert_in(ctx, tx, naming: Naming, table: dict, row_uid: str, data: dict,
                    new_permissions: list[str] | None) -> tuple[dict, bool]:
    """The write of :func:`row_upsert` inside the caller's transaction ``tx`` (no event)."""
    row = await row_for_write(tx, table=table, row_uid=row_uid)
    if row is None:
        require_create(ctx, table)
        values = validate_data(table["columns"], data, partial=False, invalid=structure_error(naming))
        perms = perm.default_item_permissions(ctx.auth) if new_permissions is None else new_permissions
        return await insert_row(tx, naming, table, row_uid, stored_data(naming, values), perms), True
    old_permissions = perm_list(row)
    if not allowed(ctx.auth, table, old_permissions, "update"):
        raise AppwriteError("user_unauthorized")
    values = validate_data(table["columns"], {**data_of(row), **data}, partial=False, invalid=structure_error(naming))
    perms = old_permissions if new_permissions is None else new_permissions
    return await write_row(tx, naming, row, stored_data(naming, values), perms), False


async def row_delete(ctx, *, naming: Naming, database: dict, table: dict, row_uid: str,
                     loaded: dict | None = _UNLOADED) -> None:
    """Delete a row; with ``loaded`` (see :func:`row_update`) it is one conditional DELETE.

    Raises 404 ``*_not_found`` and 401 ``user_unauthorized``; on tables with relationships also
    403 ``*_delete_restricted`` (``relations.writes``).
    """
    if loaded is None:
        raise naming.error("row", "not_found")
    if relations.has(table):
        from apps.databases.relations import service as writes

        return await writes.row_delete(ctx, naming=naming, database=database, table=table, row_uid=row_uid)
    if loaded is not _UNLOADED:
        if not allowed(ctx.auth, table, perm_list(loaded), "delete"):
            raise AppwriteError("user_unauthorized")
        cast = dialect.json_cast(ctx.db)
        gone = await ctx.db.fetchone(
            f"DELETE FROM {dialect.ROWS} WHERE id = %s AND permissions = %s{cast} RETURNING id",
            (loaded["id"], dialect.same_json(ctx.db, loaded["permissions"])),
        )
        if gone is not None:
            await announce_row(ctx, database, table, loaded, "delete")
            return
    async with ctx.db.transaction() as tx:
        row = await row_for_write(tx, table=table, row_uid=row_uid)
        if row is None:
            raise naming.error("row", "not_found")
        if not allowed(ctx.auth, table, perm_list(row), "delete"):
            raise AppwriteError("user_unauthorized")
        await tx.execute(f"DELETE FROM {dialect.ROWS} WHERE id = %s", (row["id"],))
        events = await record_rows(ctx, tx, database, table, [row], "delete")
    await announce_all(ctx, events)
