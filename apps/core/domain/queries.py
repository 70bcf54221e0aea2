"""Appwrite query strings: parsing and shape validation.

Each query is a JSON object ``{"method", "attribute", "values"}`` sent as a string (GET:
``queries[N]=`` or ``queries[]=``; bodies: a JSON array of strings). :func:`parse_queries`
checks the wire shape only; which attributes exist and what types their values must have is the
caller's business (the databases and storage apps know their columns).

The database list routes parse with ``extended=True``: they also take the newer methods of the
SDK 27 ``Query`` classes (:data:`EXTENDED_FILTERS`, ``orderRandom``), whose values may be
nested lists (geometries, vectors) or query objects (``elemMatch``). The SDK 27 methods that no
Appwrite server implements (aggregates, ``groupBy``, ``having``, ``distinct``, joins) are
recognised and refused with a message that says so (:data:`UNSUPPORTED`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from apps.core.errors import AppwriteError

MAX_QUERIES = 100
MAX_QUERY_LENGTH = 4096  # characters, per query string (SDK docs)
MAX_DEPTH = 3  # nesting of and/or
MAX_OFFSET = 2**63 - 1  # SQL OFFSET is a bigint

FILTERS = frozenset({
    "equal", "notEqual", "lessThan", "lessThanEqual", "greaterThan", "greaterThanEqual",
    "between", "notBetween", "isNull", "isNotNull", "startsWith", "notStartsWith", "endsWith",
    "notEndsWith", "contains", "notContains", "search", "notSearch",
})
LOGICAL = frozenset({"and", "or"})
ORDERS = frozenset({"orderAsc", "orderDesc"})
CURSORS = frozenset({"cursorAfter", "cursorBefore"})
OTHERS = frozenset({"select", "limit", "offset"})
ALL_METHODS = FILTERS | LOGICAL | ORDERS | CURSORS | OTHERS

# Geometry predicates: values [<geometry>]; distances: values [[<geometry>, <distance>, <meters>]].
SPATIAL = frozenset({
    "intersects", "notIntersects", "crosses", "notCrosses", "overlaps", "notOverlaps", "touches",
    "notTouches", "covers", "notCovers", "spatialEquals", "notSpatialEquals",
})
DISTANCE = frozenset({"distanceEqual", "distanceNotEqual", "distanceGreaterThan", "distanceLessThan"})
VECTOR = frozenset({"vectorDot", "vectorCosine", "vectorEuclidean"})
EXTENDED_FILTERS = (frozenset({"regex", "exists", "notExists", "containsAny", "containsAll", "elemMatch"})
                    | SPATIAL | DISTANCE | VECTOR)
EXTENDED_METHODS = ALL_METHODS | EXTENDED_FILTERS | {"orderRandom"}
# In the SDK 27 Query classes, implemented by no Appwrite server release.
UNSUPPORTED = frozenset({
    "count", "countDistinct", "sum", "avg", "min", "max", "stddev", "stddevPop", "stddevSamp", "variance",
    "varPop", "varSamp", "bitAnd", "bitOr", "bitXor", "groupBy", "having", "distinct", "on", "join", "leftJoin",
    "rightJoin", "fullOuterJoin", "crossJoin", "relationship",
})
_NESTED_VALUES = SPATIAL | DISTANCE | VECTOR  # values hold lists, checked by the compiler

_ONE_VALUE = frozenset({"lessThan", "lessThanEqual", "greaterThan", "greaterThanEqual", "startsWith",
                        "notStartsWith", "endsWith", "notEndsWith", "search", "notSearch", "regex"})
_NO_VALUE = frozenset({"isNull", "isNotNull"})


@dataclass(slots=True)
class Query:
    """One parsed query. ``values`` of ``and``/``or`` are nested :class:`Query` objects."""

    method: str
    attribute: str = ""
    values: list[Any] = field(default_factory=list)


def _invalid(message: str) -> AppwriteError:
    return AppwriteError("general_query_invalid", f"Invalid query: {message}")


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _build(data: Any, depth: int, extended: bool = False) -> Query:  # noqa: C901, PLR0912  (one check per rule)
    if not isinstance(data, dict):
        raise _invalid("a query must be a JSON object")
    method = data.get("method")
    if extended and isinstance(method, str) and method in UNSUPPORTED:
        raise _invalid(f"{method} queries are not supported by this server (no Appwrite release implements them)")
    if not isinstance(method, str) or method not in (EXTENDED_METHODS if extended else ALL_METHODS):
        raise _invalid(f"unknown method {method!r}")
    attribute = data.get("attribute", "")
    values = data.get("values", [])
    if not isinstance(attribute, str) or len(attribute) > 128:
        raise _invalid(f"{method}: attribute must be a string")
    if not isinstance(values, list):
        values = [values]
    unknown = set(data) - {"method", "attribute", "values"}
    if unknown:
        raise _invalid(f"{method}: unknown key {sorted(unknown)[0]!r}")

    if method in LOGICAL:
        if depth >= MAX_DEPTH:
            raise _invalid(f"and/or may be nested at most {MAX_DEPTH} levels deep")
        if len(values) < 1:
            raise _invalid(f"{method} needs at least one nested query")
        nested = [_build(v, depth + 1, extended) for v in values]
        allowed = FILTERS | LOGICAL | (EXTENDED_FILTERS if extended else frozenset())
        if any(q.method not in allowed for q in nested):
            raise _invalid(f"{method} may only contain filter queries")
        return Query(method, "", nested)
    if method == "elemMatch":
        if not attribute or not values:
            raise _invalid("elemMatch needs an attribute and at least one query")
        return Query(method, attribute, [_build(v, depth + 1, extended) for v in values])

    if method in ("exists", "notExists"):
        if attribute or not values or not all(isinstance(v, str) and v for v in values):
            raise _invalid(f"{method} takes a list of attribute names")
        return Query(method, "", values)
    if method in FILTERS or method in ORDERS or method in EXTENDED_FILTERS:
        if not attribute:
            raise _invalid(f"{method} needs an attribute")
    if method == "orderRandom" and (attribute or values):
        raise _invalid("orderRandom takes no attribute and no values")
    if method in _NESTED_VALUES:
        if len(values) != 1:
            raise _invalid(f"{method} takes exactly one value")
        return Query(method, attribute, values)
    if not all(_scalar(v) for v in values):
        raise _invalid(f"{method}: values must be strings, numbers, booleans or null")
    if method in _NO_VALUE and values:
        raise _invalid(f"{method} takes no values")
    if method in _ONE_VALUE and len(values) != 1:
        raise _invalid(f"{method} takes exactly one value")
    if method in ("between", "notBetween") and len(values) != 2:
        raise _invalid(f"{method} takes exactly two values")
    if method in ("equal", "notEqual", "contains", "notContains", "containsAny", "containsAll") and not values:
        raise _invalid(f"{method} needs at least one value")
    if any(isinstance(v, str) and "\x00" in v for v in values) or "\x00" in attribute:
        raise _invalid(f"{method}: values cannot contain NUL characters")
    if method in ("limit", "offset"):
        if (len(values) != 1 or not isinstance(values[0], int) or isinstance(values[0], bool)
                or not 0 <= values[0] <= MAX_OFFSET):
            raise _invalid(f"{method} takes one non-negative integer")
    if method in CURSORS and (len(values) != 1 or not isinstance(values[0], str) or not values[0]):
        raise _invalid(f"{method} takes one row ID")
    if method == "select" and (not values or not all(isinstance(v, str) for v in values)):
        raise _invalid("select takes a list of attribute names")
    return Query(method, attribute, values)


def parse_queries(raw: Any, *, extended: bool = False) -> list[Query]:
    """Parse the ``queries`` parameter (a list of JSON strings; ``None`` = no queries);
    ``extended`` also takes the newer database methods (see the module docstring).

    Raises 400 ``general_query_invalid`` for more than :data:`MAX_QUERIES` queries, a query
    longer than :data:`MAX_QUERY_LENGTH` chars, malformed JSON, an unknown method, a bad value
    shape or nesting deeper than :data:`MAX_DEPTH`.
    """
    if raw is None:
        return []
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        raise _invalid("queries must be an array of strings")
    if len(raw) > MAX_QUERIES:
        raise _invalid(f"at most {MAX_QUERIES} queries are allowed")
    out = []
    for item in raw:
        if not isinstance(item, str):
            raise _invalid("each query must be a JSON string")
        if len(item) > MAX_QUERY_LENGTH:
            raise _invalid(f"a query may be at most {MAX_QUERY_LENGTH} characters")
        try:
            data = orjson.loads(item)
        except orjson.JSONDecodeError:
            raise _invalid("query is not valid JSON") from None
        out.append(_build(data, 0, extended))
    return out
