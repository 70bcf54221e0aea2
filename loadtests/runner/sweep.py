"""The WSGI sweep: gunicorn configurations on the ASGI server's CPU set, and `wsgi-best`.

Every configuration runs the same code and settings as the ``wsgi`` build and is pinned with
the same ``taskset`` CPU list as the ASGI server. ``cores`` is the number of CPUs in that list.

- ``wsgi``: 3 sync workers (the earlier runs' baseline, kept under its name);
- ``wsgi-sync<2c+1>``: gunicorn's rule of thumb, (2 x cores) + 1 sync workers (left out when it
  equals 3, i.e. on one core, where it is the ``wsgi`` build);
- ``wsgi-sync8``: 8 sync workers;
- ``wsgi-gthread<W>x<T>``: W gthread workers (default (2 x cores) + 1, ``--gthread-workers``)
  with T = 8, 16 and 32 threads each.

Each process keeps the pool budget of every other build (``DB_POOL_MAX_SIZE=20``): a gthread
worker with more threads than that makes its extra threads wait for a pooled connection, which
is part of what the sweep measures (the report shows peak PostgreSQL connections).

``wsgi-best`` is chosen per scenario and stage from the measured rows alone: the configuration
with the highest median req/s among those with 0 % errors in every round.
"""

from __future__ import annotations

import statistics

from loadtests.runner.builds import BUILDS, GUNICORN, Build

THREADS = (8, 16, 32)


def _gunicorn(workers: int, worker_class: str, threads: int = 1) -> tuple[str, ...]:
    cmd = list(GUNICORN)
    cmd[cmd.index("--workers") + 1] = str(workers)
    if worker_class != "sync":  # the config's worker class is the product's sync worker
        cmd += ["--worker-class", worker_class]
    if threads > 1:
        cmd += ["--threads", str(threads)]
    return tuple(cmd)


def wsgi_sweep(cores: int, gthread_workers: int) -> list[Build]:
    """The WSGI configurations for a server CPU set of ``cores`` CPUs (``wsgi`` first)."""
    out = [BUILDS["wsgi"]]
    rule = 2 * cores + 1
    for workers in (rule, 8):
        if workers != 3 and f"wsgi-sync{workers}" not in [b.name for b in out]:
            out.append(Build(f"wsgi-sync{workers}", f"WSGI: gunicorn, {workers} sync workers",
                             _gunicorn(workers, "sync"), asgi=False, family="wsgi"))
    for threads in THREADS:
        out.append(Build(f"wsgi-gthread{gthread_workers}x{threads}",
                         f"WSGI: gunicorn, {gthread_workers} gthread workers x {threads} threads",
                         _gunicorn(gthread_workers, "gthread", threads), asgi=False, family="wsgi"))
    return out


def _closed(rows, scenario: str, stage: str, vus: int | None = None):
    return [r for r in rows if r["model"] == "closed" and r["scenario"] == scenario
            and r.get("stage", "") == stage and (vus is None or r.get("vus") == vus)]


def wsgi_best(rows: list[dict], scenario: str, stage: str = "", vus: int | None = None) -> str | None:
    """Name of the WSGI configuration (``family == "wsgi"``) with the highest median req/s among
    those whose every round of ``scenario`` in ``stage`` had 0 % errors and some requests; None
    if no configuration qualifies. Ties go to the configuration measured first."""
    by: dict[str, list[dict]] = {}
    for r in _closed(rows, scenario, stage, vus):
        if r.get("family") == "wsgi":
            by.setdefault(r["build"], []).append(r)
    best, best_rps = None, -1.0
    for build, runs in by.items():
        if any(r["error_pct"] > 0 or r["requests"] <= 0 for r in runs):
            continue
        rps = statistics.median(r["rps"] for r in runs)
        if rps > best_rps:
            best, best_rps = build, rps
    return best


def ratios_vs(rows: list[dict], scenario: str, num: str, den: str | None, stage: str = "",
              vus: int | None = None, key: str = "rps", invert: bool = False) -> list[float]:
    """Per-round ratios ``num / den`` of ``key`` (``den / num`` if ``invert``) over the rounds in
    which both ran; empty if ``den`` is None."""
    if den is None:
        return []
    by = {(r["build"], r["round"]): r for r in _closed(rows, scenario, stage, vus)}
    out = []
    for (build, rnd), r in sorted(by.items(), key=lambda kv: kv[0][1]):
        other = by.get((den, rnd))
        if build != num or other is None:
            continue
        a, b = r.get(key), other.get(key)
        if a and b:
            out.append(b / a if invert else a / b)
    return out
