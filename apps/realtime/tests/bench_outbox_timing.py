"""The cost of the realtime outbox per write: a timing loop, not a test (its name keeps pytest
from collecting it; it asserts no times). Run it by path::

    .venv/bin/python -m pytest apps/realtime/tests/bench_outbox_timing.py -q -s -p no:randomly

A live ASGI server (PostgreSQL and Redis of the environment) answers 500 sequential single-row
creates (POST, no transaction) and 500 upserts of new rows (PUT, a transaction that records its
event in the outbox), twice each; it prints the latency and the server's CPU time per request.
Compare against a checkout without the outbox (docs/reliability-realtime.md has our numbers)."""

import os
import statistics
import time
import uuid

from apps.realtime.tests.test_outbox import _table
from conftest import Api, start_server


def _cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def test_timing(rt_env, project):
    server = start_server("asgi", rt_env)
    try:
        api = Api(server, project)
        db, table = _table(api)
        path = f"/tablesdb/{db}/tables/{table}/rows"
        for _ in range(100):
            assert api.call("POST", path, key=True, json={"rowId": "unique()", "data": {"title": "w"}}).status_code == 201
        for run in range(4):
            kind = ("create", "upsert")[run % 2]
            times = []
            cpu0 = _cpu(server.proc.pid)
            for n in range(500):
                t = time.perf_counter()
                if kind == "create":
                    r = api.call("POST", path, key=True, json={"rowId": "unique()", "data": {"title": f"n{n}"}})
                else:
                    r = api.call("PUT", f"{path}/{uuid.uuid4().hex[:20]}", key=True, json={"data": {"title": f"n{n}"}})
                times.append(time.perf_counter() - t)
                assert r.status_code in (200, 201), r.text
            cpu = _cpu(server.proc.pid) - cpu0
            print(f"\nrun {run} {kind}: mean {statistics.mean(times)*1000:.3f} ms median {statistics.median(times)*1000:.3f} ms "
                  f"p90 {sorted(times)[450]*1000:.3f} ms server cpu/write {cpu/500*1000:.3f} ms")
    finally:
        server.stop()
