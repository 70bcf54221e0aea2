"""The load-test runner's smoke mode, end to end: every available scenario on both builds.

No performance assertions: only that each scenario the server supports today ran, produced a
k6 summary with requests, and that the report and chart were written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

from conftest import ROOT
from loadtests.runner.builds import redis_cpu_seconds


def _admin_url() -> tuple[str, str]:
    url = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/test"
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/postgres", f"{parts.path.lstrip('/') or 'test'}_ltsmoke"


def test_smoke_runs_every_available_scenario_on_both_builds(tmp_path):
    """With the defaults (server port, Redis, PostgreSQL server from the environment) the smoke
    run leaves nothing behind: its database is dropped and its results go where --results-dir
    says (without it, to a temporary folder that the run removes)."""
    admin, database = _admin_url()
    tracked = ROOT / "loadtests" / "results"
    before = set(tracked.iterdir())
    # The two builds the report compares (the naive asgi-django build runs the same scripts
    # through the same runner code; leaving it out saves a third of this test's time).
    cmd = [sys.executable, "loadtests/run.py", "--smoke", "--fresh", "--database", database,
           "--builds", "asgi,wsgi", "--results-dir", str(tmp_path)]
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=170)
        with psycopg.connect(admin, autocommit=True) as conn:
            left = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert left is None, "the smoke run left its database behind"
    assert set(tracked.iterdir()) == before, "the smoke run wrote into loadtests/results"

    out = Path(re.search(r"results -> (\S+)", done.stdout).group(1))
    assert out.parent == tmp_path
    _check_results(out)


def _check_results(out: Path) -> None:
    assert (out / "report.md").stat().st_size > 0
    assert (out / "chart.png").read_bytes()[:4] == b"\x89PNG"
    results = json.loads((out / "results.json").read_text())
    planned = results["meta"]["scenarios"]
    assert {"ping", "login", "wait", "cpu"} <= set(planned)  # what exists today, at least
    for name in planned:
        for build in ("asgi", "wsgi"):
            if name == "realtime" and build == "wsgi":
                continue
            rows = [r for r in results["rows"] if r["scenario"] == name and r["build"] == build]
            assert rows, f"{name} did not run on {build}"
            assert rows[0]["requests"] > 0, f"{name} on {build}: no requests"
            assert (out / "summaries" / f"{name}-{build}-r1.json").exists()


def test_round2_smoke_runs_the_peers_and_leaves_no_database(tmp_path):
    """Stages c and d of the round2 preset: PocketBase (request log on and off), the embedded and
    the PostgreSQL build get the same table and rows, and every peer script runs against each without a failed request
    (a failed check would mean a script speaks one side wrongly, e.g. a list not giving 10 rows)."""
    admin, database = _admin_url()
    cmd = [sys.executable, "loadtests/run.py", "--preset", "round2", "--smoke", "--stages", "c,d", "--results-dir",
           str(tmp_path), "--database", database]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=400)
    with psycopg.connect(admin, autocommit=True) as conn:
        left = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert left is None, "the smoke run left its database behind"
    (out,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    results = json.loads((out / "results.json").read_text())
    for scenario in ("peer-read", "peer-list", "peer-create", "crud"):
        for build in ("pocketbase", "pocketbase-nolog", "asgi-direct-embedded", "asgi-direct-pg"):
            (row,) = [r for r in results["rows"] if r["scenario"] == scenario and r["build"] == build]
            assert row["requests"] > 0 and row["failed"] == row["check_fails"] == 0, (scenario, build, row)
            assert row["cpu_ms_per_req"] is not None
            if redis_cpu_seconds(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/8")) is not None:
                assert row.get("redis_cpu_ms_per_req") is not None  # Redis on this host: measured
    report = (out / "report.md").read_text()
    assert "| 5 | pocketbase |" in report and "| 5 | pocketbase-nolog |" in report
    assert "Targets of stage c" in report
    assert (out / "chart-peers.png").read_bytes()[:4] == b"\x89PNG"


_ROUTES = ("import django, os; os.environ['DJANGO_SETTINGS_MODULE']='backend.settings'; django.setup(); "
           "from django.conf import settings; from backend.urls import v1_router as r; "
           "print('loadtests.benchapp' in settings.INSTALLED_APPS, any(e.path.startswith('/bench/') for e in r.endpoints))")


def test_bench_app_is_installed_only_when_asked():
    base = {k: v for k, v in os.environ.items() if k != "BENCH_APP"}
    default = subprocess.run([sys.executable, "-c", _ROUTES], cwd=ROOT, env=base, capture_output=True, text=True)
    asked = subprocess.run([sys.executable, "-c", _ROUTES], cwd=ROOT, env={**base, "BENCH_APP": "1"},
                           capture_output=True, text=True)
    assert default.stdout.split() == ["False", "False"], default.stderr
    assert asked.stdout.split() == ["True", "True"], asked.stderr
