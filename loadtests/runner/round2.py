"""``--preset round2``: the stages of the second performance round and their plan.

Build names (``builds.py``): ``asgi`` is uvicorn + httptools + the lean ASGI adapter,
``asgi-direct`` the same process with /v1 on the direct protocol (the product default),
``asgi-django`` Django's ASGIHandler; ``asgi-granian`` (a comparison column, not a supported server) runs
only when asked: ``--builds`` or ``--extra-builds``.

Every stage runs every build the same way (same scenario scripts, VUs, durations, warm-up, CPU
set); nothing in a stage depends on a target. Closed-model stages run ``--rounds`` (>= 3)
rounds with the build order alternating between rounds; ratios are taken per round within this
invocation and reported as median (min-max).

| stage | what |
|---|---|
| a | WSGI sweep: the default scenarios at 500 VUs on asgi, asgi-direct, asgi-django and every WSGI configuration |
| b | open model: highest constant-arrival-rate with p95 < 200 ms and < 1 % errors, ping and wait, asgi |
| c | PocketBase peers: peer-read, peer-list, peer-create on pocketbase (request log on and off), asgi-direct-embedded, asgi-direct-pg |
| d | CRUD cycle: 10 VUs for 60 s and 1,000 VUs for 60 s on the four peer builds |
| e | four cases at 100 connections (ping, cpu, wait, insert100): asgi and asgi-direct against the WSGI sweep |
| f | Appwrite's method: `mix` (authenticated reads and writes, abuse checks on), 500 VUs for 5 minutes, one round per build |

``--preset functions`` runs two more stages of the same kind (:data:`FUNCTION_STAGES`), not part
of round2: g, warm synchronous executions of a tiny Python function, and h, cold starts (a new
container for every execution), on asgi, asgi-direct and the WSGI sweep without its x16/x32
thread counts (``functions.py`` seeds the function and starts the container engine).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from loadtests.runner.builds import RESULTS
from loadtests.runner.seed import estimate_seed_s


@dataclass(frozen=True)
class Stage:
    key: str
    title: str
    scenarios: tuple[str, ...]
    builds: str  # "main" = asgi, asgi-direct, asgi-django + WSGI sweep; "asgi+sweep"; "asgi"; "peers"; "functions"
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

# ``--preset functions``: executions of the seeded function (runner/functions.py), closed model.
# Warm: 10 VUs, under the 16 threads one ASGI process runs synchronous executions on
# (apps/functions/executions.py POOL_THREADS) and within what 3 gthread workers x 8 threads take,
# so each build keeps at most 10 containers per process. Cold: 4 VUs, each execution starting a
# container (FUNCTIONS_WARM_SECONDS=0 on the servers: the scenario's server_env).
FUNCTION_STAGES: dict[str, Stage] = {s.key: s for s in [
    Stage("g", "Functions: warm synchronous executions", ("fn-warm",), "functions", (10,), "30s"),
    Stage("h", "Functions: cold starts (a new container for every execution)", ("fn-cold",), "functions",
          (4,), "30s"),
]}
ALL_STAGES: dict[str, Stage] = {**STAGES, **FUNCTION_STAGES}
PRESET_STAGES: dict[str, dict[str, Stage]] = {"round2": STAGES, "round3": STAGES, "functions": FUNCTION_STAGES}
# The WSGI sweep's thread counts the function stages leave out: at 10 VUs or fewer, 3 gthread
# workers x 8 threads already take every request at once.
FUNCTIONS_SWEEP_SKIP = ("x16", "x32")
FUNCTIONS_SETUP_S = 60.0  # the engine, the function's build (more the first time: the runtime image)

# ``--preset round3``: stages a, c and d of this table, cut to fit about 40 minutes on one server
# core (``--plan`` prints the estimate). Each entry is the default of the option of that name; the
# command line's --stage-duration and --stage-scenarios are applied after these. Stage a keeps
# the six scenarios with targets; the WSGI sweep leaves out ROUND3_SWEEP_SKIP; 2 rounds, as 3
# rounds of stage a alone would take about 38 minutes (8 s runs: 108 runs of ~21 s).
ROUND3 = {"stages": "a,c,d", "stage_duration": "a=8s,c=8s,d=8s",
          "stage_scenarios": "a=ping+read+mix+wait+insert100+download", "rounds": 2}
# wsgi-sync8 was the slowest WSGI configuration in ping, read, mix, insert100 and download in the
# round-3 run (and never wsgi-best): leaving it out saves 12 runs.
ROUND3_SWEEP_SKIP = ("wsgi-sync8",)
OPEN_STEPS = 8  # at most this many 15 s steps per scenario and round in stage b
START_S = 6.0  # server start + health wait, per run
WARMUP_S = 3.0
K6_S = 4.0  # k6 start-up and graceful stop
SETUP_S = 30.0  # check services, migrate, project and key


def seconds(duration: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    return float(duration[:-1]) * units[duration[-1]] if duration[-1] in units else float(duration)


def build_names(stage: Stage, sweep: list[str], peers: list[str], args=None) -> list[str]:
    """The builds of ``stage``: the pure ASGI build first, the direct protocol beside it, then
    ``args.extra_builds`` and the WSGI sweep (``--preset round3``: stage a without asgi-django
    unless it is an extra build, and without :data:`ROUND3_SWEEP_SKIP`; the function stages under
    ``--smoke``: the first build of the sweep only)."""
    extra = list(getattr(args, "extra_builds", None) or [])
    if getattr(args, "preset", "") == "round3":
        sweep = [n for n in sweep if n not in ROUND3_SWEEP_SKIP]
        main = ["asgi", "asgi-direct"]
    else:
        main = ["asgi", "asgi-direct", "asgi-django"]
    main += [n for n in extra if n not in main]
    pair = ["asgi", "asgi-direct", *extra]
    functions = [*pair, *(n for n in sweep if not n.endswith(FUNCTIONS_SWEEP_SKIP))]
    if getattr(args, "smoke", False):  # CI: each kind of server once (the sweep's others run the same code)
        functions = [*pair, *sweep[:1]]
    return {"main": [*main, *sweep], "asgi+sweep": [*pair, *sweep], "asgi": ["asgi"],
            "peers": peers, "functions": functions}[stage.builds]


def smoke_shape(stage: Stage) -> tuple[tuple[int, ...], str]:
    """VUs and run length of ``stage`` under ``--smoke``: 5 VUs for 2 s; the function stages 2 VUs
    for 5 s, so that a warm run outlasts its first executions' cold starts."""
    return ((2,), "5s") if stage.builds == "functions" else ((5,), "2s")


