"""The round2 preset of the load-test runner without running any load: its options, its plan,
the WSGI sweep and the choice of `wsgi-best`, and the report rendered from a canned results file
(tests/data/loadtests_round2_results.json: invented numbers that exercise the report code only;
they are no measurement)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from loadtests.runner.builds import cpu_list
from loadtests.runner.cli import parse_args
from loadtests.runner.report2 import render, write_round2_report
from loadtests.runner.round2 import STAGES
from loadtests.runner.sweep import ratios_vs, wsgi_best, wsgi_sweep

CANNED = ROOT / "tests" / "data" / "loadtests_round2_results.json"


@pytest.fixture(scope="module")
def canned():
    data = json.loads(CANNED.read_text())
    return data["meta"], data["rows"]


# --- options -----------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--stages", "a"], "--stages, --stage-duration and --stage-scenarios need --preset"),
    (["--stage-duration", "10s"], "need --preset"),
    (["--preset", "round2", "--stage-duration", "ten"], "a run length is a whole number"),
    (["--preset", "round2", "--stage-duration", "x=10s"], "unknown stage 'x'"),
    (["--preset", "round2", "--stage-scenarios", "ping"], "expected STAGE=VALUE"),
    (["--preset", "round2", "--stage-scenarios", "c=peer-read+ping"], "stage c has no ping"),
    (["--preset", "round2", "--stages", "a,x"], "unknown stage(s) x"),
    (["--preset", "round2", "--rounds", "2"], "--rounds must be >= 3"),
    (["--preset", "round2", "--target-url", "http://x", "--key", "k"], "takes neither --target-url"),
    (["--server-cpus", "0-"], "--server-cpus takes a taskset CPU list"),
    (["--server-cpus", "1,1"], "--server-cpus takes a taskset CPU list"),
    (["--preset", "round4"], "invalid choice"),
    (["--preset", "round3", "--rounds", "1"], "--rounds must be >= 2"),
    (["--preset", "round2", "--extra-builds", "wsgi"], "--extra-builds takes asgi-granian and/or asgi-django"),
    (["--extra-builds", "asgi-granian"], "--extra-builds takes asgi-granian and/or asgi-django, with --preset"),
    (["--scenarios", "ping,crud"], "crud: peer scenarios need their seeded table"),
])
def test_bad_options_are_refused(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_stages_default_to_all_and_keep_their_order():
    assert parse_args(["--preset", "round2"]).stages == list(STAGES)
    assert parse_args(["--preset", "round2", "--stages", "e, c,a"]).stages == ["a", "c", "e"]


def test_cores_and_gthread_workers_follow_the_server_cpus():
    args = parse_args(["--server-cpus", "0,2-3"])
    assert (args.cores, args.gthread_workers) == (3, 7)
    assert parse_args(["--server-cpus", "0-3", "--gthread-workers", "2"]).gthread_workers == 2
    assert cpu_list("0-2,5") == [0, 1, 2, 5]


def test_smoke_round2_may_use_one_round():
    args = parse_args(["--preset", "round2", "--smoke"])
    assert (args.rounds, args.vus, args.duration) == (1, 5, "2s")


# --- the sweep and wsgi-best -------------------------------------------------------------------
def test_sweep_on_one_core_has_no_duplicate_and_pins_threads():
    names = [b.name for b in wsgi_sweep(1, 3)]
    assert names == ["wsgi", "wsgi-sync8", "wsgi-gthread3x8", "wsgi-gthread3x16", "wsgi-gthread3x32"]
    four = {b.name: b for b in wsgi_sweep(4, 9)}
    assert list(four)[:3] == ["wsgi", "wsgi-sync9", "wsgi-sync8"]
    cmd = four["wsgi-gthread9x16"].command
    assert cmd[cmd.index("--worker-class") + 1] == "gthread" and cmd[cmd.index("--threads") + 1] == "16"
    assert cmd[cmd.index("--workers") + 1] == "9"
    assert all(b.family == "wsgi" and not b.asgi for b in four.values())


def _row(build, rnd, rps, err=0.0, family="wsgi", stage="a"):
    return {"stage": stage, "scenario": "ping", "build": build, "round": rnd, "rps": rps, "error_pct": err,
            "family": family, "vus": 500, "model": "closed", "requests": 100}


def test_wsgi_best_is_the_fastest_configuration_without_errors():
    rows = [_row("wsgi", 1, 100), _row("wsgi", 2, 110), _row("wsgi-sync8", 1, 150), _row("wsgi-sync8", 2, 90),
            _row("wsgi-gthread3x8", 1, 500), _row("wsgi-gthread3x8", 2, 400, err=0.01),
            _row("asgi", 1, 900, family=""), _row("wsgi-x", 1, 999, stage="e")]
    # medians: wsgi 105, wsgi-sync8 120; gthread has errors in a round; asgi is not WSGI; wsgi-x is another stage
    assert wsgi_best(rows, "ping", "a") == "wsgi-sync8"
    assert wsgi_best(rows, "ping", "e") == "wsgi-x"
    assert wsgi_best([_row("wsgi", 1, 100, err=5)], "ping", "a") is None
    assert wsgi_best(rows, "wait", "a") is None
    assert ratios_vs(rows, "ping", "asgi", "wsgi-sync8", "a") == [6.0]
    assert ratios_vs(rows, "ping", "asgi", None, "a") == []


# --- the plan ----------------------------------------------------------------------------------
def _plan(*extra: str) -> str:
    done = subprocess.run([sys.executable, "loadtests/run.py", "--preset", "round2", "--plan", *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_plan_lists_every_stage_with_builds_and_durations():
    out = _plan("--server-cpus", "0-1", "--k6-cpus", "2-3")
    for key, stage in STAGES.items():
        assert f"stage {key}: {stage.title}" in out
    assert "WSGI sweep: wsgi, wsgi-sync5, wsgi-sync8, wsgi-gthread5x8, wsgi-gthread5x16, wsgi-gthread5x32" in out
    assert "builds: pocketbase, pocketbase-nolog, asgi-direct-embedded, asgi-direct-pg" in out
    assert "10 VUs x 60s x 12 runs; 1000 VUs x 60s x 12 runs" in out  # crud: 4 builds x 3 rounds
    assert "500 VUs x 5m x 9 runs" in out  # Appwrite's method: once per build (asgi, asgi-direct, asgi-django, 6 WSGI)
    assert "total ~" in out and " h " in out
    assert out.rstrip().endswith("run it with: .venv/bin/python loadtests/run.py --preset round2 "
                                 "--server-cpus 0-1 --k6-cpus 2-3 --label round2")


def test_plan_of_one_stage_lists_only_it():
    out = _plan("--stages", "c")
    assert "stage c:" in out and "stage a:" not in out and "stage f:" not in out
    assert "100 VUs x 30s x 36 runs" in out  # 3 scenarios x 4 builds x 3 rounds
    assert "--preset round2 --stages c --server-cpus 0 --k6-cpus 1 --label round2-c" in out


def test_plan_with_shorter_runs_and_fewer_scenarios():
    out = _plan("--stages", "a,f", "--stage-duration", "10s,f=1m", "--stage-scenarios", "a=ping+read")
    assert "scenarios: ping, read\n" in out
    assert "500 VUs x 10s x 48 runs" in out  # 2 scenarios x 8 builds x 3 rounds
    assert "500 VUs x 1m x 8 runs" in out
    assert out.rstrip().endswith("--stage-duration 10s,f=1m --stage-scenarios a=ping+read --label round2-af")


def test_round3_plan_is_stages_a_c_d_cut_short():
    out = subprocess.run([sys.executable, "loadtests/run.py", "--preset", "round3", "--plan"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60).stdout
    assert "round3 plan:" in out and "2 alternating rounds" in out and "stage e:" not in out
    assert "WSGI sweep: wsgi, wsgi-gthread3x8, wsgi-gthread3x16, wsgi-gthread3x32\n" in out
    assert "builds: asgi, asgi-direct, wsgi, wsgi-gthread3x8, wsgi-gthread3x16, wsgi-gthread3x32\n" in out
    assert "scenarios: ping, read, mix, wait, insert100, download\n" in out
    assert "500 VUs x 8s x 72 runs" in out  # 6 scenarios x 6 builds x 2 rounds
    assert "100 VUs x 8s x 24 runs" in out  # 3 scenarios x 4 peer builds x 2 rounds
    assert out.rstrip().endswith("--preset round3 --server-cpus 0 --k6-cpus 1 --label round3")
    extra = subprocess.run([sys.executable, "loadtests/run.py", "--preset", "round3", "--plan", "--rounds", "3",
                            "--extra-builds", "asgi-granian", "--stage-duration", "a=10s"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60).stdout
    assert "builds: asgi, asgi-direct, asgi-granian, wsgi," in extra and "500 VUs x 10s x 126 runs" in extra
    assert extra.rstrip().endswith("--preset round3 --server-cpus 0 --k6-cpus 1 --rounds 3 --extra-builds "
                                   "asgi-granian --stage-duration a=10s --label round3")


def test_plan_needs_the_preset():
    done = subprocess.run([sys.executable, "loadtests/run.py", "--plan"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode != 0 and "--plan needs --preset" in done.stderr


# --- the report --------------------------------------------------------------------------------
def test_report_shows_wsgi_best_and_ratios_against_it(canned):
    meta, rows = canned
    md = render(meta, rows, mach={})
    # ping: gthread has the most req/s but errors in round 2, so the 8 sync workers are wsgi-best
    assert "| ping | 3,000.0 | 3,600.0 | 900.0 | 1,000.0 | 1,200.0 | 2,000.0 (0.50 %) | wsgi-sync8: 1,200.0 |" in md
    # The pure ASGI build's ratio first, the direct /v1 protocol's beside it, then the naive build's;
    # then the first two against the 3 sync workers.
    assert ("| scenario | wsgi-best | asgi ÷ wsgi-best (req/s) | asgi-direct ÷ wsgi-best (req/s) | "
            "asgi-django ÷ wsgi-best (req/s) | asgi ÷ wsgi (3 sync) | asgi-direct ÷ wsgi (3 sync) |") in md
    assert ("| ping | wsgi-sync8 | 2.50× (2.50–2.50) | 3.00× (3.00–3.00) | 0.75× (0.75–0.75) | 3.00× (3.00–3.00) | "
            "3.60× (3.60–3.60) |") in md
    assert "| wait | 4,000.0 |" in md and "none at 0 % errors |" in md
    # Stage a's targets for the pure ASGI build, with the distance; wait has no wsgi-best here.
    assert "| ping | ≥ 3× | 2.50× | miss (−0.50×) | 3.00× |" in md
    assert "| wait | ≥ 5× | – | – (not measured) | – |" in md


def test_report_open_model_peers_crud_and_appwrite_method(canned):
    meta, rows = canned
    md = render(meta, rows, mach={})
    assert "| ping | 1,600 | 1,600 | 1,600 | 1,600 |" in md
    assert "wait ÷ ping (asgi, per round): 0.50× (0.50–0.50)." in md
    # Against the stronger PocketBase (request log off here: 1.2x the req/s of the default one).
    assert "| peer-read | asgi-direct-pg | 900.0 | 0.0 | 1.0 | 3.0 | 4.0 | 0.500 | 0.200 | 0.050 | 100.0 | " \
           "0.25× (0.25–0.25) | 1.25× (1.25–1.25) |" in md
    assert "| peer-read | pocketbase-nolog | 3,600.0 |" in md
    # The targets: best of ours (asgi-direct-pg) vs pocketbase-nolog; p95 against the lower one;
    # CPU within 1.25x of the lower PocketBase CPU per request (0.5 / 0.4: met exactly).
    assert ("| peer-read | asgi-direct-pg | pocketbase-nolog | 0.25× | ≥ 1× | miss (−0.75×) | 3.0 / 2.0 "
            "(pocketbase-nolog) | miss (+1.0 ms) | 0.500 / 0.400 (pocketbase-nolog) | 1.25× | pass (+0.00×) (≤ 1.25×) |") in md
    assert "- a canned difference" in md
    assert "| 1000 | asgi-direct-pg | 400.0 | 11 | 0.1 | 1.0 | 3.0 | 4.0 | 0.500 | 0.200 | 0.050 | – |" in md
    assert "| 1000 | published figure (other hardware, not measured here) | 7,924 | 0 |" in md
    assert "| asgi | 1,400.0 | 14,000 | 99.99 | 1.0 | 2.0 | 3.0 | 4.0 | 9.0 |" in md
    assert "asgi ÷ wsgi-best (wsgi), req/s: 2.33× (one run each, no spread)." in md
    assert "asgi-direct ÷ wsgi-best (wsgi), req/s: 2.80× (one run each, no spread)." in md


def test_report_files_and_charts_are_written(canned, tmp_path):
    meta, rows = canned
    write_round2_report(tmp_path, meta, rows, mach={})
    assert (tmp_path / "report.md").read_text().startswith("# Load tests, round 2")
    for chart in ("chart-ratios.png", "chart-peers.png"):
        assert (tmp_path / chart).read_bytes()[:4] == b"\x89PNG"


# --- CHECKPOINT before each run -----------------------------------------------------------------
def test_checkpoint_runs_on_the_test_server_and_reports_what_it_could_not_do():
    import os

    from loadtests.runner.bench import checkpoint

    url = os.environ.get("DATABASE_URL")
    if not url:
        pytest.skip("DATABASE_URL is not set: no PostgreSQL to checkpoint")
    assert checkpoint(url) is True
    assert checkpoint("") is False
    # A closed port: refused, reported as not done, nothing raised.
    assert checkpoint("postgres://postgres@127.0.0.1:1/postgres") is False


def test_report_of_a_folder_from_before_the_build_names_says_so(canned):
    meta, rows = canned
    old = {**meta, "builds": {**meta["builds"], "asgi": "ASGI: uvicorn, 1 process, lean /v1 adapter (product default)"}}
    assert "**Old build names:**" in render(old, rows, mach={})
    assert "**Old build names:**" not in render(meta, rows, mach={})
