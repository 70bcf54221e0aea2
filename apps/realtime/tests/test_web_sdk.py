"""The official web SDK 27 ``Realtime`` service (under Node, ``ws`` as WebSocket) against the live
server: it authenticates with the ``authentication`` message, subscribes with builder channels and
receives an account event (its own prefs update through the SDK) and a row event."""

from __future__ import annotations

import json
import subprocess
import threading

import pytest
from django.conf import settings

from apps.realtime.tests.test_live_delivery import publish, row
from tests.websdk import NODE_DIR, require_node


@pytest.mark.skipif(not settings.REDIS_URL, reason="the row event is published from this process: needs REDIS_URL")
def test_web_sdk_realtime_receives_events(rt_server, rt_api):
    require_node()
    user, token = rt_api.signup()
    proc = subprocess.Popen(
        ["node", "realtime.mjs", rt_server.endpoint, rt_api.project.id, token, "db1", "t1"],
        cwd=NODE_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    timer = threading.Timer(40, proc.kill)
    timer.start()
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line.strip())
            if line.strip() == "READY":
                publish(row(rt_api.project.id, user["$id"], 7))
        code = proc.wait()
    finally:
        timer.cancel()
    stderr = proc.stderr.read()
    assert code == 0, f"node exited {code}\nstdout: {lines}\nstderr: {stderr}"
    events = [json.loads(line) for line in lines if line.startswith("{")]
    account = next(e for e in events if e["kind"] == "account" and e["payload"]["prefs"] == {"from": "node"})
    assert account["channels"] == ["account", f"account.{user['$id']}"]
    assert account["events"][0] == f"users.{user['$id']}.update.prefs"
    assert len(account["subscriptions"]) == 1
    created = next(e for e in events if e["kind"] == "row")
    assert created["payload"]["$id"] == "r7" and created["payload"]["$tableId"] == "t1"
    assert "databases.db1.tables.t1.rows.r7.create" in created["events"]
