"""Realtime on the embedded default (SQLite, in-process channel layer): no Redis needed."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import requests

from apps.realtime.tests.conftest import connect, recv_type, subscribe
from conftest import ROOT, start_server


def test_account_event_with_in_process_layer(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["SQLITE_PATH"] = str(tmp_path / "db.sqlite3")
    py = sys.executable
    subprocess.run([py, "manage.py", "migrate"], cwd=ROOT, env=env, check=True, capture_output=True, timeout=120)
    subprocess.run([py, "manage.py", "createproject", "emb"], cwd=ROOT, env=env, check=True, capture_output=True)
    server = start_server("asgi", env)
    try:
        headers = {"X-Appwrite-Project": "emb"}
        r = requests.post(server.endpoint + "/account", headers=headers, timeout=10,
                          json={"userId": "unique()", "email": "e@example.com", "password": "password123"})
        assert r.status_code == 201, r.text
        s = requests.post(server.endpoint + "/account/sessions/email", headers=headers, timeout=10,
                          json={"email": "e@example.com", "password": "password123"})
        token = s.cookies.get("a_session_emb")
        assert token

        async def run():
            ws, connected = await connect(server, "emb", session=token)
            assert connected["data"]["user"]["email"] == "e@example.com"
            await subscribe(ws, "me", ["account"])
            patch = await asyncio.to_thread(requests.patch, server.endpoint + "/account/name", json={"name": "emb"},
                                            headers={**headers, "X-Appwrite-Session": token}, timeout=10)
            assert patch.status_code == 200
            event = await recv_type(ws, "event")
            assert event["data"]["payload"]["name"] == "emb" and event["data"]["subscriptions"] == ["me"]
            await ws.close()

        asyncio.run(run())
    finally:
        server.stop()
