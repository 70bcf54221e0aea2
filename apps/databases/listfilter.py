"""Queries on the column (attribute) and index lists, evaluated in memory over their models.

A table has at most 1,000 columns and 64 indexes, read with the table in one round trip, so the
lists are filtered in Python instead of in SQL. Allowed, as in Appwrite's ``Attributes`` and
``Indexes`` query validators: filters on ``key``, ``type``, ``size``, ``required``, ``array``,
``status``, ``error`` (columns) or ``key``, ``type``, ``status``, ``attributes``/``columns``,
``error`` (indexes), and on ``$id``, ``$createdAt``, ``$updatedAt``, ``$sequence``;
``orderAsc``/``orderDesc`` on those; ``limit``, ``offset``, ``cursorAfter``/``cursorBefore``
(by key). Raises 400 ``general_query_invalid`` otherwise.
"""

from __future__ import annotations

import re
from typing import Any

from apps.core.domain.queries import CURSORS, FILTERS, LOGICAL, Query
from apps.core.errors import AppwriteError
from apps.databases.schema import normalize_datetime

COLUMN_FIELDS = {"key": "string", "type": "string", "size": "integer", "required": "boolean", "array": "boolean",
                 "status": "string", "error": "string"}
INDEX_FIELDS = {"key": "string", "type": "string", "status": "string", "attributes": "strings",
                "columns": "strings", "error": "string"}
_SYSTEM = {"$id": "string", "$createdAt": "datetime", "$updatedAt": "datetime", "$sequence": "integer"}
_LIST_FILTERS = frozenset({"containsAny", "containsAll"})
MAX_LIMIT = 5000


def _invalid(message: str) -> AppwriteError:
    return AppwriteError("general_query_invalid", f"Invalid query: {message}")


def _typed(kind: str, value: Any, attribute: str) -> Any:
    ok = {"string": isinstance(value, str), "strings": isinstance(value, str),
          "boolean": isinstance(value, bool),
          "integer": isinstance(value, int) and not isinstance(value, bool),
          "datetime": isinstance(value, str)}[kind]
    if not ok:
        raise _invalid(f'Query value is invalid for attribute "{attribute}"')
    if kind == "datetime":
        try:
            return normalize_datetime(value)
        except ValueError:
            raise _invalid(f'Query value is invalid for attribute "{attribute}"') from None
    return value


def _check(q: Query, fields: dict[str, str]) -> None:
    """Attribute and value types of a filter, checked once (also when the list is empty)."""
    if q.method in LOGICAL:
        for sub in q.values:
            _check(sub, fields)
        return
    kind = fields.get(q.attribute)
    if kind is None:
        raise _invalid(f"Attribute not found in schema: {q.attribute}")
    for v in q.values:
        _typed(kind, v, q.attribute)
    if q.method == "regex":
        try:
            re.compile(q.values[0])
        except re.error as exc:
            raise _invalid(f'Invalid regex pattern for "{q.attribute}": {exc}') from None


def _test(item: dict, q: Query, fields: dict[str, str]) -> bool:  # noqa: C901, PLR0911, PLR0912  (one per method)
    m = q.method
    if m in LOGICAL:
        results = [_test(item, sub, fields) for sub in q.values]
        return all(results) if m == "and" else any(results)
    kind = fields.get(q.attribute)
    if kind is None:
        raise _invalid(f"Attribute not found in schema: {q.attribute}")
    value = item.get(q.attribute)
    if kind == "datetime" and isinstance(value, str) and value:
        value = normalize_datetime(value)
    if m == "isNull":
        return value is None
    if m == "isNotNull":
        return value is not None
    values = [_typed(kind, v, q.attribute) for v in q.values]
    if kind == "strings":  # a list attribute: containment only
        have = value or []
        if m in ("contains", "containsAny", "equal"):
            return any(v in have for v in values)
        if m == "notContains":
            return not any(v in have for v in values)
        if m == "containsAll":
            return all(v in have for v in values)
        raise _invalid(f'Cannot query {m} on attribute "{q.attribute}" because it is an array.')
    if m == "equal":
        return value in values
    if m == "notEqual":
        return value not in values
    if value is None:
        return False
    if kind == "boolean":
        raise _invalid(f'Cannot query {m} on boolean attribute "{q.attribute}".')
    if m in ("lessThan", "lessThanEqual", "greaterThan", "greaterThanEqual"):
        v = values[0]
        return {"lessThan": value < v, "lessThanEqual": value <= v, "greaterThan": value > v,
                "greaterThanEqual": value >= v}[m]
    if m in ("between", "notBetween"):
        inside = values[0] <= value <= values[1]
        return inside if m == "between" else not inside
    if kind != "string":
        raise _invalid(f'Cannot query {m} on attribute "{q.attribute}": it is not a string.')
    if m in ("startsWith", "notStartsWith"):
        return value.startswith(values[0]) == (m == "startsWith")
    if m in ("endsWith", "notEndsWith"):
        return value.endswith(values[0]) == (m == "endsWith")
    if m in ("contains", "containsAny"):
        return any(v in value for v in values)
    if m == "notContains":
        return not any(v in value for v in values)
    if m == "containsAll":
        return all(v in value for v in values)
    if m == "regex":
        try:
            return re.search(values[0], value) is not None
        except re.error as exc:
            raise _invalid(f'Invalid regex pattern for "{q.attribute}": {exc}') from None
    raise _invalid(f"{m} is not supported on this list")


def apply(items: list[dict], queries: list[Query], fields: dict[str, str]) -> tuple[int, list[dict]]:
    """``(total, page)`` of model dicts ``items`` (in their stored order) after ``queries``.

    ``fields`` maps each filterable attribute to ``string``, ``strings`` (a list),
    ``integer``, ``boolean`` or ``datetime``. Cursors name an item by ``$id``.
    """
    fields = {**fields, **_SYSTEM}
    limit, offset, cursor, orders = MAX_LIMIT, 0, None, []
    filters = []
    for q in queries:
        m = q.method
        if m in FILTERS or m in LOGICAL or m in _LIST_FILTERS or m == "regex":
            filters.append(q)
        elif m in ("orderAsc", "orderDesc"):
            if q.attribute not in fields:
                raise _invalid(f"Attribute not found in schema: {q.attribute}")
            orders.append((q.attribute, m == "orderDesc"))
        elif m == "limit":
            if q.values[0] > MAX_LIMIT:
                raise _invalid(f"limit must be at most {MAX_LIMIT}")
            limit = q.values[0]
        elif m == "offset":
            offset = q.values[0]
        elif m in CURSORS:
            cursor = (q.values[0], m == "cursorBefore")
        else:
            raise _invalid(f"{m} is not supported on this list")
    for q in filters:
        _check(q, fields)
    matched = [item for item in items if all(_test(item, q, fields) for q in filters)]
    for attribute, desc in reversed(orders):  # stable sorts, last key first
        matched.sort(key=lambda item, a=attribute: (item.get(a) is not None, item.get(a)), reverse=desc)
    total = len(matched)
    if cursor is not None:
        ids = [item.get("$id") for item in matched]
        if cursor[0] not in ids:
            raise AppwriteError("general_cursor_not_found", f'Cursor not found: "{cursor[0]}"')
        at = ids.index(cursor[0])
        matched = matched[:at][::-1] if cursor[1] else matched[at + 1:]
        page = matched[offset:offset + limit]
        return total, page[::-1] if cursor[1] else page
    return total, matched[offset:offset + limit]
