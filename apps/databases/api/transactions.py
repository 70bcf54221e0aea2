"""Transaction endpoints (Appwrite 1.8): ``/tablesdb/transactions`` and the legacy
``/databases/transactions``: create, list, get, commit or roll back, delete, and stage a batch
of operations."""

from __future__ import annotations

from apps.core.errors import AppwriteError
from apps.core.http.context import json_response, no_content
from apps.databases.api.common import queries_of
from apps.databases.naming import Naming
from apps.databases.responses import transaction_model
from apps.databases.selectors import transactions as selectors
from apps.databases.services import transactions as svc
from apps.databases.services.commit import transaction_commit
from apps.databases.services.staging import stage_operations


async def transaction_create(ctx, naming: Naming):
    return json_response(transaction_model(await svc.transaction_create(ctx, ttl=ctx.params.ttl)), 201)


async def transaction_list(ctx, naming: Naming):
    total, items = await selectors.transaction_list(ctx, queries=queries_of(ctx))
    return json_response({"total": total, "transactions": [transaction_model(t) for t in items]})


async def transaction_get(ctx, naming: Naming):
    return json_response(transaction_model(await svc.transaction_get(ctx, uid=ctx.params.transactionId)))


async def transaction_update(ctx, naming: Naming):
    """PATCH: ``commit: true`` applies the staged operations, ``rollback: true`` discards them.
    Neither or both: 400 ``general_bad_request`` (Appwrite's messages)."""
    p = ctx.params
    if not p.commit and not p.rollback:
        raise AppwriteError("general_bad_request", "Either commit or rollback must be true")
    if p.commit and p.rollback:
        raise AppwriteError("general_bad_request", "Cannot commit and rollback at the same time")
    if p.commit:
        txn = await transaction_commit(ctx, naming=naming, uid=p.transactionId)
    else:
        txn = await svc.transaction_rollback(ctx, uid=p.transactionId)
    return json_response(transaction_model(txn))


async def transaction_delete(ctx, naming: Naming):
    await svc.transaction_delete(ctx, uid=ctx.params.transactionId)
    return no_content()


async def operations_create(ctx, naming: Naming):
    txn = await stage_operations(ctx, naming=naming, uid=ctx.params.transactionId, operations=ctx.params.operations)
    return json_response(transaction_model(txn), 201)
