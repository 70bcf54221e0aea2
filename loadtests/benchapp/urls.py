"""Benchmark routes; ``BENCH_APP=1`` names them in ``V1_EXTRA_ENDPOINTS``, which adds them to the /v1 router."""

from apps.core.http.endpoint import Endpoint
from loadtests.benchapp import api

endpoints = [
    Endpoint("GET", "/bench/wait", api.bench_wait, "bench.wait", scope="global",
             summary="Benchmark only: wait 100 ms (asyncio.sleep on ASGI, time.sleep on WSGI)."),
    Endpoint("GET", "/bench/cpu", api.bench_cpu, "bench.cpu", scope="global",
             summary="Benchmark only: compute fib(20) in pure Python."),
]
