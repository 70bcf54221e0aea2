"""Database transactions (Appwrite 1.8): create, read, stage operations, delete.

A transaction collects row writes ("operations") staged by the row routes (``transactionId``)
or by ``POST .../transactions/{id}/operations``; ``services.commit`` applies them all in one
SQL transaction. Rules (Appwrite ``Databases/Http/*/Transactions/*``):

* ``ttl`` is 60-3600 seconds (default 300); an expired transaction answers 410
  ``transaction_expired`` to every use.
* A transaction created by a session user belongs to that user: other users get 404
  ``transaction_not_found``. One created by an API key (or a guest) has no owner, and only API
  keys can use it, as Appwrite gives such a transaction no permissions.
* At most :data:`MAX_OPERATIONS` operations (Appwrite's ``APP_LIMIT_DATABASE_TRANSACTION``); a
  bulk write staged by a row route counts as one. Past it: 400 ``transaction_limit_exceeded``.
* Only a ``pending`` transaction takes operations or a commit/rollback: 400
  ``transaction_not_ready`` otherwise (the operations route answers ``general_bad_request``,
  as Appwrite's does).

Finished (committed or failed) and expired transactions are deleted an hour after they expire,
by the next transaction create at most every :data:`CLEANUP_INTERVAL` seconds per process.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import Any

from apps.core.domain.ids import resolve_id, unique_id
from apps.core.drivers.db import UniqueViolation, as_dt, as_json, now
from apps.core.errors import AppwriteError
from apps.databases import sql as dialect

TTL_MIN, TTL_MAX, TTL_DEFAULT = 60, 3600, 300  # seconds
MAX_OPERATIONS = 100
BULK = frozenset({"bulkCreate", "bulkUpdate", "bulkUpsert", "bulkDelete"})
ACTIONS = frozenset({"create", "update", "upsert", "delete", "increment", "decrement"}) | BULK
CLEANUP_INTERVAL = 600  # seconds
CLEANUP_GRACE = 3600  # seconds after expiry before a transaction's record is deleted

_COLS = "id, uid, owner, status, operations, expires_at, created_at, updated_at"
_last_cleanup = [0.0]


@dataclass(slots=True)
class Staged:
    """One operation ready to be stored: ``table_pk``, ``action``, ``row_uid`` (``""`` for bulk
    actions), ``data`` (the payload, see :mod:`apps.databases.services.commit`) and ``seen``
    (the row's ``updatedAt`` as ISO text when it existed, else ``""``)."""

    table_pk: int
    action: str
    row_uid: str
    data: Any
    seen: str = ""


def version(row: dict | None) -> str:
    """A row's version for conflict checks: its ``updatedAt`` as ISO text, ``""`` when absent."""
    return "" if row is None else as_dt(row["updated_at"]).isoformat()


def visible(auth, txn: dict) -> bool:
    """API keys see every transaction; a user only its own (Appwrite's read permission)."""
    return auth.is_key or (bool(txn["owner"]) and txn["owner"] == auth.user_id)


def _expired(txn: dict) -> bool:
    return as_dt(txn["expires_at"]) < now()


async def _cleanup(ctx) -> None:
    if time.monotonic() - _last_cleanup[0] < CLEANUP_INTERVAL:
        return
    _last_cleanup[0] = time.monotonic()
    cutoff = ctx.db.dt(now() - dt.timedelta(seconds=CLEANUP_GRACE))
    await ctx.db.execute("DELETE FROM databases_transaction WHERE expires_at < %s", (cutoff,))


async def transaction_create(ctx, *, ttl: int) -> dict:
    """A new ``pending`` transaction expiring in ``ttl`` seconds (60-3600). Raises 400
    ``general_argument_invalid`` for a ``ttl`` out of range."""
    if not TTL_MIN <= ttl <= TTL_MAX:
        raise AppwriteError("general_argument_invalid",
                            f"Invalid `ttl` param: Value must be a valid range between {TTL_MIN} and {TTL_MAX:,}")
    await _cleanup(ctx)
    ts = now()
    try:
        return await ctx.db.fetchone(
            "INSERT INTO databases_transaction (project_id, uid, owner, status, operations, expires_at, created_at, "
            f"updated_at) VALUES (%s, %s, %s, 'pending', 0, %s, %s, %s) RETURNING {_COLS}",
            (ctx.project["id"], unique_id(), "" if ctx.auth.is_key else ctx.auth.user_id,
             ctx.db.dt(ts + dt.timedelta(seconds=ttl)), ctx.db.dt(ts), ctx.db.dt(ts)),
        )
    except UniqueViolation:
        raise AppwriteError("transaction_already_exists") from None


async def transaction_get(ctx, *, uid: str, db=None, lock: bool = False) -> dict:
    """The caller's transaction ``uid`` (locked for the rest of ``db``'s SQL transaction with
    ``lock``). Raises 404 ``transaction_not_found``."""
    db = db or ctx.db
    suffix = " FOR UPDATE" if lock and dialect.is_pg(db) else ""
    txn = await db.fetchone(f"SELECT {_COLS} FROM databases_transaction WHERE project_id = %s AND uid = %s{suffix}",
                            (ctx.project["id"], uid))
    if txn is None or not visible(ctx.auth, txn):
        raise AppwriteError("transaction_not_found", f"Transaction with the requested ID '{uid}' could not be found.")
    return txn


def require_usable(txn: dict, *, not_ready: str = "transaction_not_ready") -> None:
    """A pending, unexpired transaction. Raises ``not_ready`` (400) or 410 ``transaction_expired``."""
    if txn["status"] != "pending":
        if not_ready == "general_bad_request":
            raise AppwriteError("general_bad_request", "Invalid or non-pending transaction")
        raise AppwriteError(not_ready)
    if _expired(txn):
        raise AppwriteError("transaction_expired")


async def transaction_delete(ctx, *, uid: str) -> None:
    """Delete the caller's transaction and its staged operations (any status)."""
    txn = await transaction_get(ctx, uid=uid)
    await ctx.db.execute("DELETE FROM databases_transaction WHERE id = %s", (txn["id"],))


async def transaction_rollback(ctx, *, uid: str) -> dict:
    """Discard the staged operations: status ``failed`` (Appwrite's rollback status)."""
    async with ctx.db.transaction() as tx:
        txn = await transaction_get(ctx, uid=uid, db=tx, lock=True)
        require_usable(txn)
        txn = await finish(tx, txn, "failed")
    return txn


async def finish(db, txn: dict, status: str) -> dict:
    """Set the final ``status`` and drop the staged operations (their work is done)."""
    await db.execute("DELETE FROM databases_transaction_op WHERE transaction_id = %s", (txn["id"],))
    return await db.fetchone(
        f"UPDATE databases_transaction SET status = %s, updated_at = %s WHERE id = %s RETURNING {_COLS}",
        (status, db.dt(now()), txn["id"]))


async def staged_rows(db, txn: dict, table_pk: int) -> dict[str, dict | None]:
    """What the transaction's earlier operations did to rows of table ``table_pk``: row ID ->
    ``{"permissions": [...] or None}`` when they leave it existing, ``None`` when they delete it.
    Rows the operations do not name (and rows matched only by bulk queries) are absent."""
    ops = await db.fetchall(
        "SELECT action, row_uid, data FROM databases_transaction_op WHERE transaction_id = %s AND table_pk = %s "
        "ORDER BY id", (txn["id"], table_pk))
    state: dict[str, dict | None] = {}
    for op in ops:
        action, data = op["action"], as_json(op["data"]) or {}
        if action in ("create", "upsert", "update", "increment", "decrement"):
            before = state.get(op["row_uid"]) or {}
            permissions = data.get("permissions") if isinstance(data, dict) else None
            state[op["row_uid"]] = {"permissions": permissions if permissions is not None else before.get("permissions")}
        elif action == "delete":
            state[op["row_uid"]] = None
        elif action in ("bulkCreate", "bulkUpsert"):
            for item in data.get("rows", []):
                state[item["$id"]] = {"permissions": item.get("$permissions")}
    return state


async def stage(ctx, tx, txn: dict, operations: list[Staged]) -> dict:
    """Append ``operations`` to ``txn`` (locked in ``tx`` and checked usable by the caller).
    Returns the updated transaction. Raises 400 ``transaction_limit_exceeded``."""
    check_room(txn, len(operations))
    roles = None if ctx.auth.is_key else list(ctx.auth.roles)
    ts = tx.dt(now())
    values, params = [], []
    for op in operations:
        values.append("(%s, %s, %s, %s, %s, %s, %s, %s, %s)")
        params += [txn["id"], op.table_pk, op.action, op.row_uid, tx.json(op.data), op.seen, tx.json(roles),
                   ctx.auth.user_id, ts]
    await tx.execute(
        "INSERT INTO databases_transaction_op (transaction_id, table_pk, action, row_uid, data, seen, roles, "
        f"user_uid, created_at) VALUES {', '.join(values)}", params)
    return await tx.fetchone(
        f"UPDATE databases_transaction SET operations = operations + %s, updated_at = %s WHERE id = %s "
        f"RETURNING {_COLS}", (len(operations), ts, txn["id"]))


def check_room(txn: dict, adding: int) -> None:
    """Raises 400 ``transaction_limit_exceeded`` when ``adding`` operations would pass the limit."""
    existing = int(txn["operations"])
    if existing + adding > MAX_OPERATIONS:
        raise AppwriteError("transaction_limit_exceeded",
                            f"Transaction already has {existing} operations, adding {adding} would exceed the "
                            f"maximum of {MAX_OPERATIONS}")


def new_row_uid(value: Any, param: str) -> str:
    """A row ID for a staged create: ``unique()`` becomes a fresh ID now, so the commit creates
    the row the staging answer named."""
    return resolve_id(str(value), param)
