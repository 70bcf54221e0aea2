"""Applying a transaction's staged operations: the commit, and reads that see staged writes.

The commit runs every operation in staging order inside ONE SQL transaction (PostgreSQL, or
SQLite's ``BEGIN IMMEDIATE`` on the embedded default), together with the status change, so
either all of it is applied or none: a failed operation rolls everything back, and so does a
server that dies mid-commit (the transaction then stays ``pending``). Each operation gets the
direct routes' checks again, as the caller who staged it: table and row permissions, the roles
it may grant, data structure against the columns as they are now, unique indexes.

Conflicts (409 ``transaction_conflict``): a row changed after its operation was staged (its
``updatedAt`` differs from the one the staging request saw; for bulk operations, a matched row
updated after staging), an ID or unique value taken meanwhile, or PostgreSQL aborting one of two
commits that lock the same rows in opposite orders. Rows are locked (``FOR UPDATE``) before they
are checked, so of two concurrent commits touching a row the second sees the first's write.
Rows written by a commit get the commit time as ``$updatedAt``/``$createdAt``.

Payloads (``databases_transaction_op.data``) by action: ``create``/``update``/``upsert``
``{"data": {...}, "permissions": [...] | null}``; ``delete`` ``{}``; ``increment``/``decrement``
``{"column", "value", "bound"}``; ``bulkCreate``/``bulkUpsert`` ``{"rows": [{"$id",
"$permissions", ...columns}]}``; ``bulkUpdate`` ``{"data": {...}, "queries": [...]}``;
``bulkDelete`` ``{"queries": [...]}``.

Events are announced only after the SQL transaction committed.
"""

from __future__ import annotations

import dataclasses

from apps.core.domain import permissions as perm
from apps.core.domain.events import announce_all, record
from apps.core.domain.queries import parse_queries
from apps.core.drivers.db import UniqueViolation, as_dt, as_json
from apps.core.errors import AppwriteError
from apps.core.http.auth import Auth
from apps.databases import relations
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.rowstore import (
    allowed,
    data_of,
    insert_row,
    insert_rows,
    perm_list,
    prepare_new,
    require_create,
    row_event,
    stored_data,
    structure_error,
    write_row,
)
from apps.databases.schema import validate_data
from apps.databases.selectors import meta
from apps.databases.selectors.rows import row_for_write
from apps.databases.services import transactions as txns
from apps.databases.services.bulk import matching_rows
from apps.databases.services.increments import increment_in
from apps.databases.services.rows import upsert_in

_OPS = "SELECT id, table_pk, action, row_uid, data, seen, roles, user_uid, created_at FROM databases_transaction_op " \
       "WHERE transaction_id = %s ORDER BY id"
# PostgreSQL aborted the transaction to break a lock cycle or a serialization conflict.
_CONFLICT_SQLSTATES = frozenset({"40P01", "40001"})


@dataclasses.dataclass(slots=True)
class Caller:
    """What the row services read from a request context, for the caller who staged an
    operation: ``db`` is the commit's SQL transaction."""

    db: object
    auth: Auth
    project: dict
    project_id: str
    cache_hits: list = dataclasses.field(default_factory=list)


def _caller(ctx, db, op: dict) -> Caller:
    roles = as_json(op["roles"])
    if roles is None:
        auth = Auth(kind="key")
    else:
        user = {"uid": op["user_uid"]} if op["user_uid"] else None
        auth = Auth(kind="session" if user else "guest", user=user, roles=list(roles))
    return Caller(db=db, auth=auth, project=ctx.project, project_id=ctx.project_id)


def _conflict(message: str = "") -> AppwriteError:
    return AppwriteError("transaction_conflict", message or None)


def is_conflict(exc: BaseException) -> bool:
    """True for a deadlock or serialization failure (PostgreSQL chose this commit to abort)."""
    for e in (exc, exc.__cause__):
        if e is not None and getattr(e, "sqlstate", None) in _CONFLICT_SQLSTATES:
            return True
    return False


