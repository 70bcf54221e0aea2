"""Client CPU per query through the project's asyncpg pool and through asyncpg's own ``Pool``.

``python -m loadtests.micro.pool_compare [--dsn URL] [--tasks 50] [--queries 400] [--rounds 5]``

Each round runs, in alternating order, ``--tasks`` concurrent tasks that each check out a
connection, run ``SELECT 1`` and give it back, ``--queries`` times, through:

* ``ours``: :class:`apps.core.drivers.db.pgpool.ConnectionPool` (the gate and a deque of connections),
  as ``apps.core.drivers.db.postgres.PgAsync`` uses it;
* ``asyncpg-default``: ``asyncpg.create_pool(...)`` with ``reset=None``, its default: every
  release runs ``Connection.reset()``, one round trip with ``pg_advisory_unlock_all()``,
  ``CLOSE ALL``, ``UNLISTEN *`` and ``RESET ALL``;
* ``asyncpg-noreset``: ``asyncpg.create_pool(..., reset=<a coroutine that does nothing>)``: a
  release only rolls back an open transaction (asyncpg's own ``_reset``), no round trip;
* ``held``: one connection per task held for the whole run, no pool (the query alone; only
  ``max_size`` tasks, since there are no more connections).

Every pool has ``max_size`` connections (default 20, ``DB_POOL_MAX_SIZE``'s default), opened
before the clock starts, and runs on uvloop like the server. The figure is this process's CPU
time (user + system, ``time.process_time``) per query in microseconds: the client cost that
the server's core pays; PostgreSQL's own work is not in it. Printed: the median over rounds and
the range, per pool, and wall-clock queries per second. Needs PostgreSQL (``DATABASE_URL``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for apps.core.drivers.db

import asyncpg  # noqa: E402
import uvloop  # noqa: E402

from apps.core.drivers.db.pgpool import ConnectionPool  # noqa: E402

SQL = "SELECT 1"


async def _noop_reset(_conn) -> None:
    return None


async def _ours(dsn: str, size: int):
    pool = ConnectionPool(lambda: asyncpg.connect(dsn), min_size=size, max_size=size, max_waiting=0,
                          max_idle=300, max_lifetime=3600)
    held = [await pool.acquire(5) for _ in range(size)]  # open them all before the clock starts
    for conn in held:
        pool.release(conn)

    async def query():
        conn = await pool.acquire(5)
        try:
            return await conn.fetchval(SQL)
        finally:
            pool.release(conn)

    return query, pool.close


async def _library(dsn: str, size: int, reset):
    pool = await asyncpg.create_pool(dsn, min_size=size, max_size=size, reset=reset)

    async def query():
        async with pool.acquire() as conn:
            return await conn.fetchval(SQL)

    return query, pool.close


async def run_pool(kind: str, dsn: str, size: int, tasks: int, queries: int) -> tuple[float, float]:
    """``(client CPU microseconds per query, queries per wall-clock second)`` of one run."""
    if kind == "held":
        conns = [await asyncpg.connect(dsn) for _ in range(size)]

        async def worker(conn):
            for _ in range(queries):
                await conn.fetchval(SQL)

        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(worker(c) for c in conns))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        for conn in conns:
            await conn.close()
        total = size * queries
        return cpu / total * 1e6, total / wall
    if kind == "ours":
        query, close = await _ours(dsn, size)
    else:
        query, close = await _library(dsn, size, None if kind == "asyncpg-default" else _noop_reset)

    async def worker():
        for _ in range(queries):
            await query()

    await asyncio.gather(*(worker() for _ in range(tasks)))  # warm-up: statements prepared, caches filled
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(tasks)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await close()
    total = tasks * queries
    return cpu / total * 1e6, total / wall


KINDS = ("ours", "asyncpg-noreset", "asyncpg-default", "held")


async def main(args) -> None:
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in KINDS}
    for rnd in range(args.rounds):
        order = KINDS if rnd % 2 == 0 else tuple(reversed(KINDS))
        for kind in order:
            results[kind].append(await run_pool(kind, args.dsn, args.size, args.tasks, args.queries))
        print(f"round {rnd + 1}: " + ", ".join(f"{k} {results[k][-1][0]:.1f} us" for k in KINDS), flush=True)
    print(f"\nasyncpg {asyncpg.__version__}, {args.tasks} tasks, pools of {args.size}, {args.queries} queries per "
          f"task per round, {args.rounds} rounds; client CPU per query (median, min-max) and queries/s:")
    for kind in KINDS:
        cpu = [r[0] for r in results[kind]]
        qps = [r[1] for r in results[kind]]
        print(f"  {kind:16s} {statistics.median(cpu):6.1f} us ({min(cpu):.1f}-{max(cpu):.1f})   "
              f"{statistics.median(qps):8.0f} q/s")
    ours = statistics.median(r[0] for r in results["ours"])
    for kind in ("asyncpg-noreset", "asyncpg-default"):
        other = statistics.median(r[0] for r in results[kind])
        print(f"  {kind} - ours: {other - ours:+.1f} us per query")


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dsn", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"))
    p.add_argument("--tasks", type=int, default=50)
    p.add_argument("--size", type=int, default=20)
    p.add_argument("--queries", type=int, default=400)
    p.add_argument("--rounds", type=int, default=5)
    return p.parse_args(argv)


if __name__ == "__main__":
    uvloop.run(main(parse()))
