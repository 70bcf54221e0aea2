"""Bounded memory: a 200 MB file uploaded in chunks and downloaded 20 times in parallel grows
a dedicated ASGI server's peak RSS (VmHWM, /proc/<pid>/status) by at most 50 MB."""

from __future__ import annotations

import hashlib
import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from appwrite.client import Client
from appwrite.id import ID
from appwrite.input_file import InputFile
from appwrite.services.storage import Storage

from apps.storage.tests.conftest import make_bucket, upload
from conftest import Api, start_server

SIZE = 200 * 1024 * 1024  # bytes
DOWNLOADS = 20
MAX_GROWTH = 50 * 1024 * 1024  # bytes of peak RSS


def peak_rss(pid: int) -> int:
    """VmHWM (peak resident set size) of ``pid`` in bytes."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.fixture
def lone_asgi(live_env, tmp_path_factory):
    env = {**live_env, "STORAGE_ROOT": str(tmp_path_factory.mktemp("memory-storage"))}
    server = start_server("asgi", env)
    yield server
    server.stop()


@pytest.mark.slow
def test_peak_rss_stays_bounded(lone_asgi, project, tmp_path):
    api = Api(lone_asgi, project)
    bucket = make_bucket(api, maximumFileSize=SIZE + 1)
    # Warm up every code path once (imports, pools, executor threads) before the baseline.
    assert upload(api, bucket["$id"], b"warm" * 1000, file_id="warm").status_code == 201
    assert api.call("GET", f"/storage/buckets/{bucket['$id']}/files/warm/download", key=True).status_code == 200
    baseline = peak_rss(lone_asgi.proc.pid)

    path = tmp_path / "big.bin"
    digest = hashlib.sha256()
    with open(path, "wb") as fh:
        for _ in range(SIZE // (8 * 1024 * 1024)):
            block = os.urandom(8 * 1024 * 1024)
            digest.update(block)
            fh.write(block)
    client = Client().set_endpoint(lone_asgi.endpoint).set_project(project.id).set_key(project.key)
    f = Storage(client).create_file(bucket["$id"], ID.unique(), InputFile.from_path(str(path)))
    assert f.chunksuploaded == f.chunkstotal == 40
    after_upload = peak_rss(lone_asgi.proc.pid)

    url = f"{lone_asgi.endpoint}/storage/buckets/{bucket['$id']}/files/{f.id}/download"
    headers = {"X-Appwrite-Project": project.id, "X-Appwrite-Key": project.key}

    def download(piece_size: int) -> tuple[str, float, float]:
        started = time.monotonic()
        h = hashlib.sha256()
        first = None
        with requests.get(url, headers=headers, stream=True, timeout=120) as r:
            assert r.status_code == 200
            for piece in r.iter_content(piece_size):
                if first is None:
                    first = time.monotonic() - started
                h.update(piece)
        return h.hexdigest(), first, time.monotonic() - started

    with ThreadPoolExecutor(DOWNLOADS) as pool:
        results = list(pool.map(download, [4 * 1024 * 1024] * DOWNLOADS))
    assert {r[0] for r in results} == {digest.hexdigest()}
    peak = peak_rss(lone_asgi.proc.pid)
    growth = peak - baseline
    print(f"peak RSS: baseline {baseline / 2**20:.1f} MiB, after upload {after_upload / 2**20:.1f} MiB, "
          f"after {DOWNLOADS} downloads {peak / 2**20:.1f} MiB (growth {growth / 2**20:.1f} MiB)")
    assert growth <= MAX_GROWTH, f"peak RSS grew by {growth / 2**20:.1f} MiB"
    # Streaming: the first bytes arrive well before the whole 200 MB has been read and sent (a
    # buffered response would send its first byte only after reading all of it).
    single = download(64 * 1024)
    print(f"single download: first byte after {single[1]:.3f}s of {single[2]:.3f}s")
    assert single[0] == digest.hexdigest()
    assert single[1] < single[2] * 0.6, f"first byte after {single[1]:.2f}s of {single[2]:.2f}s"
    assert "synchronous iterators" not in lone_asgi.log.read_text()
