"""Increments and decrements of numeric columns (``PATCH .../rows/{id}/{column}/increment``)."""

from __future__ import annotations

from apps.core.domain.events import announce_all
from apps.core.errors import AppwriteError
from apps.databases.naming import Naming
from apps.databases.rowstore import allowed, data_of, perm_list, record_rows, stored_data, structure_error, write_row
from apps.databases.schema import validate_data
from apps.databases.selectors.rows import row_for_write


def increment_column(naming: Naming, table: dict, key: str, delta: int | float) -> tuple[dict, str]:
    """``(column, base)`` of numeric column ``key`` for an increment by ``delta``. Raises 404 for
    an unknown column, 400 ``general_argument_invalid`` for a non-numeric one or a fractional
    ``delta`` on an integer column."""
    from apps.databases.schema import KINDS

    column = next((c for c in table["columns"] if c["key"] == key), None)
    if column is None:
        raise naming.error("column", "not_found")
    base = KINDS[column["kind"]].base
    if base not in ("integer", "float") or column["array"]:
        raise AppwriteError("general_argument_invalid", f'{naming.column.capitalize()} "{key}" is not numeric.')
    if base == "integer" and isinstance(delta, float) and not delta.is_integer():
        raise AppwriteError("general_argument_invalid", "Invalid `value` param: Value must be a valid integer")
    return column, base


async def increment_in(ctx, tx, naming: Naming, table: dict, row: dict, key: str, delta: int | float,
                       bound: int | float | None) -> dict:
    """The write of :func:`row_increment` on ``row`` (locked in ``tx``), permission-checked."""
    _, base = increment_column(naming, table, key, delta)
    if not allowed(ctx.auth, table, perm_list(row), "update"):
        raise AppwriteError("user_unauthorized")
    data = data_of(row)
    value = (data.get(key) or 0) + (int(delta) if base == "integer" else delta)
    if bound is not None and (value > bound if delta > 0 else value < bound):
        raise naming.error("row", "invalid_structure",
                           f'{naming.column.capitalize()} "{key}" would pass the limit {bound}.')
    changes = validate_data(table["columns"], {key: value}, partial=True, invalid=structure_error(naming))
    return await write_row(tx, naming, row, stored_data(naming, {**data, **changes}), perm_list(row))


async def row_increment(ctx, *, naming: Naming, database: dict, table: dict, row_uid: str, key: str,
                        delta: int | float, bound: int | float | None) -> dict:
    """Add ``delta`` (negative to decrement) to numeric column ``key``; an unset value counts as 0.

    ``bound`` is the caller's ``max`` (increment) or ``min`` (decrement). Raises 404 for an
    unknown row or column, 400 ``general_argument_invalid`` for a non-numeric column or a
    non-positive value, 400 ``*_invalid_structure`` when the result passes ``bound`` or the
    column's own range, 401 ``user_unauthorized``.
    """
    increment_column(naming, table, key, delta)
    async with ctx.db.transaction() as tx:
        row = await row_for_write(tx, table=table, row_uid=row_uid)
        if row is None:
            raise naming.error("row", "not_found")
        row = await increment_in(ctx, tx, naming, table, row, key, delta, bound)
        events = await record_rows(ctx, tx, database, table, [row], "update")
    await announce_all(ctx, events)
    return row
