"""Staging row writes into a transaction instead of applying them.

The row routes (with ``transactionId``) and ``POST .../transactions/{id}/operations`` come here.
Each operation gets the direct route's checks at once, against the committed rows plus what the
transaction already staged (Appwrite ``Transactions/Operations/Create.php``): the table must
exist; create needs the table's ``create`` permission; update, delete, increment and decrement
need the row (committed or created earlier in the transaction: else 404) and ``update`` or
``delete`` permission on the table or, with row security, on the row; the permissions a caller
sets must be roles it holds; data must fit the columns; bulk operations need an API key
(401 ``user_unauthorized``). The commit checks everything again (``services.commit``).
"""

from __future__ import annotations

from typing import Any

from apps.core.domain.queries import parse_queries
from apps.core.errors import AppwriteError, invalid_argument
from apps.databases import querying as qp
from apps.databases import relations
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.rowstore import allowed, item_permissions, perm_list, prepare_new, require_create, structure_error
from apps.databases.schema import validate_data
from apps.databases.selectors import meta
from apps.databases.selectors.rows import ROW_COLUMNS, fields_of
from apps.databases.services import transactions as txns
from apps.databases.services.bulk import MAX_BULK, no_bulk
from apps.databases.services.increments import increment_column
from apps.databases.services.transactions import Staged


class Batch:
    """Staging state of one request: the locked transaction, and per table the rows its staged
    operations (earlier ones and this request's) leave existing or deleted."""

    def __init__(self, tx, txn: dict):
        self.tx = tx
        self.txn = txn
        self._state: dict[int, dict[str, dict | None]] = {}

    async def state(self, table_pk: int) -> dict[str, dict | None]:
        if table_pk not in self._state:
            self._state[table_pk] = await txns.staged_rows(self.tx, self.txn, table_pk)
        return self._state[table_pk]


async def _committed(tx, table: dict, row_uid: str) -> dict | None:
    return await tx.fetchone(f"SELECT {ROW_COLUMNS} FROM {dialect.ROWS} r WHERE r.table_id = {int(table['id'])} "
                             "AND r.uid = %s", (row_uid,))


def _require_key(ctx) -> None:
    if not ctx.auth.is_key:
        raise AppwriteError("user_unauthorized", "Bulk operations in a transaction need an API key.")


def _check_queries(ctx, table: dict, raw: Any) -> list[str]:
    queries = parse_queries(raw, extended=True)
    lst = qp.Listing(f"{dialect.ROWS} r", [], [], fields_of(ctx.db, table))
    qp.plan(ctx.db, lst, queries, allow_select=False)
    return list(raw or []) if not isinstance(raw, str) else [raw]


def _items(naming: Naming, items: Any) -> list[dict]:
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK:
        raise AppwriteError("general_argument_invalid", f"Invalid `{naming.rows}` param: 1 to {MAX_BULK} items.")
    if not all(isinstance(item, dict) for item in items):
        raise naming.error("row", "invalid_structure")
    return items


