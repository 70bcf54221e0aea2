"""Deleted resources wait in an internal project while the worker removes them.

Deleting a table, a database, a bucket or a user answers at once: the request moves the resource
into the project ``~trash`` and renames it ``~<internal id>``, so its ID is free again and no
request can reach it (``~`` is not a valid ID character, and
:func:`apps.projects.selectors.project_resolve` refuses ``~trash``); a task queued in the same
transaction then deletes what it held (rows, files and their bytes, sessions) in batches and
finally the resource itself. The foreign keys stay in place, so a write racing the delete still
fails cleanly (it sees the resource gone) or lands in the trash and is removed with the rest.

A migration creates the project; if it was removed since (an admin, a test database flush), the
first delete creates it again.
"""

from __future__ import annotations

from apps.core.drivers.runtime import run_blocking

TRASH_UID = "~trash"


def orm_get_or_create(model, close: bool, **lookup):
    """``model.objects.get_or_create(**lookup)`` by Django's ORM; returns the object's id.
    ``close``: release this thread's connection afterwards (an executor thread under ASGI)."""
    from django.db import connection

    try:
        defaults = lookup.pop("defaults", {})
        return model.objects.get_or_create(**lookup, defaults=defaults)[0].id
    finally:
        if close:
            connection.close()


def _create(close: bool) -> int:
    from apps.projects.models import Project

    return orm_get_or_create(Project, close, uid=TRASH_UID,
                             defaults={"name": "Deleted resources (removed by the worker)"})


async def trash_project_id(ctx) -> int:
    """The internal id of the trash project, created if missing. Call it before opening the
    transaction that moves a resource there (creating it takes Django's own connection)."""
    found = await ctx.db.fetchval("SELECT id FROM projects_project WHERE uid = %s", (TRASH_UID,))
    return found if found is not None else await run_blocking(ctx.mode, _create, ctx.mode == "async")
