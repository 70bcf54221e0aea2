"""report.md and the charts of ``--preset round2``, from ``results.json`` alone.

Every figure is a median over the rounds of this invocation; ratios are per round (both builds
measured in the same round) and shown as median (min-max). `wsgi-best` is chosen per stage and
scenario by ``sweep.wsgi_best`` (most req/s at 0 % errors in every round).
"""

from __future__ import annotations

from pathlib import Path

from loadtests.runner.builds import ASGI_ORDER
from loadtests.runner.report import _fmt as _f
from loadtests.runner.report import _median as _med
from loadtests.runner.report import _ratio_text as _ratio
from loadtests.runner.report import machine
from loadtests.runner.sweep import ratios_vs, wsgi_best
from loadtests.runner.targets import peer_targets, ratio_targets, strongest

POCKETBASES = ("pocketbase", "pocketbase-nolog")

# A published figure quoted beside the CRUD cycle at 1,000 VUs (measured elsewhere, on other hardware).
PUBLISHED_CRUD = {"rps": 7924, "failures": 0, "p95_ms": 2.3}


def _runs(rows, stage, scenario, build, vus=None, model="closed"):
    return [r for r in rows if r.get("stage") == stage and r["scenario"] == scenario and r["build"] == build
            and r["model"] == model and (vus is None or r.get("vus") == vus)]


def cell(rows, stage, scenario, build, key, vus=None):
    """Median of ``key`` over the closed-model rounds of one stage, scenario and build."""
    return _med([r.get(key) for r in _runs(rows, stage, scenario, build, vus)])


def asgi_builds(builds) -> list[str]:
    """The ASGI builds among ``builds`` in :data:`~loadtests.runner.builds.ASGI_ORDER`: the pure
    ASGI build (``asgi``) first, the direct /v1 protocol (``asgi-direct``) beside it."""
    return [b for b in ASGI_ORDER if b in builds]


