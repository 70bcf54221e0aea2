"""Helpers shared by the database endpoints."""

from __future__ import annotations

from apps.core.errors import AppwriteError
from apps.core.queries import parse_queries
from apps.databases.naming import Naming
from apps.databases.selectors import meta


def queries_of(ctx) -> list:
    """The parsed ``queries`` parameter (400 ``general_query_invalid`` when malformed)."""
    return parse_queries(getattr(ctx.params, "queries", None))


async def table_of(ctx, naming: Naming) -> tuple[dict, dict]:
    """``(database, table)`` named by the path, or the view's 404.

    Transactions are not implemented: a ``transactionId`` is refused (400) rather than ignored,
    so a staged write is never applied at once by surprise.
    """
    if getattr(ctx.params, "transactionId", None):
        raise AppwriteError("general_argument_invalid", "Invalid `transactionId` param: transactions are not supported.")
    return await meta.resolve(ctx, naming, ctx.params.databaseId, getattr(ctx.params, naming.table_id))


async def database_of(ctx) -> dict:
    return meta.require_database(None, await meta.database_get(ctx, database_uid=ctx.params.databaseId), ctx.auth)
