"""The official web SDK 27 (npm ``appwrite@27.0.0``) under Node, for conformance tests.

``tests/websdk`` is one npm package (``package.json`` + lockfile; ``.ci/test`` runs ``npm ci`` in
it). Each feature's check is a small ES module here (``realtime.mjs``...) that takes its inputs
as arguments and prints what it saw; the Python test starts it with :func:`run_node` and
asserts on the output.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).parent


def require_node() -> None:
    """Skip the calling test (saying why) when node or the installed SDK is missing."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    if not (NODE_DIR / "node_modules" / "appwrite").is_dir():
        pytest.skip(f"run `npm ci` in {NODE_DIR} first (.ci/test does)")


def run_node(script: str, *args: str, timeout: float = 60, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess:
    """Run ``node <script> <args>`` in this folder; returns the finished process (text output).
    Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds."""
    require_node()
    return subprocess.run(["node", script, *args], cwd=NODE_DIR, capture_output=True, text=True,
                          timeout=timeout, env=env)
