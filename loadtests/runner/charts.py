"""The round2 charts (matplotlib, pinned in requirements-dev.txt): PNG files in the results folder."""

from __future__ import annotations

import statistics
from pathlib import Path

from loadtests.runner.builds import ASGI_ORDER
from loadtests.runner.sweep import ratios_vs, wsgi_best


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _bar_group(ax, labels, series: dict[str, list[tuple[float, float, float]]]) -> None:
    """Grouped bars: ``series[name]`` = (median, min, max) per label."""
    width = 0.8 / max(1, len(series))
    for i, (name, vals) in enumerate(series.items()):
        xs = [x + (i - (len(series) - 1) / 2) * width for x in range(len(labels))]
        meds = [v[0] for v in vals]
        ax.bar(xs, meds, width, yerr=[[v[0] - v[1] for v in vals], [v[2] - v[0] for v in vals]], capsize=3,
               label=name)
    ax.set_xticks(range(len(labels)), labels, rotation=20)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def _stat(values: list[float]) -> tuple[float, float, float]:
    return (statistics.median(values), min(values), max(values)) if values else (0.0, 0.0, 0.0)


def ratios_chart(path: Path, rows: list[dict], stages: dict[str, dict]) -> None:
    """One panel per sweep stage: each ASGI build's req/s ÷ wsgi-best per scenario (median,
    min-max over rounds; the pure ASGI build first, the direct /v1 protocol beside it), a line at 1."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(stages), figsize=(7 * len(stages), 4.8), squeeze=False)
    for ax, (key, info) in zip(axes[0], stages.items(), strict=True):
        vus = info["vus"][0]
        labels = list(info["scenarios"])
        series = {}
        for build in ASGI_ORDER:
            if build in info["builds"]:
                series[f"{build} ÷ wsgi-best"] = [
                    _stat(ratios_vs(rows, s, build, wsgi_best(rows, s, key, vus), key, vus)) for s in labels]
        _bar_group(ax, labels, series)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"stage {key}: req/s ÷ wsgi-best, {vus} VUs")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def peers_chart(path: Path, rows: list[dict], stage: str, info: dict) -> None:
    """req/s and CPU ms per request of each peer build per scenario (median, min-max)."""
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    labels = list(info["scenarios"])
    for ax, key, title in ((axes[0], "rps", "req/s"), (axes[1], "cpu_ms_per_req", "server CPU ms per request")):
        series = {}
        for build in info["builds"]:
            series[build] = [_stat([r[key] for r in rows if r.get("stage") == stage and r["scenario"] == s
                                    and r["build"] == build and r["model"] == "closed" and r.get(key) is not None])
                             for s in labels]
        _bar_group(ax, labels, series)
        ax.set_title(f"ours vs PocketBase: {title}")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
