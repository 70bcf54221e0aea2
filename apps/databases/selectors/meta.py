"""Reads of databases and tables with their columns and indexes (one SQL round trip each)."""

from __future__ import annotations

import json

from django.conf import settings

from apps.core.domain.queries import Query
from apps.core.drivers import cache
from apps.core.drivers.db import as_bool, as_json
from apps.core.errors import AppwriteError
from apps.databases import querying as qp
from apps.databases import sql as dialect
from apps.databases.naming import Naming
from apps.databases.schema import column_from_row

_DB_COLS = ("id", "uid", "name", "description", "enabled", "type", "created_at", "updated_at")
_TABLE_COLS = ("id", "uid", "name", "description", "enabled", "row_security", "permissions", "created_at",
               "updated_at", "database_id")


def _database(row: dict, prefix: str = "") -> dict:
    out = {c: row[prefix + c] for c in _DB_COLS}
    out["enabled"] = as_bool(out["enabled"])
    return out


def _table(row: dict, prefix: str = "") -> dict:
    out = {c: row[prefix + c] for c in _TABLE_COLS}
    out["enabled"] = as_bool(out["enabled"])
    out["row_security"] = as_bool(out["row_security"])
    out["permissions"] = as_json(out["permissions"]) or []
    out["columns"] = [column_from_row(c) for c in as_json(row[prefix + "columns"]) or []]
    out["indexes"] = [_index(i) for i in as_json(row[prefix + "indexes"]) or []]
    out["has_relations"] = any(c["kind"] == "relationship" for c in out["columns"])
    return out


def _index(i: dict) -> dict:
    return {"id": i["id"], "key": i["key"], "type": i["type"], "columns": as_json(i["columns"]) or [],
            "orders": as_json(i["orders"]) or [], "lengths": as_json(i["lengths"]) or [],
            "created_at": i["created_at"], "updated_at": i["updated_at"]}


def _table_select(db, alias: str = "t", prefix: str = "t_") -> str:
    cols = ", ".join(f"{alias}.{c} AS {prefix}{c}" for c in _TABLE_COLS)
    return (f"{cols}, {dialect.aggregate(db, 'databases_column', alias + '.id')} AS {prefix}columns, "
            f"{dialect.aggregate(db, 'databases_index', alias + '.id')} AS {prefix}indexes")


async def database_get(ctx, *, database_uid: str) -> dict | None:
    """The project's database ``database_uid`` or ``None``."""
    row = await ctx.db.fetchone(
        f"SELECT {', '.join(_DB_COLS)} FROM databases_database WHERE project_id = %s AND uid = %s",
        (ctx.project["id"], database_uid),
    )
    return _database(row) if row else None


async def table_meta(ctx, *, database_uid: str, table_uid: str) -> tuple[dict | None, dict | None]:
    """``(database, table)`` in one query; the table carries ``columns`` and ``indexes``.
    Either is ``None`` when missing."""
    database, table, _ = await table_meta_with_row(ctx, database_uid=database_uid, table_uid=table_uid)
    return database, table


_ROW_COLS = ("id", "uid", "data", "permissions", "created_at", "updated_at")


async def table_meta_with_row(ctx, *, database_uid: str, table_uid: str, row_uid: str | None = None,
                              cached: bool = False) -> tuple[dict | None, dict | None, dict | None]:
    """Like :func:`table_meta`, plus the row ``row_uid`` (unchecked for permissions) in the same
    round trip: a row GET is one query.

    ``cached=True`` (the row endpoints) first looks in this process's table cache
    (``apps.core.drivers.cache``; entries are dropped by :func:`forget_table` / :func:`forget_database`
    in every process): on a hit only the row is read. The returned database and table dicts
    are then shared: never mutate them.
    """
    key = (ctx.project["id"], database_uid, table_uid)
    if cached:
        hit = _tables.get(key)
        if hit is not None:
            ctx.cache_hits.append(("tables", key))
            row = None
            if row_uid is not None:
                row = await ctx.db.fetchone(
                    f"SELECT {', '.join(_ROW_COLS)} FROM {dialect.ROWS} WHERE table_id = %s AND uid = %s",
                    (hit[1]["id"], row_uid))
            return hit[0], hit[1], row
    seen = cache.epoch()
    db_cols = ", ".join(f"d.{c} AS d_{c}" for c in _DB_COLS)
    params: list = [table_uid]
    row_cols, row_join = "", ""
    if row_uid is not None:
        row_cols = ", " + ", ".join(f"r.{c} AS r_{c}" for c in _ROW_COLS)
        row_join = "LEFT JOIN databases_row r ON r.table_id = t.id AND r.uid = %s "
        params.append(row_uid)
    found = await ctx.db.fetchone(
        f"SELECT {db_cols}, {_table_select(ctx.db)}{row_cols} FROM databases_database d "
        f"LEFT JOIN databases_table t ON t.database_id = d.id AND t.uid = %s {row_join}"
        "WHERE d.project_id = %s AND d.uid = %s",
        (*params, ctx.project["id"], database_uid),
    )
    if found is None:
        return None, None, None
    table = _table(found, "t_") if found["t_id"] is not None else None
    row = {c: found[f"r_{c}"] for c in _ROW_COLS} if row_uid is not None and found["r_id"] is not None else None
    database = _database(found, "d_")
    if cached and table is not None:
        _tables.put(key, (database, table), (database_tag(database["id"]), table_tag(table["id"])), seen)
    return database, table, row


