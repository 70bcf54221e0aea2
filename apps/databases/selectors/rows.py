"""Reads of rows: get, list and the permission filter (contract §6, §7).

A caller reads a row when it holds ``read`` on the table, or - with row security on - when the
row's ``read`` permissions name one of its roles (``read_roles``, GIN-indexed on PostgreSQL).
API keys read everything. Lists never see rows, counts or cursors outside that filter.
"""

from __future__ import annotations

from apps.core import permissions as perm
from apps.core.db import as_json
from apps.core.errors import AppwriteError
from apps.core.queries import Query
from apps.databases import querying as qp
from apps.databases import sql as dialect
from apps.databases.schema import KINDS
from apps.databases.selectors.meta import page_sql, run_plan

ROW_COLUMNS = "r.id, r.uid, r.data, r.permissions, r.created_at, r.updated_at"

_SYSTEM = {
    "$id": qp.Field("r.uid", "string"),
    "$sequence": qp.Field("r.id", "sequence"),
    "$createdAt": qp.Field("r.created_at", "ts"),
    "$updatedAt": qp.Field("r.updated_at", "ts"),
}


def read_filter(db, auth, table: dict) -> tuple[list[str], list]:
    """``(where parts, params)`` limiting rows to those the caller may read.

    Raises 401 ``user_unauthorized`` when the table grants no read and row security is off.
    """
    if auth.is_key or perm.allows(auth, table["permissions"], "read"):
        return [], []
    if table["row_security"]:
        sql, params = dialect.roles_filter(db, auth.roles)
        return [sql], params
    raise AppwriteError("user_unauthorized")


def can_read(auth, table: dict, row_permissions: list[str]) -> bool:
    """The REST read rule for one row: key, table ``read``, or (row security) the row's own
    ``read``. Realtime uses it to authorise deliveries exactly like a GET."""
    if auth.is_key or perm.allows(auth, table["permissions"], "read"):
        return True
    return table["row_security"] and perm.allows(auth, row_permissions, "read")


def fields_of(db, table: dict):
    """The attribute resolver of a table's rows: system attributes and its columns."""
    fulltext = {c for i in table["indexes"] if i["type"] == "fulltext" for c in i["columns"]}
    fields = dict(_SYSTEM)
    for c in table["columns"]:
        fields[c["key"]] = qp.Field(dialect.data_expr(db, c["key"]), KINDS[c["kind"]].base, key=c["key"],
                                    array=c["array"], fulltext=c["key"] in fulltext)
    return fields.get


def listing(db, auth, table: dict) -> qp.Listing:
    """The rows of ``table`` visible to ``auth`` (alias ``r``)."""
    where, params = read_filter(db, auth, table)
    return qp.Listing(source=f"{dialect.ROWS} r", where=[f"r.table_id = {int(table['id'])}", *where],
                      params=params, resolve=fields_of(db, table))


def row_list_sql(db, auth, table: dict, queries: list[Query]) -> tuple[str, list]:
    """The page query a list runs (without a cursor): exposed for EXPLAIN checks."""
    lst = listing(db, auth, table)
    p = qp.plan(db, lst, queries)
    return page_sql(lst.source, p.where, p, ROW_COLUMNS), p.params


async def row_list(ctx, *, table: dict, queries: list[Query], total: bool) -> tuple[int, list[dict], list[str] | None]:
    """``(total, rows, selected keys or None)`` for a list request."""
    lst = listing(ctx.db, ctx.auth, table)
    p = qp.plan(ctx.db, lst, queries)
    count, rows = await run_plan(ctx, lst, p, ROW_COLUMNS, total)
    return count, rows, p.select


def row_readable(ctx, *, table: dict, row: dict | None, queries: list[Query] | None = None) -> tuple[dict | None, list[str] | None]:
    """``(row or None, selected keys)`` for a GET of ``row`` (loaded with the table metadata):
    ``None`` unless the caller may read it, by the same rule as the list filter.

    Raises 401 ``user_unauthorized`` when the table grants no read and row security is off;
    400 ``general_query_invalid`` for queries other than ``select``.
    """
    select = None
    if queries:
        lst = qp.Listing("", [], [], fields_of(ctx.db, table))
        for q in queries:
            if q.method != "select":
                raise qp.invalid("only select queries are allowed when getting a row")
        select = qp.plan(ctx.db, lst, queries).select
    read_filter(ctx.db, ctx.auth, table)
    if row is None or not can_read(ctx.auth, table, as_json(row["permissions"]) or []):
        return None, select
    return row, select


async def row_for_write(tx, *, table: dict, row_uid: str) -> dict | None:
    """The row (locked on PostgreSQL) before an update or delete, regardless of read access."""
    lock = " FOR UPDATE" if dialect.is_pg(tx) else ""
    return await tx.fetchone(
        f"SELECT {ROW_COLUMNS} FROM {dialect.ROWS} r WHERE r.table_id = {int(table['id'])} AND r.uid = %s{lock}",
        (row_uid,),
    )


async def table_has_rows(ctx, *, table_pk: int) -> bool:
    return await ctx.db.fetchone(f"SELECT 1 AS x FROM {dialect.ROWS} WHERE table_id = {int(table_pk)} LIMIT 1") is not None
