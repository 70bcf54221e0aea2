"""Shared pieces of the Project and Webhooks services: ORM calls from the async handlers, lists
with Appwrite queries, and the project's own row.

These routes manage a project's configuration: rare writes, each a few rows. They use Django's
ORM (its models carry the constraints) through :func:`orm`, which runs the blocking call on the
shared executor under ASGI (releasing that thread's connection afterwards) and inline under WSGI,
as :mod:`apps.projects.trash` does. Lists read through the request's SQL driver with
:mod:`apps.core.domain.listing`, so their ``queries`` follow the same rules as every other list.
"""

from __future__ import annotations

from typing import Any

from apps.core.domain import listing
from apps.core.domain.queries import parse_queries
from apps.core.domain.timefmt import iso, iso_stored
from apps.core.drivers.db import as_json
from apps.core.drivers.runtime import run_blocking
from apps.core.errors import AppwriteError


async def orm(ctx, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with Django's ORM, off the event loop under ASGI."""
    close = ctx.mode == "async"

    def call():
        from django.db import connection

        try:
            return fn(*args, **kwargs)
        finally:
            if close:
                connection.close()

    return await run_blocking(ctx.mode, call)


def when(value) -> str:
    """A timestamp (ORM datetime or driver value) on the wire; ``""`` for none."""
    if value is None:
        return ""
    return iso(value) if hasattr(value, "tzinfo") else iso_stored(value)


def field(row: Any, name: str, default=None):
    """``row[name]`` of a driver row (dict) or ``row.name`` of a model instance."""
    if isinstance(row, dict):
        return row.get(name, default)
    return getattr(row, name, default)


def json_field(row: Any, name: str, default):
    value = field(row, name)
    return default if value is None else as_json(value)


def cols(alias: str, extra: dict[str, tuple[str, str]]) -> dict[str, listing.Column]:
    """Query attributes of a list: ``$id``, ``$sequence``, the two timestamps and ``extra``
    (attribute -> (column, kind))."""
    out = {
        "$id": listing.Column(f"{alias}.uid", "string"),
        "$sequence": listing.Column(f"{alias}.id", "integer"),
        "$createdAt": listing.Column(f"{alias}.created_at", "datetime"),
        "$updatedAt": listing.Column(f"{alias}.updated_at", "datetime"),
    }
    out.update({name: listing.Column(f"{alias}.{column}", kind) for name, (column, kind) in extra.items()})
    return out


async def page(ctx, *, table: str, alias: str, columns: dict, where: list[str] | None = None,
               params: list | None = None) -> tuple[int, list[dict]]:
    """``(total, rows)`` of ``table`` rows of the caller's project under ``ctx.params.queries``
    (400 ``general_query_invalid`` / ``general_cursor_not_found`` as every list)."""
    p = ctx.params
    plan = listing.plan(ctx.db, parse_queries(p.queries), columns, seq=f"{alias}.id")
    return await listing.run(ctx, source=f"{table} {alias}", where=[f"{alias}.project_id = %s", *(where or [])],
                             params=[ctx.project["id"], *(params or [])], p=plan, select=f"{alias}.*",
                             uid=f"{alias}.uid", total=p.total)


def not_found(kind: str) -> AppwriteError:
    return AppwriteError(f"{kind}_not_found")


def drop_project_cache(project_uid: str) -> None:
    """Forget this process's cached copy of the project (apps.projects.selectors): a changed
    setting is seen at once here, within ``PROJECT_CACHE_TTL`` seconds by other processes."""
    from apps.projects import selectors

    selectors._projects.pop(project_uid, None)
