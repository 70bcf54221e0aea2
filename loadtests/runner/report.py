"""report.md and chart.png from the measured rows."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
from pathlib import Path

from loadtests.runner.builds import ASGI_ORDER
from loadtests.runner.k6run import k6_binary
from loadtests.runner.sweep import ratios_vs

# Targets for the record; reported as distance, never tuned for.
TARGETS = {"mix": 1.85, "wait": 20.0}
FLOOR = 1.0


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _fmt(v, digits=1):
    if v is None:
        return "–"
    return f"{v:,.{digits}f}" if isinstance(v, float) else f"{v:,}"


def _name(scenario: str) -> str:
    return "account (interim `read`)" if scenario == "account" else scenario


def _distance(ratios_: list[float], target: float) -> str:
    """How far the median ratio is from ``target``, and whether every round met it."""
    if not ratios_:
        return "–"
    med, low = statistics.median(ratios_), min(ratios_)
    if low >= target:
        return "met in every round"
    if med >= target:
        return f"median met; worst round {low:.2f}×"
    return f"{target / med:.2f}× short (median)"


def _closed(rows):
    return [r for r in rows if r["model"] == "closed"]


def _cell(rows, scenario, build, key):
    return _median([r.get(key) for r in _closed(rows) if r["scenario"] == scenario and r["build"] == build])


def ratios(rows, scenario, num, den, key="rps", invert=False):
    """Per-round ratios num/den of ``key`` (den/num if ``invert``), for rounds where both ran."""
    return ratios_vs(rows, scenario, num, den, key=key, invert=invert)


def _ratio_text(values):
    if not values:
        return "–"
    return f"{statistics.median(values):.2f}× ({min(values):.2f}–{max(values):.2f})"


def machine() -> dict:
    info = {"python": platform.python_version(), "nproc": os.cpu_count(), "kernel": platform.release()}
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name"))
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
        info["memory"] = f"{int(mem) / 1024 / 1024:.1f} GiB"
        info["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    except (OSError, StopIteration):
        pass
    from importlib.metadata import version

    for pkg in ("django", "uvicorn", "gunicorn", "uvloop", "httptools", "psycopg", "asyncpg", "redis"):
        try:
            info[pkg] = version(pkg)
        except Exception:
            info[pkg] = "?"
    try:
        info["k6"] = subprocess.run([k6_binary(), "version"], capture_output=True, text=True).stdout.split()[1]
    except (OSError, IndexError):
        info["k6"] = "?"
    return info


def write_report(out: Path, meta: dict, rows: list[dict]) -> None:
    builds = list(meta["builds"])
    scenarios = [s for s in meta["scenarios"] if any(r["scenario"] == s for r in rows)]
    m = machine()
    lines = [f"# Load-test comparison: {', '.join(builds)}", "",
             f"Command: `{meta['command']}`", "",
             f"Machine: {m.get('nproc')} CPUs ({m.get('cpu', '?')}), {m.get('memory', '?')} RAM, kernel "
             f"{m.get('kernel')}, load average at report time {' '.join(m.get('loadavg', []))}. "
             f"Python {m['python']}, Django {m['django']}, uvicorn {m['uvicorn']} (uvloop {m['uvloop']}, "
             f"httptools {m['httptools']}), gunicorn {m['gunicorn']}, psycopg {m['psycopg']} (WSGI, Django), "
             f"asyncpg {m.get('asyncpg', '?')} (ASGI), redis-py {m['redis']}, k6 {m['k6']}.", "",
             f"Server pinned to CPU {meta['args']['server_cpus']}, k6 to CPU {meta['args']['k6_cpus'] or 'any'}; "
             "PostgreSQL and Redis run unpinned (shared with other users of this machine). "
             f"{meta['args']['vus']} VUs (closed model, constant-vus) for {meta['args']['duration']} per run, "
             f"{meta['args']['rounds']} round(s), build order alternating between rounds, each run on a freshly "
             "started server after a warm-up. The machine is shared and noisy: compare ratios within this run, "
             "and prefer CPU ms per request (server utime+stime / requests) as the robust metric.", "",
             "Builds: " + "; ".join(f"**{k}** = {v}" for k, v in meta["builds"].items()) + ".", "",
             "Features found on the server: " + ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in meta["features"].items())
             + ".", "", "## Scenarios", ""]
    lines += [f"- **{k}**: {v}" for k, v in meta["scenarios"].items()]
    lines += ["", "## Closed model (medians over rounds)", "",
              "| scenario | build | req/s | errors % | p50 ms | p95 ms | p99 ms | server CPU ms/req | PostgreSQL CPU ms/req | peak RSS MiB | peak PG conns |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in scenarios:
        for b in builds:
            vals = [_cell(rows, s, b, k) for k in ("rps", "error_pct", "p50_ms", "p95_ms", "p99_ms",
                                                   "cpu_ms_per_req", "db_cpu_ms_per_req", "peak_rss_mib",
                                                   "peak_pg_connections")]
            if vals[0] is None:
                continue
            lines.append(f"| {_name(s)} | {b} | " + " | ".join(_fmt(v, 3 if i in (5, 6) else 1) for i, v in enumerate(vals)) + " |")
    headline = [b for b in ASGI_ORDER if b in builds and b != "asgi-django"]
    if headline and "wsgi" in builds:
        # The pure ASGI build first, the direct /v1 protocol beside it (builds.py names them).
        lines += ["", "## ASGI / WSGI ratios (median over rounds, min–max)", "",
                  "| scenario | build | req/s ratio | CPU-per-request ratio (WSGI ÷ build; > 1 = build cheaper) | "
                  "target | distance |", "|---|---|---:|---:|---:|---|"]
        for s in scenarios:
            target = TARGETS.get(s, FLOOR)
            for b in headline:
                r = ratios(rows, s, b, "wsgi")
                c = ratios(rows, s, b, "wsgi", key="cpu_ms_per_req", invert=True)
                lines.append(f"| {_name(s)} | {b} | {_ratio_text(r)} | {_ratio_text(c)} | ≥ {target:g}× | "
                             f"{_distance(r, target)} |")
        asked = str(meta.get("args", {}).get("scenarios", "")).split(",")
        for s, target in TARGETS.items():
            if s not in scenarios:
                why = "not measured (its endpoints are not on this server)" if s in asked else "not in this run"
                lines.append(f"| {s} | – | {why} | – | ≥ {target:g}× | – |")
    if "asgi-noabuse" in builds:
        r = ratios(rows, "create", "asgi", "asgi-noabuse")
        lines += ["", "## Abuse overhead", "",
                  f"`create` with abuse checks on ÷ off (ABUSE_ENABLED=false): {_ratio_text(r)} (target ≥ 0.9×). "
                  f"Rate-limit headers seen on row create: {meta['features'].get('abuse', 'not probed')}."]
    rt = [r for r in rows if "rt_sent" in r]
    if rt:
        lines += ["", "## Realtime fan-out", "", "| build | round | sent | subscribed | received | loss % | p50 ms | p95 ms |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        lines += [f"| {r['build']} | {r['round']} | {r['rt_sent']} | {r['rt_subscribed']} | {r['rt_received']} | "
                  f"{_fmt(r['rt_loss_pct'], 2)} | {r['rt_p50_ms']} | {r['rt_p95_ms']} |" for r in rt]
    opened = [r for r in rows if r["model"] == "open"]
    if opened:
        lines += ["", f"## Open model (constant-arrival-rate, p95 ≤ {meta['args']['open_p95_ms']:g} ms and < 1 % errors)", "",
                  "| scenario | build | highest passing rate (it/s) | steps tried (rate: p95 ms / errors %) |", "|---|---|---:|---|"]
        for s in scenarios:
            for b in builds:
                steps = [r for r in opened if r["scenario"] == s and r["build"] == b]
                if steps:
                    best = max([r["rate"] for r in steps if r.get("open_pass")], default=0)
                    tried = ", ".join(f"{r['rate']}: {r['p95_ms']:.0f}/{r['error_pct']:.1f}" for r in steps)
                    lines.append(f"| {s} | {b} | {best} | {tried} |")
    limited = sum(r.get("rate_limited", 0) for r in rows)
    shed = sum(r.get("unavailable_503", 0) for r in rows)
    lost = sum(r.get("no_response", 0) for r in rows)
    lines += ["", f"429 responses across all runs: {limited}. 503 responses (back-pressure): {shed}. "
              f"Requests with no HTTP answer (timeout, refused or reset connection): {lost}.", "",
              "## Every run", "",
              "Server CPU % and k6 CPU % are CPU seconds over the k6 process's wall time (k6 start-up and "
              "graceful stop included), a hint of which side was saturated. PostgreSQL CPU ms/req: the CPU "
              "of this host's PostgreSQL processes during the run ÷ requests (empty when PostgreSQL is "
              "elsewhere).", "",
              "| scenario | build | round | req/s | errors % | 503s | no answer | p95 ms | CPU ms/req | PostgreSQL CPU ms/req | server CPU % | k6 CPU % | k6 exit |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['scenario']} | {r['build']} | {r['round']} | {r['rps']} | {r['error_pct']} | "
              f"{r.get('unavailable_503', '–')} | {r.get('no_response', '–')} | {r['p95_ms']} | "
              f"{r.get('cpu_ms_per_req')} | {r.get('db_cpu_ms_per_req', '–')} | {r.get('server_cpu_pct', '–')} | "
              f"{r.get('k6_cpu_pct', '–')} | {r['k6_exit']} |" for r in _closed(rows)]
    (out / "report.md").write_text("\n".join(lines) + "\n")
    chart(out / "chart.png", rows, scenarios, builds)


def chart(path: Path, rows, scenarios, builds) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    width = 0.8 / max(1, len(builds))
    for ax, key, title in ((axes[0], "rps", "requests/s (median, min–max over rounds)"),
                           (axes[1], "p95_ms", "p95 latency ms (median, log scale)")):
        for i, b in enumerate(builds):
            meds, lo, hi = [], [], []
            for s in scenarios:
                vals = [r[key] for r in _closed(rows) if r["scenario"] == s and r["build"] == b and r.get(key) is not None]
                med = statistics.median(vals) if vals else 0
                meds.append(med)
                lo.append(med - min(vals) if vals else 0)
                hi.append(max(vals) - med if vals else 0)
            xs = [x + (i - (len(builds) - 1) / 2) * width for x in range(len(scenarios))]
            ax.bar(xs, meds, width, yerr=[lo, hi], capsize=3, label=b)
        ax.set_xticks(range(len(scenarios)), scenarios, rotation=20)
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
        if key == "p95_ms":
            ax.set_yscale("log")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
