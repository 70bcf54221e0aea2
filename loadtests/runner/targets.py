"""The targets a report checks, and how it prints pass/miss with the distance.

No scenario, build or run knows these numbers: they are read only when the report is written,
from rows already measured. Every ratio is a median over the rounds of one invocation (both
sides measured in the same round).

- Stage a (500 VUs): the pure ASGI build ``asgi`` ÷ ``wsgi-best`` (req/s), per scenario,
  :data:`RATIO_TARGETS`. ``asgi-direct`` is printed beside it, without a verdict.
- Stage c (PocketBase peers): the better of our two peer builds (more req/s) ÷ the stronger
  PocketBase (more req/s: request log on or off), :data:`PEER_TARGETS`; its p95 no worse than
  the lower of the two PocketBase p95s; the PostgreSQL build's server CPU per request ÷ the lower
  of the two PocketBase CPU per request at most :data:`PG_CPU_TARGET`.
"""

from __future__ import annotations

import statistics

from loadtests.runner.report import _fmt as _f
from loadtests.runner.sweep import ratios_vs

RATIO_TARGETS = {"ping": 3.0, "read": 2.5, "mix": 2.5, "wait": 5.0, "insert100": 1.3, "download": 1.1}
PEER_TARGETS = {"peer-read": 1.0, "peer-list": 1.0, "peer-create": 0.8}
PG_CPU_TARGET = 1.25
PG_BUILD = "asgi-direct-pg"


def verdict(value: float | None, target: float, at_least: bool = True) -> str:
    """``pass (+0.12×)`` / ``miss (−0.40×)``: whether ``value`` meets ``target`` (>= when
    ``at_least``, else <=) and how far it is from it, in the ratio's own units."""
    if value is None:
        return "– (not measured)"
    ok = value >= target if at_least else value <= target
    diff = value - target
    return f"{'pass' if ok else 'miss'} ({diff:+.2f}×)".replace("-", "−")


def _med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio_targets(rows, stage: str, scenarios, best_of: dict, vus: int) -> list[str]:
    """Stage a: ``asgi`` ÷ wsgi-best against :data:`RATIO_TARGETS` (``asgi-direct`` beside it)."""
    out = ["", f"Targets of stage {stage}: the pure ASGI build `asgi` ÷ wsgi-best, req/s, median of the "
           "rounds (distance = median − target); `asgi-direct` beside it for reference, without a target.", "",
           "| scenario | target | asgi ÷ wsgi-best | verdict | asgi-direct ÷ wsgi-best |", "|---|---:|---:|---|---:|"]
    for s in scenarios:
        if s not in RATIO_TARGETS:
            continue
        best = best_of.get(s)
        pure = _med(ratios_vs(rows, s, "asgi", best, stage, vus))
        direct = _med(ratios_vs(rows, s, "asgi-direct", best, stage, vus))
        out.append(f"| {s} | ≥ {RATIO_TARGETS[s]:g}× | {_x(pure)} | {verdict(pure, RATIO_TARGETS[s])} | {_x(direct)} |")
    return out


def _x(v):
    return "–" if v is None else f"{v:.2f}×"


def strongest(rows, stage: str, scenario: str, names, key: str, vus: int, lowest: bool = False):
    """The build among ``names`` with the highest (``lowest``: lowest) median ``key``."""
    from loadtests.runner.report2 import cell

    vals = {n: cell(rows, stage, scenario, n, key, vus) for n in names}
    vals = {n: v for n, v in vals.items() if v is not None}
    if not vals:
        return None
    return (min if lowest else max)(vals, key=vals.get)


def peer_targets(rows, stage: str, info: dict, pocketbases, ours) -> list[str]:
    """Stage c: the better of ``ours`` against the stronger of ``pocketbases``, per scenario."""
    from loadtests.runner.report2 import cell

    vus = info["vus"][0]
    out = ["", f"Targets of stage {stage}, against the stronger PocketBase for each figure (most req/s; lowest p95; "
           f"lowest CPU per request): the better of our builds (most req/s) ÷ it ≥ the target; its p95 no worse; "
           f"`{PG_BUILD}`'s server CPU per request within {PG_CPU_TARGET:g}× of PocketBase's (the server process "
           "only: PostgreSQL's and Redis's CPU are in their own columns above).", "",
           "| scenario | ours (best) | PocketBase (most req/s) | req/s ratio | target | verdict | p95 ms ours / "
           "PocketBase (lowest) | verdict | CPU ms/req asgi-direct-pg / PocketBase (lowest) | ratio | verdict |",
           "|---|---|---|---:|---:|---|---:|---|---:|---:|---|"]
    for s in info["scenarios"]:
        if s not in PEER_TARGETS:
            continue
        pb, mine = strongest(rows, stage, s, pocketbases, "rps", vus), strongest(rows, stage, s, ours, "rps", vus)
        ratio = _med(ratios_vs(rows, s, mine, pb, stage, vus)) if pb and mine else None
        pb_p95 = strongest(rows, stage, s, pocketbases, "p95_ms", vus, lowest=True)
        p95_ours = cell(rows, stage, s, mine, "p95_ms", vus) if mine else None
        p95_pb = cell(rows, stage, s, pb_p95, "p95_ms", vus) if pb_p95 else None
        p95_ok = "–" if p95_ours is None or p95_pb is None else ("pass" if p95_ours <= p95_pb else "miss") + \
            f" ({p95_ours - p95_pb:+.1f} ms)".replace("-", "−")
        pb_cpu = strongest(rows, stage, s, pocketbases, "cpu_ms_per_req", vus, lowest=True)
        cpu_ours = cell(rows, stage, s, PG_BUILD, "cpu_ms_per_req", vus)
        cpu_pb = cell(rows, stage, s, pb_cpu, "cpu_ms_per_req", vus) if pb_cpu else None
        cpu_ratio = cpu_ours / cpu_pb if cpu_ours and cpu_pb else None
        out.append(f"| {s} | {mine or '–'} | {pb or '–'} | {_x(ratio)} | ≥ {PEER_TARGETS[s]:g}× | "
                   f"{verdict(ratio, PEER_TARGETS[s])} | {_f(p95_ours)} / {_f(p95_pb)} ({pb_p95 or '–'}) | {p95_ok} | "
                   f"{_f(cpu_ours, 3)} / {_f(cpu_pb, 3)} ({pb_cpu or '–'}) | {_x(cpu_ratio)} | "
                   f"{verdict(cpu_ratio, PG_CPU_TARGET, at_least=False) if cpu_ratio else '–'} (≤ {PG_CPU_TARGET:g}×) |")
    return out
