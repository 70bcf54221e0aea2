"""Unfinished uploads left by a writer that is gone: a retry with the same file ID replaces or
resumes them at once, a live writer's upload is not touched, and ``cleanupuploads`` deletes the
bytes no file row names. The crash itself is simulated by setting the row as a killed process
leaves it (``test_crash.py`` kills real servers)."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from apps.storage.tests.conftest import CHUNK, make_bucket, new_id, upload, upload_chunk

DAY = 86400


def _dead_owner() -> str:
    """The owner string of a process that has exited (same machine and PID namespace)."""
    from apps.storage import leases

    proc = subprocess.Popen(["sleep", "30"])
    try:
        process, _ = leases._process(proc.pid)
    finally:
        proc.kill()
        proc.wait()
    return f"{process}:0dead0"


def _live_owner() -> str:
    from apps.storage import leases

    return leases.new_owner()  # this test process: alive


FOREIGN = "another-boot/pid:[1]/7/7:0f0f0f"  # a process this machine cannot inspect


def _row(sql, bucket_id: str, file_id: str) -> tuple:
    return sql("SELECT f.id, f.key, f.status FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
               "WHERE b.uid = %s AND f.uid = %s", (bucket_id, file_id))[0]


def _leave_unfinished(sql, pk: int, status: str, owner: str, expires_in: float | None, idle: float = 0) -> None:
    """Set file row ``pk`` as a writer killed midway leaves it."""
    now = dt.datetime.now(dt.UTC)
    expires = None if expires_in is None else now + dt.timedelta(seconds=expires_in)
    sql("UPDATE storage_file SET status = %s, lease_owner = %s, lease_expires = %s, chunks_uploaded = 0, "
        "updated_at = %s WHERE id = %s", (status, owner, expires, now - dt.timedelta(seconds=idle), pk))


REPLACE_CASES = [
    # (name, status, owner, lease seconds left, answer to a single-request retry)
    ("writer killed", "assembling", _dead_owner, 3600, 201),
    ("writer alive", "assembling", _live_owner, 3600, 409),
    ("writer elsewhere, lease current", "assembling", lambda: FOREIGN, 3600, 409),
    ("writer elsewhere, lease lapsed", "assembling", lambda: FOREIGN, -1, 201),
    ("chunked upload left pending", "pending", lambda: "", None, 201),
]


@pytest.mark.parametrize("name,status,owner,expires_in,answer", REPLACE_CASES, ids=[c[0] for c in REPLACE_CASES])
def test_single_upload_over_an_unfinished_one(api, sql, live_env, name, status, owner, expires_in, answer):
    """A retry of an upload whose writer is gone replaces it (and deletes the bytes it stored);
    one whose writer may still finish is 409 ``storage_file_already_exists``."""
    b = make_bucket(api)
    fid = new_id("u")
    assert upload(api, b["$id"], b"old bytes", file_id=fid).status_code == 201
    pk, old_key, _ = _row(sql, b["$id"], fid)
    _leave_unfinished(sql, pk, status, owner(), expires_in)
    r = upload(api, b["$id"], b"new bytes!", file_id=fid)
    assert r.status_code == answer, r.text
    got = api.call("GET", f"/storage/buckets/{b['$id']}/files/{fid}/download", key=True)
    old_path = Path(live_env["STORAGE_ROOT"], old_key)
    if answer == 201:
        assert got.status_code == 200 and got.content == b"new bytes!"
        assert _row(sql, b["$id"], fid)[0] == pk and not old_path.exists()
    else:
        assert r.json()["type"] == "storage_file_already_exists"
        assert got.status_code == 404 and old_path.exists()


def test_a_chunk_resent_after_the_assembler_died_finishes_the_upload(api, sql):
    """The assembler was killed (row ``assembling``, its process gone): re-sending a chunk
    resumes at once instead of waiting for it."""
    data = os.urandom(CHUNK + 1000)
    b = make_bucket(api)
    fid = new_id("r")
    assert upload_chunk(api, b["$id"], data, 0, "r.bin", fid).status_code == 201
    pk, _, _ = _row(sql, b["$id"], fid)
    _leave_unfinished(sql, pk, "assembling", _dead_owner(), 3600)
    started = time.monotonic()
    r = upload_chunk(api, b["$id"], data, 1, "r.bin", fid, upload_id=fid)
    assert r.status_code == 201 and r.json()["chunksUploaded"] == 2, r.text
    assert time.monotonic() - started < 10
    got = api.call("GET", f"/storage/buckets/{b['$id']}/files/{fid}/download", key=True)
    assert got.status_code == 200 and got.content == data


def _cleanup(env: dict, *args: str) -> str:
    out = subprocess.run([sys.executable, "manage.py", "cleanupuploads", *args], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    return out.stdout


def test_cleanupuploads_deletes_bytes_no_row_names(api, sql, live_env):
    """Stored files no row names (older than the expiry) and the bytes of an abandoned upload
    whose writer died are deleted; a ready file and a fresh stray file are kept."""
    b = make_bucket(api)
    kept, dead = new_id("k"), new_id("d")
    assert upload(api, b["$id"], b"kept", file_id=kept).status_code == 201
    assert upload(api, b["$id"], b"dead", file_id=dead).status_code == 201
    _, kept_key, _ = _row(sql, b["$id"], kept)
    pk, dead_key, _ = _row(sql, b["$id"], dead)
    _leave_unfinished(sql, pk, "assembling", _dead_owner(), 3600, idle=2 * DAY)
    root = Path(live_env["STORAGE_ROOT"])
    old_stray, new_stray = root / kept_key.rsplit("/", 2)[0] / "zz" / "old", root / kept_key.rsplit("/", 2)[0] / "zz" / "new"
    old_stray.parent.mkdir(parents=True, exist_ok=True)
    old_stray.write_bytes(b"left by a crash")
    new_stray.write_bytes(b"being written?")
    past = time.time() - 2 * DAY
    for path in (old_stray, root / kept_key, root / dead_key):
        os.utime(path, (past, past))
    out = _cleanup(live_env)
    assert "removed 1 abandoned upload(s)" in out, out
    assert not old_stray.exists() and not (root / dead_key).exists()
    assert new_stray.exists() and (root / kept_key).exists()
    assert sql("SELECT COUNT(*) FROM storage_file WHERE id = %s", (pk,)) == [(0,)]
    got = api.call("GET", f"/storage/buckets/{b['$id']}/files/{kept}/download", key=True)
    assert got.status_code == 200 and got.content == b"kept"
    new_stray.unlink()
