"""SQL fragments that differ between PostgreSQL and SQLite.

Column keys and table primary keys are written into SQL as literals: keys are validated
identifiers (``schema.check_key``: no quotes possible) and table pks are integers from our own
metadata. Literals are what lets PostgreSQL match the per-table partial expression indexes
(``... WHERE table_id = 42``) whatever plan caching does with parameters. Values always go
through parameters.
"""

from __future__ import annotations

import json
from typing import Any

ROWS = "databases_row"


def is_pg(db) -> bool:
    return db.vendor == "postgresql"


def data_expr(db, key: str) -> str:
    """The JSON value of user column ``key`` of row alias ``r`` (jsonb on PostgreSQL, an SQL
    scalar from ``json_extract`` on SQLite)."""
    if is_pg(db):
        return f"(r.data->'{key}')"
    return f"json_extract(r.data, '$.\"{key}\"')"


def data_text_expr(db, key: str) -> str:
    """The value of ``key`` as text (string operators, full-text search)."""
    if is_pg(db):
        return f"(r.data->>'{key}')"
    return f"json_extract(r.data, '$.\"{key}\"')"


def index_expr(db, key: str) -> str:
    """The expression a user index stores for ``key``; queries use the same text."""
    return data_expr(db, key)


def fulltext_expr(db, key: str) -> str:
    return f"to_tsvector('simple', {data_text_expr(db, key)})" if is_pg(db) else data_text_expr(db, key)


def json_value(db, value: Any) -> Any:
    """A parameter compared against :func:`data_expr`."""
    if is_pg(db):
        return db.json(value)
    return value


def same_json(db, stored: Any) -> Any:
    """A parameter equal to a JSON column value as it was read back (for optimistic checks):
    jsonb equality on PostgreSQL (whatever the driver returned), the stored text on SQLite."""
    if is_pg(db):
        return db.json(json.loads(stored) if isinstance(stored, (str, bytes)) else stored)
    return stored


def json_cast(db) -> str:
    return "::jsonb" if is_pg(db) else ""


def roles_value(db, roles: list[str]) -> Any:
    """The ``read_roles`` column value for ``roles``."""
    return list(roles) if is_pg(db) else db.json(list(roles))


def roles_filter(db, roles: list[str]) -> tuple[str, list]:
    """``(sql, params)``: the row grants read to one of ``roles``. A GIN lookup on PostgreSQL."""
    if is_pg(db):
        return "r.read_roles && %s::text[]", [list(roles)]
    marks = ", ".join(["%s"] * len(roles))
    return f"EXISTS (SELECT 1 FROM json_each(r.read_roles) jr WHERE jr.value IN ({marks}))", list(roles)


def array_contains(db, key: str, value: Any) -> tuple[str, list]:
    """``(sql, params)``: array column ``key`` holds ``value``."""
    if is_pg(db):
        return f"{data_expr(db, key)} @> %s::jsonb", [db.json([value])]
    return f"EXISTS (SELECT 1 FROM json_each(r.data, '$.\"{key}\"') ja WHERE ja.value = %s)", [value]


