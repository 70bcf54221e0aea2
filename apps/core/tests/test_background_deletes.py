"""Deleting a table, a database, a bucket or a user answers at once; a worker process removes
the rows, files and sessions afterwards, in batches, and a worker killed in the middle leaves
nothing behind once another one has run."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import Api
from tests.mail import start_worker, wait_until


def _env(live_env, **extra) -> dict[str, str]:
    return {**live_env, "TASKS_POLL_INTERVAL": "0.1", "TASKS_HEARTBEAT": "0.5", "TASKS_WORKER_TIMEOUT": "2",
            **{k: str(v) for k, v in extra.items()}}


def _table_with_rows(api: Api, sql, rows: int) -> tuple[str, int]:
    db = f"db{time.monotonic_ns() % 10**9}"
    assert api.call("POST", "/tablesdb", json={"databaseId": db, "name": "d"}, key=True).status_code == 201
    r = api.call("POST", f"/tablesdb/{db}/tables", json={"tableId": "notes", "name": "n",
                                                          "permissions": ['read("any")']}, key=True)
    assert r.status_code == 201, r.text
    api.call("POST", f"/tablesdb/{db}/tables/notes/columns/string", key=True,
             json={"key": "title", "size": 64, "required": False})
    idx = api.call("POST", f"/tablesdb/{db}/tables/notes/indexes", key=True,
                   json={"key": "by_title", "type": "unique", "columns": ["title"]})
    assert idx.status_code == 202, idx.text
    table_id = sql("SELECT t.id FROM databases_table t JOIN databases_database d ON d.id = t.database_id "
                   "WHERE d.uid = %s AND d.project_id = %s", (db, api.project.pk))[0][0]
    sql("INSERT INTO databases_row (uid, data, permissions, read_roles, created_at, updated_at, table_id) "
        "SELECT 'r' || g, jsonb_build_object('title', 't' || g), '[]', ARRAY['any'], now(), now(), %s "
        "FROM generate_series(1, %s) g", (table_id, rows))
    return db, table_id


def _rows(sql, table_id: int) -> int:
    return sql("SELECT count(*) FROM databases_row WHERE table_id = %s", (table_id,))[0][0]


def _pending(sql, task: str) -> int:
    return sql("SELECT count(*) FROM django_tasks_database_dbtaskresult WHERE task_path = %s "
               "AND status IN ('READY', 'RUNNING')", (task,))[0][0]


PURGE_TABLES = "apps.databases.tasks.purge_tables"


def test_table_delete_answers_at_once_and_the_worker_removes_rows(api: Api, sql, live_env, tmp_path):
    db, table_id = _table_with_rows(api, sql, 5000)
    index_pk = sql("SELECT id FROM databases_index WHERE table_id = %s", (table_id,))[0][0]
    from apps.databases.services.ddl import index_name

    assert sql("SELECT count(*) FROM pg_indexes WHERE indexname = %s", (index_name(table_id, index_pk),)) == [(1,)]
    started = time.monotonic()
    r = api.call("DELETE", f"/tablesdb/{db}/tables/notes", key=True)
    assert r.status_code == 204, r.text
    assert time.monotonic() - started < 5  # no row was deleted by the request
    assert _rows(sql, table_id) == 5000
    assert api.call("GET", f"/tablesdb/{db}/tables/notes", key=True).json()["type"] == "table_not_found"
    listing = api.call("GET", f"/tablesdb/{db}/tables", key=True).json()
    assert listing["total"] == 0
    # The unique index is gone with the table: a new table's rows never clash with the old ones.
    assert sql("SELECT count(*) FROM pg_indexes WHERE indexname = %s", (index_name(table_id, index_pk),)) == [(0,)]
    # The ID is free at once, and the new table is empty.
    again = api.call("POST", f"/tablesdb/{db}/tables", json={"tableId": "notes", "name": "n"}, key=True)
    assert again.status_code == 201
    assert api.call("GET", f"/tablesdb/{db}/tables/notes/rows", key=True).json()["total"] == 0
    worker = start_worker(_env(live_env, TASKS_PURGE_BATCH=700, TASKS_PURGE_SECONDS=0.05),
                          tmp_path / "w.log", "--queues", "deletes")
    try:
        wait_until(lambda: _rows(sql, table_id) == 0 and _pending(sql, PURGE_TABLES) == 0, what="rows purged")
    finally:
        worker.stop()
    assert sql("SELECT count(*) FROM databases_table WHERE id = %s", (table_id,)) == [(0,)]
    assert sql("SELECT count(*) FROM databases_column WHERE table_id = %s", (table_id,)) == [(0,)]
    assert "deleted table" in (tmp_path / "w.log").read_text()


@pytest.mark.faults
def test_worker_killed_midway_leaves_nothing_behind(api: Api, sql, live_env, tmp_path):
    db, table_id = _table_with_rows(api, sql, 30000)
    assert api.call("DELETE", f"/tablesdb/{db}", key=True).status_code == 204
    assert api.call("GET", f"/tablesdb/{db}", key=True).json()["type"] == "database_not_found"
    env = _env(live_env, TASKS_PURGE_BATCH=50, TASKS_PURGE_SECONDS=120)
    first = start_worker(env, tmp_path / "first.log", "--queues", "deletes")
    wait_until(lambda: _rows(sql, table_id) < 29000, what="the purge to start")
    first.kill()
    left = _rows(sql, table_id)
    assert 0 < left < 30000, "the worker was not killed in the middle of the purge"
    time.sleep(2.5)  # longer than TASKS_WORKER_TIMEOUT: the dead worker's heartbeat is stale
    second = start_worker(env, tmp_path / "second.log", "--queues", "deletes")
    try:
        wait_until(lambda: _rows(sql, table_id) == 0 and _pending(sql, PURGE_TABLES) == 0, timeout=120,
              what="the rest purged")
    finally:
        second.stop()
    assert sql("SELECT count(*) FROM databases_table WHERE id = %s", (table_id,)) == [(0,)]
    assert "queued again" in (tmp_path / "second.log").read_text()


def test_bucket_delete_removes_files_and_bytes_later(api: Api, sql, live_env, tmp_path):
    bucket = f"b{time.monotonic_ns() % 10**9}"
    assert api.call("POST", "/storage/buckets", json={"bucketId": bucket, "name": "b"}, key=True).status_code == 201
    for i in range(3):
        up = api.call("POST", f"/storage/buckets/{bucket}/files", key=True, data={"fileId": f"f{i}"},
                      files={"file": (f"f{i}.txt", b"hello %d" % i, "text/plain")})
        assert up.status_code == 201, up.text
        # File tokens go with their files (their rows name the file and the bucket).
        for _ in range(i):
            assert api.call("POST", f"/tokens/buckets/{bucket}/files/f{i}", json={}, key=True).status_code == 201
    keys = [k for (k,) in sql("SELECT f.key FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
                              "WHERE b.uid = %s AND b.project_id = %s", (bucket, api.project.pk))]
    root = Path(live_env["STORAGE_ROOT"])
    assert all((root / k).exists() for k in keys)
    bucket_pk = sql("SELECT id FROM storage_bucket WHERE uid = %s AND project_id = %s", (bucket, api.project.pk))[0][0]
    assert sql("SELECT count(*) FROM storage_file_token WHERE bucket_id = %s", (bucket_pk,)) == [(3,)]
    assert api.call("DELETE", f"/storage/buckets/{bucket}", key=True).status_code == 204
    assert api.call("GET", f"/storage/buckets/{bucket}", key=True).json()["type"] == "storage_bucket_not_found"
    assert api.call("GET", f"/storage/buckets/{bucket}/files/f0/download", key=True).status_code == 404
    assert api.call("POST", "/storage/buckets", json={"bucketId": bucket, "name": "b"}, key=True).status_code == 201
    worker = start_worker(_env(live_env), tmp_path / "w.log", "--queues", "deletes")
    try:
        wait_until(lambda: not sql("SELECT 1 FROM storage_bucket WHERE id = %s", (bucket_pk,)), what="bucket purged")
    finally:
        worker.stop()
    assert sql("SELECT count(*) FROM storage_file WHERE bucket_id = %s", (bucket_pk,)) == [(0,)]
    assert sql("SELECT count(*) FROM storage_file_token WHERE bucket_id = %s", (bucket_pk,)) == [(0,)]
    assert not any((root / k).exists() for k in keys)


def test_user_delete_ends_sessions_at_once_and_frees_the_email(api: Api, sql, live_env, tmp_path,
                                                              django_db_blocker):
    from apps.accounts.selectors import accounts as selectors
    from apps.accounts.services import accounts as services
    from apps.core.drivers.db import get_database
    from apps.core.drivers.kv import get_kv
    from apps.core.drivers.runtime import run_sync

    user, token = api.signup(email=f"gone{time.monotonic_ns()}@example.com")
    for _ in range(3):
        api.call("POST", "/account/sessions/email", json={"email": user["email"], "password": "password123"},
                 key=True)
    with django_db_blocker.unblock():
        ctx = SimpleNamespace(db=get_database("sync"), kv=get_kv("sync"), mode="sync",
                              project={"id": api.project.pk})
        row = run_sync(selectors.user_get_by_uid(ctx, project_id=api.project.pk, user_uid=user["$id"]))
        run_sync(services.user_delete(ctx, user=row))
    assert api.call("GET", "/account", session=token).status_code == 401
    again, _ = api.signup(email=user["email"])  # the email (and the ID) are free again
    assert again["$id"] != user["$id"]
    worker = start_worker(_env(live_env, TASKS_PURGE_BATCH=1), tmp_path / "w.log", "--queues", "deletes")
    try:
        wait_until(lambda: not sql("SELECT 1 FROM accounts_user WHERE id = %s", (row["id"],)), what="user purged")
    finally:
        worker.stop()
    assert sql("SELECT count(*) FROM accounts_session WHERE user_id = %s", (row["id"],)) == [(0,)]


@pytest.mark.parametrize("uid", ["~trash", "~1"])
def test_the_trash_cannot_be_reached(api: Api, uid):
    r = api.http.get(api.server.endpoint + "/account", headers={"X-Appwrite-Project": uid})
    assert r.status_code == 404 and r.json()["type"] == "project_not_found"


def test_embedded_default_recreates_a_missing_trash_and_purges_in_process(tmp_path):
    """SQLite, no worker process: the server's worker thread purges; a trash project removed
    behind the server's back (e.g. in the admin) is created again by the next delete."""
    import os
    import sqlite3
    import subprocess
    import sys

    from conftest import ROOT, ProjectInfo, start_server

    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    path = tmp_path / "db.sqlite3"
    env.update(SQLITE_PATH=str(path), PYTHONUNBUFFERED="1", TASKS_POLL_INTERVAL="0.2")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=180)
    subprocess.run([*manage, "createproject", "trashy"], cwd=ROOT, env=env, check=True, capture_output=True)
    key = subprocess.run([*manage, "createapikey", "trashy", "--all-scopes"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM databases_database WHERE uid = '~trash'")
        conn.execute("DELETE FROM projects_project WHERE uid = '~trash'")
    server = start_server("asgi", env)
    try:
        api = Api(server, ProjectInfo(id="trashy", key=key, pk=0))
        assert api.call("POST", "/tablesdb", json={"databaseId": "d", "name": "d"}, key=True).status_code == 201
        assert api.call("POST", "/tablesdb/d/tables", json={"tableId": "t", "name": "t"}, key=True).status_code == 201
        assert api.call("POST", "/tablesdb/d/tables/t/columns/string", json={"key": "x", "size": 8, "required": False},
                        key=True).status_code == 202
        for i in range(5):
            r = api.call("POST", "/tablesdb/d/tables/t/rows", json={"rowId": f"r{i}", "data": {"x": "y"}}, key=True)
            assert r.status_code == 201, r.text
        assert api.call("DELETE", "/tablesdb/d/tables/t", key=True).status_code == 204
        assert api.call("GET", "/tablesdb/d/tables/t", key=True).status_code == 404

        def rows_left() -> int:
            with sqlite3.connect(path) as conn:
                return conn.execute("SELECT count(*) FROM databases_row").fetchone()[0]

        wait_until(lambda: rows_left() == 0, what="the in-process worker to purge the rows")
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT count(*) FROM projects_project WHERE uid = '~trash'").fetchone()[0] == 1
            assert conn.execute("SELECT count(*) FROM databases_table").fetchone()[0] == 0
    finally:
        server.stop()