class Replay:
    """Applies operations in ``tx``. ``strict`` (the commit) checks conflicts and raises on the
    first failing operation; otherwise (reads that show staged writes) each operation runs in a
    savepoint and one that fails is left out."""

    def __init__(self, ctx, naming: Naming, tx, *, strict: bool):
        self.ctx = ctx
        self.naming = naming
        self.tx = tx
        self.strict = strict
        self.touched: set[tuple[int, str]] = set()
        self.events: list[tuple[dict, dict, dict, str]] = []
        self._tables: dict[int, tuple[dict, dict]] = {}

    async def run(self, ops: list[dict]) -> None:
        for op in ops:
            if self.strict:
                await self._apply(op)
                continue
            try:
                async with self.tx.transaction():
                    await self._apply(op)
            except AppwriteError:
                continue

    async def _table(self, table_pk: int) -> tuple[dict, dict]:
        if table_pk not in self._tables:
            database, table = await meta.table_by_pk(dataclasses.replace(self.ctx, db=self.tx), table_pk=table_pk)
            if table is None:
                raise self.naming.error("table", "not_found")
            self._tables[table_pk] = (database, table)
        return self._tables[table_pk]

    def _done(self, database: dict, table: dict, row: dict, action: str) -> None:
        self.touched.add((table["id"], row["uid"]))
        self.events.append((database, table, row, action))

    async def _current(self, table: dict, op: dict) -> dict:
        """The staged operation's row, locked; 404 when gone, 409 when changed since staging."""
        row = await row_for_write(self.tx, table=table, row_uid=op["row_uid"])
        if row is None:
            raise self.naming.error("row", "not_found")
        if self.strict and (table["id"], row["uid"]) not in self.touched and txns.version(row) != op["seen"]:
            raise _conflict(f'{self.naming.row.capitalize()} "{row["uid"]}" changed after the operation was staged.')
        return row

    def _check_newer(self, table: dict, row: dict, staged_at) -> None:
        if self.strict and (table["id"], row["uid"]) not in self.touched and as_dt(row["updated_at"]) > as_dt(staged_at):
            raise _conflict(f'{self.naming.row.capitalize()} "{row["uid"]}" changed after the operation was staged.')

    async def _apply(self, op: dict) -> None:
        database, table = await self._table(op["table_pk"])
        c = _caller(self.ctx, self.tx, op)
        n, tx, action = self.naming, self.tx, op["action"]
        data = as_json(op["data"]) or {}
        try:
            if relations.has(table) and action in ("create", "update", "upsert", "delete"):
                await self._apply_related(c, database, table, op, data)
            elif action == "create":
                require_create(c, table)
                stored, permissions = prepare_new(c, n, table, data.get("data") or {}, data.get("permissions"))
                self._done(database, table, await insert_row(tx, n, table, op["row_uid"], stored, permissions), "create")
            elif action == "update":
                row = await self._current(table, op)
                changes = validate_data(table["columns"], data.get("data") or {}, partial=True,
                                        invalid=structure_error(n))
                if not allowed(c.auth, table, perm_list(row), "update"):
                    raise AppwriteError("user_unauthorized")
                permissions = data.get("permissions")
                if permissions is not None:
                    perm.check_grantable(c.auth, permissions)
                merged = stored_data(n, {**data_of(row), **changes})
                row = await write_row(tx, n, row, merged, perm_list(row) if permissions is None else permissions)
                self._done(database, table, row, "update")
            elif action in ("increment", "decrement"):
                row = await self._current(table, op)
                delta = data.get("value", 1) * (1 if action == "increment" else -1)
                row = await increment_in(c, tx, n, table, row, data["column"], delta, data.get("bound"))
                self._done(database, table, row, "update")
            elif action == "delete":
                row = await self._current(table, op)
                if not allowed(c.auth, table, perm_list(row), "delete"):
                    raise AppwriteError("user_unauthorized")
                await tx.execute(f"DELETE FROM {dialect.ROWS} WHERE id = %s", (row["id"],))
                self._done(database, table, row, "delete")
            elif action == "upsert":
                await self._upsert(c, database, table, op["row_uid"], data.get("data") or {}, data.get("permissions"),
                                   seen=op["seen"])
            elif action == "bulkCreate":
                await self._bulk_create(c, database, table, data.get("rows") or [])
            elif action == "bulkUpsert":
                for item in data.get("rows") or []:
                    values = {k: v for k, v in item.items() if not k.startswith("$")}
                    await self._upsert(c, database, table, item["$id"], values, item.get("$permissions"),
                                       staged_at=op["created_at"])
            elif action in ("bulkUpdate", "bulkDelete"):
                await self._bulk_match(c, database, table, action, data, op["created_at"])
        except UniqueViolation:
            raise _conflict() from None
        except AppwriteError as err:
            if err.type.endswith("_already_exists"):
                raise _conflict(f"{err.message} (a conflict with a write made after staging)") from None
            raise

    async def _apply_related(self, c, database: dict, table: dict, op: dict, data: dict) -> None:
        """A single-row operation on a table with relationships, through the relationship writer
        (links, nested rows, onDelete), with the same conflict checks."""
        from apps.databases.relations.writes import Writer

        w, action = Writer(c, self.tx, self.naming), op["action"]
        if action == "create":
            await w.create(database, table, op["row_uid"], data.get("data") or {}, data.get("permissions"))
        elif action == "upsert":
            row = await row_for_write(self.tx, table=table, row_uid=op["row_uid"])
            if self.strict and (table["id"], op["row_uid"]) not in self.touched and txns.version(row) != op["seen"]:
                raise _conflict(f'{self.naming.row.capitalize()} "{op["row_uid"]}" changed after the operation was '
                                "staged.")
            await w.upsert(database, table, op["row_uid"], data.get("data") or {}, data.get("permissions"))
        else:
            row = await self._current(table, op)
            if action == "update":
                await w.update(database, table, row, data.get("data") or {}, data.get("permissions"))
            else:
                if not allowed(c.auth, table, perm_list(row), "delete"):
                    raise AppwriteError("user_unauthorized")
                await w.delete(database, table, row)
        for event in w.events:
            self._done(*event)

    async def _upsert(self, c, database, table, row_uid, values, permissions, *, seen=None, staged_at=None) -> None:
        row = await row_for_write(self.tx, table=table, row_uid=row_uid)
        if self.strict and (table["id"], row_uid) not in self.touched:
            if seen is not None and txns.version(row) != seen:
                raise _conflict(f'{self.naming.row.capitalize()} "{row_uid}" changed after the operation was staged.')
            if staged_at is not None and row is not None:
                self._check_newer(table, row, staged_at)
        row, created = await upsert_in(c, self.tx, self.naming, table, row_uid, values, permissions)
        self._done(database, table, row, "create" if created else "update")

    async def _bulk_create(self, c, database, table, items: list[dict]) -> None:
        require_create(c, table)
        prepared = []
        for item in items:
            values = {k: v for k, v in item.items() if not k.startswith("$")}
            prepared.append((item["$id"], *prepare_new(c, self.naming, table, values, item.get("$permissions"))))
        for row in await insert_rows(self.tx, self.naming, table, prepared):
            self._done(database, table, row, "create")

    async def _bulk_match(self, c, database, table, action: str, data: dict, staged_at) -> None:
        n = self.naming
        queries = parse_queries(data.get("queries") or [], extended=True)
        changes = None
        if action == "bulkUpdate":
            changes = validate_data(table["columns"], data.get("data") or {}, partial=True, invalid=structure_error(n))
        for matched in await matching_rows(c, table, queries, "update" if changes is not None else "delete"):
            row = await row_for_write(self.tx, table=table, row_uid=matched["uid"])  # lock, then check
            if row is None or txns.version(row) != txns.version(matched):
                if self.strict:
                    raise _conflict(f'{n.row.capitalize()} "{matched["uid"]}" changed during the commit.')
                continue
            self._check_newer(table, row, staged_at)
            if changes is None:
                await self.tx.execute(f"DELETE FROM {dialect.ROWS} WHERE id = %s", (row["id"],))
                self._done(database, table, row, "delete")
            else:
                merged = stored_data(n, {**data_of(row), **changes})
                self._done(database, table, await write_row(self.tx, n, row, merged, perm_list(row)), "update")


