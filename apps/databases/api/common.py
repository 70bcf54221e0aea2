"""Helpers shared by the database endpoints."""

from __future__ import annotations

from apps.core.errors import AppwriteError
from apps.core.queries import parse_queries
from apps.databases.naming import Naming
from apps.databases.selectors import meta


def queries_of(ctx) -> list:
    """The parsed ``queries`` parameter (400 ``general_query_invalid`` when malformed)."""
    return parse_queries(getattr(ctx.params, "queries", None))


def _no_transaction(ctx) -> None:
    if getattr(ctx.params, "transactionId", None):
        raise AppwriteError("general_argument_invalid", "Invalid `transactionId` param: transactions are not supported.")


async def table_and_row_of(ctx, naming: Naming, row_uid: str) -> tuple[dict, dict, dict | None]:
    """``(database, table, row or None)`` in one query; the row is not permission-checked."""
    _no_transaction(ctx)
    database, table, row = await meta.table_meta_with_row(
        ctx, database_uid=ctx.params.databaseId, table_uid=getattr(ctx.params, naming.table_id), row_uid=row_uid, cached=True)
    meta.require_database(naming, database, ctx.auth)
    return database, meta.require_table(naming, table, ctx.auth), row


async def table_of(ctx, naming: Naming) -> tuple[dict, dict]:
    """``(database, table)`` named by the path, or the view's 404.

    Transactions are not implemented: a ``transactionId`` is refused (400) rather than ignored,
    so a staged write is never applied at once by surprise.
    """
    _no_transaction(ctx)
    return await meta.resolve(ctx, naming, ctx.params.databaseId, getattr(ctx.params, naming.table_id))


async def database_of(ctx) -> dict:
    return meta.require_database(None, await meta.database_get(ctx, database_uid=ctx.params.databaseId), ctx.auth)
