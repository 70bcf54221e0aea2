"""An upload is finished or absent after a crash: ``kill -9`` of the whole server (uvicorn, or
gunicorn's master and workers) at a random moment of single-request and chunked uploads, on
both builds, each server process started by the test on a STORAGE_ROOT of its own.

After every kill the server is started again and each upload of that round either downloads
with its exact bytes (sha256), or a retry with the same file ID succeeds (a single request is
sent again; a chunked upload resumes from the metadata's ``chunksUploaded``, as the SDKs do)
and then downloads with its exact bytes. Every retry request is bounded (:data:`RETRY_TIMEOUT`),
far below the old 300 s wait for a dead assembler. Finally ``manage.py cleanupuploads`` leaves
exactly the bytes of the ready files on disk: no part directory, no half-written object.

The schedule is seeded (:data:`SEED`); the kill delays are random within bounds, so which step a
kill lands in varies with the machine, but every outcome must satisfy the same rule.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from apps.storage.tests.conftest import CHUNK, make_bucket
from conftest import SERVER_COMMANDS, Api, free_port, start_server

SEED = 20261201
ROUNDS = 10  # kills per build
RETRY_TIMEOUT = 20.0  # seconds per retry request
KILL_DELAY = 0.3  # seconds: the latest kill into an upload round
ASSEMBLY_KILL_DELAY = 0.015  # seconds: the latest kill after an assembly began


@dataclass
class Upload:
    file_id: str
    data: bytes
    chunked: bool
    replies: list[int] = field(default_factory=list)

    @property
    def chunks(self) -> int:
        return -(-len(self.data) // CHUNK)


def _post(api: Api, bucket_id: str, up: Upload, index: int | None, timeout: float) -> requests.Response:
    """One request of ``up``: the whole file (``index`` None) or chunk ``index`` with the SDKs'
    ``Content-Range`` and ``x-appwrite-id`` headers."""
    headers = {}
    body = up.data
    if index is not None:
        start, end = index * CHUNK, min((index + 1) * CHUNK, len(up.data))
        body = up.data[start:end]
        headers = {"Content-Range": f"bytes {start}-{end - 1}/{len(up.data)}", "x-appwrite-id": up.file_id}
    return api.call("POST", f"/storage/buckets/{bucket_id}/files", data={"fileId": up.file_id},
                    files={"file": ("crash.bin", io.BytesIO(body))}, key=True, headers=headers, timeout=timeout)


def _send(api: Api, bucket_id: str, up: Upload, indexes: list[int | None]) -> None:
    """Send requests of ``up`` in order until the server goes away (runs in a thread)."""
    for index in indexes:
        try:
            up.replies.append(_post(api, bucket_id, up, index, RETRY_TIMEOUT).status_code)
        except requests.RequestException:
            return


def _descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *_descendants(child)]
    return found


def _crash(server) -> None:
    """SIGKILL the server process and every process under it, as a power cut or the OOM killer
    would (gunicorn's workers included: killing only the master leaves them serving)."""
    pids = [server.proc.pid, *_descendants(server.proc.pid)]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    server.proc.wait(10)
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in pids[1:]):
        assert time.monotonic() < deadline, "server processes survived SIGKILL"
        time.sleep(0.02)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def _download(api: Api, bucket_id: str, up: Upload) -> requests.Response:
    return api.call("GET", f"/storage/buckets/{bucket_id}/files/{up.file_id}/download", key=True,
                    timeout=RETRY_TIMEOUT)


def _settle(api: Api, bucket_id: str, up: Upload) -> str:
    """Check ``up`` after a restart; retry it when it is absent. Returns ``kept`` or ``retried``."""
    want = hashlib.sha256(up.data).hexdigest()
    got = _download(api, bucket_id, up)
    if got.status_code == 200:
        assert hashlib.sha256(got.content).hexdigest() == want, f"{up.file_id}: wrong bytes after a crash"
        return "kept"
    assert got.status_code == 404, got.text
    started = time.monotonic()
    if up.chunked:
        meta = api.call("GET", f"/storage/buckets/{bucket_id}/files/{up.file_id}", key=True, timeout=RETRY_TIMEOUT)
        first = meta.json()["chunksUploaded"] if meta.status_code == 200 else 0
        assert first < up.chunks, meta.text  # the SDK would send nothing and call it done
        for index in range(first, up.chunks):
            r = _post(api, bucket_id, up, index, RETRY_TIMEOUT)
            assert r.status_code == 201, f"{up.file_id} chunk {index}: {r.status_code} {r.text}"
        assert r.json()["chunksUploaded"] == up.chunks, r.text
    else:
        r = _post(api, bucket_id, up, None, RETRY_TIMEOUT)
        assert r.status_code == 201, f"{up.file_id}: retry answered {r.status_code} {r.text}"
    assert time.monotonic() - started < 2 * RETRY_TIMEOUT
    got = _download(api, bucket_id, up)
    assert got.status_code == 200, got.text
    assert hashlib.sha256(got.content).hexdigest() == want, f"{up.file_id}: wrong bytes after the retry"
    return "retried"


