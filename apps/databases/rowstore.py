"""Row storage shared by the row writes (``services``) and the relationship writes (``relations``):
permission checks on a row, validated and size-capped data, the INSERT/UPDATE statements of one
row, and a row's write events.

Both ``apps.databases.services`` and ``apps.databases.relations`` build on this module, and it
imports neither, so the two packages never import each other in a circle: row writes hand
relationship work down to ``relations``, which writes its rows through these functions.
"""

from __future__ import annotations

import orjson

from apps.core.domain import permissions as perm
from apps.core.domain.events import WriteEvent, announce, announce_all, record
from apps.core.drivers.db import ForeignKeyViolation, UniqueViolation, as_json, now
from apps.core.errors import AppwriteError
from apps.databases import sql as dialect
from apps.databases.naming import TABLESDB, Naming
from apps.databases.responses import row_model
from apps.databases.schema import validate_data

MAX_ROW_BYTES = 1024 * 1024  # encoded JSON of one row's data
RETURNING = "id, uid, data, permissions, created_at, updated_at"


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
            f"VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {RETURNING}",
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
                f"RETURNING {RETURNING}",
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
                f"VALUES {', '.join(values)} RETURNING {RETURNING}",
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
            f"WHERE id = %s RETURNING {RETURNING}",
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
    (``apps.core.domain.events.record``); announce them with ``announce_all`` after the commit."""
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


def data_of(row: dict) -> dict:
    from apps.core.drivers.db import as_json

    return dict(as_json(row["data"]) or {})


def perm_list(row: dict) -> list[str]:
    from apps.core.drivers.db import as_json

    return list(as_json(row["permissions"]) or [])
