"""One measured run (server + warm-up + k6 + metrics), the round matrix and the open-model search."""

from __future__ import annotations

import time
from pathlib import Path

from loadtests.runner.builds import Build, start_server
from loadtests.runner.k6run import measure

# ASGI builds --profile leaves out (see Bench.matrix).
NOT_PROFILED = ("asgi-django", "asgi-granian")

T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.monotonic() - T0:7.1f}s] {msg}", flush=True)


def checkpoint(pg_url: str | None) -> bool:
    """Run PostgreSQL's ``CHECKPOINT`` on the server of ``pg_url`` (the runner's admin URL), so
    that a run does not pay for the dirty pages of the run before it. Without it, the first run
    after a write-heavy one overlapped two checkpoints (7,566 and 12,588 buffers). True when done;
    False (nothing raised) when there is no URL, the server is unreachable, or the role may not
    (``CHECKPOINT`` needs a superuser or ``pg_checkpoint``)."""
    if not pg_url:
        return False
    import psycopg

    try:
        with psycopg.connect(pg_url, autocommit=True, connect_timeout=3) as conn:
            conn.execute("CHECKPOINT")
        return True
    except psycopg.Error:
        return False


def seconds(duration: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    return float(duration[:-1]) * units[duration[-1]] if duration[-1] in units else float(duration)


class Bench:
    """Runs scenarios against builds and collects one row of metrics per run in ``rows``.

    ``server_env`` goes to every build; ``build_env[name]`` and ``fill[name]`` (command
    placeholders) to one build; a scenario's ``server_env`` to every server that runs it;
    ``k6_extra[name]`` to k6 when it drives that build. ``after_stop`` holds callables run after
    every server stop (the function stages remove the runtime containers a server left)."""

    def __init__(self, args, out: Path, work: Path):
        self.args, self.out, self.work = args, out, work
        self.external = bool(args.target_url)
        self.server_env: dict[str, str] = {}
        self.build_env: dict[str, dict[str, str]] = {}
        self.fill: dict[str, dict[str, str]] = {}
        self.k6_extra: dict[str, dict[str, str]] = {}
        self.db_url = ""
        self.rows: list[dict] = []
        self.keep = args.smoke  # smoke: one server per build for all scenarios (CI time)
        self.current = None
        self.current_env: dict[str, str] = {}
        self.after_stop: list = []
        self.cleanups: list = []  # run (last first) when the run ends, whatever happened: engines, networks
        self.warned = False

    def start(self, build: Build, tag: str, extra: dict[str, str] | None = None):
        a = self.args
        env = {**self.server_env, **self.build_env.get(build.name, {}), **(extra or {})}
        return start_server(build, a.port, env, a.server_cpus, self.work / f"server-{tag}.log",
                            fill=self.fill.get(build.name))

    def server_for(self, build, tag, extra: dict[str, str] | None = None):
        """A freshly started server for ``build`` with the scenario's settings ``extra`` (reused
        across scenarios with the same settings in smoke mode)."""
        if build is None:
            return None
        extra = extra or {}
        if self.keep and self.current and self.current.build is build and self.current_env == extra:
            return self.current
        self.stop_current()
        self.current = self.start(build, tag, extra)
        self.current_env = extra
        return self.current

    def stop_current(self):
        if self.current:
            self.current.stop()
            self.current = None
            self.stopped()

    def stopped(self) -> None:
        for hook in self.after_stop:
            hook()

    def run_one(self, sc, build, rnd: int, key: str, seed_file: Path, model="closed", rate=0, *,
                stage: str = "", vus: int | None = None, duration: str | None = None,
                open_duration: str | None = None) -> dict:
        """Start ``build`` (unless kept), warm up, run ``sc`` under k6, stop; returns the row."""
        a = self.args
        vus, duration = vus or a.vus, duration or a.duration
        name = build.name if build else "external"
        tag = (f"{stage}-" if stage else "") + f"{sc.name}-{name}-r{rnd}" + (f"-v{vus}" if stage else "") \
            + (f"-open{rate}" if model == "open" else "")
        env = {"BASE_URL": a.target_url or f"http://127.0.0.1:{a.port}", "PROJECT_ID": a.project, "API_KEY": key,
               "SEED_FILE": str(seed_file), "VUS": str(vus), "DURATION": duration, "MODEL": model, "RATE": str(rate),
               **(self.k6_extra.get(name, {}))}
        if model == "open":
            env["DURATION"] = open_duration or a.open_duration
        if not self.external and not self.keep and not checkpoint(a.pg_url) and not self.warned:
            self.warned = True
            log("  (could not run CHECKPOINT before the runs: a run may pay for the last one's writes)")
        server = self.server_for(build, tag, dict(sc.server_env))
        try:
            if a.warmup not in ("0", "0s") and sc.name != "realtime":
                warm = {**env, "VUS": str(min(50, vus)), "DURATION": a.warmup, "MODEL": "closed"}
                measure(None, sc.js, warm, self.work / f"warmup-{tag}.json", a.k6_cpus or None,
                        self.work / "k6.log", 120, None, "")
            budget = seconds(env["DURATION"]) + 120
            row = measure(server, sc.js, env, self.out / "summaries" / f"{tag}.json", a.k6_cpus or None,
                          self.work / "k6.log", budget, None if self.external else a.pg_url, a.database,
                          None if self.external else a.redis_url)
        finally:
            if server and not self.keep:
                server.stop()
                self.current = None
                self.stopped()
        row.update(scenario=sc.name, build=name, round=rnd, model=model, rate=rate, stage=stage, vus=vus,
                   family=build.family if build else "")
        self.rows.append(row)
        extra = f" loss={row.get('rt_loss_pct')}%" if "rt_sent" in row else ""
        log(f"  {tag:40s} {row['rps']:9.1f} req/s  err {row['error_pct']:5.2f}%  p95 {row['p95_ms']:8.1f} ms  "
            f"cpu/req {row.get('cpu_ms_per_req')} ms  rss {row.get('peak_rss_mib')} MiB  "
            f"pg {row['peak_pg_connections']}{extra}")
        return row

    def profile_run(self, sc, build, key: str, seed_file: Path, *, stage: str = "", vus: int | None = None,
                    duration: str | None = None) -> None:
        """One more run of ``sc`` on ``build`` with py-spy attached (``--profile``, ``flames.py``):
        writes ``flames/<tag>.svg`` and ``.txt``; the run is not a measured row."""
        from loadtests.runner.flames import Recorder

        a = self.args
        vus, duration = vus or a.vus, duration or a.duration
        tag = (f"{stage}-" if stage else "") + f"{sc.name}-{build.name}" + (f"-v{vus}" if stage else "")
        env = {"BASE_URL": f"http://127.0.0.1:{a.port}", "PROJECT_ID": a.project, "API_KEY": key,
               "SEED_FILE": str(seed_file), "VUS": str(vus), "DURATION": duration, "MODEL": "closed", "RATE": "0",
               **(self.k6_extra.get(build.name, {}))}
        checkpoint(a.pg_url)
        self.stop_current()
        server = self.start(build, f"profile-{tag}", dict(sc.server_env))
        try:
            if a.warmup not in ("0", "0s"):
                measure(None, sc.js, {**env, "VUS": str(min(50, vus)), "DURATION": a.warmup},
                        self.work / f"warmup-profile-{tag}.json", a.k6_cpus or None, self.work / "k6.log", 120, None, "")
            recorder = Recorder(server.proc.pid, seconds(duration), self.out / "flames" / f"{tag}.svg", a.k6_cpus)
            measure(None, sc.js, env, self.work / f"profile-{tag}.json", a.k6_cpus or None, self.work / "k6.log",
                    seconds(duration) + 120, None, "")
            recorder.finish()
        finally:
            server.stop()
            self.stopped()
        log(f"  profile {tag}: flames/{tag}.svg")

    def matrix(self, scenarios, builds, rounds: int, key: str, seed_file: Path, *, stage: str = "",
               vus: int | None = None, duration: str | None = None) -> None:
        """Every scenario on every build for ``rounds`` rounds, the build order reversed every
        other round (in smoke mode build-major, so each build's server starts once); with
        ``--profile``, then one profiled run per scenario on each Python ASGI build but
        :data:`NOT_PROFILED`."""
        self._matrix(scenarios, builds, rounds, key, seed_file, stage=stage, vus=vus, duration=duration)
        if getattr(self.args, "profile", False) and not self.external:
            for sc in scenarios:
                for build in builds:
                    # Not the naive build, and not granian: py-spy attaches to the started
                    # process, which for granian is the supervisor, not the worker serving.
                    if build.asgi and build.family != "peer" and build.name not in NOT_PROFILED and not (
                            build.only_scenarios and sc.name not in build.only_scenarios):
                        self.profile_run(sc, build, key, seed_file, stage=stage, vus=vus, duration=duration)

    def _matrix(self, scenarios, builds, rounds: int, key: str, seed_file: Path, *, stage: str = "",
                vus: int | None = None, duration: str | None = None) -> None:
        for rnd in range(1, rounds + 1):
            order = builds if rnd % 2 else list(reversed(builds))
            log(f"{'stage ' + stage + ': ' if stage else ''}round {rnd}/{rounds}")
            pairs = [(sc, b) for sc in scenarios for b in (order if not self.external else [None])]
            if self.keep:
                pairs.sort(key=lambda p: order.index(p[1]) if p[1] else 0)
            for sc, build in pairs:
                if build and ((sc.asgi_only and not build.asgi)
                              or (build.only_scenarios and sc.name not in build.only_scenarios)):
                    continue
                self.run_one(sc, build, rnd, key, seed_file, stage=stage, vus=vus, duration=duration)
        self.stop_current()

    def open_search(self, sc, build, key, seed_file, *, stage: str = "", rnd: int = 0, p95_ms: float | None = None,
                    steps: int | None = None, start: float | None = None) -> int:
        """Highest constant-arrival-rate (iterations/s) at which p95 < ``p95_ms``, errors < 1 % and
        fewer than 1 % of iterations were dropped. Starts at ``start`` (default: half the
        closed-model rate measured for this scenario and build, else 20/s), multiplies by 1.6 while
        steps pass, then bisects between the best pass and the lowest failure; at most ``steps``
        steps. Every step is a row (``open_pass``); returns the best passing rate (0 if none)."""
        a = self.args
        p95_ms = a.open_p95_ms if p95_ms is None else p95_ms
        steps = steps or a.open_steps
        if start is None:
            closed = [r["iterations_per_s"] for r in self.rows if r["scenario"] == sc.name
                      and r["build"] == build.name and r["model"] == "closed"]
            start = 0.5 * (sum(closed) / len(closed)) if closed else 20
        rate, best, fail = max(5, int(start)), 0, 0
        for _ in range(steps):
            row = self.run_one(sc, build, rnd, key, seed_file, model="open", rate=rate, stage=stage)
            iters = max(1, rate * seconds(a.open_duration))
            good = (row["p95_ms"] < p95_ms and row["error_pct"] < 1
                    and row["dropped_iterations"] < 0.01 * iters and row["requests"] > 0)
            row["open_pass"] = good
            if good:
                best = rate
            else:
                fail = rate
            rate = int((best + fail) / 2) if fail else int(rate * 1.6) + 1
            if fail and fail - best <= max(2, best // 10):
                break
        log(f"  open model {sc.name}/{build.name}: highest passing rate {best} it/s (p95 < {p95_ms:g} ms)")
        return best
