"""The official JavaScript SDKs for conformance tests: the web SDK 27 (npm ``appwrite@27.0.0``; the
newest, 28, as ``appwrite-next``) under Node and in Chromium, and the Node.js server SDK
(``node-appwrite@26.2.0``, checks named ``node_*.mjs``).

``tests/websdk`` is one npm package (``package.json`` + lockfile; ``.ci/test`` runs ``npm ci`` in
it). Each feature's check is a small ES module here (``realtime.mjs``...) that takes its inputs
as arguments and prints what it saw; the Python test starts it with :func:`run_node` and
asserts on the output.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).parent
# Browser tests drive Debian's Chromium (``CHROMIUM`` overrides the path) with playwright-core.
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or ""
needs_chromium = pytest.mark.skipif(not CHROMIUM, reason="chromium is not installed (apt-get install -y chromium)")
needs_playwright = pytest.mark.skipif(
    not (NODE_DIR / "node_modules" / "playwright-core").is_dir(),
    reason="tests/websdk/node_modules is missing: run `npm ci` there (.ci/test does)")


def require_node(package: str = "appwrite") -> None:
    """Skip the calling test (saying why) when node or the installed npm ``package`` is missing
    (the web SDK by default; ``node-appwrite`` for the server SDK checks)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (NODE_DIR / "node_modules" / package).is_dir():
        pytest.skip(f"run `npm ci` in {NODE_DIR} first (.ci/test does)")


def run_node(script: str, *args: str, timeout: float = 60, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess:
    """Run ``node <script> <args>`` in this folder; returns the finished process (text output).
    Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds."""
    require_node()
    return subprocess.run(["node", script, *args], cwd=NODE_DIR, capture_output=True, text=True,
                          timeout=timeout, env=env)


def run_node_dialog(script: str, *args: str, answer, timeout: float = 90, env: dict[str, str] | None = None
                    ) -> tuple[list[dict], str]:
    """Run ``node <script> <args>`` that asks questions: each stdout line is a JSON object; one
    with a ``need`` key is passed to ``answer(question) -> str`` and the reply is written to the
    script's stdin as one line. Returns ``(every JSON line printed, stderr)`` once the script exits
    0; raises ``AssertionError`` with its output otherwise, ``TimeoutError`` after ``timeout``."""
    import json
    import select
    import time

    require_node()
    proc = subprocess.Popen(["node", script, *args], cwd=NODE_DIR, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    lines: list[dict] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{script} did not finish in {timeout}s; saw {lines}")
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            line = proc.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            lines.append(message)
            if "need" in message:
                proc.stdin.write(answer(message) + "\n")
                proc.stdin.flush()
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, f"{script} exited {code}: {err}\n{lines}"
    return lines, err


@contextlib.contextmanager
def serve_node_dir() -> Iterator[str]:
    """Serve this folder (the test pages and ``node_modules``, where the SDKs' browser builds are)
    on a free ``127.0.0.1`` port while the block runs; yields its origin ``http://127.0.0.1:<port>``,
    which a browser test registers as its project's web platform."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietFiles, directory=str(NODE_DIR)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
