"""The README's promises, run as written: the embedded-default server and the SDK example."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import ROOT, free_port, start_server

README = (ROOT / "README.md").read_text()


def _python_example() -> str:
    section = README.split("## Using it from the Python SDK", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_quick_start_command_shape():
    quick = README.split("## Quick start", 1)[1]
    command = re.search(r"```sh\n(.*?)```", quick, re.S).group(1)
    for step in ("pip install -r requirements.txt", "manage.py migrate", "manage.py createproject demo",
                 "uvicorn backend.asgi:application --host 127.0.0.1 --port 8000"):
        assert step in command


def test_embedded_default_serves_the_readme_example(tmp_path):
    """No DATABASE_URL/REDIS_URL: SQLite + in-process cache, then the README's SDK example."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["SQLITE_PATH"] = str(tmp_path / "db.sqlite3")
    py = sys.executable
    subprocess.run([py, "manage.py", "migrate"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    subprocess.run([py, "manage.py", "createproject", "demo"], cwd=ROOT, env=env, check=True, capture_output=True)
    key = subprocess.run([py, "manage.py", "createapikey", "demo", "--all-scopes"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    port = free_port()
    server = start_server("asgi", env, port=port)
    try:
        code = _python_example().replace("http://127.0.0.1:8000/v1", server.endpoint)
        out = subprocess.run([py, "-c", code], env={**env, "APPWRITE_KEY": key}, capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "ada@example.com"
    finally:
        server.stop()
