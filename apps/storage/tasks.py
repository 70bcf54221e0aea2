"""Background work of the storage app: removing the files of deleted buckets (queue ``deletes``).

A deleted bucket is moved to the trash project at once (:mod:`apps.projects.trash`); this task
removes its files in batches: first each file's bytes on the storage backend (whatever is under
its key, finished or not, and the part files of unfinished uploads), then the chunk, file token and file rows, and finally the bucket. Deleting bytes
before rows means a worker killed midway leaves rows whose bytes may be gone, never bytes without
a row: the recovered task deletes them again (a missing object is not an error) and goes on.
Runs for at most ``TASKS_PURGE_SECONDS``, then queues its continuation.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import connection
from django.tasks import task

log = logging.getLogger("apps.worker")
TRASH_UID = "~trash"


@task(queue_name="deletes", priority=-10)
def purge_bucket(*, bucket_id: int) -> None:
    """Delete the files (bytes, then rows) of a trashed bucket, then the bucket. A bucket that is
    not in the trash project is never touched."""
    from apps.storage import backends
    from apps.storage.services.uploads import remove_parts

    deadline = time.monotonic() + settings.TASKS_PURGE_SECONDS
    batch = min(settings.TASKS_PURGE_BATCH, 500)  # one backend call per file
    with connection.cursor() as cur:
        cur.execute("SELECT p.uid FROM storage_bucket b JOIN projects_project p ON p.id = b.project_id "
                    "WHERE b.id = %s", [bucket_id])
        found = cur.fetchone()
        if found is None or found[0] != TRASH_UID:
            return
        while True:
            cur.execute("SELECT id, key FROM storage_file WHERE bucket_id = %s ORDER BY id LIMIT %s",
                        [bucket_id, batch])
            files = cur.fetchall()
            if not files:
                cur.execute("DELETE FROM storage_bucket WHERE id = %s", [bucket_id])
                log.info("deleted bucket %s and its files", bucket_id)
                return
            for file_id, key in files:
                if key:  # an unfinished upload may have stored (part of) its bytes there too
                    backends.delete(key)
                remove_parts(file_id)
            ids = [f[0] for f in files]
            marks = ", ".join(["%s"] * len(ids))
            cur.execute(f"DELETE FROM storage_chunk WHERE file_id IN ({marks})", ids)
            cur.execute(f"DELETE FROM storage_file_token WHERE file_id IN ({marks})", ids)
            cur.execute(f"DELETE FROM storage_file WHERE id IN ({marks})", ids)
            if time.monotonic() > deadline:
                break
    purge_bucket.enqueue(bucket_id=bucket_id)
