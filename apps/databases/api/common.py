"""Helpers shared by the database endpoints."""

from __future__ import annotations

import functools

from apps.core.domain.queries import parse_queries
from apps.core.errors import AppwriteError
from apps.databases.naming import Naming
from apps.databases.selectors import meta

_STALE_TYPES = frozenset({"column_not_found", "attribute_not_found", "index_not_found", "index_invalid"})


def _may_be_stale(err: AppwriteError) -> bool:
    """Rejections a table cached a moment before another process's schema change can cause: an
    unknown column in data, queries or a new index, a column or an index not found. (Not 401s or other
    query errors: those are the normal answers to bad requests, and rereading the table for
    each would double their cost.)"""
    return (err.type.endswith("_invalid_structure") or err.type in _STALE_TYPES
            or err.type == "general_query_invalid" and "not found in schema" in err.message)


def fresh_on_rejection(view):
    """Run ``view``; when it rejects the request (see :func:`_may_be_stale`) after using a table
    from this process's cache, drop that entry and run it once more on the database's table.

    Why: a schema change made through another process reaches this one by Redis pub/sub, which
    is asynchronous (apps.core.drivers.cache), so a client that creates a column and at once writes it
    through another process could race the invalidation. Handlers validate before they write
    (never a partial write), so a rejected attempt changed nothing and the rerun is safe. Costs
    one table read on such rejections only.
    """

    @functools.wraps(view)
    async def wrapped(ctx, *args, **kwargs):
        try:
            return await view(ctx, *args, **kwargs)
        except AppwriteError as err:
            if not _may_be_stale(err) or not meta.discard_cached(ctx):
                raise
        return await view(ctx, *args, **kwargs)

    return wrapped


def queries_of(ctx) -> list:
    """The parsed ``queries`` parameter (400 ``general_query_invalid`` when malformed)."""
    return parse_queries(getattr(ctx.params, "queries", None), extended=True)


async def table_and_row_of(ctx, naming: Naming, row_uid: str) -> tuple[dict, dict, dict | None]:
    """``(database, table, row or None)`` in one query; the row is not permission-checked."""
    database, table, row = await meta.table_meta_with_row(
        ctx, database_uid=ctx.params.databaseId, table_uid=getattr(ctx.params, naming.table_id), row_uid=row_uid, cached=True)
    meta.require_database(naming, database, ctx.auth)
    return database, meta.require_table(naming, table, ctx.auth), row


async def table_of(ctx, naming: Naming) -> tuple[dict, dict]:
    """``(database, table)`` named by the path, or the view's 404."""
    return await meta.resolve(ctx, naming, ctx.params.databaseId, getattr(ctx.params, naming.table_id))


async def database_of(ctx) -> dict:
    return meta.require_database(None, await meta.database_get(ctx, database_uid=ctx.params.databaseId), ctx.auth)
