"""The two synthetic workloads of the comparison (design.md, Performance table).

``wait`` is 100 ms of pure I/O wait: ``asyncio.sleep`` on the ASGI loop, ``time.sleep`` in a
WSGI worker, so it measures how many waits a deployment can overlap. ``cpu`` is pure Python
work (recursive fib(20), about 22,000 calls), so it measures CPU per request plus overhead.
Both run through the full /v1 pipeline (project lookup, auth) like every other endpoint.
"""

from __future__ import annotations

from apps.core.drivers.runtime import sleep
from apps.core.http.context import json_response

WAIT_SECONDS = 0.1
FIB_N = 20


def fib(n: int) -> int:
    """The n-th Fibonacci number, computed the slow recursive way on purpose."""
    return n if n < 2 else fib(n - 1) + fib(n - 2)


async def bench_wait(ctx):
    await sleep(ctx.mode, WAIT_SECONDS)
    return json_response({"waited": WAIT_SECONDS})


async def bench_cpu(ctx):
    return json_response({"fib": fib(FIB_N), "n": FIB_N})