def _round(api: Api, bucket_id: str, rng: random.Random, n: int, kind: str, status) -> tuple[list[Upload], str]:
    """Start a single-request upload, a chunked upload, and the last chunk of another chunked
    upload (whose first chunk is in: it assembles), then kill the server: in even rounds after a
    random delay of up to :data:`KILL_DELAY`, in odd rounds as soon as ``status()`` (of the
    last upload) says ``assembling``, plus up to :data:`ASSEMBLY_KILL_DELAY`. Returns the uploads
    and when the kill came (``<ms> ms`` or ``assembly+<ms> ms``)."""
    single = Upload(f"s{n}-{kind}", rng.randbytes(rng.randint(1, 2 * 1024 * 1024)), chunked=False)
    chunked = Upload(f"c{n}-{kind}", rng.randbytes(CHUNK + rng.randint(1, CHUNK)), chunked=True)
    last = Upload(f"a{n}-{kind}", rng.randbytes(CHUNK + rng.randint(1, CHUNK)), chunked=True)
    assert _post(api, bucket_id, last, 0, RETRY_TIMEOUT).status_code == 201
    plans = [(single, [None]), (chunked, list(range(chunked.chunks))), (last, [1])]
    threads = [threading.Thread(target=_send, args=(api, bucket_id, up, idx)) for up, idx in plans]
    during_assembly = n % 2 == 1
    delay = rng.uniform(0, ASSEMBLY_KILL_DELAY if during_assembly else KILL_DELAY)
    for t in threads:
        t.start()
    when = f"{delay * 1000:.0f} ms"
    if during_assembly:
        deadline = time.monotonic() + RETRY_TIMEOUT
        while status(last.file_id) == "pending" and time.monotonic() < deadline:
            time.sleep(0.002)
        when = f"assembly+{when}"
    time.sleep(delay)
    _crash(api.server)
    for t in threads:
        t.join(RETRY_TIMEOUT + 5)
    return [single, chunked, last], when


def _start(kind: str, env: dict):
    """A server of ``kind``; gunicorn with one worker (a crash kills master and worker alike,
    and one worker starts in half the CPU time on a shared machine)."""
    if kind == "asgi":
        return start_server(kind, env)
    port = free_port()
    return start_server(kind, env, port, [*SERVER_COMMANDS[kind](port), "--workers", "1"])


def _files_under(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_kill_9_leaves_every_upload_finished_or_retryable(kind, live_env, project, sql, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"crash-{kind}")
    # No opportunistic cleanup: the final one runs on purpose, after the last restart.
    env = {**live_env, "STORAGE_ROOT": str(root), "STORAGE_CLEANUP_INTERVAL": "0"}
    rng = random.Random(f"{SEED}-{kind}")
    outcomes = []
    # The process that replaces a killed server starts while the round before the kill runs
    # (a restart that was already under way): the test waits for one start per round, not two.
    with ThreadPoolExecutor(1) as starter:
        server = _start(kind, env)
        standby = starter.submit(_start, kind, env)
        try:
            bucket_id = make_bucket(Api(server, project), maximumFileSize=50_000_000)["$id"]

            def status(file_id: str) -> str:
                found = sql("SELECT f.status FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
                            "WHERE b.uid = %s AND f.uid = %s", (bucket_id, file_id))
                return found[0][0] if found else "absent"

            for n in range(ROUNDS):
                uploads, when = _round(Api(server, project), bucket_id, rng, n, kind, status)
                server = standby.result()
                standby = starter.submit(_start, kind, env) if n + 1 < ROUNDS else None
                api = Api(server, project)
                for up in uploads:
                    left = status(up.file_id)
                    outcomes.append((up.file_id, when, up.replies, left, _settle(api, bucket_id, up)))
        finally:
            server.stop()
            if standby is not None:
                standby.result().stop()
    print(*outcomes, sep="\n")
    left = [o[3] for o in outcomes]
    print({state: left.count(state) for state in set(left)})
    out = subprocess.run([sys.executable, "manage.py", "cleanupuploads", "--expiry", "0"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr[-2000:]
    rows = sql("SELECT f.key, f.status FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
               "WHERE b.uid = %s", (bucket_id,))
    assert {status for _, status in rows} == {"ready"} and len(rows) == 3 * ROUNDS
    assert _files_under(root) == {key for key, _ in rows}  # no orphan bytes, no missing bytes