async def lock_table(tx, naming: Naming, table: dict) -> dict:
    """Lock ``table``'s row until the transaction ``tx`` ends and return the table re-read with
    its columns and indexes. Every schema change (columns, indexes, the table's own update and
    delete) takes this lock first, so changes to one table run one at a time and each validates
    against the schema it is about to change, not a copy read before a concurrent change
    committed. Raises 404 ``table_not_found`` / ``collection_not_found`` when the table was
    deleted (moved to the trash) since it was read."""
    lock = ""
    if dialect.is_pg(tx):  # SQLite: write transactions are serial already
        lock = " FOR UPDATE"
        # Schema changes rewrite every row of the table (a default, a rename, an index build):
        # their own, longer statement_timeout, for this transaction only.
        await tx.execute(f"SET LOCAL statement_timeout = {int(settings.DB_SCHEMA_STATEMENT_TIMEOUT_MS)}")
    locked = await tx.fetchval(f"SELECT id FROM databases_table WHERE id = %s AND database_id = %s{lock}",
                               (table["id"], table["database_id"]))
    if locked is None:
        raise naming.error("table", "not_found")
    # A second statement: under READ COMMITTED it sees what committed before the lock was granted.
    found = await tx.fetchone(f"SELECT {_table_select(tx)} FROM databases_table t WHERE t.id = %s", (table["id"],))
    return _table(found, "t_")


async def lock_tables(tx, naming: Naming, tables: list[dict]) -> list[dict]:
    """:func:`lock_table` for each of ``tables`` (a relationship's two sides), taken in primary
    key order so that two requests locking the same pair never wait on each other crosswise;
    the re-read tables in the order given."""
    fresh: dict[int, dict] = {}
    for t in sorted({t["id"]: t for t in tables}.values(), key=lambda t: t["id"]):
        fresh[t["id"]] = await lock_table(tx, naming, t)
    return [fresh[t["id"]] for t in tables]


async def table_by_pk(ctx, *, table_pk: int) -> tuple[dict | None, dict | None]:
    """``(database, table)`` of the project's table with primary key ``table_pk`` (staged
    transaction operations name tables this way), or ``(None, None)``. Never cached."""
    db_cols = ", ".join(f"d.{c} AS d_{c}" for c in _DB_COLS)
    found = await ctx.db.fetchone(
        f"SELECT {db_cols}, {_table_select(ctx.db)} FROM databases_table t "
        "JOIN databases_database d ON d.id = t.database_id WHERE t.id = %s AND d.project_id = %s",
        (table_pk, ctx.project["id"]))
    if found is None:
        return None, None
    return _database(found, "d_"), _table(found, "t_")


# (project id, database uid, table uid) -> (database, table with columns and indexes).
_tables = cache.LocalCache("tables")


def database_tag(database_id: int) -> str:
    return f"database:{database_id}"


def discard_cached(ctx) -> bool:
    """Drop, in this process only, the cached tables ``ctx`` was served from; False when there
    were none (the request's tables came from the database)."""
    keys = [key for kind, key in ctx.cache_hits if kind == "tables"]
    for key in keys:
        _tables.discard(key)
    ctx.cache_hits.clear()
    return bool(keys)


def table_tag(table_id: int) -> str:
    return f"table:{table_id}"


async def forget_database(ctx, database: dict) -> None:
    """After a committed change to ``database`` (or its deletion): drop its cached tables."""
    await cache.invalidate(ctx, database_tag(database["id"]))


async def forget_table(ctx, table: dict) -> None:
    """After a committed change to ``table``, its columns or indexes: drop it from every cache."""
    await cache.invalidate(ctx, table_tag(table["id"]))


def _admin_listing(source: str, where: list[str], params: list, fields: dict[str, qp.Field]) -> qp.Listing:
    return qp.Listing(source=source, where=where, params=params, resolve=fields.get)


def _plain(expr: str, base: str) -> qp.Field:
    return qp.Field(expr, base)


_COMMON = {"$id": _plain("r.uid", "string"), "$createdAt": _plain("r.created_at", "ts"),
           "$updatedAt": _plain("r.updated_at", "ts"), "name": _plain("r.name", "string"),
           "enabled": _plain("r.enabled", "boolean")}


async def _admin_list(ctx, listing: qp.Listing, queries: list[Query], search: str | None, select: str,
                      total: bool) -> tuple[int, list[dict]]:
    if search:
        listing.where.append("(strpos(r.name, %s) > 0 OR strpos(r.uid, %s) > 0)" if dialect.is_pg(ctx.db)
                             else "(instr(r.name, %s) > 0 OR instr(r.uid, %s) > 0)")
        listing.params.extend([search, search])
    p = qp.plan(ctx.db, listing, queries, allow_select=False)
    return await run_plan(ctx, listing, p, select, total)


