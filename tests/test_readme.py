"""The README's and the docs' promises, run as written: the embedded-default server, the SDK
example, and the Databases, Storage and File tokens examples (taken from the pages by
``tests/docs.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT, free_port, start_server
from tests import docs


def test_quick_start_command_shape():
    command = docs.quick_start()
    for step in ("pip install -r requirements.txt", "manage.py migrate", "manage.py createproject demo",
                 "manage.py createproject demo"):
        assert step in command
    # The last step starts the server as production does (the image's command), not a bare uvicorn.
    assert command.split(" && ")[-1].strip() == ".venv/bin/python -m backend.serve"


def test_getting_started_repeats_the_readme():
    """The Getting started page shows the README's quick start and SDK example, word for word."""
    assert docs.getting_started_examples() == [docs.quick_start(), docs.sdk_example()]


def _embedded(tmp_path) -> tuple[dict, str]:
    """An embedded-default environment (no DATABASE_URL/REDIS_URL), migrated, with project
    ``demo`` and an all-scopes key, as the quick start leaves it."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["SQLITE_PATH"] = str(tmp_path / "db.sqlite3")
    py = sys.executable
    subprocess.run([py, "manage.py", "migrate"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    subprocess.run([py, "manage.py", "createproject", "demo"], cwd=ROOT, env=env, check=True, capture_output=True)
    key = subprocess.run([py, "manage.py", "createapikey", "demo", "--all-scopes"], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    return env, key


def test_embedded_default_serves_the_readme_example(tmp_path):
    """No DATABASE_URL/REDIS_URL: SQLite + in-process cache, the server started by the quick
    start's last step (on a free PORT), then the README's SDK example."""
    env, key = _embedded(tmp_path)
    port = free_port()
    serve = docs.quick_start().split(" && ")[-1].split()
    serve[0] = sys.executable if serve[0] == ".venv/bin/python" else serve[0]
    server = start_server("asgi", {**env, "PORT": str(port)}, port=port, command=serve)
    try:
        code = docs.sdk_example().replace("http://127.0.0.1:8000/v1", server.endpoint)
        out = subprocess.run([sys.executable, "-c", code], env={**env, "APPWRITE_KEY": key}, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split("\n")[:-1] == docs.expected_lines(code) == ["ada@example.com", "Hello"]
    finally:
        server.stop()


def _run_examples(examples, server, key: str, env: dict, cwd=None) -> None:
    """Run each ``(title, code)``; every printed line must equal its comment, except comments
    that start with ``e.g.`` (values that differ from run to run)."""
    for title, code in examples:
        expected = docs.expected_lines(code)
        run = code.replace("http://127.0.0.1:8000/v1", server.endpoint)
        out = subprocess.run([sys.executable, "-c", run], env={**env, "APPWRITE_KEY": key}, capture_output=True,
                             text=True, timeout=120, cwd=cwd)
        assert out.returncode == 0, f"{title}: {out.stderr[-2000:]}"
        printed = out.stdout.strip().splitlines()
        assert len(printed) == len(expected), title
        for line, want in zip(printed, expected, strict=True):
            assert want.startswith("e.g.") or line == want, (title, line, want)


def test_spatial_example_on_postgresql(asgi_server, project):
    """The spatial columns example (PostgreSQL with PostGIS) prints what its comments say."""
    from django.conf import settings

    if not settings.DATABASE_URL:
        import pytest

        pytest.skip("the spatial example needs PostgreSQL with PostGIS")
    examples = [(t, c) for t, c in docs.database_examples() if t == "Spatial columns"]
    assert examples
    _run_examples([(t, c.replace('set_project("demo")', f'set_project("{project.id}")')) for t, c in examples],
                  asgi_server, project.key, dict(os.environ))


def test_database_examples_print_what_they_say(tmp_path):
    """Each example of the Databases page (but the spatial one, see above), run on the embedded
    default, prints exactly the values in its comments."""
    examples = [(t, c) for t, c in docs.database_examples() if t != "Spatial columns"]
    assert {"Databases", "Transactions", "Relationships"} <= {title for title, _ in examples}
    env, key = _embedded(tmp_path)
    server = start_server("asgi", env, port=free_port())
    try:
        _run_examples(examples, server, key, env)
    finally:
        server.stop()


def test_storage_example_leaves_no_file_behind(asgi_server, project, tmp_path):
    """The Storage example, run from an empty folder (a reader runs it in the repository), prints
    what it says and leaves the folder empty: its 12 MiB file lives in a temporary directory."""
    code = docs.storage_example().replace("http://127.0.0.1:8000/v1", asgi_server.endpoint).replace(
        'set_project("demo")', f'set_project("{project.id}")')
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={**os.environ, "APPWRITE_KEY": project.key},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == docs.expected_lines(code) == ["3.0"]
    assert list(tmp_path.iterdir()) == []


def test_file_token_example_runs(asgi_server, project):
    """The File tokens example creates its own bucket and file, and its token URL serves the
    file's bytes to a client with neither key nor session."""
    code = docs.file_token_example().replace('set_project("demo")', f'set_project("{project.id}")').replace(
        "project=demo", f"project={project.id}")
    _run_examples([("File tokens", code)], asgi_server, project.key, dict(os.environ))
