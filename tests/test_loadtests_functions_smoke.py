"""``--preset functions --smoke``, end to end on a real container engine (a Podman service the
runner starts): the function is seeded and built through the API, and both function scenarios
run on the ASGI build, the direct protocol and one WSGI build (the smoke mode's builds). No performance assertion beyond one that shows the cold mode
works: on the single-process builds, a cold execution (a container started for it) takes longer
than a warm one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from urllib.parse import urlsplit

import psycopg
import pytest

from conftest import ROOT
from loadtests.runner.functions import NETWORK

pytestmark = [pytest.mark.containers]


def _admin_url() -> tuple[str, str]:
    """The maintenance database on DATABASE_URL's server, and this test's database name."""
    parts = urlsplit(os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/test")
    return f"{parts.scheme}://{parts.netloc}/postgres", f"{parts.path.lstrip('/') or 'test'}_ltfnsmoke"


# About 2 minutes (6 servers, the function's build); the first run on a machine also builds the
# Debian base image and the runtime image.
@pytest.mark.timeout(900)
def test_functions_smoke_runs_warm_and_cold_on_each_kind_of_server(tmp_path):
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (apt-get install podman runc)")
    admin, database = _admin_url()
    cmd = [sys.executable, "loadtests/run.py", "--preset", "functions", "--smoke", "--fresh", "--database", database,
           "--results-dir", str(tmp_path)]
    try:
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
        with psycopg.connect(admin, autocommit=True) as conn:
            left = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    if done.returncode != 0 and "needs a container engine" in done.stdout + done.stderr:
        pytest.skip((done.stdout + done.stderr).strip().splitlines()[-1])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert left is None, "the smoke run left its database behind"
    network = subprocess.run(["podman", "network", "exists", NETWORK], capture_output=True)
    assert network.returncode != 0, f"the run left the network {NETWORK} (and maybe containers on it)"

    (out,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    results = json.loads((out / "results.json").read_text())
    stages = results["meta"]["stages"]
    assert list(stages) == ["g", "h"]
    builds = stages["g"]["builds"]
    assert builds == ["asgi", "asgi-direct", "wsgi"]
    p50 = {}
    for scenario in ("fn-warm", "fn-cold"):
        for build in builds:
            (row,) = [r for r in results["rows"] if r["scenario"] == scenario and r["build"] == build]
            assert row["requests"] > 0, (scenario, build, row)
            assert row["failed"] == row["check_fails"] == row["fn_failed"] == 0, (scenario, build, row)
            p50[scenario, build] = row["fn_p50_ms"]
    # One process keeps its containers: after the first executions, warm ones are fast. (Each
    # process of a WSGI build has a pool of its own, so a 5 s smoke run without warm-up can be
    # all cold starts there.)
    for build in ("asgi", "asgi-direct"):
        assert p50["fn-cold", build] > 5 * p50["fn-warm", build] > 0, (build, p50)
    report = (out / "report.md").read_text()
    assert "### Stage g: Functions: warm" in report and "### Stage h: Functions: cold" in report
    assert "duration p50 ms" in report
    assert (out / "chart-ratios.png").read_bytes()[:4] == b"\x89PNG"
