"""A client that leaves right after a download's head costs the server almost nothing: the file
is not read on for nobody and its descriptor is closed. Measured on a dedicated ASGI server
process through ``/proc/<pid>/io`` (``rchar``: bytes the process read) and ``/proc/<pid>/fd``,
on the lean adapter and on Django's handler (``V1_ADAPTER=django``)."""

from __future__ import annotations

import os
import socket
import struct
import time

import pytest
from appwrite.client import Client
from appwrite.id import ID
from appwrite.input_file import InputFile
from appwrite.services.storage import Storage

from apps.storage.tests.conftest import make_bucket
from conftest import Api, start_server

SIZE = 64 * 1024 * 1024  # bytes
ABORTS = 8


def _read_chars(pid: int) -> int:
    with open(f"/proc/{pid}/io") as fh:
        for line in fh:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    raise AssertionError("no rchar")


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _head_then_reset(port: int, path: str, project) -> bytes:
    """GET ``path``, read the response head, then reset the connection (SO_LINGER 0)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall((f"GET /v1{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Appwrite-Project: {project.id}\r\n"
                  f"X-Appwrite-Key: {project.key}\r\n\r\n").encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
    return data.split(b"\r\n", 1)[0]


@pytest.fixture(params=["lean", "django"])
def lone_asgi(request, live_env, tmp_path_factory):
    env = {**live_env, "V1_ADAPTER": request.param,
           "STORAGE_ROOT": str(tmp_path_factory.mktemp("aborted-storage"))}
    server = start_server("asgi", env)
    yield server
    server.stop()


def test_a_download_abandoned_after_its_head_stops_reading_the_file(lone_asgi, project):
    api = Api(lone_asgi, project)
    bucket = make_bucket(api, maximumFileSize=SIZE + 1)
    client = Client().set_endpoint(lone_asgi.endpoint).set_project(project.id).set_key(project.key)
    file_id = Storage(client).create_file(bucket["$id"], ID.unique(), InputFile.from_bytes(os.urandom(SIZE), "big.bin")).id
    path = f"/storage/buckets/{bucket['$id']}/files/{file_id}/download"
    whole = api.call("GET", path, key=True, timeout=60)  # warm: page cache, pools, executor threads
    assert whole.status_code == 200 and len(whole.content) == SIZE
    pid = lone_asgi.proc.pid
    time.sleep(0.5)
    read_before, fds_before = _read_chars(pid), _open_fds(pid)

    for _ in range(ABORTS):
        assert _head_then_reset(lone_asgi.port, path, project) == b"HTTP/1.1 200 OK"
    time.sleep(1.0)
    read = _read_chars(pid) - read_before

    # Without the disconnect watch every abandoned download read the whole file (8 x 64 MiB).
    assert read < ABORTS * SIZE // 4, f"{read / 2**20:.0f} MiB read for {ABORTS} abandoned downloads"
    assert _open_fds(pid) <= fds_before, (fds_before, sorted(os.listdir(f"/proc/{pid}/fd")))
    assert api.call("GET", path, key=True, headers={"Range": "bytes=0-9"}).status_code == 206  # still serving