def like_escape(value: str) -> str:
    """``value`` as a literal inside a LIKE pattern (PostgreSQL's default escape is ``\\``)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# On PostgreSQL the string operators are LIKE patterns, so a trigram index (pg_trgm, index type
# "trigram") can serve them; SQLite's LIKE ignores case, so it keeps exact substring functions.
def starts_with(db, expr: str, value: str) -> tuple[str, list]:
    if not value:
        return f"{expr} IS NOT NULL", []
    if is_pg(db):
        return f"{expr} LIKE %s", [like_escape(value) + "%"]
    return f"substr({expr}, 1, {len(value)}) = %s", [value]


def ends_with(db, expr: str, value: str) -> tuple[str, list]:
    if not value:
        return f"{expr} IS NOT NULL", []
    if is_pg(db):
        return f"{expr} LIKE %s", ["%" + like_escape(value)]
    return f"substr({expr}, -{len(value)}) = %s", [value]


def contains_text(db, expr: str, value: str) -> tuple[str, list]:
    if is_pg(db):
        return f"{expr} LIKE %s", ["%" + like_escape(value) + "%"]
    return f"instr({expr}, %s) > 0", [value]


def regex(db, expr: str, pattern: str) -> tuple[str, list]:
    """``expr`` matches the regular expression ``pattern``: PostgreSQL's ``~`` (POSIX ARE,
    trigram-indexable), SQLite's ``REGEXP`` (Python's ``re.search``)."""
    if is_pg(db):
        return f"{expr} ~ %s", [pattern]
    return f"{expr} REGEXP %s", [pattern]


def array_contains_all(db, key: str, values: list) -> tuple[str, list]:
    """``(sql, params)``: array column ``key`` holds every one of ``values`` (one GIN-indexable
    containment on PostgreSQL)."""
    if is_pg(db):
        return f"{data_expr(db, key)} @> %s::jsonb", [db.json(list(values))]
    parts = [array_contains(db, key, v) for v in values]
    return "(" + " AND ".join(p[0] for p in parts) + ")", [v for p in parts for v in p[1]]


def search(db, key: str, words: list[str]) -> tuple[str, list]:
    """Full-text match of any of ``words`` (prefix match). PostgreSQL: ``to_tsvector`` against
    a ``to_tsquery`` (GIN-indexed by fulltext indexes); SQLite: case-insensitive substring."""
    if not words:
        return "1 = 0", []
    if is_pg(db):
        return f"{fulltext_expr(db, key)} @@ to_tsquery('simple', %s)", [" | ".join(w + ":*" for w in words)]
    expr = data_text_expr(db, key)
    parts = " OR ".join(f"instr(lower({expr}), lower(%s)) > 0" for _ in words)
    return f"({parts})", list(words)


def remove_key(db, table_pk: int, key: str) -> str:
    """UPDATE that drops ``key`` from every row of the table."""
    if is_pg(db):
        return f"UPDATE {ROWS} SET data = data - '{key}' WHERE table_id = {int(table_pk)} AND data ? '{key}'"
    return (f"UPDATE {ROWS} SET data = json_remove(data, '$.\"{key}\"') WHERE table_id = {int(table_pk)} "
            f"AND json_type(data, '$.\"{key}\"') IS NOT NULL")


def set_default(db, table_pk: int, key: str) -> str:
    """UPDATE (one param: the JSON value) that fills ``key`` where rows lack it."""
    if is_pg(db):
        return (f"UPDATE {ROWS} SET data = data || jsonb_build_object('{key}', %s::jsonb) "
                f"WHERE table_id = {int(table_pk)} AND NOT data ? '{key}'")
    return (f"UPDATE {ROWS} SET data = json_set(data, '$.\"{key}\"', json(%s)) WHERE table_id = {int(table_pk)} "
            f"AND json_type(data, '$.\"{key}\"') IS NULL")


def rename_key(db, table_pk: int, old: str, new: str) -> str:
    if is_pg(db):
        return (f"UPDATE {ROWS} SET data = (data - '{old}') || jsonb_build_object('{new}', data->'{old}') "
                f"WHERE table_id = {int(table_pk)} AND data ? '{old}'")
    return (f"UPDATE {ROWS} SET data = json_remove(json_set(data, '$.\"{new}\"', json_extract(data, '$.\"{old}\"')), "
            f"'$.\"{old}\"') WHERE table_id = {int(table_pk)} AND json_type(data, '$.\"{old}\"') IS NOT NULL")


_COLUMN_FIELDS = ("id", "key", "kind", "required", "array", "size", "spec", "created_at", "updated_at")
_INDEX_FIELDS = ("id", "key", "type", "columns", "orders", "lengths", "created_at", "updated_at")


def aggregate(db, table: str, parent: str) -> str:
    """A scalar subquery: the ``table`` rows of table ``parent`` (an SQL expression) as a JSON
    array, oldest first. On PostgreSQL it is sent as text so that :func:`apps.core.drivers.db.as_json`
    decodes it (the driver's own ``json`` loader would turn a large float in a column's spec,
    printed by jsonb without an exponent, into an integer no encoder can write back)."""
    if is_pg(db):
        return f"(SELECT COALESCE(json_agg(x ORDER BY x.id), '[]')::text FROM {table} x WHERE x.table_id = {parent})"
    fields = _COLUMN_FIELDS if table.endswith("column") else _INDEX_FIELDS
    json_fields = {"spec", "columns", "orders", "lengths"}
    pairs = ", ".join(f"'{f}', " + (f'json(x."{f}")' if f in json_fields else f'x."{f}"') for f in fields)
    return (f"(SELECT COALESCE(json_group_array(json_object({pairs})), '[]') FROM "
            f"(SELECT * FROM {table} WHERE table_id = {parent} ORDER BY id) x)")
