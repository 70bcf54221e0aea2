"""Background work of the databases app: removing the rows of deleted tables (queue ``deletes``).

A deleted table is moved to the trash database at once (:mod:`apps.projects.trash`); this task
deletes its rows in batches of ``TASKS_PURGE_BATCH``, then the table itself (its columns and
indexes go with it). It works for at most ``TASKS_PURGE_SECONDS`` per run and then queues its
own continuation, so mail is never stuck behind a big delete. Every step is one statement that
commits on its own: a worker killed midway leaves a consistent state, and the recovered task
continues where the last committed batch ended.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import connection
from django.tasks import task

log = logging.getLogger("apps.worker")
TRASH_UID = "~trash"


def _trash_database_id(cur) -> int | None:
    cur.execute("SELECT d.id FROM databases_database d JOIN projects_project p ON p.id = d.project_id "
                "WHERE p.uid = %s AND d.uid = %s", [TRASH_UID, TRASH_UID])
    found = cur.fetchone()
    return found[0] if found else None


@task(queue_name="deletes", priority=-10)
def purge_tables(*, table_ids: list[int]) -> None:
    """Delete the rows, then the table rows, of these (trashed) tables. Tables that are not in
    the trash database are never touched."""
    deadline = time.monotonic() + settings.TASKS_PURGE_SECONDS
    remaining = list(table_ids)
    with connection.cursor() as cur:
        trash = _trash_database_id(cur)
        if trash is None:  # no trash database: none of these tables can have been moved there
            return
        while remaining:
            table_id = remaining[0]
            cur.execute("SELECT database_id FROM databases_table WHERE id = %s", [table_id])
            found = cur.fetchone()
            if found is None or found[0] != trash:
                remaining.pop(0)  # already gone, or never deleted: nothing to do
                continue
            cur.execute("DELETE FROM databases_row WHERE id IN "
                        "(SELECT id FROM databases_row WHERE table_id = %s LIMIT %s)",
                        [table_id, settings.TASKS_PURGE_BATCH])
            if cur.rowcount == 0:
                cur.execute("DELETE FROM databases_table WHERE id = %s AND database_id = %s", [table_id, trash])
                log.info("deleted table %s and its rows", table_id)
                remaining.pop(0)
            elif time.monotonic() > deadline:
                break
    if remaining:
        purge_tables.enqueue(table_ids=remaining)
