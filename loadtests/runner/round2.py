"""``--preset round2``: the stages of the second performance round and their plan.

Build names (``builds.py``): ``asgi`` is uvicorn + httptools + the lean ASGI adapter,
``asgi-direct`` the same process with /v1 on the direct protocol (the product default),
``asgi-django`` Django's ASGIHandler; ``asgi-granian`` is available to ``--builds`` but in no stage.

Every stage runs every build the same way (same scenario scripts, VUs, durations, warm-up, CPU
set); nothing in a stage depends on a target. Closed-model stages run ``--rounds`` (>= 3)
rounds with the build order alternating between rounds; ratios are taken per round within this
invocation and reported as median (min-max).

| stage | what |
|---|---|
| a | WSGI sweep: the default scenarios at 500 VUs on asgi, asgi-direct, asgi-django and every WSGI configuration |
| b | open model: highest constant-arrival-rate with p95 < 200 ms and < 1 % errors, ping and wait, asgi |
| c | PocketBase peers: peer-read, peer-list, peer-create on pocketbase, asgi-direct-embedded, asgi-direct-pg |
| d | CRUD cycle: 10 VUs for 60 s and 1,000 VUs for 60 s on the three peer builds |
| e | four cases at 100 connections (ping, cpu, wait, insert100): asgi and asgi-direct against the WSGI sweep |
| f | Appwrite's method: `mix` (authenticated reads and writes, abuse checks on), 500 VUs for 5 minutes, one round per build |
"""

from __future__ import annotations

from dataclasses import dataclass

from loadtests.runner.seed import estimate_seed_s


@dataclass(frozen=True)
class Stage:
    key: str
    title: str
    scenarios: tuple[str, ...]
    builds: str  # "main" = asgi, asgi-direct, asgi-django + WSGI sweep; "asgi+sweep"; "asgi"; "peers"
    vus: tuple[int, ...]  # one closed-model pass per entry
    duration: str
    model: str = "closed"  # or "open" (step search)
    rounds: int = 0  # 0 = --rounds
    p95_ms: float = 200.0  # open model bound


STAGES: dict[str, Stage] = {s.key: s for s in [
    Stage("a", "WSGI sweep (closed model)",
          ("ping", "login", "read", "mix", "insert100", "wait", "cpu", "download", "txn", "related"),
          "main", (500,), "30s"),
    Stage("b", "open model: highest arrival rate with p95 < 200 ms and < 1 % errors",
          ("ping", "wait"), "asgi", (500,), "15s", model="open"),
    Stage("c", "PocketBase peers (guests, open rules, rate limits off)",
          ("peer-read", "peer-list", "peer-create"), "peers", (100,), "30s"),
    Stage("d", "CRUD cycle (create, read, update, delete; no think time)", ("crud",), "peers", (10, 1000), "60s"),
    Stage("e", "four cases at 100 connections: ASGI and the direct protocol against wsgi-best",
          ("ping", "cpu", "wait", "insert100"), "asgi+sweep", (100,), "30s"),
    Stage("f", "Appwrite's method: 500 clients for 5 minutes (unless --stage-duration), once per build", ("mix",), "main", (500,), "5m",
          rounds=1),
]}

OPEN_STEPS = 8  # at most this many 15 s steps per scenario and round in stage b
START_S = 6.0  # server start + health wait, per run
WARMUP_S = 3.0
K6_S = 4.0  # k6 start-up and graceful stop
SETUP_S = 30.0  # check services, migrate, project and key