def stage_runs(stage: Stage, builds: list[str], rounds: int, smoke: bool = False) -> list[tuple[int, str, int]]:
    """``(vus, duration, count)`` per closed-model pass, or for stage b ``(vus, step, steps)``."""
    r = 1 if smoke else (stage.rounds or rounds)
    vus, dur = smoke_shape(stage) if smoke else (stage.vus, stage.duration)
    if stage.model == "open":
        steps = 2 if smoke else OPEN_STEPS
        return [(v, dur, len(stage.scenarios) * len(builds) * r * steps) for v in vus]
    return [(v, dur, len(stage.scenarios) * len(builds) * r) for v in vus]


def estimate_s(stage: Stage, builds: list[str], rounds: int, smoke: bool = False) -> float:
    """Seconds the stage takes: measured time plus a fixed overhead per run (server start,
    warm-up, k6 start/stop); stage b counts its maximum number of steps."""
    total = 0.0
    if smoke:  # one server per build, 2 s runs (function stages: 5 s)
        runs = sum(c for _v, _d, c in stage_runs(stage, builds, rounds, smoke))
        return len(builds) * START_S + runs * (1 + seconds(smoke_shape(stage)[1]))
    for _vus, dur, count in stage_runs(stage, builds, rounds, smoke):
        per = seconds(dur) + START_S + K6_S + (0 if stage.model == "open" or smoke else WARMUP_S)
        total += count * per
        if stage.model == "open":  # the closed-model run that gives each search its start
            total += count / (2 if smoke else OPEN_STEPS) * (seconds(dur) + START_S + K6_S + WARMUP_S)
    return total


def shaped(stage: Stage, args) -> Stage:
    """``stage`` with the command line's ``--stage-duration`` and ``--stage-scenarios`` applied."""
    duration = getattr(args, "stage_durations", {}).get(stage.key, stage.duration)
    scenarios = getattr(args, "stage_scenario_map", {}).get(stage.key, stage.scenarios)
    return replace(stage, duration=duration, scenarios=tuple(scenarios))


