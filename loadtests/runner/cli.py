"""The runner's command line: options, presets and the checks made before anything starts."""

from __future__ import annotations

import argparse
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from loadtests.runner.builds import BUILDS, RESULTS, ROOT, cpu_list
from loadtests.runner.scenarios import DEFAULT, SCENARIOS

PRESETS = ("round2", "round3", "functions")


def _admin_url() -> str:
    """The maintenance database (``/postgres``) on ``DATABASE_URL``'s server."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        return "postgres://postgres@127.0.0.1:5432/postgres"
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/postgres", "", ""))


def _own_database() -> str:
    """``<DATABASE_URL's database>_bench``, so two users of one PostgreSQL server never share it."""
    name = urlsplit(os.environ.get("DATABASE_URL", "")).path.strip("/")
    return f"{name}_bench" if name else "bench_lt"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _options(p: argparse.ArgumentParser) -> None:
    a = p.add_argument
    a("--scenarios", default=DEFAULT, help=f"comma-separated (default {DEFAULT}; also: account, create)")
    a("--builds", default="asgi,asgi-direct,asgi-django,wsgi", help=f"comma-separated rows of the builds table: {', '.join(BUILDS)}")
    a("--duration", default="60s", help="closed-model run length per scenario and build (Appwrite used 5m)")
    a("--vus", type=int, default=500, help="closed-model virtual users (constant-vus)")
    a("--rounds", type=int, default=None, help="alternating rounds (ASGI,WSGI then WSGI,ASGI ...); default 3, "
      "with --preset round3 2")
    a("--warmup", default="3s", help="warm-up run before each measurement (0 = none)")
    a("--open-model", action="store_true", help="also step-search each build's highest open-model rate")
    a("--open-p95-ms", type=float, default=500.0, help="open model: a step passes if p95 < this (ms), with < 1%% errors")
    a("--open-steps", type=int, default=5, help="open model: at most this many steps per build and scenario")
    a("--open-duration", default="15s", help="open model: length of one step")
    a("--profile", action="store_true", help="after the measured rounds, one more run per scenario and ASGI "
      "build with py-spy attached: flames/<run>.svg and .txt in the results folder (not measured rows)")
    a("--abuse-overhead", action="store_true", help="also run `create` with abuse on vs ABUSE_ENABLED=false")
    a("--smoke", action="store_true", help="CI smoke: 5 VUs, 2 s, one round, every scenario; leaves no folder "
      "or database behind unless --results-dir is given")
    a("--preset", choices=PRESETS, default="", help="round2: the WSGI sweep, open model, PocketBase peers, the "
      "seeds' cases and Appwrite's method, in stages (see --plan); round3: stages a, c and d of round2 cut to "
      "about 40 minutes on one server core (runner/round2.py ROUND3); functions: warm and cold synchronous "
      "executions of a tiny Python function (stages g and h; needs a container engine, see --functions-engine)")
    a("--extra-builds", default="", help="with --preset: more ASGI builds for the ratio stages a, e and f "
      "(asgi-granian, asgi-django)")
    a("--stages", default="", help="with --preset: comma-separated stage letters to run (default: all)")
    a("--plan", action="store_true", help="print what the run would do and how long it takes, then stop")
    a("--stage-duration", default="", metavar="[S=]D,...",
      help="with --preset: run length instead of the stages' own, for all closed-model stages (e.g. 10s) "
      "or per stage (a=10s,f=1m); the report prints the lengths used")
    a("--stage-scenarios", default="", metavar="S=N+N,...",
      help="with --preset: run only these of a stage's scenarios (e.g. a=ping+read+mix)")
    a("--functions-engine", default="", metavar="URL",
      help="with --preset functions: the container engine's API (e.g. unix:///var/run/docker.sock); default "
      "FUNCTIONS_DOCKER_HOST, else a podman service of the run's own (podman, root)")
    a("--gthread-workers", type=int, default=0, help="WSGI sweep: gunicorn gthread workers (default 2 x cores + 1)")
    a("--label", default="", help="results folder suffix (default: the mode)")
    a("--results-dir", default="", help=f"where the results folder goes (default {RESULTS.relative_to(ROOT)})")
    a("--server-cpus", default="0", help="taskset CPU list for the server")
    a("--k6-cpus", default="1", help="taskset CPU list for k6 ('' = unpinned)")
    a("--pg-url", default=_admin_url(), help="admin URL of the PostgreSQL server (default: DATABASE_URL's server)")
    a("--database", default=_own_database(),
      help="benchmark database name, created and migrated (default: DATABASE_URL's name + '_bench')")
    a("--fresh", action="store_true", help="drop and recreate the benchmark database first")
    a("--drop-database", action="store_true", help="drop the benchmark database at the end (implied by --smoke)")
    a("--redis-url", default=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/8",
      help="the servers' Redis (default: REDIS_URL)")
    a("--users", type=int, default=0, help="seeded users (default: one per VU)")
    a("--big-file-mb", type=int, default=20)
    a("--port", type=int, default=0, help="the servers' port (default: a free one)")
    a("--target-url", default="", help="run against an external server (no server metrics); needs --project, --key")
    a("--project", default="bench")
    a("--key", default="")
    a("--server-env", action="append", default=[], metavar="NAME=VALUE",
      help="extra environment for every build's server (repeatable; for A/B runs of a setting)")
    a("--seed-only", action="store_true", help="seed, write seed.json into the results folder, stop")
    a("--report-only", default="", metavar="DIR", help="rewrite DIR's report and charts from DIR/results.json")


