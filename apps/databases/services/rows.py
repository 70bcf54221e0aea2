"""Writes for rows (documents): create, bulk create, update, upsert, delete, bulk update/delete.

Permissions: create is decided by the table's ``create`` permission; update and
delete by the table's permission or, with row security, the row's own. Non-key callers may
only grant roles they hold; a session user's row without permissions gets
``read/update/delete("user:<id>")``. Data is validated against the columns on every write
(``schema.validate_data``); nothing is written when validation fails. A write in a transaction
records its events in it (``apps.core.events.record``: the realtime outbox) and announces them
after commit; a single-statement write announces after its statement.
"""

from __future__ import annotations

import orjson

from apps.core import permissions as perm
from apps.core.db import ForeignKeyViolation, UniqueViolation, as_json, now
from apps.core.errors import AppwriteError
from apps.core.events import WriteEvent, announce, announce_all, record
from apps.core.ids import resolve_id
from apps.databases import relations
from apps.databases import sql as dialect
from apps.databases.naming import TABLESDB, Naming
from apps.databases.responses import row_model
from apps.databases.schema import validate_data
from apps.databases.selectors.rows import row_for_write

MAX_ROW_BYTES = 1024 * 1024  # encoded JSON of one row's data
_RETURNING = "id, uid, data, permissions, created_at, updated_at"


def structure_error(naming: Naming):
    def build(message: str) -> AppwriteError:
        message = message.replace("document", naming.row).replace("attribute", naming.column)
        return naming.error("row", "invalid_structure", message)
    return build


def allowed(auth, table: dict, row_permissions: list[str], action: str) -> bool:
    if auth.is_key or perm.allows(auth, table["permissions"], action):
        return True
    return table["row_security"] and perm.allows(auth, row_permissions, action)


def item_permissions(ctx, given: list[str] | None) -> list[str]:
    if given is None:
        return perm.default_item_permissions(ctx.auth)
    out = perm.normalize(given, perm.ITEM_ACTIONS)
    perm.check_grantable(ctx.auth, out)
    return out


def stored_data(naming: Naming, data: dict) -> dict:
    out = {k: v for k, v in data.items() if v is not None}
    if len(orjson.dumps(out)) > MAX_ROW_BYTES:
        raise naming.error("row", "invalid_structure",
                           f"Invalid {naming.row} structure: the {naming.row} is larger than {MAX_ROW_BYTES} bytes.")
    return out


def require_create(ctx, table: dict) -> None:
    if not ctx.auth.is_key and not perm.allows(ctx.auth, table["permissions"], "create"):
        raise AppwriteError("user_unauthorized")


async def insert_row(tx, naming: Naming, table: dict, row_uid: str, data: dict, permissions: list[str]) -> dict:
    ts = tx.dt(now())
    try:
        return await tx.fetchone(
            f"INSERT INTO {dialect.ROWS} (table_id, uid, data, permissions, read_roles, created_at, updated_at) "
            f"VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {_RETURNING}",
            (table["id"], row_uid, tx.json(data), tx.json(permissions),
             dialect.roles_value(tx, perm.roles_of(permissions, "read")), ts, ts),
        )
    except UniqueViolation:
        raise naming.error("row", "already_exists") from None
    except ForeignKeyViolation:  # the table was deleted since it was read
        raise naming.error("table", "not_found") from None


