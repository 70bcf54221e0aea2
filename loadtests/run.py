"""ASGI vs WSGI load-test comparison. See loadtests/README.md.

    .venv/bin/python loadtests/run.py --scenarios ping,read,mix --duration 60s --rounds 3

Creates and migrates a dedicated database, seeds a project, key, users with sessions, a table and
a bucket through the API, then for each round, scenario and build: starts the build's server
pinned to --server-cpus, warms it up, runs k6 (pinned to --k6-cpus) at --vus for --duration and
measures the server's CPU time, peak RSS and PostgreSQL connections. Builds alternate order
between rounds. Writes loadtests/results/<date>-<label>/ (k6 summaries, results.json, report.md,
chart.png).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loadtests.runner import seed as seeding  # noqa: E402
from loadtests.runner.builds import BUILDS, abuse_env, start_server  # noqa: E402
from loadtests.runner.k6run import measure  # noqa: E402
from loadtests.runner.report import write_report  # noqa: E402
from loadtests.runner.scenarios import DEFAULT, SCENARIOS, plan  # noqa: E402

T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.monotonic() - T0:7.1f}s] {msg}", flush=True)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a = p.add_argument
    a("--scenarios", default=DEFAULT, help=f"comma-separated (default {DEFAULT}; also: account, create)")
    a("--builds", default="asgi,asgi-django,wsgi", help=f"comma-separated rows of the builds table: {', '.join(BUILDS)}")
    a("--duration", default="60s", help="closed-model run length per scenario and build (Appwrite used 5m)")
    a("--vus", type=int, default=500, help="closed-model virtual users (constant-vus)")
    a("--rounds", type=int, default=3, help="alternating rounds (ASGI,WSGI then WSGI,ASGI ...)")
    a("--warmup", default="3s", help="warm-up run before each measurement (0 = none)")
    a("--open-model", action="store_true", help="also step-search each build's highest open-model rate")
    a("--open-p95-ms", type=float, default=500.0, help="open model: p95 bound in ms (with < 1%% errors)")
    a("--open-steps", type=int, default=5, help="open model: at most this many steps per build and scenario")
    a("--open-duration", default="15s", help="open model: length of one step")
    a("--abuse-overhead", action="store_true", help="also run `create` with abuse on vs ABUSE_ENABLED=false")
    a("--smoke", action="store_true", help="CI smoke: 5 VUs, 2 s, one round, every scenario, both builds")
    a("--label", default="", help="results folder suffix (default: the mode)")
    a("--results-dir", default="",
      help="where the results folder goes (default loadtests/results; with --smoke a temporary folder)")
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
    a("--report-only", default="", metavar="DIR", help="rewrite DIR/report.md and chart.png from DIR/results.json")
    args = p.parse_args(argv)
    if not args.port:
        args.port = _free_port()
    if args.smoke:
        args.drop_database = True
        args.vus, args.duration, args.rounds, args.warmup = 5, "2s", 1, "0"
        args.scenarios = ",".join(n for n in SCENARIOS if n != "account") if args.scenarios == DEFAULT else args.scenarios
        args.big_file_mb = min(args.big_file_mb, 6)
    if args.target_url and not args.key:
        p.error("--target-url needs --project and --key")
    for item in args.server_env:
        if "=" not in item or not item.split("=", 1)[0]:
            p.error(f"--server-env takes NAME=VALUE, got {item!r}")
    return args


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


def check_services(args) -> None:
    import psycopg
    import redis

    try:
        psycopg.connect(args.pg_url, connect_timeout=3).close()
    except psycopg.Error as exc:
        raise SystemExit(f"PostgreSQL is not reachable at {args.pg_url}: {exc}") from None
    try:
        redis.Redis.from_url(args.redis_url, socket_timeout=3).ping()
    except redis.RedisError as exc:
        raise SystemExit(f"Redis is not reachable at {args.redis_url}: {exc}") from None


def _seconds(duration: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    return float(duration[:-1]) * units[duration[-1]] if duration[-1] in units else float(duration)


class Bench:
    def __init__(self, args, out: Path, work: Path):
        self.args, self.out, self.work = args, out, work
        self.external = bool(args.target_url)
        self.server_env: dict[str, str] = {}
        self.db_url = ""
        self.rows: list[dict] = []
        self.keep = args.smoke  # smoke: one server per build for all scenarios (CI time)
        self.current = None

    def server_for(self, build, tag):
        """A freshly started server for ``build`` (reused across scenarios in smoke mode)."""
        if build is None:
            return None
        if self.keep and self.current and self.current.build is build:
            return self.current
        self.stop_current()
        a = self.args
        self.current = start_server(build, a.port, self.server_env, a.server_cpus, self.work / f"server-{tag}.log")
        return self.current

    def stop_current(self):
        if self.current:
            self.current.stop()
            self.current = None

    def k6_env(self, url: str, key: str, seed_file: Path, **extra) -> dict[str, str]:
        a = self.args
        return {"BASE_URL": url, "PROJECT_ID": a.project, "API_KEY": key, "SEED_FILE": str(seed_file),
                "VUS": str(a.vus), "DURATION": a.duration, **{k: str(v) for k, v in extra.items()}}

    def run_one(self, sc, build, rnd: int, key: str, seed_file: Path, model="closed", rate=0) -> dict:
        a = self.args
        tag = f"{sc.name}-{build.name if build else 'external'}-r{rnd}" + (f"-open{rate}" if model == "open" else "")
        env = self.k6_env(a.target_url or f"http://127.0.0.1:{a.port}", key, seed_file, MODEL=model, RATE=rate)
        if model == "open":
            env["DURATION"] = a.open_duration
        server = self.server_for(build, tag)
        try:
            if a.warmup not in ("0", "0s") and sc.name != "realtime":
                warm = {**env, "VUS": str(min(50, a.vus)), "DURATION": a.warmup, "MODEL": "closed"}
                measure(None, sc.js, warm, self.work / f"warmup-{tag}.json", a.k6_cpus or None,
                        self.work / "k6.log", 120, None, "")
            budget = _seconds(env["DURATION"]) + 120
            row = measure(server, sc.js, env, self.out / "summaries" / f"{tag}.json", a.k6_cpus or None,
                          self.work / "k6.log", budget, None if self.external else a.pg_url, a.database)
        finally:
            if server and not self.keep:
                server.stop()
        row.update(scenario=sc.name, build=build.name if build else "external", round=rnd, model=model, rate=rate)
        self.rows.append(row)
        extra = f" loss={row.get('rt_loss_pct')}%" if "rt_sent" in row else ""
        log(f"  {tag:32s} {row['rps']:9.1f} req/s  err {row['error_pct']:5.2f}%  p95 {row['p95_ms']:8.1f} ms  "
            f"cpu/req {row.get('cpu_ms_per_req')} ms  rss {row.get('peak_rss_mib')} MiB  "
            f"pg {row['peak_pg_connections']}{extra}")
        return row

    def open_search(self, sc, build, key, seed_file) -> None:
        """Step the arrival rate up (x1.6) from half the closed-model rate; after a failure, bisect
        between the best passing and the lowest failing rate until they are within 10 %."""
        a = self.args
        closed = [r["iterations_per_s"] for r in self.rows if r["scenario"] == sc.name and r["build"] == build.name
                  and r["model"] == "closed"]
        rate, best, fail = max(5, int(0.5 * (sum(closed) / len(closed) if closed else 20))), 0, 0
        for _ in range(a.open_steps):
            row = self.run_one(sc, build, 0, key, seed_file, model="open", rate=rate)
            iters = max(1, rate * _seconds(a.open_duration))
            good = (row["p95_ms"] <= a.open_p95_ms and row["error_pct"] < 1
                    and row["dropped_iterations"] < 0.01 * iters and row["requests"] > 0)
            row["open_pass"] = good
            if good:
                best = rate
            else:
                fail = rate
            rate = int((best + fail) / 2) if fail else int(rate * 1.6) + 1
            if fail and fail - best <= max(2, best // 10):
                break
        log(f"  open model {sc.name}/{build.name}: highest passing rate {best} it/s (p95 <= {a.open_p95_ms} ms)")


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return run(args, argv)
    finally:
        if args.drop_database and not args.target_url and not args.report_only:
            _drop_database(args)


def _drop_database(args) -> None:
    import psycopg

    try:
        with psycopg.connect(args.pg_url, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        log(f"database {args.database} dropped")
    except psycopg.Error as exc:
        log(f"could not drop database {args.database}: {exc}")


def run(args, argv=None) -> int:
    """One benchmark (or report rewrite) as ``args`` say; see the module docstring."""
    if args.report_only:
        saved = json.loads((Path(args.report_only) / "results.json").read_text())
        write_report(Path(args.report_only), saved["meta"], saved["rows"])
        return 0
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d-%H%M")
    label = args.label or ("smoke" if args.smoke else "external" if args.target_url else "comparison")
    results_dir = args.results_dir or (tempfile.mkdtemp(prefix="loadtests-smoke-") if args.smoke
                                       else str(ROOT / "loadtests" / "results"))
    out = Path(results_dir) / f"{stamp}-{label}"
    (out / "summaries").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="loadtests-"))
    bench = Bench(args, out, work)
    builds = [BUILDS[b] for b in args.builds.split(",") if b]
    if args.abuse_overhead and "asgi-noabuse" not in [b.name for b in builds]:
        builds.append(BUILDS["asgi-noabuse"])
    names = [n for n in args.scenarios.split(",") if n]
    if args.abuse_overhead and "create" not in names:
        names.append("create")
    log(f"results -> {out}  (logs in {work})")

    if args.target_url:
        url, key = args.target_url.rstrip("/"), args.key
    else:
        check_services(args)
        base = args.pg_url.rsplit("/", 1)[0]
        bench.db_url = f"{base}/{args.database}"
        bench.server_env = {"DATABASE_URL": bench.db_url, "REDIS_URL": args.redis_url, "BENCH_APP": "1",
                            "DB_POOL_MIN_SIZE": "1", "DB_POOL_MAX_SIZE": "20", "LOG_LEVEL": "WARNING",
                            "APP_ENV": "development", "DEBUG": "false", **abuse_env(args.vus),
                            **dict(item.split("=", 1) for item in args.server_env)}
        mig_env = {**os.environ, **bench.server_env}
        log(f"database {args.database}: create/migrate")
        seeding.prepare_database(args.pg_url, args.database, args.fresh, mig_env)
        key = seeding.create_project(mig_env, args.project)
        url = f"http://127.0.0.1:{args.port}"

    seed_file = (out if args.seed_only else work) / "seed.json"
    seed_server = None if args.target_url else start_server(
        BUILDS["asgi"], args.port, bench.server_env, args.server_cpus, work / "server-seed.log")
    try:
        log("seeding through the API")
        data = seeding.seed(seeding.Client(url, args.project, key), url, args.users or args.vus, args.big_file_mb, log)
    finally:
        if seed_server:
            seed_server.stop()
    seed_file.write_text(json.dumps(data))
    if args.seed_only:
        log(f"seed written to {seed_file}")
        return 0
    todo = plan(names, data["features"], log)
    log(f"plan: {', '.join(s.name for s in todo)} x {', '.join(b.name for b in builds) if not args.target_url else 'external'}"
        f" x {args.rounds} round(s), {args.vus} VUs, {args.duration}")
    for rnd in range(1, args.rounds + 1):
        order = builds if rnd % 2 else list(reversed(builds))
        log(f"round {rnd}/{args.rounds}")
        pairs = [(sc, b) for sc in todo for b in (order if not args.target_url else [None])]
        if args.smoke:  # build-major, so each build's server starts once
            pairs.sort(key=lambda p: order.index(p[1]) if p[1] else 0)
        for sc, build in pairs:
            if build and ((sc.asgi_only and not build.asgi) or (build.only_scenarios and sc.name not in build.only_scenarios)):
                continue
            bench.run_one(sc, build, rnd, key, seed_file)
    bench.stop_current()
    if args.open_model and not args.target_url:
        log("open model step search")
        for sc in [s for s in todo if s.open_model]:
            for build in builds:
                if not build.only_scenarios:
                    bench.open_search(sc, build, key, seed_file)
    argv = list(argv if argv is not None else sys.argv[1:])
    if args.key:  # never write the key into the results
        argv = ["***" if a == args.key else a.replace(args.key, "***") for a in argv]
    shown = {"external": f"external server at {args.target_url}"} if args.target_url else {b.name: b.label for b in builds}
    meta = {"command": " ".join([".venv/bin/python", "loadtests/run.py", *argv]),
            "features": data["features"], "args": {k: v for k, v in vars(args).items() if k != "key"}, "builds": shown,
            "scenarios": {s.name: s.what for s in todo}, "work_dir": str(work)}
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": bench.rows}, indent=1))
    write_report(out, meta, bench.rows)
    log(f"done: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
