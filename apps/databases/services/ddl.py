"""SQL indexes behind user indexes: partial expression indexes on the rows table.

Each user index becomes ``udx_<table pk>_<index pk>`` on ``databases_row`` restricted to its
table (``WHERE table_id = <pk>``), over the same expressions the query compiler emits, so the
planner can use it for filters and orders. ``unique`` becomes a UNIQUE index (a clash on write
is a UniqueViolation -> 409). ``fulltext`` is a GIN index over ``to_tsvector`` on PostgreSQL;
on SQLite it has no SQL index (search falls back to a substring match). ``trigram`` is a GIN
``gin_trgm_ops`` index over the text values on PostgreSQL (serving ``contains``,
``startsWith``, ``endsWith`` and ``regex``); none on SQLite. A ``key`` index over one array
column is a GIN ``jsonb_path_ops`` index on PostgreSQL, which serves ``contains``,
``containsAny`` and ``containsAll``.
"""

from __future__ import annotations

from apps.databases import sql as dialect

_SYSTEM = {"$id": "uid", "$createdAt": "created_at", "$updatedAt": "updated_at", "$sequence": "id"}


def index_name(table_pk: int, index_pk: int) -> str:
    return f"udx_{int(table_pk)}_{int(index_pk)}"


def _expr(db, key: str) -> str:
    if key in _SYSTEM:
        return _SYSTEM[key]
    return "(" + dialect.index_expr(db, key).replace("r.data", "data") + ")"


def create_sql(db, table_pk: int, index: dict, arrays: frozenset[str] = frozenset(),
               spatial_kinds: dict[str, str] | None = None) -> str | list[str] | None:
    """The CREATE INDEX statement(s) for ``index`` (``None`` when the vendor has none); ``arrays``
    are the keys of the table's array columns, ``spatial_kinds`` its spatial columns' kinds."""
    name = index_name(table_pk, index["id"])
    where = f"WHERE table_id = {int(table_pk)}"
    if index["type"] == "spatial":
        from apps.databases import spatial

        key = index["columns"][0]
        return spatial.index_sql(name, table_pk, key, (spatial_kinds or {})[key])
    if index["type"] == "trigram":
        if not dialect.is_pg(db):
            return None
        parts = ", ".join(f"({dialect.data_text_expr(db, k).replace('r.data', 'data')}) gin_trgm_ops"
                          for k in index["columns"])
        return f"CREATE INDEX {name} ON {dialect.ROWS} USING gin ({parts}) {where}"
    if (index["type"] == "key" and dialect.is_pg(db) and len(index["columns"]) == 1
            and index["columns"][0] in arrays):
        return f"CREATE INDEX {name} ON {dialect.ROWS} USING gin ({_expr(db, index['columns'][0])} jsonb_path_ops) {where}"
    if index["type"] == "fulltext":
        if not dialect.is_pg(db):
            return None
        parts = " || ' ' || ".join(f"coalesce({dialect.data_text_expr(db, k).replace('r.data', 'data')}, '')"
                                   for k in index["columns"])
        if len(index["columns"]) == 1:
            parts = dialect.data_text_expr(db, index["columns"][0]).replace("r.data", "data")
        return f"CREATE INDEX {name} ON {dialect.ROWS} USING gin (to_tsvector('simple', {parts})) {where}"
    orders = index.get("orders") or []
    cols = []
    for i, key in enumerate(index["columns"]):
        desc = i < len(orders) and str(orders[i]).lower() == "desc"
        direction = " DESC" if desc else ""
        if key not in _SYSTEM and dialect.is_pg(db):  # match ORDER BY's "NULLs are smallest"
            direction += " NULLS LAST" if desc else " NULLS FIRST"
        cols.append(_expr(db, key) + direction)
    unique = "UNIQUE " if index["type"] == "unique" else ""
    return f"CREATE {unique}INDEX {name} ON {dialect.ROWS} ({', '.join(cols)}) {where}"


def array_keys(table: dict) -> frozenset[str]:
    """The keys of ``table``'s array columns (for :func:`create_sql`)."""
    return frozenset(c["key"] for c in table["columns"] if c["array"])


def spatial_kinds(table: dict) -> dict[str, str]:
    """Key -> kind of ``table``'s spatial columns (for :func:`create_sql`)."""
    return {c["key"]: c["kind"] for c in table["columns"] if c["kind"] in ("point", "line", "polygon")}


async def create(db, table_pk: int, index: dict, arrays: frozenset[str] = frozenset(),
                 spatial: dict[str, str] | None = None) -> None:
    statement = create_sql(db, table_pk, index, arrays, spatial)
    for sql in [statement] if isinstance(statement, str) else statement or []:
        await db.execute(sql)


async def drop(db, table_pk: int, index_pk: int) -> None:
    name = index_name(table_pk, index_pk)
    await db.execute(f"DROP INDEX IF EXISTS {name}")
    if dialect.is_pg(db):  # a spatial index's geography half
        await db.execute(f"DROP INDEX IF EXISTS {name}_g")


async def drop_all(db, table_pks: list[int]) -> None:
    """Drop the SQL indexes of every user index of these tables."""
    if not table_pks:
        return
    marks = ", ".join(["%s"] * len(table_pks))
    rows = await db.fetchall(f"SELECT id, table_id FROM databases_index WHERE table_id IN ({marks})", list(table_pks))
    for r in rows:
        await drop(db, r["table_id"], r["id"])
