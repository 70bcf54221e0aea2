"""The logs of providers, topics, subscribers and messages: Appwrite's ``listProviderLogs``,
``listTopicLogs``, ``listSubscriberLogs`` and ``listMessageLogs`` (``logList`` from the audit
log, by resource ``provider/<id>``..., newest first; ``queries`` takes only ``limit`` and
``offset``). The resource must exist (404 ``provider_not_found``...); the entries of a deleted
one stay in the audit log."""

from __future__ import annotations

from apps.audit.responses import log_model
from apps.audit.selectors import log_list, page_of
from apps.core.errors import AppwriteError
from apps.core.http.context import json_response

_TABLES = {"provider": "messaging_provider", "topic": "messaging_topic", "subscriber": "messaging_subscriber",
           "message": "messaging_message"}


def logs_of(resource: str):
    """The handler of ``/messaging/<resource>s/{<resource>Id}/logs``."""
    table = _TABLES[resource]

    async def handler(ctx):
        uid = getattr(ctx.params, f"{resource}Id")
        limit, offset = page_of(ctx.params.queries)
        found = await ctx.db.fetchval(f"SELECT id FROM {table} WHERE project_id = %s AND uid = %s",
                                      (ctx.project["id"], uid))
        if found is None:
            raise AppwriteError(f"{resource}_not_found")
        total, rows = await log_list(ctx, resource=f"{resource}/{uid}", limit=limit, offset=offset,
                                     total=ctx.params.total)
        return json_response({"total": total, "logs": [log_model(r) for r in rows]})

    handler.__name__ = f"{resource}_logs"
    return handler