def parse_args(argv=None) -> argparse.Namespace:
    """The parsed options; exits with status 2 (argparse's usage error) on a malformed or
    contradictory combination, before any service is touched."""
    p = argparse.ArgumentParser(description="Load tests: the builds of this server under k6 (loadtests/README.md).")
    _options(p)
    args = p.parse_args(argv)
    args.results_given = bool(args.results_dir)
    if not args.port:
        args.port = _free_port()
    if args.smoke:
        args.drop_database = True
    args.results_dir = args.results_dir or str(RESULTS)
    try:
        args.cores = len(cpu_list(args.server_cpus))
    except ValueError:
        p.error(f"--server-cpus takes a taskset CPU list such as 0 or 0-3, got {args.server_cpus!r}")
    if args.gthread_workers < 0:
        p.error("--gthread-workers must be >= 1")
    args.gthread_workers = args.gthread_workers or 2 * args.cores + 1
    if args.preset == "round3":
        from loadtests.runner.round2 import ROUND3

        for name, value in ROUND3.items():
            current = getattr(args, name)
            if name in ("stage_duration", "stage_scenarios"):  # the preset's, then the command line's
                setattr(args, name, ",".join(filter(None, [value, current])))
            elif current in ("", None):
                setattr(args, name, value)
    if args.rounds is None:
        args.rounds = 3
    extra = [n.strip() for n in args.extra_builds.split(",") if n.strip()]
    bad = [n for n in extra if n not in ("asgi-granian", "asgi-django")]
    if bad or (extra and not args.preset):
        p.error("--extra-builds takes asgi-granian and/or asgi-django, with --preset")
    args.extra_builds = extra
    if args.preset:
        from loadtests.runner.round2 import PRESET_STAGES

        table = PRESET_STAGES[args.preset]
        chosen = [s.strip() for s in args.stages.split(",") if s.strip()] or list(table)
        unknown = [s for s in chosen if s not in table]
        if unknown:
            p.error(f"--stages: unknown stage(s) {', '.join(unknown)}; known: {','.join(table)}")
        args.stages = [s for s in table if s in chosen]
        try:
            args.stage_durations = _per_stage(args.stage_duration, table, _duration)
            args.stage_scenario_map = _per_stage(args.stage_scenarios, table, lambda v: tuple(v.split("+")),
                                              needs_key=True)
        except ValueError as exc:
            p.error(str(exc))
        for key, names in args.stage_scenario_map.items():
            unknown = [n for n in names if n not in table[key].scenarios]
            if unknown:
                p.error(f"--stage-scenarios: stage {key} has no {', '.join(unknown)} "
                        f"(it runs {', '.join(table[key].scenarios)})")
        if args.target_url or args.seed_only:
            p.error("--preset starts its own servers: it takes neither --target-url nor --seed-only")
        least = 2 if args.preset == "round3" else 3
        if args.rounds < least and not args.smoke:
            p.error(f"--preset {args.preset} reports medians of alternating rounds: --rounds must be >= {least}")
    elif args.stages or args.stage_duration or args.stage_scenarios:
        p.error("--stages, --stage-duration and --stage-scenarios need --preset")
    else:
        peer = [n for n in args.scenarios.split(",") if n in SCENARIOS and SCENARIOS[n].peer]
        if peer:
            p.error(f"{', '.join(peer)}: peer scenarios need their seeded table; run them with "
                    "--preset round2 --stages c,d")
        function = [n for n in args.scenarios.split(",") if n in SCENARIOS and SCENARIOS[n].function]
        if function:
            p.error(f"{', '.join(function)}: function scenarios need a container engine and the seeded "
                    "function; run them with --preset functions")
    if args.functions_engine and args.preset != "functions":
        p.error("--functions-engine goes with --preset functions")
    if args.smoke:
        args.vus, args.duration, args.rounds, args.warmup = 5, "2s", 1, "0"
        if args.scenarios == DEFAULT:
            args.scenarios = ",".join(n for n, s in SCENARIOS.items()
                                      if n != "account" and not s.peer and not s.function)
        args.big_file_mb = min(args.big_file_mb, 6)
        args.open_steps, args.open_duration = min(args.open_steps, 2), "2s"
    if args.target_url and not args.key:
        p.error("--target-url needs --project and --key")
    for item in args.server_env:
        if "=" not in item or not item.split("=", 1)[0]:
            p.error(f"--server-env takes NAME=VALUE, got {item!r}")
    return args


def _duration(value: str) -> str:
    if not value or value[-1] not in "sm" or not value[:-1].isdigit() or int(value[:-1]) <= 0:
        raise ValueError(f"a run length is a whole number of seconds or minutes (10s, 2m), got {value!r}")
    return value


def _per_stage(spec: str, stages, convert, needs_key: bool = False) -> dict:
    """``"10s"`` (every stage) or ``"a=10s,f=1m"`` as {stage: converted value}; ValueError if
    malformed or a stage is unknown."""
    out: dict = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            if needs_key:
                raise ValueError(f"expected STAGE=VALUE, got {item!r}")
            out.update({k: convert(item) for k in stages})
            continue
        if key not in stages:
            raise ValueError(f"unknown stage {key!r} in {spec!r}")
        out[key] = convert(value)
    return out


def results_folder(args, stamp: str) -> Path:
    """``<results dir>/<stamp>-<label>``; the label defaults to the mode."""
    label = args.label or args.preset or ("smoke" if args.smoke else "external" if args.target_url else "comparison")
    if args.smoke and args.preset and not args.label:
        label = f"{args.preset}-smoke"
    return Path(args.results_dir) / f"{stamp}-{label}"
