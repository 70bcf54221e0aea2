"""Settings read the environment once and refuse unsafe production starts."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT

CHECK = "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='backend.settings'; django.setup(); print('ok')"


def _run(**env):
    base = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "APP_ENV", "ALLOWED_HOSTS", "DEBUG")}
    return subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, env={**base, **env}, capture_output=True,
                          text=True, timeout=60)


def test_production_without_secret_key_fails_clearly():
    result = _run(APP_ENV="production", ALLOWED_HOSTS="api.example.com")
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_production_refuses_placeholder_or_short_keys():
    for key in ("change-me-to-a-long-random-string-0123456789", "short"):
        result = _run(APP_ENV="production", SECRET_KEY=key, ALLOWED_HOSTS="a.b")
        assert result.returncode != 0 and "placeholder or is shorter than 32" in result.stderr


def test_production_needs_allowed_hosts_and_no_debug():
    assert "ALLOWED_HOSTS is required" in _run(APP_ENV="production", SECRET_KEY="x" * 50).stderr
    debug = _run(APP_ENV="production", SECRET_KEY="x" * 50, ALLOWED_HOSTS="a.b", DEBUG="true")
    assert "DEBUG must be off" in debug.stderr


def test_production_with_settings_starts():
    result = _run(APP_ENV="production", SECRET_KEY="x" * 50, ALLOWED_HOSTS="a.b")
    assert result.returncode == 0, result.stderr


def test_bad_values_are_reported():
    assert "DB_POOL_MAX_SIZE must be an integer" in _run(DB_POOL_MAX_SIZE="many").stderr
    assert "must be a postgres:// URL" in _run(DATABASE_URL="mysql://x/y").stderr
    assert "API_MAX_IN_FLIGHT must be an integer" in _run(API_MAX_IN_FLIGHT="lots").stderr
    assert "API_MAX_IN_FLIGHT must be >= 0" in _run(API_MAX_IN_FLIGHT="-1").stderr
