"""A server killed in the middle of a commit leaves nothing half-applied: PostgreSQL rolls the
commit's SQL transaction back, the transaction stays ``pending`` with its operations, and a
restarted server commits it in full."""

from __future__ import annotations

import signal
import threading
import time

import pytest
import requests
from django.conf import settings

from apps.databases.tests.conftest import Tdb
from conftest import Api, start_server

ROWS_PER_OP, OPS = 1000, 40


@pytest.mark.skipif(not settings.DATABASE_URL, reason="watches the commit in PostgreSQL's pg_stat_activity")
def test_kill_during_commit(live_env, project, sql):
    server = start_server("asgi", live_env)
    try:
        api = Api(server, project)
        t = Tdb(api).setup(columns=[("varchar", {"key": "title", "size": 32, "required": True})])
        tid = t.call("POST", "/tablesdb/transactions", json={"ttl": 900}).json()["$id"]
        for start in range(0, OPS, 10):
            ops = [{"action": "bulkCreate", "databaseId": t.db, "tableId": t.table,
                    "data": [{"$id": f"r{op}-{i}", "title": f"row {i}"} for i in range(ROWS_PER_OP)]}
                   for op in range(start, start + 10)]
            r = t.call("POST", f"/tablesdb/transactions/{tid}/operations", json={"operations": ops}, timeout=120)
            assert r.status_code == 201, r.text
        (db_name,) = sql("SELECT current_database()")[0]
        outcome = {}

        def commit():
            try:
                outcome["response"] = t.call("PATCH", f"/tablesdb/transactions/{tid}", json={"commit": True},
                                             timeout=120)
            except requests.RequestException as exc:
                outcome["error"] = exc

        thread = threading.Thread(target=commit)
        thread.start()
        seen = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and seen is None:
            found = sql("SELECT pid, xact_start FROM pg_stat_activity WHERE datname = %s AND state = 'active' "
                        "AND xact_start IS NOT NULL AND query LIKE 'INSERT INTO databases_row%%'", (db_name,))
            if found:
                seen = found[0]
            time.sleep(0.01)
        assert seen is not None, "the commit never reached its row inserts"
        time.sleep(0.5)  # let it insert a few batches more, then check it is still the same SQL transaction
        assert sql("SELECT xact_start FROM pg_stat_activity WHERE pid = %s", (seen[0],)) == [(seen[1],)]
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(10)
        thread.join(30)
        assert "response" not in outcome, outcome  # the commit did not finish
        # PostgreSQL ends the orphaned backend and rolls its transaction back.
        deadline = time.monotonic() + 60
        while sql("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (seen[0],)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert t.count(sql) == 0
        status, operations = sql("SELECT status, operations FROM databases_transaction WHERE uid = %s", (tid,))[0]
        assert (status, operations) == ("pending", OPS)
    finally:
        server.stop()

    server = start_server("asgi", live_env)
    try:
        t.api = Api(server, project)
        r = t.call("PATCH", f"/tablesdb/transactions/{tid}", json={"commit": True}, timeout=300)
        assert r.status_code == 200 and r.json()["status"] == "committed", r.text
        assert t.count(sql) == ROWS_PER_OP * OPS
    finally:
        server.stop()
