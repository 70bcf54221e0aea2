"""The builds under comparison (one row each) and their server processes.

A build is a name, a server command and the environment it adds. All builds run the same code on
the same CPU budget: the server is started under ``taskset -c <server cpus>``, so gunicorn's
workers and uvicorn's threads inherit the pinning.

Why 3 gunicorn sync workers on one core: a sync worker idles while it waits for PostgreSQL or
Redis (which run on the other core), so one worker cannot keep its core busy; gunicorn's own
rule of thumb is (2 x cores) + 1 = 3 for one core. More workers add memory and context switches
without adding CPU. Same pool budget: uvicorn has one psycopg pool of ``DB_POOL_MAX_SIZE=20``;
each sync worker uses at most one connection at a time (3 in all), plus ``DB_POOL_MIN_SIZE=1``
idle per process. ``--preload`` imports Django once in the master and forks the workers (shared
pages, faster start); every pool is created lazily, after the fork, in each worker.

Builds are named for what serves the requests:

- ``asgi``: uvicorn, its httptools protocol with the head limits and client timeouts
  (``apps.core.http.serving.uvicorn_protocol``), the ASGI interface for every request and the lean ASGI
  adapter for /v1 (``V1_PROTOCOL=asgi``): the honest ASGI build;
- ``asgi-direct``: the same uvicorn process with /v1 on the project's own HTTP/1.1 protocol
  (``apps.core.http.serving.v1_protocol``, ``V1_PROTOCOL=direct``, the product default), everything else
  handed to the httptools protocol and ASGI;
- ``asgi-granian``: granian's ASGI interface with the lean adapter, a comparison column only
  (granian is not a supported server: docs/decisions/granian.md; pinned in requirements-dev.txt);
- ``asgi-django``: uvicorn + httptools, /v1 through Django's ASGIHandler (``V1_ADAPTER=django``);
- ``wsgi`` and the sweep (``sweep.py``): gunicorn.

uvicorn starts as the product's launcher starts it (``backend/serve.py``; sans-io websockets),
granian with the flags the launcher gave it while it was supported, gunicorn with ``backend/gunicorn_conf.py`` (its sync worker answering
refusals as JSON, the head limits). Result folders written before these names keep their old
labels: there ``asgi`` was uvicorn with the direct /v1 protocol (today's ``asgi-direct``).
uvicorn runs with the product launcher's back-pressure (``backend/serve.py``:
``--limit-concurrency`` = ``SERVER_LIMIT_CONCURRENCY``'s default 2048, ``--backlog`` 2048): past
2048 open connections a request is answered 503 at once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from backend.serve import ASGI_APP, GUNICORN_CONFIG, HTTP_PROTOCOL, WSGI_APP

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "loadtests" / "results"  # where each run's results folder goes by default
PY = sys.executable


@dataclass(frozen=True)
class Build:
    """One column of the comparison: ``command`` has a ``{port}`` placeholder."""

    name: str
    label: str
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    asgi: bool = True  # serves websockets (realtime)
    only_scenarios: tuple[str, ...] = ()  # empty = every scenario
    family: str = ""  # "wsgi" for the WSGI sweep (wsgi-best picks among these), "peer" for PocketBase
    health: str = "/v1/health/version"  # answers 200 once the server is up
    unset: tuple[str, ...] = ()  # variables removed from the environment (the embedded build: no DATABASE_URL)


# The product's own server settings (backend/serve.py): uvicorn with the protocol factory (which
# reads V1_PROTOCOL) and the sans-io websockets, granian as the launcher ran it while supported, gunicorn
# with its config file (JSON refusals, head limits).
UVICORN = (PY, "-m", "uvicorn", ASGI_APP, "--host", "127.0.0.1", "--port", "{port}",
           "--no-access-log", "--loop", "uvloop", "--http", HTTP_PROTOCOL, "--ws", "websockets-sansio",
           "--lifespan", "on", "--backlog", "2048", "--limit-concurrency", "2048",
           "--timeout-graceful-shutdown", "5", "--no-proxy-headers", "--no-server-header")
GRANIAN = (PY, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1", "--port", "{port}",
           "--workers", "1", "--loop", "uvloop", "--ws", "--backlog", "2048", "--backpressure", "2048",
           "--workers-kill-timeout", "5", "--no-respawn-failed-workers", "--no-access-log", ASGI_APP)
# The environment of each /v1 path (backend/settings/serving.py), set in full so an exported
# V1_PROTOCOL or V1_ADAPTER in the runner's shell cannot change what a build name means.
PURE_ASGI = {"V1_PROTOCOL": "asgi", "V1_ADAPTER": "lean"}
DIRECT = {"V1_PROTOCOL": "direct", "V1_ADAPTER": "lean"}
NAIVE = {"V1_PROTOCOL": "asgi", "V1_ADAPTER": "django"}
# The ASGI builds the reports set against wsgi-best, the pure ASGI build first.
ASGI_ORDER = ("asgi", "asgi-direct", "asgi-granian", "asgi-django")
GUNICORN = (PY, "-m", "gunicorn", WSGI_APP, "--bind", "127.0.0.1:{port}", "--config", GUNICORN_CONFIG,
            "--workers", "3", "--preload", "--backlog", "2048", "--timeout", "120",
            "--graceful-timeout", "5")

# The builds table.
BUILDS: dict[str, Build] = {b.name: b for b in [
    Build("asgi", "ASGI: uvicorn + httptools, 1 process, lean ASGI adapter for every /v1 request "
          "(V1_PROTOCOL=asgi)", UVICORN, PURE_ASGI),
    Build("asgi-direct", "uvicorn, 1 process, /v1 on the project's direct HTTP/1.1 protocol, other requests "
          "through httptools + ASGI (V1_PROTOCOL=direct, product default)", UVICORN, DIRECT),
    Build("asgi-granian", "ASGI: granian, 1 worker, lean ASGI adapter", GRANIAN, PURE_ASGI),
    # The naive migration: the same process, /v1 served through Django's ASGIHandler and the
    # V1Middleware adapter (a per-request thread context, signals through sync_to_async).
    Build("asgi-django", "ASGI: uvicorn + httptools, 1 process, Django's ASGI handler (naive)", UVICORN, NAIVE),
    Build("wsgi", "WSGI: gunicorn, 3 sync workers", GUNICORN, asgi=False, family="wsgi"),
    # Abuse overhead: the asgi build with rate limiting switched off.
    Build("asgi-noabuse", "ASGI: uvicorn + httptools, lean adapter, ABUSE_ENABLED=false", UVICORN,
          {**PURE_ASGI, "ABUSE_ENABLED": "false"}, only_scenarios=("create",)),
]}


def abuse_env(vus: int) -> dict[str, str]:
    """Abuse checks on, with the per-user row/file limits raised so 500 VUs never hit them.

    Appwrite keys these rules by IP + method + route + user id and every VU has
    its own user, so the defaults (120 row writes/60 s per user) already hold below ~2 writes/s
    per VU; the tight `create` loop can exceed that, so limits are raised 100x: the check still
    runs (same Redis round trip per request) but never answers 429. The login rule is keyed by
    email and Appwrite resets it on a good login. Overrides go through the abuse app's
    ``ABUSE_LIMITS`` JSON (README "Rate limits").
    """
    import json

    scale = 100
    limits = {
        "rows.create": 120 * scale, "rows.update": 120 * scale, "rows.upsert": 120 * scale,
        "rows.delete": 60 * scale, "files.create": 60 * scale, "files.delete": 60 * scale,
        "account.session.email": 10 * scale * max(1, vus // 10),
    }
    # The realtime scenario opens one socket per VU from one IP: lift the per-IP connection limit
    # (128/min) the same way, or it measures the limiter instead of the fan-out.
    return {"ABUSE_ENABLED": "true", "ABUSE_LIMITS": json.dumps(limits), "REALTIME_CONNECTIONS_PER_MINUTE": "0"}


@dataclass
class Server:
    build: Build
    port: int
    proc: subprocess.Popen
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def pids(self) -> list[int]:
        """The server's process tree (taskset execs in place, so proc.pid is the server)."""
        return process_tree(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_server(build: Build, port: int, env: dict[str, str], cpus: str, log: Path, wait: float = 60,
                 fill: dict[str, str] | None = None) -> Server:
    """Start ``build`` pinned to ``cpus``; wait until its health path answers 200.

    ``{port}`` and every ``{name}`` of ``fill`` in the command are replaced; the variables in
    ``build.unset`` are removed from the environment. Raises RuntimeError if it exits or does
    not answer within ``wait`` seconds."""
    fill = {"port": str(port), **(fill or {})}
    cmd = ["taskset", "-c", cpus, *(_fill(part, fill) for part in build.command)]
    full_env = {**os.environ, **env, **build.env, "PYTHONUNBUFFERED": "1"}
    for name in build.unset:
        full_env.pop(name, None)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    server = Server(build, port, proc, log)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{build.name} exited early:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(server.url + build.health, timeout=1) as r:
                if r.status == 200:
                    return server
        except OSError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"{build.name} did not start:\n{log.read_text()[-2000:]}")