def page_sql(source: str, where: list[str], p: qp.Plan, select: str, reverse: bool = False) -> str:
    """The SELECT of one page of a listing (the same text for lists and for EXPLAIN checks)."""
    return (f"SELECT {select} FROM {source} WHERE {' AND '.join(where) or '1 = 1'} "
            f"ORDER BY {qp.order_sql(p.orders, reverse)} LIMIT {int(p.limit)} OFFSET {int(p.offset)}")


async def run_plan(ctx, listing: qp.Listing, p: qp.Plan, select: str, total: bool) -> tuple[int, list[dict]]:
    """Execute a compiled plan: the page (honouring the cursor) and the capped total.

    Raises 400 ``general_cursor_not_found`` when the cursor row is not in the listing.
    """
    where = list(p.where)
    params = list(p.params)
    reverse = False
    if p.cursor is not None:
        uid, direction = p.cursor
        reverse = direction == "before"
        # JSON order values travel as text and are decoded here: drivers disagree on jsonb
        # (psycopg decodes it, Django's cursor returns the raw text).
        as_text = dialect.is_pg(ctx.db)
        exprs = ", ".join(f"({e})::text AS c{i}" if j and as_text else f"{e} AS c{i}"
                          for i, (e, _, j) in enumerate(p.orders))
        base = " AND ".join(listing.where) or "1 = 1"
        found = await ctx.db.fetchone(
            f"SELECT {exprs} FROM {listing.source} WHERE {base} AND {listing.uid} = %s",
            (*listing.params, uid),
        )
        if found is None:
            raise AppwriteError("general_cursor_not_found", f'Cursor not found: "{uid}"')
        values = [found[f"c{i}"] for i in range(len(p.orders))]
        if as_text:
            values = [json.loads(v) if j and v is not None else v for (_, _, j), v in zip(p.orders, values, strict=True)]
        cond, cparams = qp.cursor_condition(ctx.db, p.orders, values, reverse)
        where.append(cond)
        params.extend(cparams)
    try:
        rows = await ctx.db.fetchall(page_sql(listing.source, where, p, select, reverse), params)
        if reverse:
            rows.reverse()
        count = 0
        if total:
            if p.cursor is None and len(rows) < p.limit and (rows or p.offset == 0):
                count = p.offset + len(rows)  # a short page ends the listing: no second query needed
            else:
                csql, cparams = qp.count_sql(listing.source, p)
                count = await ctx.db.fetchval(csql, cparams)
    except Exception as exc:
        if _sqlstate(exc) == "2201B":  # a regex PostgreSQL reads differently from Python's re
            raise qp.invalid("the regex pattern is not a valid PostgreSQL regular expression") from None
        raise
    return min(int(count or 0), qp.MAX_COUNT), rows


def _sqlstate(exc: BaseException) -> str | None:
    return getattr(exc, "sqlstate", None) or getattr(exc.__cause__, "sqlstate", None)


async def database_list(ctx, *, queries: list[Query], search: str | None, total: bool) -> tuple[int, list[dict]]:
    listing = _admin_listing("databases_database r", ["r.project_id = %s"], [ctx.project["id"]], _COMMON)
    count, rows = await _admin_list(ctx, listing, queries, search, ", ".join(f"r.{c}" for c in _DB_COLS), total)
    return count, [_database(r) for r in rows]


async def table_list(ctx, *, database: dict, queries: list[Query], search: str | None,
                     total: bool) -> tuple[int, list[dict]]:
    fields = {**_COMMON, "rowSecurity": _plain("r.row_security", "boolean"),
              "documentSecurity": _plain("r.row_security", "boolean")}
    listing = _admin_listing("databases_table r", ["r.database_id = %s"], [database["id"]], fields)
    count, rows = await _admin_list(ctx, listing, queries, search, _table_select(ctx.db, "r", ""), total)
    return count, [_table(r) for r in rows]


def require_database(naming: Naming, database: dict | None, auth) -> dict:
    """404 ``database_not_found`` when missing (or disabled, for non-key callers)."""
    if database is None or (not database["enabled"] and not auth.is_key):
        raise AppwriteError("database_not_found")
    return database


def require_table(naming: Naming, table: dict | None, auth) -> dict:
    """404 ``table_not_found`` / ``collection_not_found`` when missing or disabled (non-key)."""
    if table is None or (not table["enabled"] and not auth.is_key):
        raise naming.error("table", "not_found")
    return table


async def resolve(ctx, naming: Naming, database_uid: str, table_uid: str) -> tuple[dict, dict]:
    """The enabled database and table for a request, or the view's 404."""
    database, table, _ = await table_meta_with_row(ctx, database_uid=database_uid, table_uid=table_uid, cached=True)
    require_database(naming, database, ctx.auth)
    return database, require_table(naming, table, ctx.auth)
