"""Compile parsed Appwrite queries (``apps.core.domain.queries``) into SQL for one listing.

A :class:`Listing` says what is listed (``FROM`` and base ``WHERE`` over alias ``r``) and how
attribute names resolve to SQL (:class:`Field`). :func:`plan` turns the queries into a
:class:`Plan`: filters, order, limit/offset, the cursor and the selected keys. Filters and
orders reference only validated identifiers; every value is a parameter.
Raises 400 ``general_query_invalid`` for unknown attributes, values of the wrong type and
operators that do not apply to the attribute.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apps.core.domain.queries import (
    CURSORS,
    DISTANCE,
    EXTENDED_FILTERS,
    FILTERS,
    LOGICAL,
    ORDERS,
    SPATIAL,
    VECTOR,
    Query,
)
from apps.core.errors import AppwriteError
from apps.databases import sql as dialect
from apps.databases.schema import normalize_datetime

DEFAULT_LIMIT = 25
MAX_LIMIT = 5000
MAX_COUNT = 5000  # APP_LIMIT_COUNT: "total" stops counting here


@dataclass(frozen=True, slots=True)
class Field:
    """How an attribute maps to SQL. ``base``: string, integer, float, boolean, datetime (a
    normalised ISO string in JSON), ts (a timestamp column), sequence. ``key`` is set for user
    columns (JSON data); ``fulltext`` when a fulltext index covers it."""

    expr: str
    base: str
    key: str = ""
    array: bool = False
    fulltext: bool = False
    relation: bool = False  # a relationship column ("virtual" base: its side cannot be filtered)


@dataclass(slots=True)
class Listing:
    source: str
    where: list[str]
    params: list[Any]
    resolve: Callable[[str], Field | None]
    uid: str = "r.uid"
    seq: str = "r.id"
    # key -> (listing of the related rows, link(sub_select) -> condition), for dotted filters
    relate: Callable[[str], Any] | None = None


@dataclass(slots=True)
class Plan:
    where: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    orders: list[tuple[str, bool, bool]] = field(default_factory=list)  # (expr, descending, is JSON)
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    cursor: tuple[str, str] | None = None  # (row uid, "after"|"before")
    select: list[str] | None = None
    random: bool = False


def invalid(message: str) -> AppwriteError:
    return AppwriteError("general_query_invalid", f"Invalid query: {message}")


def _field(listing: Listing, attribute: str) -> Field:
    found = listing.resolve(attribute)
    if found is None:
        raise invalid(f'Attribute not found in schema: {attribute}')
    return found


def _value(db, f: Field, value: Any, attribute: str) -> Any:
    """``value`` converted for comparison with ``f`` (a parameter)."""
    bad = invalid(f'Query value is invalid for attribute "{attribute}"')
    base = f.base
    if base == "string":
        if not isinstance(value, str):
            raise bad
        out = value
    elif base in ("integer", "sequence"):
        if base == "sequence" and isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad
        out = value
    elif base == "float":
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise bad
        out = value
    elif base == "boolean":
        if not isinstance(value, bool):
            raise bad
        out = value
    else:  # datetime in JSON, or a timestamp column
        try:
            out = normalize_datetime(value)
        except (ValueError, TypeError):
            raise bad from None
        if base == "ts":
            return db.dt(dt.datetime.fromisoformat(out))
    return dialect.json_value(db, out) if f.key else out


_CMP = {"lessThan": "<", "lessThanEqual": "<=", "greaterThan": ">", "greaterThanEqual": ">="}
_STRING_OPS = {"startsWith", "notStartsWith", "endsWith", "notEndsWith", "search", "notSearch", "regex"}
_CONTAINS = ("contains", "containsAny", "containsAll")
MAX_REGEX = 512  # characters of a regex pattern


def _check_regex(pattern: str, attribute: str) -> None:
    """A pattern PostgreSQL and Python's ``re`` both read the same way, within the length limit.
    Raises 400 ``general_query_invalid``."""
    if len(pattern) > MAX_REGEX:
        raise invalid(f'The regex pattern for "{attribute}" is longer than {MAX_REGEX} characters.')
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise invalid(f'Invalid regex pattern for "{attribute}": {exc}') from None


def _filter(db, listing: Listing, q: Query) -> tuple[str, list]:  # noqa: C901, PLR0912  (one branch per method)
    if q.method in LOGICAL:
        parts = [_filter(db, listing, sub) for sub in q.values]
        joiner = " AND " if q.method == "and" else " OR "
        return "(" + joiner.join(p[0] for p in parts) + ")", [v for p in parts for v in p[1]]
    m = q.method
    if "." in q.attribute and listing.resolve(q.attribute) is None:
        return _through(db, listing, q)
    if m in ("exists", "notExists"):  # every named attribute has (exists) / lacks (notExists) a value
        nulls = " AND ".join(f"{_field(listing, name).expr} IS {'NOT ' if m == 'exists' else ''}NULL"
                             for name in q.values)
        return f"({nulls})", []
    if m == "elemMatch":
        raise invalid("elemMatch is not supported by the database")
    f = _field(listing, q.attribute)
    if f.base == "virtual":
        raise invalid(f'Cannot query on virtual relationship attribute "{q.attribute}"')
    if m in VECTOR:
        raise invalid("Vector queries can only be used on vector attributes")
    if f.base == "spatial" or m in SPATIAL or m in DISTANCE:
        return spatial_filter(db, f, q)
    if m == "isNull":
        return f"{f.expr} IS NULL", []
    if m == "isNotNull":
        return f"{f.expr} IS NOT NULL", []
    negate = m.startswith("not") and m != "notEqual"
    base_m = m[3].lower() + m[4:] if negate else m
    if f.array and base_m not in _CONTAINS:
        raise invalid(f'Cannot query {m} on attribute "{q.attribute}" because it is an array.')
    if f.base == "boolean" and m not in ("equal", "notEqual"):
        raise invalid(f'Cannot query {m} on boolean attribute "{q.attribute}".')
    if base_m in _STRING_OPS or (base_m in _CONTAINS and not f.array):
        if f.base != "string":
            raise invalid(f'Cannot query {m} on attribute "{q.attribute}": it is not a string.')
        if not all(isinstance(v, str) for v in q.values):
            raise invalid(f'Query value is invalid for attribute "{q.attribute}"')
    text = dialect.data_text_expr(db, f.key) if f.key else f.expr
    if base_m == "regex":
        _check_regex(q.values[0], q.attribute)
        sql, params = dialect.regex(db, text, q.values[0])
    elif base_m == "containsAll" and f.array:
        sql, params = dialect.array_contains_all(db, f.key, [_raw_value(db, f, v, q.attribute) for v in q.values])
    elif base_m == "containsAll":
        parts = [dialect.contains_text(db, text, v) for v in q.values]
        sql, params = "(" + " AND ".join(p[0] for p in parts) + ")", [v for p in parts for v in p[1]]
    elif base_m == "search":
        if not f.fulltext:
            raise invalid(f'Searching by attribute "{q.attribute}" requires a fulltext index.')
        sql, params = dialect.search(db, f.key, re.findall(r"\w+", q.values[0])[:32])
    elif base_m == "startsWith":
        sql, params = dialect.starts_with(db, text, q.values[0])
    elif base_m == "endsWith":
        sql, params = dialect.ends_with(db, text, q.values[0])
    elif base_m in ("contains", "containsAny"):  # any of the values
        parts = []
        for v in q.values:
            if f.array:
                parts.append(dialect.array_contains(db, f.key, _raw_value(db, f, v, q.attribute)))
            else:
                parts.append(dialect.contains_text(db, text, v))
        sql = "(" + " OR ".join(p[0] for p in parts) + ")"
        params = [v for p in parts for v in p[1]]
    elif base_m == "between":
        lo, hi = (_value(db, f, v, q.attribute) for v in q.values)
        sql, params = f"{f.expr} BETWEEN %s AND %s", [lo, hi]
    elif m in ("equal", "notEqual"):
        values = [_value(db, f, v, q.attribute) for v in q.values]
        marks = ", ".join("%s" + dialect.json_cast(db) if f.key else "%s" for _ in values)
        op = "IN" if m == "equal" else "NOT IN"
        return f"{f.expr} {op} ({marks})", values
    elif m in _CMP:
        return f"{f.expr} {_CMP[m]} %s{dialect.json_cast(db) if f.key else ''}", [_value(db, f, q.values[0], q.attribute)]
    else:  # pragma: no cover - parse_queries only lets known methods through
        raise invalid(f"unsupported method {m}")
    return (f"NOT ({sql})" if negate else sql), params


def _raw_value(db, f: Field, value: Any, attribute: str) -> Any:
    """Like :func:`_value` but never wrapped as JSON (array containment builds its own)."""
    plain = Field(f.expr, f.base)
    return _value(db, plain, value, attribute)


def _through(db, listing: Listing, q: Query) -> tuple[str, list]:
    """A filter on a related row's attribute (``author.name``): the rows whose related rows
    (the ones the caller may read) match, as a sub-query."""
    head, rest = q.attribute.split(".", 1)
    found = listing.relate(head) if listing.relate is not None else None
    if found is None:
        raise invalid(f"Attribute not found in schema: {q.attribute}")
    sub, link = found
    sql, params = _filter(db, sub, Query(q.method, rest, q.values))
    inner = f"SELECT r.uid FROM {sub.source} WHERE {' AND '.join([*sub.where, sql])}"
    return link(inner), [*sub.params, *params]


def spatial_filter(db, f: Field, q: Query) -> tuple[str, list]:
    """Spatial predicates (``apps.databases.spatial``); refused on other attributes."""
    from apps.databases import spatial

    return spatial.compile_filter(db, f, q)


def plan(db, listing: Listing, queries: list[Query], *, allow_select: bool = True) -> Plan:
    """Compile ``queries`` for ``listing``. Default order: ``$sequence`` ascending.
    ``orderRandom`` shuffles (then no cursor is allowed)."""
    p = Plan(where=list(listing.where), params=list(listing.params))
    for q in queries:
        m = q.method
        if m in FILTERS or m in LOGICAL or m in EXTENDED_FILTERS:
            sql, params = _filter(db, listing, q)
            p.where.append(sql)
            p.params.extend(params)
        elif m == "orderRandom":
            p.orders.append(("random()", False, False))
            p.random = True
        elif m in ORDERS:
            f = _field(listing, q.attribute)
            if f.relation or f.base == "spatial":
                raise invalid(f'Cannot order by {"relationship" if f.relation else "spatial"} attribute "{q.attribute}"')
            p.orders.append((f.expr, m == "orderDesc", bool(f.key)))
        elif m == "limit":
            if q.values[0] > MAX_LIMIT:
                raise invalid(f"limit must be at most {MAX_LIMIT}")
            p.limit = q.values[0]
        elif m == "offset":
            p.offset = q.values[0]
        elif m in CURSORS:
            if p.cursor is not None:
                raise invalid("only one cursor is allowed")
            p.cursor = (q.values[0], "after" if m == "cursorAfter" else "before")
        elif m == "select":
            if not allow_select:
                raise invalid("select is not supported here")
            for name in q.values:
                head = name.split(".", 1)[0]
                found = None if name == "*" else listing.resolve(head)
                if name != "*" and (found is None or ("." in name and not found.relation)):
                    raise invalid(f'Attribute not found in schema: {name}')
            p.select = (p.select or []) + list(q.values)
    if p.random and p.cursor is not None:
        raise invalid("cursors cannot be combined with orderRandom")
    p.orders.append((listing.seq, False, False))
    return p


def order_sql(orders: list[tuple[str, bool, bool]], reverse: bool = False) -> str:
    """ORDER BY with NULLs as the smallest value in both databases (user indexes are built
    with the same null ordering, see ``services.ddl``)."""
    parts = []
    for expr, desc, nullable in orders:
        desc = desc != reverse
        if not nullable:  # system columns are NOT NULL: plain order, so btree indexes serve it
            parts.append(f"{expr} DESC" if desc else f"{expr} ASC")
        else:
            parts.append(f"{expr} DESC NULLS LAST" if desc else f"{expr} ASC NULLS FIRST")
    return ", ".join(parts)


def cursor_condition(db, orders: list[tuple[str, bool, bool]], values: list[Any], reverse: bool) -> tuple[str, list]:
    """Rows strictly after the cursor row (whose order values are ``values``, as read back
    from the database) in the order ``orders`` (flipped when ``reverse``), NULLs first."""
    ors: list[str] = []
    params: list[Any] = []
    values = [None if v is None else (dialect.json_value(db, v) if j else v) for (_, _, j), v in zip(orders, values, strict=True)]
    for i, (expr, desc, is_json) in enumerate(orders):
        ands: list[str] = []
        local: list[Any] = []
        for (e, _, j), v in zip(orders[:i], values[:i], strict=True):
            if v is None:
                ands.append(f"{e} IS NULL")
            else:
                ands.append(f"{e} = %s{dialect.json_cast(db) if j else ''}")
                local.append(v)
        v = values[i]
        cast = dialect.json_cast(db) if is_json else ""
        greater = (desc == reverse)
        if greater:
            cond = f"{expr} IS NOT NULL" if v is None else f"{expr} > %s{cast}"
        else:
            cond = None if v is None else f"({expr} < %s{cast} OR {expr} IS NULL)"
        if cond is None:
            continue
        if v is not None:
            local.append(v)
        ors.append("(" + " AND ".join([*ands, cond]) + ")")
        params.extend(local)
    return ("(" + " OR ".join(ors) + ")" if ors else "1 = 0"), params


def count_sql(listing_source: str, p: Plan) -> tuple[str, list]:
    """``SELECT COUNT`` of the filtered rows, stopping at :data:`MAX_COUNT`."""
    where = " AND ".join(p.where) or "1 = 1"
    return (f"SELECT COUNT(*) AS n FROM (SELECT 1 FROM {listing_source} WHERE {where} LIMIT {MAX_COUNT}) c",
            list(p.params))