def _hm(s: float) -> str:
    m = round(s / 60)
    return f"{m // 60} h {m % 60:02d} min" if m >= 60 else f"{max(1, m)} min"


def _smoke_text(preset: str) -> str:
    return f"smoke ({'2 VUs, 5 s' if preset == 'functions' else '5 VUs, 2 s'}, one round)"


def _sweep_shown(sweep: list[str], preset: str) -> list[str]:
    """The WSGI configurations a preset runs."""
    if preset == "round3":
        return [n for n in sweep if n not in ROUND3_SWEEP_SKIP]
    if preset == "functions":
        return [n for n in sweep if not n.endswith(FUNCTIONS_SWEEP_SKIP)]
    return sweep


def plan_text(args, sweep: list[str], peers: list[str]) -> str:
    """The ``--plan`` output: every chosen stage with its builds, runs and estimated duration."""
    rounds = args.rounds
    lines = [f"{args.preset or 'round2'} plan: server CPUs {args.server_cpus} ({args.cores} core(s)), k6 CPUs {args.k6_cpus or 'any'}, "
             f"{_smoke_text(args.preset) if args.smoke else f'{rounds} alternating rounds'}",
             f"WSGI sweep: {', '.join(_sweep_shown(sweep, getattr(args, 'preset', '')))}",
             ""]
    total = SETUP_S + estimate_seed_s(1 if args.preset == "functions" else 500 if not args.smoke else 5)
    lines.append(f"setup: database, project, key, seeding users/rows/files ~{_hm(total)}")
    peers_setup = functions_setup = False
    for key in args.stages:
        st = shaped(ALL_STAGES[key], args)
        names = build_names(st, sweep, peers, args)
        est = estimate_s(st, names, rounds, args.smoke)
        if st.builds == "peers" and not peers_setup:
            est += 60  # once: PocketBase and the embedded database (create, migrate, seed)
            peers_setup = True
        if st.builds == "functions" and not functions_setup:
            est += FUNCTIONS_SETUP_S
            functions_setup = True
            lines.append("functions: a container engine (--functions-engine, else FUNCTIONS_DOCKER_HOST, else a "
                         "private podman service), function benchfn (python-3.13) built by a worker; the first "
                         "run on a machine also builds the runtime image (about a minute more)")
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


def _round3_options(args) -> list[str]:
    """The options of a round3 command that differ from the preset's own defaults."""
    cmd = []
    if ",".join(args.stages) != ROUND3["stages"]:
        cmd += ["--stages", ",".join(args.stages)]
    cmd += ["--server-cpus", args.server_cpus, "--k6-cpus", args.k6_cpus or "''"]
    if args.rounds != ROUND3["rounds"]:
        cmd += ["--rounds", str(args.rounds)]
    if args.extra_builds:
        cmd += ["--extra-builds", ",".join(args.extra_builds)]
    if args.gthread_workers != 2 * args.cores + 1:
        cmd += ["--gthread-workers", str(args.gthread_workers)]
    if args.smoke:
        cmd.append("--smoke")
    for name, flag in (("stage_duration", "--stage-duration"), ("stage_scenarios", "--stage-scenarios")):
        own = getattr(args, name)[len(ROUND3[name]):].lstrip(",")
        if own:
            cmd += [flag, own]
    if args.results_given and args.results_dir != str(RESULTS):
        cmd += ["--results-dir", args.results_dir]
    return cmd + ["--label", args.label or "round3"]


def run_command(args) -> str:
    """The command that runs what this plan describes (``--plan`` dropped)."""
    preset = getattr(args, "preset", "") or "round2"
    cmd = [".venv/bin/python", "loadtests/run.py", "--preset", preset]
    if preset == "round3":
        return " ".join(cmd + _round3_options(args))
    every = list(PRESET_STAGES[preset])
    if list(args.stages) != every:
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
    if getattr(args, "functions_engine", ""):
        cmd += ["--functions-engine", args.functions_engine]
    if args.results_given and args.results_dir != str(RESULTS):
        cmd += ["--results-dir", args.results_dir]
    cmd += ["--label", args.label or preset + ("-" + "".join(args.stages) if list(args.stages) != every else "")]
    return " ".join(cmd)