async def transaction_commit(ctx, *, naming: Naming, uid: str) -> dict:
    """Apply every staged operation of the caller's transaction ``uid`` atomically; status
    ``committed`` (nothing staged also commits). Returns the transaction.

    Raises 404 ``transaction_not_found``, 400 ``transaction_not_ready``, 410
    ``transaction_expired``; and, after marking the transaction ``failed`` with nothing applied:
    409 ``transaction_conflict``, 404 ``row_not_found``/``document_not_found``, 400
    ``*_invalid_structure``, 401 ``user_unauthorized``, 400 ``general_query_invalid``.
    """
    started = False
    try:
        async with ctx.db.transaction() as tx:
            txn = await txns.transaction_get(ctx, uid=uid, db=tx, lock=True)
            txns.require_usable(txn)
            started = True
            replay = Replay(ctx, naming, tx, strict=True)
            await replay.run(await tx.fetchall(_OPS, (txn["id"],)))
            txn = await txns.finish(tx, txn, "committed")
            events = [row_event(ctx, database, table, row, action) for database, table, row, action in replay.events]
            await record(ctx, tx, events)
    except AppwriteError as exc:
        if started:
            await _fail(ctx, uid)
            if is_conflict(exc):  # a deadlock or serialization failure, translated by the pool
                raise _conflict() from None
        raise
    except Exception as exc:
        if not started:
            raise
        await _fail(ctx, uid)
        if is_conflict(exc):
            raise _conflict() from None
        raise
    await announce_all(ctx, events)
    return txn


async def _fail(ctx, uid: str) -> None:
    """Mark a transaction whose commit failed ``failed`` (its SQL transaction rolled back)."""
    async with ctx.db.transaction() as tx:
        txn = await txns.transaction_get(ctx, uid=uid, db=tx, lock=True)
        if txn["status"] == "pending":
            await txns.finish(tx, txn, "failed")


class _Discard(Exception):
    def __init__(self, value):
        super().__init__("discard")
        self.value = value


async def read_staged(ctx, *, naming: Naming, uid: str, read):
    """``await read(view)`` where ``view`` is ``ctx`` seeing committed data plus the staged
    operations of the caller's transaction ``uid`` (applied in an SQL transaction that is then
    rolled back). Operations that would fail are left out. Raises 404
    ``transaction_not_found``."""
    try:
        async with ctx.db.transaction() as tx:
            txn = await txns.transaction_get(ctx, uid=uid, db=tx)
            if txn["status"] == "pending":
                await Replay(ctx, naming, tx, strict=False).run(await tx.fetchall(_OPS, (txn["id"],)))
            raise _Discard(await read(dataclasses.replace(ctx, db=tx)))
    except _Discard as done:
        return done.value
