"""Load tests: builds of this server under k6 (loadtests/README.md).

    .venv/bin/python loadtests/run.py --scenarios ping,read,mix --duration 60s --rounds 3
    .venv/bin/python loadtests/run.py --preset round2 --plan

Creates and migrates a dedicated database, seeds a project, key, users with sessions, a table and
a bucket through the API, then for each round, scenario and build: starts the build's server
pinned to --server-cpus, warms it up, runs k6 (pinned to --k6-cpus) at --vus for --duration and
measures the server's CPU time, peak RSS and PostgreSQL connections. Builds alternate order
between rounds. ``--preset round2`` (``round3``, ``functions``) runs the stages of ``runner/round2.py`` instead. Writes
loadtests/results/<date>-<label>/ (k6 summaries, results.json, report.md, charts).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from loadtests.runner import seed as seeding  # noqa: E402
from loadtests.runner.bench import Bench, log  # noqa: E402
from loadtests.runner.builds import BUILDS, abuse_env, start_server  # noqa: E402
from loadtests.runner.cli import parse_args, results_folder  # noqa: E402
from loadtests.runner.report import write_report  # noqa: E402
from loadtests.runner.scenarios import SCENARIOS, plan  # noqa: E402


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


def print_plan(args) -> int:
    from loadtests.runner.round2 import plan_text
    from loadtests.runner.stages import peer_names, sweep_names

    print(plan_text(args, sweep_names(args), peer_names(args)))
    return 0


def report(out: Path, meta: dict, rows: list[dict]) -> None:
    if meta.get("preset") in ("round2", "round3", "functions"):
        from loadtests.runner.report2 import write_round2_report

        write_round2_report(out, meta, rows)
    else:
        write_report(out, meta, rows)


def drop_database(args) -> None:
    import psycopg

    try:
        with psycopg.connect(args.pg_url, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')
        log(f"database {args.database} dropped")
    except psycopg.Error as exc:
        log(f"could not drop database {args.database}: {exc}")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.plan:
        if not args.preset:
            raise SystemExit("--plan needs --preset")
        return print_plan(args)
    if args.report_only:
        saved = json.loads((Path(args.report_only) / "results.json").read_text())
        report(Path(args.report_only), saved["meta"], saved["rows"])
        return 0
    # A smoke run leaves nothing behind: its results go to a temp folder unless --results-dir is
    # given, and its database is dropped at the end.
    scratch = args.smoke and not args.results_given
    if scratch:
        args.results_dir = tempfile.mkdtemp(prefix="loadtests-smoke-")
    out = results_folder(args, dt.datetime.now(dt.UTC).strftime("%Y-%m-%d-%H%M"))
    (out / "summaries").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="loadtests-"))
    bench = Bench(args, out, work)
    try:
        return _run(bench, argv)
    finally:
        bench.stop_current()  # never leave a server behind, also when a stage failed
        for cleanup in reversed(bench.cleanups):  # e.g. the function stages' containers and engine
            try:
                cleanup()
            except Exception as exc:  # noqa: BLE001 - one failed cleanup must not skip the others
                log(f"cleanup failed: {exc}")
        if args.drop_database and not args.target_url:
            drop_database(args)
        if args.smoke:
            shutil.rmtree(work, ignore_errors=True)
        if scratch:
            log(f"smoke: removing {args.results_dir} (pass --results-dir to keep it)")
            shutil.rmtree(args.results_dir, ignore_errors=True)


def _run(bench: Bench, argv) -> int:
    args, out, work = bench.args, bench.out, bench.work
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
        vus = 500 if args.preset and not args.smoke else args.vus
        bench.server_env = {"DATABASE_URL": bench.db_url, "REDIS_URL": args.redis_url, "BENCH_APP": "1",
                            "DB_POOL_MIN_SIZE": "1", "DB_POOL_MAX_SIZE": "20", "LOG_LEVEL": "WARNING",
                            "APP_ENV": "development", "DEBUG": "false", **abuse_env(vus),
                            **dict(item.split("=", 1) for item in args.server_env)}
        mig_env = {**os.environ, **bench.server_env}
        log(f"database {args.database}: create/migrate")
        seeding.prepare_database(args.pg_url, args.database, args.fresh, mig_env)
        key = seeding.create_project(mig_env, args.project)
        url = f"http://127.0.0.1:{args.port}"

    seed_file = (out if args.seed_only else work) / "seed.json"
    seed_server = None if args.target_url else start_server(
        BUILDS["asgi"], args.port, bench.server_env, args.server_cpus, work / "server-seed.log")
    # The function stages execute with the key: their preset seeds one user only.
    users = args.users or (1 if args.preset == "functions" else 500 if args.preset and not args.smoke else args.vus)
    try:
        log("seeding through the API")
        data = seeding.seed(seeding.Client(url, args.project, key), url, users, args.big_file_mb, log)
    finally:
        if seed_server:
            seed_server.stop()
    seed_file.write_text(json.dumps(data))
    if args.seed_only:
        log(f"seed written to {seed_file}")
        return 0
    argv = list(argv if argv is not None else sys.argv[1:])
    if args.key:  # never write the key into the results
        argv = ["***" if a == args.key else a.replace(args.key, "***") for a in argv]
    meta = {"command": " ".join([".venv/bin/python", "loadtests/run.py", *argv]), "features": data["features"],
            "args": {k: v for k, v in vars(args).items() if k != "key"}, "work_dir": str(work)}
    if args.preset:
        from loadtests.runner.stages import run_round2

        def checkpoint(summary: dict) -> None:  # results.json after every stage, report at the end
            partial = {**meta, "preset": args.preset, **summary}
            (out / "results.json").write_text(json.dumps({"meta": partial, "rows": bench.rows}, indent=1))

        meta.update(preset=args.preset, **run_round2(bench, key, seed_file, data["features"], checkpoint))
        meta["scenarios"] = {n: SCENARIOS[n].what for st in meta["stages"].values() for n in st["scenarios"]}
    else:
        todo = plan(names, data["features"], log)
        log(f"plan: {', '.join(s.name for s in todo)} x "
            f"{', '.join(b.name for b in builds) if not args.target_url else 'external'}"
            f" x {args.rounds} round(s), {args.vus} VUs, {args.duration}")
        bench.matrix(todo, builds, args.rounds, key, seed_file)
        if args.open_model and not args.target_url:
            log("open model step search")
            for sc in [s for s in todo if s.open_model]:
                for build in builds:
                    if not build.only_scenarios:
                        bench.open_search(sc, build, key, seed_file)
        meta["builds"] = ({"external": f"external server at {args.target_url}"} if args.target_url
                          else {b.name: b.label for b in builds})
        meta["scenarios"] = {s.name: s.what for s in todo}
    (out / "results.json").write_text(json.dumps({"meta": meta, "rows": bench.rows}, indent=1))
    report(out, meta, bench.rows)
    log(f"done: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
