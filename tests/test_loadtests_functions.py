"""``--preset functions`` of the load-test runner without running any load: its options, its
plan, and its report section rendered from rows made up here (invented numbers that exercise the
report code only; they are no measurement). The smoke run is tests/test_loadtests_functions_smoke.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import ROOT
from loadtests.runner.cli import parse_args
from loadtests.runner.report2 import render
from loadtests.runner.round2 import FUNCTION_STAGES, STAGES


@pytest.mark.parametrize("argv, message", [
    (["--scenarios", "ping,fn-warm"], "fn-warm: function scenarios need a container engine"),
    (["--preset", "round2", "--stages", "g"], "unknown stage(s) g"),
    (["--preset", "functions", "--stages", "a"], "unknown stage(s) a"),
    (["--preset", "functions", "--rounds", "2"], "--rounds must be >= 3"),
    (["--functions-engine", "unix:///run/x.sock"], "--functions-engine goes with --preset functions"),
])
def test_bad_options_are_refused(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_stages_are_the_presets_own():
    assert parse_args(["--preset", "functions"]).stages == ["g", "h"]
    assert parse_args(["--preset", "round2"]).stages == list(STAGES)  # round2 does not grow
    smoke = parse_args(["--smoke"]).scenarios.split(",")
    assert "fn-warm" not in smoke and "fn-cold" not in smoke  # the plain smoke has no engine


def _plan(*extra: str) -> str:
    done = subprocess.run([sys.executable, "loadtests/run.py", "--preset", "functions", "--plan", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_plan_lists_warm_and_cold_on_asgi_and_the_wsgi_builds():
    out = _plan()
    for key, stage in FUNCTION_STAGES.items():
        assert f"stage {key}: {stage.title}" in out
    assert "stage a:" not in out
    assert "WSGI sweep: wsgi, wsgi-sync8, wsgi-gthread3x8\n" in out
    assert out.count("builds: asgi, asgi-direct, wsgi, wsgi-sync8, wsgi-gthread3x8\n") == 2
    assert "scenarios: fn-warm\n" in out and "scenarios: fn-cold\n" in out
    assert "10 VUs x 30s x 15 runs" in out and "4 VUs x 30s x 15 runs" in out  # 5 builds x 3 rounds
    assert "functions: a container engine" in out
    assert out.rstrip().endswith("run it with: .venv/bin/python loadtests/run.py --preset functions "
                                 "--server-cpus 0 --k6-cpus 1 --label functions")


def test_smoke_plan_runs_each_kind_of_server_once():
    out = _plan("--smoke")
    assert out.count("builds: asgi, asgi-direct, wsgi\n") == 2
    assert out.count("2 VUs x 5s x 3 runs") == 2


def test_plan_of_the_cold_stage_with_an_engine():
    out = _plan("--stages", "h", "--functions-engine", "unix:///var/run/docker.sock", "--stage-duration", "h=1m")
    assert "stage h:" in out and "stage g:" not in out and "4 VUs x 1m x 15 runs" in out
    assert out.rstrip().endswith("--preset functions --stages h --server-cpus 0 --k6-cpus 1 --stage-duration h=1m "
                                 "--functions-engine unix:///var/run/docker.sock --label functions-h")


def _row(build: str, rnd: int, rps: float, fn_p50: float, family: str = "") -> dict:
    return {"stage": "h", "scenario": "fn-cold", "build": build, "round": rnd, "model": "closed", "rate": 0,
            "vus": 4, "family": family, "rps": rps, "error_pct": 0.0, "p50_ms": fn_p50 + 20, "p95_ms": fn_p50 + 90,
            "fn_p50_ms": fn_p50, "fn_p95_ms": fn_p50 + 80, "fn_failed": 0, "failed": 0, "cpu_ms_per_req": 3.5,
            "requests": int(rps * 30)}


def test_report_has_the_execution_times():
    rows = [_row("asgi", r, 6.0, 610.0) for r in (1, 2, 3)] + [_row("wsgi", r, 4.0, 640.0, "wsgi") for r in (1, 2, 3)]
    meta = {"command": "x", "preset": "functions", "builds": {"asgi": "ASGI", "wsgi": "WSGI"},
            "args": {"server_cpus": "0", "cores": 1, "k6_cpus": "1"},
            "stages": {"h": {"title": FUNCTION_STAGES["h"].title, "scenarios": ["fn-cold"], "builds": ["asgi", "wsgi"],
                             "vus": [4], "duration": "30s", "rounds": 3, "p95_ms": 200.0, "model": "closed"}}}
    text = render(meta, rows, mach={})
    assert "### Stage h: Functions: cold starts" in text
    assert "| fn-cold | wsgi | 1.50× (1.50–1.50) |" in text  # asgi ÷ wsgi-best, per round
    assert "| fn-cold | asgi | 6.0 | 610.0 | 690.0 | 630.0 | 700.0 | 0 | 3.500 |" in text
