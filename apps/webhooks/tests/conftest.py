"""A local HTTP receiver for webhook deliveries, and a worker on the ``webhooks`` queue."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import ARTIFACTS


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Records every POST. ``/ok`` answers 200, ``/fail`` 500, ``/held`` waits until
    :attr:`release` is set (at most 60 s), then answers 200."""

    port: int
    received: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def at(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.path == path]


@pytest.fixture(scope="module")
def receiver():
    state: dict = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802  (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            rec = state["receiver"]
            with rec.lock:
                rec.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if self.path == "/held":
                rec.release.wait(60)
            status = 500 if self.path == "/fail" else 200
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"receiver says no" if status == 500 else b"ok")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state["receiver"] = Receiver(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state["receiver"]
    state["receiver"].release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def webhook_worker(live_env):
    """``manage.py worker --queues webhooks`` with quick retries (1 s, doubling) and webhooks
    disabled after 3 failed deliveries in a row."""
    from tests.mail import start_worker

    ARTIFACTS.mkdir(exist_ok=True)
    env = {**live_env, "TASKS_RETRY_DELAY": "1", "TASKS_POLL_INTERVAL": "0.2", "WEBHOOK_MAX_FAILED_ATTEMPTS": "3",
           "WEBHOOK_TIMEOUT": "30"}
    worker = start_worker(env, ARTIFACTS / f"webhook-worker-{os.getpid()}.log", "--queues", "webhooks")
    yield worker
    worker.stop()
