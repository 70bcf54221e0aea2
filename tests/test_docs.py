"""The documentation site builds without a broken link, its generated settings page is current,
every Python block a reader is told to run is run by a test, and the Locale and Avatars examples
print what they say."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT, free_port, start_server
from tests import docs


def test_mkdocs_build_is_strict_clean(tmp_path):
    """``mkdocs build --strict`` (broken links, missing anchors, pages left out of the nav fail)
    into a temporary folder; nothing is left in the repository."""
    before = set(ROOT.iterdir())
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert out.returncode == 0, out.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert set(ROOT.iterdir()) == before


def test_settings_page_is_current():
    """docs/settings.md is what docs/gen_settings.py makes of backend/settings/ today."""
    out = subprocess.run([sys.executable, "docs/gen_settings.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr


def test_every_python_block_is_run_or_says_why_not():
    """Each Python block of the README and of docs/*.md is one the tests run (tests/docs.py), or
    the line before it says ``<!-- not run: <reason> -->``."""
    run = {code for blocks in docs.RUN_BY_TESTS.values() for code in blocks()}
    assert all((ROOT / path).is_file() for path in docs.RUN_BY_TESTS)
    unrun = []
    for page in [ROOT / "README.md", *sorted(docs.DOCS.glob("*.md"))]:
        text = page.read_text()
        for match in docs.FENCE.finditer(text):
            if match.group(1) != "python" or match.group(2) in run:
                continue
            line_before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            if not line_before.startswith(docs.NOT_RUN):
                unrun.append(f"{page.name}: {match.group(2).splitlines()[0]}")
    assert not unrun, unrun


def test_readme_stays_short():
    """The README is the front door; the rest lives in docs/."""
    assert len(docs.read("README.md").splitlines()) <= 200


@pytest.fixture
def embedded(tmp_path):
    """A server on the embedded default with project ``demo`` and an all-scopes key."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["SQLITE_PATH"] = str(tmp_path / "db.sqlite3")
    py = sys.executable
    subprocess.run([py, "manage.py", "migrate"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    subprocess.run([py, "manage.py", "createproject", "demo"], cwd=ROOT, env=env, check=True, capture_output=True)
    server = start_server("asgi", env, port=free_port())
    try:
        yield server, env
    finally:
        server.stop()


def _run(code: str, server, env) -> subprocess.CompletedProcess:
    code = code.replace("http://127.0.0.1:8000/v1", server.endpoint)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_locale_and_avatars_examples_run(embedded):
    """The Locale example prints what its comments say; the Avatars example runs (its flag needs
    the npm icon sets: without them that block is skipped, as the page says it answers 404)."""
    server, env = embedded
    code = docs.locale_example()
    out = _run(code, server, env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == docs.expected_lines(code) == ["['Afghanistan', 'Albanien', 'Algerien']",
                                                                    "27.0", "--"]
    from django.conf import settings

    if not (ROOT / settings.AVATARS_ICONS_DIR).is_dir():
        pytest.skip(f"the Avatars example's flag needs the npm icon sets in {settings.AVATARS_ICONS_DIR}")
    out = _run(docs.avatars_example(), server, env)
    assert out.returncode == 0, out.stderr[-2000:]