async def prepare(ctx, batch: Batch, naming: Naming, table: dict, action: str, row_uid: str | None,
                  payload: dict) -> Staged:
    """Check one operation and build what is stored. ``payload`` keys by action: ``data``,
    ``permissions`` (create/update/upsert); ``column``, ``value``, ``bound`` (increment,
    decrement); ``rows`` (bulkCreate/bulkUpsert); ``data``, ``queries`` (bulkUpdate);
    ``queries`` (bulkDelete). Raises the direct routes' errors (see the module docstring)."""
    if action in txns.BULK:
        return await _prepare_bulk(ctx, naming, table, action, payload)
    state = await batch.state(table["id"])
    if relations.has(table) and isinstance(payload.get("data"), dict):
        from apps.databases.relations.writes import Writer

        Writer(ctx, batch.tx, naming).parse(table, payload["data"], 0)  # the links' shape, checked now
    if action == "create":
        row_uid = txns.new_row_uid(row_uid, naming.row_id)
        require_create(ctx, table)
        _, permissions = prepare_new(ctx, naming, table, payload.get("data") or {}, payload.get("permissions"))
        state[row_uid] = {"permissions": permissions}
        return Staged(table["id"], action, row_uid, {"data": payload["data"], "permissions": permissions})

    row_uid = txns.new_row_uid(row_uid, naming.row_id) if action == "upsert" else row_uid
    committed = await _committed(batch.tx, table, row_uid)
    if row_uid in state:
        exists = state[row_uid] is not None
        row_permissions = (state[row_uid] or {}).get("permissions")
        if row_permissions is None and committed is not None:
            row_permissions = perm_list(committed)
    else:
        exists = committed is not None
        row_permissions = perm_list(committed) if committed is not None else []
    if not exists and action != "upsert":
        raise naming.error("row", "not_found")
    seen = txns.version(committed)
    out: dict[str, Any]
    if action == "delete":
        if not allowed(ctx.auth, table, row_permissions or [], "delete"):
            raise AppwriteError("user_unauthorized")
        state[row_uid] = None
        return Staged(table["id"], action, row_uid, {}, seen)
    if action in ("increment", "decrement"):
        value = payload.get("value")
        value = 1 if value is None else value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise AppwriteError("general_argument_invalid", "Invalid `value` param: Value must be greater than 0")
        increment_column(naming, table, payload.get("column") or "", value)
        if not allowed(ctx.auth, table, row_permissions or [], "update"):
            raise AppwriteError("user_unauthorized")
        out = {"column": payload["column"], "value": value, "bound": payload.get("bound")}
        return Staged(table["id"], action, row_uid, out, seen)
    data = payload.get("data")
    if data is not None and not isinstance(data, dict):
        raise naming.error("row", "invalid_structure")
    permissions = payload.get("permissions")
    if permissions is None and isinstance((data or {}).get("$permissions"), list):
        permissions = data["$permissions"]
    if action == "update" and not data and permissions is None:
        raise naming.error("row", "missing_payload")
    if exists:
        if not allowed(ctx.auth, table, row_permissions or [], "update"):
            raise AppwriteError("user_unauthorized")
    else:
        require_create(ctx, table)
    validate_data(table["columns"], data or {}, partial=exists, invalid=structure_error(naming))
    permissions = None if permissions is None else item_permissions(ctx, permissions)
    before = state.get(row_uid) or {}
    state[row_uid] = {"permissions": permissions if permissions is not None else before.get("permissions")}
    return Staged(table["id"], action, row_uid, {"data": data or {}, "permissions": permissions}, seen)


async def _prepare_bulk(ctx, naming: Naming, table: dict, action: str, payload: dict) -> Staged:
    _require_key(ctx)
    no_bulk(naming, table)
    if action in ("bulkCreate", "bulkUpsert"):
        rows = []
        for item in _items(naming, payload.get("rows")):
            uid = txns.new_row_uid(item.get("$id") or "unique()", "$id")
            values = {k: v for k, v in item.items() if not k.startswith("$")}
            permissions = item.get("$permissions")
            if action == "bulkCreate":
                _, permissions = prepare_new(ctx, naming, table, values, permissions)
            else:
                validate_data(table["columns"], values, partial=True, invalid=structure_error(naming))
                permissions = None if permissions is None else item_permissions(ctx, permissions)
            rows.append({**values, "$id": uid, "$permissions": permissions})
        if action == "bulkCreate" and len({r["$id"] for r in rows}) != len(rows):
            raise naming.error("row", "already_exists")
        return Staged(table["id"], action, "", {"rows": rows})
    queries = _check_queries(ctx, table, payload.get("queries"))
    if action == "bulkUpdate":
        data = payload.get("data") or {}
        if not isinstance(data, dict):
            raise naming.error("row", "invalid_structure")
        validate_data(table["columns"], data, partial=True, invalid=structure_error(naming))
        return Staged(table["id"], action, "", {"data": data, "queries": queries})
    return Staged(table["id"], action, "", {"queries": queries})


async def stage_one(ctx, *, naming: Naming, table: dict, action: str, row_uid: str | None = None,
                    payload: dict) -> Staged:
    """Stage one operation from a row route into ``ctx.params.transactionId``; returns what was
    staged (its permissions resolved). Raises the staging errors of ``services.transactions`` and :func:`prepare`."""
    async with ctx.db.transaction() as tx:
        txn = await txns.transaction_get(ctx, uid=ctx.params.transactionId, db=tx, lock=True)
        txns.require_usable(txn)
        txns.check_room(txn, 1)
        op = await prepare(ctx, Batch(tx, txn), naming, table, action, row_uid, payload)
        await txns.stage(ctx, tx, txn, [op])
    return op


# --- POST .../transactions/{id}/operations -----------------------------------------------------

_ROW_ACTIONS = frozenset({"create", "update", "upsert", "delete", "increment", "decrement"})
_NEEDS_DATA = txns.ACTIONS - {"delete"}


def _bad(reason: str) -> AppwriteError:
    return invalid_argument("operations", reason)


