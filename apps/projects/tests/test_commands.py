"""The operator commands, run as real processes against the test database."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import requests

from conftest import ROOT


def manage(live_env, *args):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=live_env, capture_output=True,
                          text=True, timeout=60)


def test_createproject_and_key_work_end_to_end(live_env, asgi_server):
    pid = f"cmd-{time.monotonic_ns() % 10**9}"
    made = manage(live_env, "createproject", pid, "--name", "Command test", "--origin", "http://x.test:8080")
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == pid
    key = manage(live_env, "createapikey", pid, "--name", "ops", "--scopes", "health.read")
    assert key.returncode == 0, key.stderr
    secret = key.stdout.strip()
    assert secret.startswith("standard_") and "\n" not in secret
    ok = requests.get(asgi_server.endpoint + "/health", headers={"X-Appwrite-Project": pid, "X-Appwrite-Key": secret})
    assert ok.status_code == 200
    narrow = requests.post(asgi_server.endpoint + "/account", headers={"X-Appwrite-Project": pid, "X-Appwrite-Key": secret},
                           json={"userId": "unique()", "email": "a@b.co", "password": "password123"})
    assert narrow.status_code == 401 and narrow.json()["type"] == "general_unauthorized_scope"


@pytest.mark.parametrize("args,message", [
    (["createproject", ".bad"], "invalid project ID"),
    (["createproject", "--", "-bad"], "invalid project ID"),
    (["createproject", "x" * 37], "invalid project ID"),
    (["createproject", "ok-id", "--origin", "not a url"], "invalid origin"),
    (["createapikey", "no-such-project", "--all-scopes"], "does not exist"),
    (["createapikey", "PROJECT", "--scopes", "rows.read,fly.away"], "unknown scope"),
    (["createapikey", "PROJECT"], "one of the arguments --scopes --all-scopes is required"),
    (["createapikey", "PROJECT", "--scopes", " , "], "--scopes is empty"),
])
def test_bad_input_fails_clearly(live_env, project, args, message):
    args = [project.id if a == "PROJECT" else a for a in args]
    result = manage(live_env, *args)
    assert result.returncode != 0
    assert message in result.stderr
    assert result.stdout.strip() == ""


def test_duplicate_project(live_env, project):
    result = manage(live_env, "createproject", project.id)
    assert result.returncode != 0 and "already exists" in result.stderr


def test_exists_ok_adds_origins_and_reruns(live_env, project, sql):
    for _ in range(2):
        result = manage(live_env, "createproject", project.id, "--exists-ok", "--origin", "http://again.test")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == project.id
    rows = sql("SELECT origin FROM projects_platform WHERE project_id = %s", (project.pk,))
    assert rows == [("http://again.test",)]
