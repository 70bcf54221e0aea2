"""Background work of the accounts app: removing what a deleted user held (queue ``deletes``).

A deleted user is moved to the trash project at once (:mod:`apps.projects.trash`), which ends
their sessions (a session is accepted only in its user's project). This task deletes the
user's sessions, tokens and MFA challenges in batches, then the user, working at most
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
_CHILDREN = ("accounts_session", "accounts_token", "accounts_challenge")


@task(queue_name="deletes", priority=-10)
def purge_user(*, user_id: int) -> None:
    """Delete a trashed user's sessions, tokens and challenges, then the user. A user who is not
    in the trash project is never touched."""
    deadline = time.monotonic() + settings.TASKS_PURGE_SECONDS
    with connection.cursor() as cur:
        cur.execute("SELECT p.uid FROM accounts_user u JOIN projects_project p ON p.id = u.project_id "
                    "WHERE u.id = %s", [user_id])
        found = cur.fetchone()
        if found is None or found[0] != TRASH_UID:
            return
        for table in _CHILDREN:
            while True:
                cur.execute(f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE user_id = %s LIMIT %s)",
                            [user_id, settings.TASKS_PURGE_BATCH])
                if cur.rowcount == 0:
                    break
                if time.monotonic() > deadline:
                    purge_user.enqueue(user_id=user_id)
                    return
        cur.execute("DELETE FROM accounts_user WHERE id = %s", [user_id])
        log.info("deleted user %s", user_id)
