"""The runner's PostgreSQL CPU figure: read from /proc for a local server, absent for a remote one."""

from __future__ import annotations

import os

import psycopg

from loadtests.runner.builds import postgres_cpu_seconds

URL = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")


def test_a_query_that_burns_cpu_shows_in_the_figure():
    before = postgres_cpu_seconds(URL)
    with psycopg.connect(URL) as conn:
        conn.execute("SELECT count(*) FROM generate_series(1, 3000000)").fetchone()
        after = postgres_cpu_seconds(URL)  # while its backend runs (its CPU is its own until it exits)
    assert before is not None and after is not None
    assert after - before >= 0.05  # counting 3 million rows takes well over 50 ms of CPU


def test_no_figure_without_a_local_server():
    assert postgres_cpu_seconds(None) is None
    assert postgres_cpu_seconds("postgres://u@db.example.com:5432/x") is None
