"""Deleted resources wait in an internal project while the worker removes them.

Deleting a table, a database, a bucket or a user answers at once: the request moves the resource
into the project ``~trash`` (created by a migration) and renames it ``~<internal id>``, so its ID
is free again and no request can reach it (``~`` is not a valid ID character, and
:func:`apps.projects.selectors.project_resolve` refuses ``~trash``); a task queued in the same
transaction then deletes what it held (rows, files and their bytes, sessions) in batches and
finally the resource itself. The foreign keys stay in place, so a write racing the delete still
fails cleanly (it sees the resource gone) or lands in the trash and is removed with the rest.
"""

from __future__ import annotations

TRASH_UID = "~trash"
_ids: dict[str, int] = {}


async def trash_project_id(db) -> int:
    """The internal id of the trash project (looked up once per process)."""
    if "project" not in _ids:
        _ids["project"] = await db.fetchval("SELECT id FROM projects_project WHERE uid = %s", (TRASH_UID,))
    return _ids["project"]


def tombstone(internal_id: int) -> str:
    """The ID a deleted resource carries while it waits: ``~<internal id>`` (unique, unreachable)."""
    return f"~{internal_id}"
