"""Appwrite queries (``apps.core.domain.queries``) over fixed SQL columns: the admin-style lists of
users, teams and memberships.

A list names its attributes as :class:`Column`\\ s (an SQL expression over the list's table
alias and a kind); :func:`plan` compiles the parsed queries into a :class:`Plan` and
:func:`run` executes it with the cursor and the capped total. Values are always parameters;
expressions come from the caller's column table, never from the request.

Rules (Appwrite's ``Queries`` validators for these lists and utopia-php/database's behaviour):

* Filters ``equal notEqual lessThan(Equal) greaterThan(Equal) between notBetween isNull
  isNotNull startsWith notStartsWith endsWith notEndsWith contains notContains``, nested in
  ``and``/``or``. Array attributes (``labels``, ``roles``) take ``contains``/``notContains`` only.
* ``search`` as a query is refused: these lists have no fulltext index on single attributes
  (their ``search`` parameter is the way to search, see :func:`add_search`).
* ``select`` is refused (Appwrite refuses it on these lists).
* ``limit`` at most :data:`MAX_LIMIT`; ``offset``; one ``cursorAfter``/``cursorBefore`` naming
  an item of the list (else 400 ``general_cursor_not_found``); a cursor page whose order
  attribute is ``null`` on the cursor item is 400 ``database_query_order_null``.
* Default and tie-breaking order: ``$sequence`` ascending. ``total`` stops counting at
  :data:`MAX_COUNT` (Appwrite's ``APP_LIMIT_COUNT``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from apps.core.domain.queries import CURSORS, FILTERS, LOGICAL, ORDERS, Query
from apps.core.drivers.db import Database
from apps.core.errors import AppwriteError
from apps.core.http.context import RequestContext

DEFAULT_LIMIT = 25
MAX_LIMIT = 5000
MAX_COUNT = 5000
MAX_SEARCH_WORDS = 16

KINDS = frozenset({"string", "integer", "boolean", "datetime", "array"})


@dataclass(frozen=True, slots=True)
class Column:
    """One queryable attribute: ``expr`` is SQL over the list's alias; ``kind`` one of
    :data:`KINDS` (``array`` = a JSON array of strings)."""

    expr: str
    kind: str


@dataclass(slots=True)
class Plan:
    where: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    orders: list[tuple[str, bool]] = field(default_factory=list)  # (expr, descending)
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    cursor: tuple[str, bool] | None = None  # (item uid, before?)


def invalid(message: str) -> AppwriteError:
    return AppwriteError("general_query_invalid", f"Invalid query: {message}")


def _is_pg(db: Database) -> bool:
    return db.vendor == "postgresql"


def _value(db: Database, col: Column, value: Any, attribute: str) -> Any:
    bad = invalid(f'Query value is invalid for attribute "{attribute}"')
    kind = col.kind
    if kind in ("string", "array"):
        if not isinstance(value, str):
            raise bad
        return value
    if kind == "integer":
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or abs(value) >= 2**63:
            raise bad
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise bad
        return value
    # datetime
    if not isinstance(value, str):
        raise bad
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise bad from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    try:
        return db.dt(parsed)
    except (OverflowError, ValueError):
        raise bad from None


_CMP = {"lessThan": "<", "lessThanEqual": "<=", "greaterThan": ">", "greaterThanEqual": ">="}


def _like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _array_contains(db: Database, expr: str, value: str) -> tuple[str, list[Any]]:
    if _is_pg(db):
        return f"({expr})::jsonb @> %s::jsonb", [db.json([value])]
    return f"EXISTS (SELECT 1 FROM json_each({expr}) je WHERE je.value = %s)", [value]


def _filter(db: Database, columns: dict[str, Column], q: Query) -> tuple[str, list[Any]]:
    if q.method in LOGICAL:
        parts = [_filter(db, columns, sub) for sub in q.values]
        joiner = " AND " if q.method == "and" else " OR "
        return "(" + joiner.join(p[0] for p in parts) + ")", [v for p in parts for v in p[1]]
    col = columns.get(q.attribute)
    if col is None:
        raise invalid(f"Attribute not found in schema: {q.attribute}")
    m = q.method
    if m in ("search", "notSearch"):
        raise invalid(f'Searching by attribute "{q.attribute}" requires a fulltext index; use the search parameter.')
    if m == "isNull":
        return f"{col.expr} IS NULL", []
    if m == "isNotNull":
        return f"{col.expr} IS NOT NULL", []
    negate = m.startswith("not") and m != "notEqual"
    base = m[3].lower() + m[4:] if negate else m
    if col.kind == "array" and base != "contains":
        raise invalid(f'Cannot query {m} on attribute "{q.attribute}" because it is an array.')
    if col.kind == "boolean" and m not in ("equal", "notEqual"):
        raise invalid(f'Cannot query {m} on boolean attribute "{q.attribute}".')
    if base in ("startsWith", "endsWith") or (base == "contains" and col.kind != "array"):
        if col.kind != "string":
            raise invalid(f'Cannot query {m} on attribute "{q.attribute}": it is not a string.')
    values = [_value(db, col, v, q.attribute) for v in q.values]
    if m in ("equal", "notEqual"):
        marks = ", ".join(["%s"] * len(values))
        return f"{col.expr} {'NOT IN' if m == 'notEqual' else 'IN'} ({marks})", values
    if m in _CMP:
        return f"{col.expr} {_CMP[m]} %s", values
    if base == "between":
        sql = f"{col.expr} BETWEEN %s AND %s"
        params = values
    elif base == "startsWith":
        sql, params = f"{col.expr} LIKE %s ESCAPE '\\'", [_like(values[0]) + "%"]
    elif base == "endsWith":
        sql, params = f"{col.expr} LIKE %s ESCAPE '\\'", ["%" + _like(values[0])]
    else:  # contains
        parts = [(_array_contains(db, col.expr, v) if col.kind == "array"
                  else (f"{col.expr} LIKE %s ESCAPE '\\'", ["%" + _like(v) + "%"])) for v in values]
        sql = "(" + " OR ".join(p[0] for p in parts) + ")"
        params = [v for p in parts for v in p[1]]
    return (f"NOT ({sql})" if negate else sql), params


def plan(db: Database, queries: list[Query], columns: dict[str, Column], *, seq: str) -> Plan:
    """Compile ``queries`` for a list whose attributes are ``columns`` and whose insertion order
    is the SQL expression ``seq`` (the primary key). Raises 400 ``general_query_invalid``."""
    p = Plan()
    for q in queries:
        m = q.method
        if m in FILTERS or m in LOGICAL:
            sql, params = _filter(db, columns, q)
            p.where.append(sql)
            p.params.extend(params)
        elif m in ORDERS:
            col = columns.get(q.attribute)
            if col is None:
                raise invalid(f"Attribute not found in schema: {q.attribute}")
            if col.kind == "array":
                raise invalid(f'Cannot order by array attribute "{q.attribute}".')
            p.orders.append((col.expr, m == "orderDesc"))
        elif m == "limit":
            if q.values[0] > MAX_LIMIT:
                raise invalid(f"limit must be at most {MAX_LIMIT}")
            p.limit = q.values[0]
        elif m == "offset":
            p.offset = q.values[0]
        elif m in CURSORS:
            if p.cursor is not None:
                raise invalid("only one cursor is allowed")
            p.cursor = (q.values[0], m == "cursorBefore")
        elif m == "select":
            raise invalid("select queries are not supported on this list")
    p.orders.append((seq, False))
    return p


def search_sql(db: Database, exprs: list[str], term: str) -> tuple[str, list[Any]] | None:
    """``(sql, params)`` keeping items where one of ``exprs`` contains one of the words of
    ``term`` (case-insensitive; Appwrite's fulltext search matches any word), or ``None`` when
    ``term`` has no words."""
    words = re.findall(r"[\w@.+-]+", term.lower())[:MAX_SEARCH_WORDS]
    if not words:
        return None
    ors = []
    params: list[Any] = []
    for word in words:
        for expr in exprs:
            ors.append(f"LOWER({expr}) LIKE %s ESCAPE '\\'")
            params.append("%" + _like(word) + "%")
    return "(" + " OR ".join(ors) + ")", params


def add_search(db: Database, p: Plan, exprs: list[str], term: str) -> None:
    """Narrow ``p`` to the items :func:`search_sql` keeps for ``term`` (nothing when ``term`` has
    no words): the ``search`` parameter of the list routes."""
    found = search_sql(db, exprs, term) if term else None
    if found:
        p.where.append(found[0])
        p.params.extend(found[1])


def _order_sql(orders: list[tuple[str, bool]], reverse: bool) -> str:
    return ", ".join(f"{e} {'DESC' if d != reverse else 'ASC'}" for e, d in orders)


async def run(ctx: RequestContext, *, source: str, where: list[str], params: list[Any], p: Plan, select: str, uid: str,
              total: bool) -> tuple[int, list[dict[str, Any]]]:
    """One page of ``SELECT select FROM source`` under ``where`` (the list's own scope, e.g. the
    project) and the plan; ``uid`` is the SQL expression of the public ID that cursors name.
    Returns ``(total or 0, rows)``.

    Raises 400 ``general_cursor_not_found``, 400 ``database_query_order_null``.
    """
    base_where = list(where)
    base_params = list(params)
    all_where = base_where + p.where
    all_params = base_params + p.params
    page_where, page_params = list(all_where), list(all_params)
    reverse = False
    if p.cursor is not None:
        cursor_uid, reverse = p.cursor
        exprs = ", ".join(f"{e} AS c{i}" for i, (e, _) in enumerate(p.orders))
        found = await ctx.db.fetchone(
            f"SELECT {exprs} FROM {source} WHERE {' AND '.join(base_where) or '1 = 1'} AND {uid} = %s",
            (*base_params, cursor_uid),
        )
        if found is None:
            raise AppwriteError("general_cursor_not_found", f"Item '{cursor_uid}' for the 'cursor' value not found.")
        values = [found[f"c{i}"] for i in range(len(p.orders))]
        if any(v is None for v in values):
            raise AppwriteError("database_query_order_null")
        ors, cparams = [], []
        for i, (expr, desc) in enumerate(p.orders):
            ands = [f"{e} = %s" for e, _ in p.orders[:i]]
            forward = desc == reverse  # ascending after the cursor, or descending before it
            ands.append(f"{expr} {'>' if forward else '<'} %s")
            ors.append("(" + " AND ".join(ands) + ")")
            cparams.extend([*values[:i], values[i]])
        page_where.append("(" + " OR ".join(ors) + ")")
        page_params.extend(cparams)
    rows = await ctx.db.fetchall(
        f"SELECT {select} FROM {source} WHERE {' AND '.join(page_where) or '1 = 1'} "
        f"ORDER BY {_order_sql(p.orders, reverse)} LIMIT {int(p.limit)} OFFSET {int(p.offset)}",
        page_params,
    )
    if reverse:
        rows.reverse()
    count = 0
    if total:
        if p.cursor is None and len(rows) < p.limit and (rows or p.offset == 0):
            count = p.offset + len(rows)  # a short first-or-later page ends the list: no count query
        else:
            count = await ctx.db.fetchval(
                f"SELECT COUNT(*) AS n FROM (SELECT 1 FROM {source} WHERE {' AND '.join(all_where) or '1 = 1'} "
                f"LIMIT {MAX_COUNT}) c",
                all_params,
            )
    return min(int(count or 0), MAX_COUNT), rows