def parse_operation(naming: Naming, raw: Any) -> tuple[str, str, str, str | None, Any]:
    """``(databaseId, table ID, action, row ID or None, data)`` of one client operation, checked
    like Appwrite's ``Operation`` validator. Raises 400 ``general_argument_invalid``."""
    if not isinstance(raw, dict):
        raise _bad("Value must be an array")
    for key in ("databaseId", naming.table_id, "action"):
        if key not in raw:
            raise _bad(f"Missing required key: {key}")
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise _bad(f"Key '{key}' must be a non-empty string")
    action = raw["action"]
    if action not in txns.ACTIONS:
        raise _bad(f"Key 'action' must be one of: {', '.join(sorted(txns.ACTIONS))}")
    unknown = set(raw) - {"databaseId", naming.table_id, "action", naming.row_id, "data"}
    if unknown:
        raise _bad(f"Unknown key: {sorted(unknown)[0]}")
    row_uid = raw.get(naming.row_id)
    if action in _ROW_ACTIONS and naming.row_id not in raw:
        raise _bad(f"Key '{naming.row_id}' is required for action '{action}'")
    if naming.row_id in raw and (not isinstance(row_uid, str) or not row_uid.strip()):
        raise _bad(f"Key '{naming.row_id}' must be a non-empty string")
    data = raw.get("data")
    if action in _NEEDS_DATA and "data" not in raw:
        raise _bad("Missing required key: data")
    if "data" in raw and not isinstance(data, (dict, list)):
        raise _bad("Key 'data' must be an array")
    if action in ("bulkCreate", "bulkUpsert"):
        if not isinstance(data, list):
            raise _bad(f"Key 'data' must be a list of {naming.rows} for {action}")
    elif data is not None and not isinstance(data, dict):
        raise _bad(f"Key 'data' must be an object for {action}")
    if action in ("bulkUpdate", "bulkDelete"):
        if not isinstance(data.get("queries"), list):
            raise _bad(f"Key 'queries' is required in data for {action}")
        if action == "bulkUpdate" and not isinstance(data.get("data"), dict):
            raise _bad(f"Key 'data' is required in data for {action}")
    if action in ("increment", "decrement"):
        column = data.get("column", data.get("attribute"))
        if not isinstance(column, str) or not column:
            raise _bad(f"Key '{naming.column}' is required in data for {action}")
        value = data.get("value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise _bad(f"Key 'value' must be a numeric value for {action}")
    return raw["databaseId"], raw[naming.table_id], action, row_uid, data


def _payload(action: str, data: Any) -> dict:
    if action in ("create", "update", "upsert"):
        return {"data": data, "permissions": None}
    if action in ("increment", "decrement"):
        return {"column": data.get("column", data.get("attribute")), "value": data.get("value"),
                "bound": data.get("max" if action == "increment" else "min")}
    if action in ("bulkCreate", "bulkUpsert"):
        return {"rows": data}
    return data or {}


async def stage_operations(ctx, *, naming: Naming, uid: str, operations: Any) -> dict:
    """Check and stage a batch of client operations, all or none. Returns the transaction.

    Raises 400 ``general_bad_request`` for an empty batch or a transaction that is not
    pending, 400 ``general_argument_invalid`` for a malformed operation, 404 for unknown
    databases, tables or rows, 401 ``user_unauthorized``, and the staging errors.
    """
    if not operations:
        raise AppwriteError("general_bad_request", "Operations array cannot be empty")
    if not isinstance(operations, list):
        raise _bad("Value must be an array of operations")
    if len(operations) > txns.MAX_OPERATIONS:
        raise AppwriteError("transaction_limit_exceeded")
    parsed = [parse_operation(naming, raw) for raw in operations]
    tables: dict[tuple[str, str], dict] = {}
    for database_uid, table_uid, *_ in parsed:
        if (database_uid, table_uid) not in tables:
            _, tables[(database_uid, table_uid)] = await meta.resolve(ctx, naming, database_uid, table_uid)
    async with ctx.db.transaction() as tx:
        txn = await txns.transaction_get(ctx, uid=uid, db=tx, lock=True)
        txns.require_usable(txn, not_ready="general_bad_request")
        txns.check_room(txn, len(parsed))
        batch = Batch(tx, txn)
        staged = []
        for database_uid, table_uid, action, row_uid, data in parsed:
            table = tables[(database_uid, table_uid)]
            staged.append(await prepare(ctx, batch, naming, table, action, row_uid, _payload(action, data)))
        return await txns.stage(ctx, tx, txn, staged)
