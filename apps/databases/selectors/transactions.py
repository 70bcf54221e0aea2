"""Reads of database transactions: the caller's transactions, filtered by queries."""

from __future__ import annotations

from apps.core.domain.queries import Query
from apps.databases import querying as qp
from apps.databases.selectors.meta import run_plan

_FIELDS = {
    "$id": qp.Field("r.uid", "string"),
    "$createdAt": qp.Field("r.created_at", "ts"),
    "$updatedAt": qp.Field("r.updated_at", "ts"),
    "status": qp.Field("r.status", "string"),
    "operations": qp.Field("r.operations", "integer"),
    "expiresAt": qp.Field("r.expires_at", "ts"),
}
_COLS = "r.id, r.uid, r.owner, r.status, r.operations, r.expires_at, r.created_at, r.updated_at"


async def transaction_list(ctx, *, queries: list[Query]) -> tuple[int, list[dict]]:
    """``(total, transactions)`` the caller may see: all of the project's for an API key, its
    own for a user (none for a guest). Queries: filters and orders on ``$id``, ``$createdAt``,
    ``$updatedAt``, ``status``, ``operations``, ``expiresAt``; ``limit``, ``offset``, cursors.
    Raises 400 ``general_query_invalid``."""
    where, params = ["r.project_id = %s"], [ctx.project["id"]]
    if not ctx.auth.is_key:
        where.append("r.owner = %s AND r.owner <> ''")
        params.append(ctx.auth.user_id)
    listing = qp.Listing("databases_transaction r", where, params, _FIELDS.get)
    p = qp.plan(ctx.db, listing, queries, allow_select=False)
    return await run_plan(ctx, listing, p, _COLS, True)