def sweep_section(rows, stage: str, info: dict) -> list[str]:
    """Stages a and e: every build's req/s, `wsgi-best` and the ratios against it: each ASGI build
    ÷ wsgi-best (``asgi`` first), the first two ÷ the 3 sync workers, their CPU and p95 beside
    wsgi-best's."""
    builds, vus = info["builds"], info["vus"][0]
    wsgi = [b for b in builds if any(r.get("family") == "wsgi" and r["build"] == b for r in rows)]
    head = ["scenario", *builds, "wsgi-best"]
    out = [f"### Stage {stage}: {info['title']}", "",
           f"{vus} VUs, closed model, {info['duration']} per run, {info['rounds']} rounds. req/s (median); "
           "in brackets the highest errors % of any round, when not 0 (such a configuration cannot be "
           "wsgi-best).", "",
           "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    asgi = asgi_builds(builds)
    pair = asgi[:2]
    triple = " / ".join([*pair, "wsgi-best"])
    ratio_lines = ["", "| scenario | wsgi-best | " + " | ".join(f"{b} ÷ wsgi-best (req/s)" for b in asgi)
                   + " | " + " | ".join(f"{b} ÷ wsgi (3 sync)" for b in pair)
                   + f" | CPU ms/req {triple} | PostgreSQL CPU ms/req {triple} | Redis CPU ms/req {triple}"
                   + f" | p95 ms {triple} |",
                   "|---|---|" + "---:|" * (len(asgi) + len(pair) + 4)]
    best_of = {}
    for s in info["scenarios"]:
        cells = []
        for b in builds:
            rps = cell(rows, stage, s, b, "rps", vus)
            err = max([r["error_pct"] for r in _runs(rows, stage, s, b, vus)], default=0)
            cells.append(_f(rps) + (f" ({err:.2f} %)" if err else ""))
        best = wsgi_best(rows, s, stage, vus) if wsgi else None
        best_of[s] = best
        best_txt = f"{best}: {_f(cell(rows, stage, s, best, 'rps', vus))}" if best else "none at 0 % errors"
        out.append(f"| {s} | " + " | ".join(cells) + f" | {best_txt} |")
        vs_best = [_ratio(ratios_vs(rows, s, b, best, stage, vus)) if best else "–" for b in asgi]
        vs_wsgi = [_ratio(ratios_vs(rows, s, b, "wsgi", stage, vus)) for b in pair]
        per_req = [" / ".join(_f(cell(rows, stage, s, b, k, vus), 3) for b in [*pair, best]) if best else "–"
                   for k in ("cpu_ms_per_req", "db_cpu_ms_per_req", "redis_cpu_ms_per_req")]
        p95 = " / ".join(_f(cell(rows, stage, s, b, "p95_ms", vus)) for b in [*pair, best]) if best else "–"
        ratio_lines.append(f"| {s} | {best or 'none'} | " + " | ".join([*vs_best, *vs_wsgi, *per_req, p95]) + " |")
    if stage == "a":
        ratio_lines += ratio_targets(rows, stage, info["scenarios"], best_of, vus)
    return out + ratio_lines + [""]


def open_section(rows, stage: str, info: dict) -> list[str]:
    """Stage b: the highest passing rate per round and the wait/ping fraction."""
    best: dict[tuple[str, int], int] = {}
    for r in rows:
        if r.get("stage") == stage and r["model"] == "open":
            k = (r["scenario"], r["round"])
            best[k] = max(best.get(k, 0), r["rate"] if r.get("open_pass") else 0)
    rounds = sorted({k[1] for k in best})
    out = [f"### Stage {stage}: {info['title']}", "",
           f"asgi only. Per round a closed-model run ({info['vus'][0]} VUs, {info['duration']}) gives the start "
           f"(half its rate); steps of {info['duration']} with k6 `constant-arrival-rate`; a step passes with "
           f"p95 < {info['p95_ms']:g} ms, < 1 % errors and < 1 % dropped iterations.", "",
           "| scenario | " + " | ".join(f"round {n}" for n in rounds) + " | median (it/s) |",
           "|---|" + "---:|" * (len(rounds) + 1)]
    for s in info["scenarios"]:
        vals = [best.get((s, n), 0) for n in rounds]
        out.append(f"| {s} | " + " | ".join(_f(v) for v in vals) + f" | {_f(_med(vals))} |")
    fractions = [best[("wait", n)] / best[("ping", n)] for n in rounds
                 if best.get(("ping", n)) and ("wait", n) in best]
    if fractions:
        out += ["", f"wait ÷ ping (asgi, per round): {_ratio(fractions)}."]
    return out + [""]


def peers_section(rows, stage: str, info: dict, differences: list[str]) -> list[str]:
    """Stage c: each peer build per scenario, ours ÷ the stronger PocketBase, then the targets."""
    vus = info["vus"][0]
    pbs = [b for b in info["builds"] if b in POCKETBASES]
    ours = [b for b in info["builds"] if b not in POCKETBASES]
    out = [f"### Stage {stage}: {info['title']}", "",
           f"{vus} VUs, closed model, {info['duration']} per run, {info['rounds']} rounds, every server on the same "
           "CPU set. CPU ms/req = the server process's utime+stime over the run ÷ requests; PostgreSQL and Redis "
           "CPU ms/req = this host's postgres and redis-server processes over the same run ÷ requests (empty when "
           "they run elsewhere; on a shared host they include other clients' work). \"stronger PocketBase\" = the "
           "PocketBase build with more req/s in that scenario.", "",
           "| scenario | build | req/s | errors % | p50 ms | p95 ms | p99 ms | CPU ms/req | PostgreSQL CPU ms/req | "
           "Redis CPU ms/req | peak RSS MiB | req/s ÷ stronger PocketBase | CPU/req ÷ that PocketBase's |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    keys = ("rps", "error_pct", "p50_ms", "p95_ms", "p99_ms", "cpu_ms_per_req", "db_cpu_ms_per_req",
            "redis_cpu_ms_per_req", "peak_rss_mib")
    for s in info["scenarios"]:
        pb = strongest(rows, stage, s, pbs, "rps", vus)
        for b in info["builds"]:
            vals = [cell(rows, stage, s, b, k, vus) for k in keys]
            if vals[0] is None:
                continue
            mine = b not in POCKETBASES and pb
            vs = _ratio(ratios_vs(rows, s, b, pb, stage, vus)) if mine else "–"
            cpu = _ratio(ratios_vs(rows, s, b, pb, stage, vus, key="cpu_ms_per_req")) if mine else "–"
            out.append(f"| {s} | {b} | " + " | ".join(_f(v, 3 if 5 <= i <= 7 else 1) for i, v in enumerate(vals))
                       + f" | {vs} | {cpu} |")
    if pbs and ours:
        out += peer_targets(rows, stage, info, pbs, ours)
    if differences:
        out += ["", "What still differs between the two sides:", ""] + [f"- {d}" for d in differences]
    return out + [""]


def crud_section(rows, stage: str, info: dict) -> list[str]:
    """Stage d: the CRUD cycle at each VU count, the published figure beside 1,000 VUs."""
    out = [f"### Stage {stage}: {info['title']}", "",
           f"{info['duration']} per run, {info['rounds']} rounds; one iteration = 4 requests. Failures = failed "
           "requests summed over the rounds.", "",
           "| VUs | build | req/s | failures | errors % | p50 ms | p95 ms | p99 ms | CPU ms/req | "
           "PostgreSQL CPU ms/req | Redis CPU ms/req | req/s ÷ stronger PocketBase |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    pbs = [b for b in info["builds"] if b in POCKETBASES]
    for vus in info["vus"]:
        pb = strongest(rows, stage, "crud", pbs, "rps", vus)
        for b in info["builds"]:
            runs = _runs(rows, stage, "crud", b, vus)
            if not runs:
                continue
            vals = [cell(rows, stage, "crud", b, k, vus) for k in ("rps", "error_pct", "p50_ms", "p95_ms", "p99_ms",
                                                                     "cpu_ms_per_req", "db_cpu_ms_per_req",
                                                                     "redis_cpu_ms_per_req")]
            failed = sum(r.get("failed", 0) for r in runs)
            vs = _ratio(ratios_vs(rows, "crud", b, pb, stage, vus)) if pb and b not in POCKETBASES else "–"
            out.append(f"| {vus} | {b} | {_f(vals[0])} | {failed} | " + " | ".join(
                _f(v, 3 if i >= 4 else 1) for i, v in enumerate(vals[1:])) + f" | {vs} |")
        if vus == 1000:
            p = PUBLISHED_CRUD
            out.append(f"| 1000 | published figure (other hardware, not measured here) | {p['rps']:,} | "
                       f"{p['failures']} | – | – | {p['p95_ms']} | – | – | – | – | – |")
    return out + ["", "The published figure comes from a different machine and setup; it is quoted for "
                  "orientation only, not as a comparison measured in this run.", ""]


def appwrite_section(rows, stage: str, info: dict) -> list[str]:
    """Stage f: Appwrite's method (500 clients, 5 minutes), one run per build."""
    out = [f"### Stage {stage}: {info['title']}", "",
           f"`mix` (account get, row create/list/get/update, file upload/download; sessions, abuse checks on), "
           f"{info['vus'][0]} VUs for {info['duration']}, {info['rounds']} run per build.", "",
           "| build | req/s | requests | success % | p50 ms | p90 ms | p95 ms | p99 ms | max ms | CPU ms/req | "
           "PostgreSQL CPU ms/req | Redis CPU ms/req |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for b in info["builds"]:
        for r in _runs(rows, stage, "mix", b):
            out.append(f"| {b} | {_f(r['rps'])} | {r['requests']:,} | {100 - r['error_pct']:.2f} | {r['p50_ms']} | "
                       f"{r.get('p90_ms', '–')} | {r['p95_ms']} | {r['p99_ms']} | {r.get('max_ms', '–')} | "
                       f"{_f(r.get('cpu_ms_per_req'), 3)} | {_f(r.get('db_cpu_ms_per_req'), 3)} | "
                       f"{_f(r.get('redis_cpu_ms_per_req'), 3)} |")
    best = wsgi_best(rows, "mix", stage)
    if best:
        for b in asgi_builds(info["builds"]):
            ratio = ratios_vs(rows, "mix", b, best, stage)
            if ratio:
                out += ["", f"{b} ÷ wsgi-best ({best}), req/s: {ratio[0]:.2f}× (one run each, no spread)."]
    return out + [""]


def functions_section(rows, stage: str, info: dict) -> list[str]:
    """Stages g and h (``--preset functions``): the sweep table (executions per second are
    req/s: one request per execution), then each build's execution times."""
    vus = info["vus"][0]
    out = sweep_section(rows, stage, info)
    out += ["Execution time (median of the rounds): `duration` is the execution's own, on the server's clock "
            "(a container start when cold, the call into the runtime, the function), HTTP p50/p95 the whole "
            "request as k6 saw it; failed = executions answered 201 that did not end `completed` with `ok`, "
            "summed over the rounds. Server CPU ms/req counts the API server's processes only: the engine and "
            "the runtime containers are outside it.", "",
            "| scenario | build | executions/s | duration p50 ms | duration p95 ms | HTTP p50 ms | HTTP p95 ms | "
            "failed | CPU ms/req |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s in info["scenarios"]:
        for b in info["builds"]:
            runs = _runs(rows, stage, s, b, vus)
            if not runs:
                continue
            vals = [cell(rows, stage, s, b, k, vus) for k in ("rps", "fn_p50_ms", "fn_p95_ms", "p50_ms", "p95_ms")]
            failed = sum(r.get("fn_failed", 0) + r.get("failed", 0) for r in runs)
            out.append(f"| {s} | {b} | " + " | ".join(_f(v) for v in vals)
                       + f" | {failed} | {_f(cell(rows, stage, s, b, 'cpu_ms_per_req', vus), 3)} |")
    return out + [""]


SECTIONS = {"a": sweep_section, "b": open_section, "d": crud_section, "e": sweep_section, "f": appwrite_section,
            "g": functions_section, "h": functions_section}


def render(meta: dict, rows: list[dict], mach: dict | None = None) -> str:
    """The report's Markdown (``mach``: machine facts, read from this host when None)."""
    m = mach if mach is not None else machine()
    a = meta["args"]
    lines = [f"# Load tests, {meta.get('preset', 'round2').replace('round', 'round ')}", "", f"Command: `{meta['command']}`", "",
             f"Machine: {m.get('nproc')} CPUs ({m.get('cpu', '?')}), {m.get('memory', '?')} RAM, load average at "
             f"report time {' '.join(m.get('loadavg', []))}. Python {m.get('python')}, Django {m.get('django')}, uvicorn "
             f"{m.get('uvicorn')}, gunicorn {m.get('gunicorn')}, psycopg {m.get('psycopg')} (WSGI, Django), asyncpg "
             f"{m.get('asyncpg')} (ASGI), k6 {m.get('k6')}.", "",
             f"Servers pinned to CPU {a['server_cpus']} ({a['cores']} core(s)), k6 to CPU {a['k6_cpus'] or 'any'}; "
             "PostgreSQL and Redis unpinned. Each run starts a fresh server and warms it up; build order "
             "alternates between rounds.", "",
             "Builds: " + "; ".join(f"**{k}** = {v}" for k, v in meta["builds"].items()) + ".", ""]
    if "product default" in meta["builds"].get("asgi", ""):  # written before the builds were renamed
        lines += ["**Old build names:** this run predates the current names; its `asgi` is uvicorn with /v1 on "
                  "the direct protocol (today's `asgi-direct`), so the targets below set that build, not the pure "
                  "ASGI one, against wsgi-best.", ""]
    for key, info in meta["stages"].items():
        if key == "c":
            lines += peers_section(rows, key, info, meta.get("differences", []))
        else:
            lines += SECTIONS[key](rows, key, info)
    lines += ["## Every run", "", "| stage | scenario | build | VUs | round | model | rate | req/s | errors % | "
              "p95 ms | CPU ms/req | PostgreSQL CPU ms/req | Redis CPU ms/req | server CPU % | k6 CPU % | peak RSS MiB | peak PG | k6 exit |",
              "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {r.get('stage', '')} | {r['scenario']} | {r['build']} | {r.get('vus', '')} | {r['round']} | "
              f"{r['model']} | {r['rate'] or ''} | {r['rps']} | {r['error_pct']} | {r['p95_ms']} | "
              f"{r.get('cpu_ms_per_req')} | {r.get('db_cpu_ms_per_req', '–')} | {r.get('redis_cpu_ms_per_req', '–')} | {r.get('server_cpu_pct', '–')} | "
              f"{r.get('k6_cpu_pct', '–')} | {r.get('peak_rss_mib')} | {r.get('peak_pg_connections')} | "
              f"{r.get('k6_exit')} |" for r in rows]
    return "\n".join(lines) + "\n"


def write_round2_report(out: Path, meta: dict, rows: list[dict], mach: dict | None = None) -> None:
    """Write ``report.md``, ``chart-ratios.png`` (stages a/e/g/h) and ``chart-peers.png`` (stage c)."""
    (out / "report.md").write_text(render(meta, rows, mach))
    from loadtests.runner.charts import peers_chart, ratios_chart

    sweeps = {k: v for k, v in meta["stages"].items() if k in ("a", "e", "g", "h")}
    if sweeps:
        ratios_chart(out / "chart-ratios.png", rows, sweeps)
    if "c" in meta["stages"]:
        peers_chart(out / "chart-peers.png", rows, "c", meta["stages"]["c"])
