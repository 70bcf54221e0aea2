"""Subscription queries evaluated against an event payload, in Python.

A subscription may carry filter queries (the same JSON strings as REST list queries); an event
reaches the subscription only when its payload matches all of them. Supported: ``equal``,
``notEqual``, ``lessThan``, ``lessThanEqual``, ``greaterThan``, ``greaterThanEqual``,
``between``, ``notBetween``, ``isNull``, ``isNotNull``, ``startsWith``, ``endsWith``,
``contains`` and their ``not*`` forms, ``search``/``notSearch`` (case-insensitive word match),
``and``, ``or``. Ordering, paging, cursors and ``select`` do not filter and are refused.
"""

from __future__ import annotations

from typing import Any

from apps.core.domain.queries import FILTERS, LOGICAL, Query, parse_queries
from apps.core.errors import AppwriteError


def compile_queries(raw: Any) -> list[Query]:
    """Parse a subscription's ``queries`` (list of JSON strings).

    Raises 400 ``general_query_invalid`` for malformed queries and for non-filter methods.
    """
    queries = parse_queries(raw)
    for query in queries:
        if query.method not in FILTERS | LOGICAL:
            raise AppwriteError("general_query_invalid", f"Invalid query: {query.method} is not supported in realtime")
    return queries


def matches(payload: dict, queries: list[Query]) -> bool:
    """True when ``payload`` satisfies every query (an empty list matches everything)."""
    return all(_match(payload, q) for q in queries)


def _compare(op: str, value: Any, bound: Any) -> bool:
    try:
        if op == "lessThan":
            return value < bound
        if op == "lessThanEqual":
            return value <= bound
        if op == "greaterThan":
            return value > bound
        return value >= bound
    except TypeError:
        return False


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _contains(value: Any, wanted: list[Any]) -> bool:
    if isinstance(value, str):
        return any(isinstance(w, str) and w in value for w in wanted)
    if isinstance(value, list):
        return any(w in value for w in wanted)
    return False


def _search(value: Any, terms: list[Any]) -> bool:
    if not isinstance(value, str):
        return False
    words = set(value.lower().split())
    return any(word in words for term in terms if isinstance(term, str) for word in term.lower().split())


def _match(payload: dict, q: Query) -> bool:  # noqa: C901, PLR0911  (one branch per method)
    m = q.method
    if m == "and":
        return all(_match(payload, sub) for sub in q.values)
    if m == "or":
        return any(_match(payload, sub) for sub in q.values)
    present = q.attribute in payload
    value = payload.get(q.attribute)
    if m == "isNull":
        return value is None
    if m == "isNotNull":
        return present and value is not None
    if not present:
        return m.startswith("not")
    if m == "equal":
        return any(item in q.values for item in _items(value))
    if m == "notEqual":
        return not any(item in q.values for item in _items(value))
    if m in ("lessThan", "lessThanEqual", "greaterThan", "greaterThanEqual"):
        return any(_compare(m, item, q.values[0]) for item in _items(value))
    if m in ("between", "notBetween"):
        inside = any(_compare("greaterThanEqual", item, q.values[0]) and _compare("lessThanEqual", item, q.values[1])
                     for item in _items(value))
        return inside if m == "between" else not inside
    if m in ("startsWith", "notStartsWith", "endsWith", "notEndsWith"):
        bound = q.values[0]
        fn = str.startswith if "tarts" in m else str.endswith
        hit = isinstance(value, str) and isinstance(bound, str) and fn(value, bound)
        return hit if not m.startswith("not") else not hit
    if m == "contains":
        return _contains(value, q.values)
    if m == "notContains":
        return not _contains(value, q.values)
    if m == "search":
        return _search(value, q.values)
    if m == "notSearch":
        return not _search(value, q.values)
    return False
