"""Background work of the accounts app: removing what a deleted user held (queue ``deletes``).

A deleted user is moved to the trash project at once (:mod:`apps.projects.trash`), which ends
their sessions (a session is accepted only in its user's project) and hides their memberships.
This task deletes every row that refers to the user, in batches and whichever app owns the
table (sessions, tokens, MFA challenges, identities, memberships, audit log entries: the
tables with a foreign key to users), then the user, working at most
``TASKS_PURGE_SECONDS`` per run before it queues its continuation. Each statement commits on its
own, so a worker killed midway leaves nothing inconsistent and the recovered task goes on.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import connection
from django.tasks import task

log = logging.getLogger("apps.worker")
TRASH_UID = "~trash"


def _children() -> list[tuple[str, str]]:
    """``(table, column)`` of every table with a foreign key to users, in a stable order."""
    from apps.accounts.models import User

    return sorted({(rel.related_model._meta.db_table, rel.field.column) for rel in User._meta.related_objects})


@task(queue_name="deletes", priority=-10)
def purge_user(*, user_id: int) -> None:
    """Delete every row that refers to a trashed user, then the user. A user who is not in the
    trash project is never touched."""
    deadline = time.monotonic() + settings.TASKS_PURGE_SECONDS
    with connection.cursor() as cur:
        cur.execute("SELECT p.uid FROM accounts_user u JOIN projects_project p ON p.id = u.project_id "
                    "WHERE u.id = %s", [user_id])
        found = cur.fetchone()
        if found is None or found[0] != TRASH_UID:
            return
        for table, column in _children():
            while True:
                cur.execute(f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE {column} = %s LIMIT %s)",
                            [user_id, settings.TASKS_PURGE_BATCH])
                if cur.rowcount == 0:
                    break
                if time.monotonic() > deadline:
                    purge_user.enqueue(user_id=user_id)
                    return
        cur.execute("DELETE FROM accounts_user WHERE id = %s", [user_id])
        log.info("deleted user %s", user_id)
