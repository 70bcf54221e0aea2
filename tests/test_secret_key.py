"""SECRET_KEY without configuration: a random key generated on the first start and kept beside the
embedded database, the same for every later start and every process on that folder; never the
fixed development key this server once published in its source; production still refuses to
start without SECRET_KEY."""

from __future__ import annotations

import concurrent.futures
import os
import stat
import subprocess
import sys
import time

import jwt

from conftest import ROOT, Api

# The fixed key development servers used to fall back to, published in this repository's history:
# anyone could sign JWTs with it. Kept here only to show it is refused.
PUBLISHED_KEY = "insecure-development-key-do-not-use-in-production-0123456789abcdef"

SHOW = ("import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'backend.settings'; django.setup(); "
        "from django.conf import settings; print(settings.SECRET_KEY); print(settings.SECRET_KEY_FILE)")


def _load(**env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("SECRET_KEY", "SQLITE_PATH", "APP_ENV", "ALLOWED_HOSTS", "DEBUG")}
    return subprocess.run([sys.executable, "-c", SHOW], cwd=ROOT, env={**base, **env}, capture_output=True,
                          text=True, timeout=60)


def test_a_missing_key_is_generated_once_and_kept_beside_the_database(tmp_path):
    data = tmp_path / "data"
    first = _load(SQLITE_PATH=str(data / "db.sqlite3"))
    assert first.returncode == 0, first.stderr[-2000:]
    key, path = first.stdout.split()
    assert path == str(data / "secret_key")
    assert "generated a new random key" in first.stderr and path in first.stderr
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(key) >= 64 and key != PUBLISHED_KEY

    second = _load(SQLITE_PATH=str(data / "db.sqlite3"))
    assert second.returncode == 0 and second.stdout.split() == [key, path]
    assert "generated" not in second.stderr  # said once, on the start that made it
    assert _load(SQLITE_PATH=str(tmp_path / "elsewhere" / "db.sqlite3")).stdout.split()[0] != key


def test_processes_starting_together_agree_on_one_key(tmp_path):
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        loads = list(pool.map(lambda _: _load(SQLITE_PATH=str(tmp_path / "db.sqlite3")), range(4)))
    assert all(load.returncode == 0 for load in loads), [load.stderr[-500:] for load in loads]
    assert len({load.stdout for load in loads}) == 1
    assert sum("generated" in load.stderr for load in loads) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["secret_key"]  # no temporary file left


def test_a_configured_key_is_used_and_no_file_is_made(tmp_path):
    assert _load(SECRET_KEY="k" * 50, SQLITE_PATH=str(tmp_path / "db.sqlite3")).stdout.split()[0] == "k" * 50
    assert not (tmp_path / "secret_key").exists()


def test_an_unusable_key_file_stops_the_start(tmp_path):
    (tmp_path / "secret_key").write_text("short\n")
    out = _load(SQLITE_PATH=str(tmp_path / "db.sqlite3"))
    assert out.returncode != 0 and "holds no usable SECRET_KEY" in out.stderr


def test_production_refuses_to_start_without_secret_key_even_with_a_key_file(tmp_path):
    assert _load(SQLITE_PATH=str(tmp_path / "db.sqlite3")).returncode == 0  # a generated key file exists
    out = _load(SQLITE_PATH=str(tmp_path / "db.sqlite3"), APP_ENV="production", ALLOWED_HOSTS="api.example.com")
    assert out.returncode != 0 and "SECRET_KEY is not set" in out.stderr


def test_the_published_key_is_not_in_the_settings():
    for path in (ROOT / "backend" / "settings").glob("*.py"):
        assert PUBLISHED_KEY not in path.read_text(), path


def test_a_jwt_signed_with_the_published_key_is_refused(api: Api):
    _, session = api.signup()
    current = api.call("GET", "/account/sessions/current", session=session).json()
    genuine = api.call("POST", "/account/jwts", json={}, session=session).json()["jwt"]
    assert api.call("GET", "/account", headers={"X-Appwrite-JWT": genuine}).status_code == 200

    claims = {"userId": current["userId"], "sessionId": current["$id"], "iat": int(time.time()),
              "exp": int(time.time()) + 600}
    forged = jwt.encode(claims, PUBLISHED_KEY, algorithm="HS256")
    r = api.call("GET", "/account", headers={"X-Appwrite-JWT": forged})
    assert r.status_code == 401 and r.json()["type"] == "user_jwt_invalid", r.text
