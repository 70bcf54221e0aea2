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


def _database_examples() -> list[tuple[str, str]]:
    """``(subsection, code)`` of the Python examples of the Databases subsections whose printed
    lines carry their expected output as a trailing comment."""
    section = README.split("## Databases (TablesDB)", 1)[1].split("\n## ", 1)[0]
    out = []
    for part in section.split("\n### ")[1:]:
        title = part.split("\n", 1)[0]
        found = re.search(r"```python\n(.*?)```", part, re.S)
        if found:
            out.append((title, found.group(1)))
    return out


def _expected_lines(code: str) -> list[str]:
    return [line.rsplit("# ", 1)[1].strip() for line in code.splitlines()
            if line.lstrip().startswith("print(") or ("print(" in line and "# " in line)]


def _run_examples(examples, server, key: str, env: dict) -> None:
    for title, code in examples:
        expected = _expected_lines(code)
        if not expected:
            continue
        run = code.replace("http://127.0.0.1:8000/v1", server.endpoint)
        out = subprocess.run([sys.executable, "-c", run], env={**env, "APPWRITE_KEY": key}, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, f"{title}: {out.stderr[-2000:]}"
        assert out.stdout.strip().splitlines() == expected, title


def test_spatial_example_on_postgresql(asgi_server, project):
    """The spatial columns example (PostgreSQL with PostGIS) prints what its comments say."""
    from django.conf import settings

    if not settings.DATABASE_URL:
        import pytest

        pytest.skip("the spatial example needs PostgreSQL with PostGIS")
    examples = [(t, c) for t, c in _database_examples() if t == "Spatial columns"]
    assert examples
    _run_examples([(t, c.replace('set_project("demo")', f'set_project("{project.id}")')) for t, c in examples],
                  asgi_server, project.key, dict(os.environ))


def test_database_examples_print_what_they_say(tmp_path):
    """Each Databases subsection's example (but the spatial one, see above), run on the embedded
    default, prints exactly the values in its comments."""
    examples = [(t, c) for t, c in _database_examples() if t != "Spatial columns"]
    assert {"Transactions", "Relationships"} <= {title for title, _ in examples}
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["SQLITE_PATH"] = str(tmp_path / "db.sqlite3")
    py = sys.executable
    subprocess.run([py, "manage.py", "migrate"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    subprocess.run([py, "manage.py", "createproject", "demo"], cwd=ROOT, env=env, check=True, capture_output=True)
    key = subprocess.run([py, "manage.py", "createapikey", "demo", "--all-scopes"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    server = start_server("asgi", env, port=free_port())
    try:
        _run_examples(examples, server, key, env)
    finally:
        server.stop()


def test_storage_example_leaves_no_file_behind(asgi_server, project, tmp_path):
    """The Storage example, run from an empty folder (a reader runs it in the repository), prints
    what it says and leaves the folder empty: its 12 MiB file lives in a temporary directory."""
    section = README.split("## Storage", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code = code.replace("http://127.0.0.1:8000/v1", asgi_server.endpoint).replace(
        'set_project("demo")', f'set_project("{project.id}")')
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={**os.environ, "APPWRITE_KEY": project.key},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == _expected_lines(code) == ["3.0"]
    assert list(tmp_path.iterdir()) == []


def test_file_token_example_runs(asgi_server, project):
    """The "File tokens" example creates its own bucket and file, and its token URL serves the
    file's bytes to a client with neither key nor session."""
    section = README.split("## File tokens", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code = code.replace('set_project("demo")', f'set_project("{project.id}")').replace("project=demo",
                                                                                      f"project={project.id}")
    _run_examples([("File tokens", code)], asgi_server, project.key, dict(os.environ))