def _fill(part: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        part = part.replace("{" + name + "}", value)
    return part


def cpu_list(spec: str) -> list[int]:
    """The CPUs of a taskset list such as ``0``, ``0-3`` or ``0,2-3``; ValueError if malformed."""
    out: list[int] = []
    for part in spec.split(","):
        lo, sep, hi = part.strip().partition("-")
        if sep and not hi:
            raise ValueError(f"bad CPU list {spec!r}")
        out.extend(range(int(lo), int(hi or lo) + 1))
    if not out or len(set(out)) != len(out):
        raise ValueError(f"bad CPU list {spec!r}")
    return out


# --- /proc accounting -------------------------------------------------------------------------
_CLK = os.sysconf("SC_CLK_TCK")


def process_tree(root: int) -> list[int]:
    """``root`` and all its descendants (by parent pid in /proc/<pid>/stat)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def cpu_seconds(pids: list[int], reaped: bool = False) -> float:
    """utime + stime of ``pids`` (all their threads), in seconds; with ``reaped`` also the
    cutime + cstime of the children they have waited for."""
    last = 15 if reaped else 13  # utime, stime, cutime, cstime: fields 14-17 of stat
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:last])
    return total / _CLK


def _local(url: str | None) -> bool:
    """True when ``url``'s host is this machine (127.0.0.1, ::1, localhost or a socket path)."""
    if not url:
        return False
    host = urlsplit(url).hostname or ""
    return host in ("", "127.0.0.1", "::1", "localhost") or host.startswith("/")


def _named_cpu_seconds(prefixes: tuple[str, ...], reaped: bool) -> float:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "comm").read_text().startswith(prefixes):
                pids.append(int(entry.name))
        except OSError:
            continue
    return cpu_seconds(pids, reaped=reaped)


def redis_cpu_seconds(redis_url: str | None) -> float | None:
    """CPU seconds used so far by this host's Redis: utime + stime of every ``redis-server``
    process (all its threads). None when ``redis_url`` is unset or not on this host. On a shared
    server the figure includes other clients' work (other databases of the same server too)."""
    if not _local(redis_url) or not str(redis_url).startswith(("redis://", "rediss://", "unix://")):
        return None
    return _named_cpu_seconds(("redis-server",), reaped=False)


def postgres_cpu_seconds(pg_url: str | None) -> float | None:
    """CPU seconds used so far by this host's PostgreSQL: utime + stime of every process named
    ``postgres`` or ``postmaster``, plus the children they reaped (the postmaster's cutime and
    cstime hold the backends that have exited). None when ``pg_url`` is unset or not on this
    host (127.0.0.1, ::1, localhost, a socket path). On a shared server the figure includes
    other clients' work."""
    if not _local(pg_url):
        return None
    return _named_cpu_seconds(("postgres", "postmaster"), reaped=True)


def memory_kib(pids: list[int], field_name: str) -> int:
    """Sum of ``VmHWM`` (peak) or ``VmRSS`` over ``pids``, in KiB."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith(field_name + ":"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total