def seconds(duration: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    return float(duration[:-1]) * units[duration[-1]] if duration[-1] in units else float(duration)


def build_names(stage: Stage, sweep: list[str], peers: list[str]) -> list[str]:
    return {"main": ["asgi", "asgi-direct", "asgi-django", *sweep], "asgi+sweep": ["asgi", "asgi-direct", *sweep],
            "asgi": ["asgi"],
            "peers": peers}[stage.builds]


def stage_runs(stage: Stage, builds: list[str], rounds: int, smoke: bool = False) -> list[tuple[int, str, int]]:
    """``(vus, duration, count)`` per closed-model pass, or for stage b ``(vus, step, steps)``."""
    r = 1 if smoke else (stage.rounds or rounds)
    vus = (5,) if smoke else stage.vus
    dur = "2s" if smoke else stage.duration
    if stage.model == "open":
        steps = 2 if smoke else OPEN_STEPS
        return [(v, dur, len(stage.scenarios) * len(builds) * r * steps) for v in vus]
    return [(v, dur, len(stage.scenarios) * len(builds) * r) for v in vus]


def estimate_s(stage: Stage, builds: list[str], rounds: int, smoke: bool = False) -> float:
    """Seconds the stage takes: measured time plus a fixed overhead per run (server start,
    warm-up, k6 start/stop); stage b counts its maximum number of steps."""
    total = 0.0
    if smoke:  # one server per build, 2 s runs
        runs = sum(c for _v, _d, c in stage_runs(stage, builds, rounds, smoke))
        return len(builds) * START_S + runs * 3
    for _vus, dur, count in stage_runs(stage, builds, rounds, smoke):
        per = seconds(dur) + START_S + K6_S + (0 if stage.model == "open" or smoke else WARMUP_S)
        total += count * per
        if stage.model == "open":  # the closed-model run that gives each search its start
            total += count / (2 if smoke else OPEN_STEPS) * (seconds(dur) + START_S + K6_S + WARMUP_S)
    return total


def _hm(s: float) -> str:
    m = round(s / 60)
    return f"{m // 60} h {m % 60:02d} min" if m >= 60 else f"{max(1, m)} min"


def plan_text(args, sweep: list[str], peers: list[str]) -> str:
    """The ``--plan`` output: every chosen stage with its builds, runs and estimated duration."""
    rounds = args.rounds
    lines = [f"round2 plan: server CPUs {args.server_cpus} ({args.cores} core(s)), k6 CPUs {args.k6_cpus or 'any'}, "
             f"{'smoke (5 VUs, 2 s, one round)' if args.smoke else f'{rounds} alternating rounds'}",
             f"WSGI sweep: {', '.join(sweep)}", ""]
    total = SETUP_S + estimate_seed_s(500 if not args.smoke else 5)
    lines.append(f"setup: database, project, key, seeding users/rows/files ~{_hm(total)}")
    peers_setup = False
    from loadtests.runner.stages import shaped

    for key in args.stages:
        st = shaped(STAGES[key], args)
        names = build_names(st, sweep, peers)
        est = estimate_s(st, names, rounds, args.smoke)
        if st.builds == "peers" and not peers_setup:
            est += 60  # once: PocketBase and the embedded database (create, migrate, seed)
            peers_setup = True
        total += est
        runs = stage_runs(st, names, rounds, args.smoke)
        what = "; ".join(f"{v} VUs x {d} x {c} {'steps (at most)' if st.model == 'open' else 'runs'}"
                         for v, d, c in runs)
        lines += [f"stage {key}: {st.title}  ~{_hm(est)}",
                  f"  scenarios: {', '.join(st.scenarios)}",
                  f"  builds: {', '.join(names)}",
                  f"  {what}"]
    lines += ["", f"total ~{_hm(total)} (estimate: measured time + ~{START_S + K6_S + WARMUP_S:.0f} s per run)",
              "", "run it with: " + run_command(args)]
    return "\n".join(lines)


def run_command(args) -> str:
    """The command that runs what this plan describes (``--plan`` dropped)."""
    from loadtests.runner.cli import RESULTS

    cmd = [".venv/bin/python", "loadtests/run.py", "--preset", "round2"]
    if list(args.stages) != list(STAGES):
        cmd += ["--stages", ",".join(args.stages)]
    cmd += ["--server-cpus", args.server_cpus, "--k6-cpus", args.k6_cpus or "''"]
    if args.rounds != 3:
        cmd += ["--rounds", str(args.rounds)]
    if args.gthread_workers != 2 * args.cores + 1:
        cmd += ["--gthread-workers", str(args.gthread_workers)]
    if args.smoke:
        cmd.append("--smoke")
    if args.stage_duration:
        cmd += ["--stage-duration", args.stage_duration]
    if args.stage_scenarios:
        cmd += ["--stage-scenarios", args.stage_scenarios]
    if args.results_given and args.results_dir != str(RESULTS):
        cmd += ["--results-dir", args.results_dir]
    cmd += ["--label", args.label or "round2" + ("-" + "".join(args.stages) if list(args.stages) != list(STAGES) else "")]
    return " ".join(cmd)
