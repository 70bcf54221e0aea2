"""Benchmark-only endpoints (``/v1/bench/*``), installed only when ``BENCH_APP=1``."""
