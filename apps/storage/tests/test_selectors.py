"""The read rule shared with realtime (``can_read_file``, ``bucket_for_event``)."""

from __future__ import annotations

import pytest

from apps.core.http.auth import Auth, user_roles
from apps.storage.selectors import bucket_for_event, can_read_file
from apps.storage.tests.conftest import make_bucket

ALICE = Auth(kind="session", user={"uid": "alice"}, roles=user_roles("alice", verified=False, labels=[]))
GUEST = Auth()
KEY = Auth(kind="key")

CASES = [
    # (bucket permissions, fileSecurity, file permissions, auth, readable)
    (['read("any")'], False, [], GUEST, True),
    ([], False, ['read("any")'], GUEST, False),  # file permissions count only with fileSecurity
    ([], True, ['read("user:alice")'], ALICE, True),
    ([], True, ['read("user:alice")'], GUEST, False),
    (['read("users")'], True, [], ALICE, True),
    ([], False, [], KEY, True),
]


@pytest.mark.parametrize("bucket_perms,file_security,file_perms,auth,readable", CASES)
def test_can_read_file(bucket_perms, file_security, file_perms, auth, readable):
    bucket = {"permissions": bucket_perms, "file_security": file_security}
    assert can_read_file(auth, bucket, file_perms) is readable


def test_bucket_for_event(asgi_server, project, django_db_blocker):
    from apps.core.drivers.db import get_database
    from apps.core.drivers.runtime import SYNC, run_sync
    from conftest import Api

    b = make_bucket(Api(asgi_server, project), fileSecurity=True)
    with django_db_blocker.unblock():
        db = get_database(SYNC)
        row = run_sync(bucket_for_event(db, project_uid=project.id, bucket_uid=b["$id"]))
        missing = run_sync(bucket_for_event(db, project_uid=project.id, bucket_uid="nope"))
    assert row["uid"] == b["$id"] and row["file_security"] and missing is None
