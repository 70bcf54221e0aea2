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


def test_an_unknown_project_says_where_it_looked_and_how_to_make_it(live_env, project):
    result = manage(live_env, "createapikey", "no-such-project", "--all-scopes")
    assert result.returncode != 0 and result.stdout.strip() == ""
    assert "project 'no-such-project' does not exist in the postgresql database test_" in result.stderr
    held = result.stderr.split("(it has: ", 1)[1].split(");", 1)[0].split(", ")  # the first ten, by ID
    assert project.id in held or (len(held) == 11 and held[-1] == "...")
    assert result.stderr.rstrip().endswith("); create it with: manage.py createproject no-such-project")


def test_a_command_before_migrate_says_to_migrate(live_env, tmp_path):
    """On a new database (here a new SQLite file) a command run before ``migrate`` answers with
    what to do, not a traceback; ``--traceback`` still shows Django's own."""
    env = {k: v for k, v in live_env.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["SQLITE_PATH"] = str(tmp_path / "new.sqlite3")
    result = subprocess.run([sys.executable, "manage.py", "createproject", "early"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr == (f"The database has no table projects_project yet (sqlite database {tmp_path / 'new.sqlite3'}): "
                             "run `python manage.py migrate` first.\n")
    traced = subprocess.run([sys.executable, "manage.py", "createproject", "early", "--traceback"], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=60)
    assert traced.returncode != 0 and "Traceback" in traced.stderr and "no such table" in traced.stderr


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


def test_createproject_sets_authentication_settings(live_env, sql):
    pid = f"auth-{time.monotonic_ns() % 10**9}"
    made = manage(live_env, "createproject", pid, "--max-sessions", "3", "--password-min-length", "12",
                  "--password-history", "5", "--password-dictionary", "--no-invalidate-sessions", "--no-magic-url",
                  "--session-length", "3600", "--user-limit", "100")
    assert made.returncode == 0, made.stderr
    row = sql("SELECT auth_max_sessions, auth_password_min_length, auth_password_history, auth_password_dictionary, "
              "auth_invalidate_sessions, auth_magic_url, auth_duration, auth_limit, auth_email_otp "
              "FROM projects_project WHERE uid = %s", (pid,))
    assert row == [(3, 12, 5, True, False, False, 3600, 100, True)]
    again = manage(live_env, "createproject", pid, "--exists-ok", "--magic-url", "--max-sessions", "0")
    assert again.returncode == 0, again.stderr
    assert sql("SELECT auth_magic_url, auth_max_sessions, auth_password_history FROM projects_project WHERE uid = %s",
               (pid,)) == [(True, 0, 5)]


@pytest.mark.parametrize("args,message", [
    (["--password-min-length", "7"], "auth_password_min_length must be an integer from 8 to 256"),
    (["--password-history", "21"], "auth_password_history must be an integer from 0 to 20"),
    (["--session-length", "5"], "auth_duration must be an integer from 60"),
    (["--max-sessions", "-1"], "auth_max_sessions must be an integer from 0"),
    (["--max-sessions", "many"], "invalid int value"),
])
def test_createproject_refuses_bad_settings(live_env, sql, args, message):
    pid = f"bad-{time.monotonic_ns() % 10**9}"
    result = manage(live_env, "createproject", pid, *args)
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert sql("SELECT count(*) FROM projects_project WHERE uid = %s", (pid,)) == [(0,)]


def test_createproject_sets_member_privacy(live_env, sql):
    pid = f"priv-{time.monotonic_ns() % 10**9}"
    columns = "memberships_user_name, memberships_user_email, memberships_mfa"
    made = manage(live_env, "createproject", pid)
    assert made.returncode == 0, made.stderr
    assert sql(f"SELECT {columns} FROM projects_project WHERE uid = %s", (pid,)) == [(True, True, True)]
    hide = manage(live_env, "createproject", pid, "--exists-ok", "--no-memberships-user-name",
                  "--no-memberships-user-email", "--no-memberships-mfa")
    assert hide.returncode == 0, hide.stderr
    assert sql(f"SELECT {columns} FROM projects_project WHERE uid = %s", (pid,)) == [(False, False, False)]
    show = manage(live_env, "createproject", pid, "--exists-ok", "--memberships-mfa")
    assert show.returncode == 0, show.stderr
    assert sql(f"SELECT {columns} FROM projects_project WHERE uid = %s", (pid,)) == [(False, False, True)]
