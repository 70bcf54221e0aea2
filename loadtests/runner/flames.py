"""Flame graphs of the server under load: py-spy (``requirements-dev.txt``) attached to a run.

``--profile`` adds, after the measured rounds of each stage, one more run per scenario and
Python server build with ``py-spy record`` attached to the server process. These runs are
never measured rows: sampling steals CPU from the run (py-spy runs on the k6 CPUs, without
pausing the server: ``--nonblocking``), so their req/s would not be comparable. What they give
is where the server's time goes: ``flames/<tag>.svg`` (open in a browser) and
``flames/<tag>.txt``, the functions with the largest share of the server's samples.
"""

from __future__ import annotations

import bisect
import collections
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

from loadtests.runner.builds import ROOT

RATE_HZ = 250  # samples per second


def pyspy_binary() -> str | None:
    """py-spy from the venv (its PyPI wheel ships the binary), else one on PATH, else None."""
    local = Path(sys.executable).parent / "py-spy"
    return str(local) if local.exists() else shutil.which("py-spy")


class Recorder:
    """``py-spy record`` of process ``pid`` for ``seconds`` into ``svg``; :meth:`finish` waits
    for it and writes the summary (:func:`top_functions`) beside it as ``.txt``."""

    def __init__(self, pid: int, seconds: float, svg: Path, cpus: str | None):
        binary = pyspy_binary()
        if binary is None:
            raise SystemExit("--profile needs py-spy: .venv/bin/pip install -r requirements-dev.txt")
        svg.parent.mkdir(parents=True, exist_ok=True)
        self.svg = svg
        pin = ["taskset", "-c", cpus] if cpus else []
        # Blocking sampling (py-spy's default): each sample pauses the server for a moment, so
        # stacks are never torn; the run is not measured anyway.
        self.proc = subprocess.Popen([*pin, binary, "record", "--pid", str(pid), "--duration", str(max(1, int(seconds))),
                                      "--rate", str(RATE_HZ), "--format", "flamegraph", "--output", str(svg)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def finish(self) -> None:
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if self.svg.exists():
            self.svg.with_suffix(".txt").write_text(top_functions(self.svg.read_text(errors="replace")))


_FRAME = re.compile(r'<title>(.*?) \((\d[\d,]*) samples?, [^)]*\)</title><rect [^>]*?y="([\d.]+)"[^>]*?'
                    r'fg:x="(\d+)" fg:w="(\d+)"')


def _short(frame: str) -> str:
    """``fn (path:line)`` as ``fn (short path)``: the line, site-packages and the project root cut off."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "/lib/python3.13/", "/lib/python3.12/"):
        path = path.split(marker, 1)[-1]
    return f"{name} ({path.removeprefix(str(ROOT) + '/')})" if where else name


def top_functions(svg: str, count: int = 40) -> str:
    """The ``count`` functions with the largest share of the event loop thread's samples, by
    samples of their own and by samples beneath them, read from a py-spy flame graph (each frame
    is a ``<rect>`` with its first sample ``fg:x``, its sample count ``fg:w`` and its depth as
    ``y``). Other threads (the default executor's, the cache listener's) are left out: under
    load they mostly wait, and py-spy cannot always tell a wait from work."""
    frames = [(html.unescape(m[0]), float(m[2]), int(m[3]), int(m[4])) for m in _FRAME.findall(svg)]
    levels = sorted({y for _, y, _, _ in frames}, reverse=frames[0][1] > frames[-1][1] if frames else False)
    depth = {y: i for i, y in enumerate(levels)}
    by_level: dict[int, list[tuple[int, int, str]]] = collections.defaultdict(list)
    for name, y, x, w in frames:
        by_level[depth[y]].append((x, w, name))
    for row in by_level.values():
        row.sort()
    loop_spans = [(x, x + w) for x, w, name in (f for row in by_level.values() for f in row)
                  if name.startswith("run (") and "asyncio/runners.py" in name]
    loop_spans = [s for s in loop_spans if not any(o[0] <= s[0] and s[1] <= o[1] and o != s for o in loop_spans)]

    def in_loop(x: int) -> bool:
        return any(lo <= x < hi for lo, hi in loop_spans)

    own: collections.Counter = collections.Counter()
    under: collections.Counter = collections.Counter()
    for level, row in by_level.items():
        below = by_level.get(level + 1, [])
        starts = [x for x, _, _ in below]
        for x, w, name in row:
            if not in_loop(x):
                continue
            i, j = bisect.bisect_left(starts, x), bisect.bisect_left(starts, x + w)
            own[_short(name)] += w - sum(cw for _, cw, _ in below[i:j])
            under[_short(name)] += w
    total = sum(hi - lo for lo, hi in loop_spans)
    if not total:
        return "no samples of the event loop thread\n"
    out = [f"{total} samples of the event loop thread at {RATE_HZ} Hz", "", "own samples:"]
    out += [f"{100 * v / total:5.1f}%  {k}" for k, v in own.most_common(count)]
    out += ["", "samples beneath (inclusive; a function on the stack twice counts once per frame):"]
    out += [f"{100 * v / total:5.1f}%  {k}" for k, v in under.most_common(count)]
    return "\n".join(out) + "\n"