async def insert_rows(tx, naming: Naming, table: dict, items: list[tuple[str, dict, list[str]]]) -> list[dict]:
    """Insert ``(row_uid, data, permissions)`` items with ONE multi-row INSERT; the rows in input
    order. One round trip instead of one per row: under load every await of a transaction holds
    its pooled connection for another trip through a busy event loop.

    On PostgreSQL the rows travel as ONE jsonb parameter (``[{u, d, p, r}, ...]``: uid, data,
    permissions, read roles) expanded by the server, so the SQL text is the same for any row
    count and psycopg prepares it once per connection (a VALUES list of 100 rows was re-parsed on
    every request: 12 % of a bulk insert's CPU). One orjson document, not four ``jsonb[]``/
    ``text[]`` arrays: psycopg quotes array elements in Python (12 % of the CPU again). The
    rows are returned as stored: jsonb normalises numbers (``1e16`` reads back as an integer,
    ``-0.0`` as ``0.0``), and the answer and the event must match a later GET.
    """
    ts = tx.dt(now())
    try:
        if dialect.is_pg(tx):
            batch = [{"u": uid, "d": data, "p": p, "r": perm.roles_of(p, "read")} for uid, data, p in items]
            rows = await tx.fetchall(
                f"INSERT INTO {dialect.ROWS} (table_id, uid, data, permissions, read_roles, created_at, updated_at) "
                "SELECT %s, e->>'u', e->'d', e->'p', ARRAY(SELECT jsonb_array_elements_text(e->'r')), %s, %s "
                "FROM jsonb_array_elements(%s) AS e "
                f"RETURNING {_RETURNING}",
                [table["id"], ts, ts, tx.json(batch)],
            )
        else:
            values, params = [], []
            for row_uid, data, permissions in items:
                values.append("(%s, %s, %s, %s, %s, %s, %s)")
                params += [table["id"], row_uid, tx.json(data), tx.json(permissions),
                           dialect.roles_value(tx, perm.roles_of(permissions, "read")), ts, ts]
            rows = await tx.fetchall(
                f"INSERT INTO {dialect.ROWS} (table_id, uid, data, permissions, read_roles, created_at, updated_at) "
                f"VALUES {', '.join(values)} RETURNING {_RETURNING}",
                params,
            )
    except UniqueViolation:
        raise naming.error("row", "already_exists") from None
    by_uid = {row["uid"]: row for row in rows}
    return [by_uid[row_uid] for row_uid, _, _ in items]


async def write_row(tx, naming: Naming, row: dict, data: dict, permissions: list[str]) -> dict:
    try:
        return await tx.fetchone(
            f"UPDATE {dialect.ROWS} SET data = %s, permissions = %s, read_roles = %s, updated_at = %s "
            f"WHERE id = %s RETURNING {_RETURNING}",
            (tx.json(data), tx.json(permissions), dialect.roles_value(tx, perm.roles_of(permissions, "read")),
             tx.dt(now()), row["id"]),
        )
    except UniqueViolation:
        raise naming.error("row", "already_exists") from None


def row_event(ctx, database: dict, table: dict, row: dict, action: str) -> WriteEvent:
    """The :class:`WriteEvent` of a committed row write (``action``: create/update/delete)."""
    return WriteEvent(
        project_id=ctx.project_id, resource="row", action=action,
        ids={"databaseId": database["uid"], "tableId": table["uid"], "rowId": row["uid"]},
        payload=row_model(TABLESDB, database, table, row),
        extra={"read_roles": perm.item_read_roles(
            table["permissions"], table["row_security"], as_json(row.get("permissions")) or [])})


async def announce_row(ctx, database: dict, table: dict, row: dict, action: str) -> None:
    await announce(ctx, row_event(ctx, database, table, row, action))


async def announce_rows(ctx, database: dict, table: dict, rows: list[dict], action: str | list[str]) -> None:
    """Announce many committed row writes as one batch (one publish round trip); ``action`` is
    one action for all rows or one per row."""
    await announce_all(ctx, row_events(ctx, database, table, rows, action))


def row_events(ctx, database: dict, table: dict, rows: list[dict], action: str | list[str]) -> list[WriteEvent]:
    """The events of row writes; ``action`` is one action for all rows or one per row."""
    actions = [action] * len(rows) if isinstance(action, str) else action
    return [row_event(ctx, database, table, row, a) for row, a in zip(rows, actions, strict=True)]


async def record_rows(ctx, tx, database: dict, table: dict, rows: list[dict],
                      action: str | list[str]) -> list[WriteEvent]:
    """Inside the write's transaction ``tx``: the events of ``rows``, recorded with the write
    (``apps.core.events.record``); announce them with ``announce_all`` after the commit."""
    events = row_events(ctx, database, table, rows, action)
    await record(ctx, tx, events)
    return events


def prepare_new(ctx, naming: Naming, table: dict, data: dict, permissions: list[str] | None) -> tuple[dict, list[str]]:
    if not isinstance(data, dict) or not data:
        raise naming.error("row", "missing_data")
    if permissions is None and isinstance(data.get("$permissions"), list):
        permissions = data["$permissions"]
    values = validate_data(table["columns"], data, partial=False, invalid=structure_error(naming))
    return stored_data(naming, values), item_permissions(ctx, permissions)


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
            f"WHERE id = %s AND data = %s{cast} AND permissions = %s{cast} RETURNING {_RETURNING}",
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


def data_of(row: dict) -> dict:
    from apps.core.db import as_json

    return dict(as_json(row["data"]) or {})


def perm_list(row: dict) -> list[str]:
    from apps.core.db import as_json

    return list(as_json(row["permissions"]) or [])
