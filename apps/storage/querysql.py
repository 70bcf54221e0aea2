"""Appwrite queries on the storage tables: parsed queries become SQL.

``apps.core.domain.queries.parse_queries`` checks the wire shape; here each attribute is mapped to a
column of a known kind, and anything else is 400 ``general_query_invalid``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from apps.core.domain.queries import Query, parse_queries
from apps.core.errors import AppwriteError

DEFAULT_LIMIT = 25
MAX_LIMIT = 5000
MAX_OFFSET = 5000

_COMPARE = {"lessThan": "<", "lessThanEqual": "<=", "greaterThan": ">", "greaterThanEqual": ">="}


@dataclass(slots=True)
class Plan:
    """SQL pieces for a list: ``where`` clauses joined by AND, their ``params``, ``order`` terms."""

    where: list[str] = field(default_factory=list)
    params: list = field(default_factory=list)
    order: list[tuple[str, str]] = field(default_factory=list)  # (column, ASC|DESC)
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    cursor: tuple[str, str] | None = None  # (direction "after"|"before", uid)


def _invalid(message: str) -> AppwriteError:
    return AppwriteError("general_query_invalid", f"Invalid query: {message}")


def like_escape(value: str) -> str:
    """``value`` with LIKE wildcards escaped for ``ESCAPE '\\'``."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _value(kind: str, value, attribute: str, db):
    if kind == "str":
        if not isinstance(value, str):
            raise _invalid(f"{attribute} takes string values")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _invalid(f"{attribute} takes numeric values")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise _invalid(f"{attribute} takes boolean values")
        return value
    if kind == "dt":
        try:
            parsed = dt.datetime.fromisoformat(str(value))
        except ValueError:
            raise _invalid(f"{attribute} takes ISO 8601 datetimes") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=dt.UTC)
        return db.dt(parsed)
    raise AssertionError(kind)


def _filter(q: Query, columns: dict[str, tuple[str, str]], db) -> tuple[str, list]:
    if q.method in ("and", "or"):
        parts = [_filter(sub, columns, db) for sub in q.values]
        joiner = " AND " if q.method == "and" else " OR "
        return "(" + joiner.join(p for p, _ in parts) + ")", [v for _, vs in parts for v in vs]
    if q.attribute not in columns:
        raise _invalid(f"attribute not found in schema: {q.attribute}")
    col, kind = columns[q.attribute]
    m = q.method
    if m == "isNull":
        return f"{col} IS NULL", []
    if m == "isNotNull":
        return f"{col} IS NOT NULL", []
    values = [_value(kind, v, q.attribute, db) for v in q.values]
    if m in ("equal", "notEqual"):
        marks = ", ".join(["%s"] * len(values))
        return f"{col} {'NOT ' if m == 'notEqual' else ''}IN ({marks})", values
    if m in _COMPARE:
        return f"{col} {_COMPARE[m]} %s", values
    if m in ("between", "notBetween"):
        return f"{col} {'NOT ' if m == 'notBetween' else ''}BETWEEN %s AND %s", values
    if kind != "str":
        raise _invalid(f"{m} needs a string attribute")
    if m in ("startsWith", "notStartsWith"):
        pats = [like_escape(v) + "%" for v in values]
    elif m in ("endsWith", "notEndsWith"):
        pats = ["%" + like_escape(v) for v in values]
    else:  # contains, notContains, search, notSearch: case-insensitive substring
        pats = ["%" + like_escape(v.lower()) + "%" for v in values]
        neg = "NOT " if m.startswith("not") else ""
        ors = " OR ".join([f"LOWER({col}) LIKE %s ESCAPE '\\'"] * len(pats))
        return f"{neg}({ors})", pats
    neg = "NOT " if m.startswith("not") else ""
    return f"{neg}({col} LIKE %s ESCAPE '\\')", pats


def plan(raw, columns: dict[str, tuple[str, str]], db) -> Plan:
    """A :class:`Plan` for the ``queries`` parameter. ``columns`` maps Appwrite attribute names
    to ``(SQL column, kind)`` with kind ``str``, ``int``, ``bool`` or ``dt``.

    Raises 400 ``general_query_invalid``.
    """
    out = Plan()
    for q in parse_queries(raw):
        if q.method == "limit":
            if q.values[0] > MAX_LIMIT:
                raise _invalid(f"limit must be at most {MAX_LIMIT}")
            out.limit = q.values[0]
        elif q.method == "offset":
            if q.values[0] > MAX_OFFSET:
                raise _invalid(f"offset must be at most {MAX_OFFSET}")
            out.offset = q.values[0]
        elif q.method in ("orderAsc", "orderDesc"):
            if q.attribute not in columns:
                raise _invalid(f"attribute not found in schema: {q.attribute}")
            out.order.append((columns[q.attribute][0], "ASC" if q.method == "orderAsc" else "DESC"))
        elif q.method in ("cursorAfter", "cursorBefore"):
            out.cursor = ("after" if q.method == "cursorAfter" else "before", q.values[0])
        elif q.method == "select":
            continue  # every attribute of a file is always sent
        else:
            sql, params = _filter(q, columns, db)
            out.where.append(sql)
            out.params.extend(params)
    return out
