"""Reads of rows: get, list and the permission filter.

A caller reads a row when it holds ``read`` on the table, or - with row security on - when the
row's ``read`` permissions name one of its roles (``read_roles``, GIN-indexed on PostgreSQL).
API keys read everything. Lists never see rows, counts or cursors outside that filter.
"""

from __future__ import annotations

from apps.core.domain import permissions as perm
from apps.core.domain.queries import Query
from apps.core.drivers.db import as_json
from apps.core.errors import AppwriteError
from apps.databases import querying as qp
from apps.databases import relations
from apps.databases import sql as dialect
from apps.databases.schema import KINDS
from apps.databases.selectors import meta
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
        if c["kind"] == "relationship":
            rel = relations.of(c)
            if not rel.hidden:  # filters compare the stored related ID (as text); other sides are virtual
                fields[c["key"]] = qp.Field(dialect.data_text_expr(db, c["key"]),
                                            "string" if rel.queryable else "virtual", relation=True)
            continue
        if KINDS[c["kind"]].base == "spatial":
            from apps.databases.spatial import geometry_expr

            fields[c["key"]] = qp.Field(geometry_expr(c["key"], c["kind"]), "spatial", key=c["key"])
            continue
        fields[c["key"]] = qp.Field(dialect.data_expr(db, c["key"]), KINDS[c["kind"]].base, key=c["key"],
                                    array=c["array"], fulltext=c["key"] in fulltext)
    return fields.get


def listing(db, auth, table: dict, related: dict[int, dict] | None = None) -> qp.Listing:
    """The rows of ``table`` visible to ``auth`` (alias ``r``). ``related`` (table pk -> table,
    from :func:`dotted_tables`) lets filters reach into related rows (``author.name``)."""
    where, params = read_filter(db, auth, table)
    relate = None
    if related:
        def relate(key: str):
            return _relate(db, auth, table, key, related)
    return qp.Listing(source=f"{dialect.ROWS} r", where=[f"r.table_id = {int(table['id'])}", *where],
                      params=params, resolve=fields_of(db, table), relate=relate)


def _relate(db, auth, table: dict, key: str, related: dict[int, dict]):
    """For a dotted filter through relationship ``key``: ``(listing of the related rows the caller
    may read, link)`` where ``link(sub_sql)`` is the condition on ``r`` given ``sub_sql``, a
    ``SELECT r.uid ...`` of matching related rows. ``None`` when ``key`` is no relationship."""
    rel = next((r for r in relations.rels(table) if r.key == key and not r.hidden), None)
    if rel is None or rel.related_pk not in related:
        return None
    target = related[rel.related_pk]
    try:
        sub = listing(db, auth, target, related)
    except AppwriteError:  # the caller may read nothing there: nothing can match
        sub = qp.Listing(f"{dialect.ROWS} r", ["1 = 0"], [], fields_of(db, target))
    if rel.stored and not rel.many:
        return sub, lambda sql: f"{dialect.data_text_expr(db, key)} IN ({sql})"
    if rel.stored:  # a many-to-many parent's list of IDs
        if dialect.is_pg(db):
            return sub, lambda sql: f"EXISTS (SELECT 1 FROM jsonb_array_elements_text(r.data->'{key}') e(v) WHERE e.v IN ({sql}))"
        return sub, lambda sql: f"EXISTS (SELECT 1 FROM json_each(r.data, '$.\"{key}\"') e WHERE e.value IN ({sql}))"
    other = next(o for o in relations.rels(target) if o.key == rel.two_way_key and o.related_pk == table["id"])
    if other.many:
        if dialect.is_pg(db):
            pick = f"jsonb_array_elements_text(r.data->'{other.key}')"
            return sub, lambda sql: f"r.uid IN ({sql.replace('SELECT r.uid', 'SELECT ' + pick, 1)})"
        return sub, lambda sql: ("r.uid IN (" + sql.replace(
            f"SELECT r.uid FROM {dialect.ROWS} r", f"SELECT e.value FROM {dialect.ROWS} r, json_each(r.data, "
            f"'$.\"{other.key}\"') e", 1) + ")")
    pick = dialect.data_text_expr(db, other.key)
    return sub, lambda sql: f"r.uid IN ({sql.replace('SELECT r.uid', 'SELECT ' + pick, 1)})"


async def dotted_tables(ctx, table: dict, queries: list[Query]) -> dict[int, dict]:
    """The related tables that dotted filters in ``queries`` go through (up to 3 levels)."""
    paths = set()

    def walk(qs):
        for q in qs:
            if q.method in ("and", "or"):
                walk(q.values)
            elif "." in q.attribute:
                paths.add(q.attribute)
    walk(queries)
    out: dict[int, dict] = {}
    for path in paths:
        current = table
        for key in path.split(".")[:-1][:3]:
            rel = next((r for r in relations.rels(current) if r.key == key and not r.hidden), None)
            if rel is None:
                break
            if rel.related_pk not in out:
                _, found = await meta.table_by_pk(ctx, table_pk=rel.related_pk)
                if found is None:
                    break
                out[rel.related_pk] = found
            current = out[rel.related_pk]
    return out


def row_list_sql(db, auth, table: dict, queries: list[Query]) -> tuple[str, list]:
    """The page query a list runs (without a cursor): exposed for EXPLAIN checks."""
    lst = listing(db, auth, table)
    p = qp.plan(db, lst, queries)
    return page_sql(lst.source, p.where, p, ROW_COLUMNS), p.params


async def row_list(ctx, *, table: dict, queries: list[Query], total: bool) -> tuple[int, list[dict], list[str] | None]:
    """``(total, rows, selected keys or None)`` for a list request."""
    related = await dotted_tables(ctx, table, queries) if relations.has(table) else None
    lst = listing(ctx.db, ctx.auth, table, related)
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


async def rows_for_write(tx, *, table: dict, ids: list[int]) -> dict[int, dict]:
    """Primary key -> row (locked on PostgreSQL, in key order) of those of ``ids`` that still
    exist: a bulk write re-reads its targets in its transaction, so a row deleted meanwhile is
    skipped and a concurrent change of another field is merged, not overwritten."""
    out: dict[int, dict] = {}
    lock = " ORDER BY r.id FOR UPDATE" if dialect.is_pg(tx) else ""
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for row in await tx.fetchall(
                f"SELECT {ROW_COLUMNS} FROM {dialect.ROWS} r WHERE r.table_id = {int(table['id'])} "
                f"AND r.id IN ({', '.join(['%s'] * len(chunk))}){lock}", chunk):
            out[row["id"]] = row
    return out


async def table_has_rows(ctx, *, table_pk: int) -> bool:
    return await ctx.db.fetchone(f"SELECT 1 AS x FROM {dialect.ROWS} WHERE table_id = {int(table_pk)} LIMIT 1") is not None
