"""Settings read the environment once and refuse unsafe production starts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ROOT

CHECK = "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='backend.settings'; django.setup(); print('ok')"


def _run(**env):
    base = {k: v for k, v in os.environ.items()
            if k not in ("SECRET_KEY", "APP_ENV", "ALLOWED_HOSTS", "DEBUG", "PUBLIC_URL")}
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
    debug = _run(APP_ENV="production", SECRET_KEY="x" * 50, ALLOWED_HOSTS="a.b", PUBLIC_URL="https://a.b", DEBUG="true")
    assert "DEBUG must be off" in debug.stderr


def test_production_with_settings_starts():
    result = _run(APP_ENV="production", SECRET_KEY="x" * 50, ALLOWED_HOSTS="a.b", PUBLIC_URL="https://a.b")
    assert result.returncode == 0, result.stderr


def test_bad_values_are_reported():
    assert "DB_POOL_MAX_SIZE must be an integer" in _run(DB_POOL_MAX_SIZE="many").stderr
    assert "must be a postgres:// URL" in _run(DATABASE_URL="mysql://x/y").stderr
    assert "API_MAX_IN_FLIGHT must be an integer" in _run(API_MAX_IN_FLIGHT="lots").stderr
    assert "API_MAX_IN_FLIGHT must be >= 0" in _run(API_MAX_IN_FLIGHT="-1").stderr


@pytest.mark.parametrize("name, raw, message", [
    ("DB_POOL_TIMEOUT", "-5", "DB_POOL_TIMEOUT must be > 0"),
    ("DB_POOL_TIMEOUT", "0", "DB_POOL_TIMEOUT must be > 0"),
    ("DB_CONNECT_TIMEOUT", "0", "DB_CONNECT_TIMEOUT must be > 0"),
    ("DB_STATEMENT_TIMEOUT_MS", "-1", "DB_STATEMENT_TIMEOUT_MS must be >= 0"),
    ("DB_SCHEMA_STATEMENT_TIMEOUT_MS", "-1", "DB_SCHEMA_STATEMENT_TIMEOUT_MS must be >= 0"),
    ("REDIS_TIMEOUT", "0", "REDIS_TIMEOUT must be > 0"),
    ("DB_POOL_MAX_LIFETIME", "-1", "DB_POOL_MAX_LIFETIME must be > 0"),
    ("DB_POOL_MAX_IDLE", "0", "DB_POOL_MAX_IDLE must be > 0"),
    ("REALTIME_PUBLISH_TIMEOUT", "0", "REALTIME_PUBLISH_TIMEOUT must be > 0"),
    ("REDIS_TIMEOUT", "nan", "REDIS_TIMEOUT must be a finite number"),
    ("ABUSE_LOG_INTERVAL", "inf", "ABUSE_LOG_INTERVAL must be a finite number"),
    ("REALTIME_PUBLISH_RETRY_SECONDS", "inf", "REALTIME_PUBLISH_RETRY_SECONDS must be a finite number"),
    ("STORAGE_SEND_TIMEOUT", "nan", "STORAGE_SEND_TIMEOUT must be a finite number"),
    ("REDIS_TIMEOUT", "soon", "REDIS_TIMEOUT must be a number"),
])
def test_timeouts_must_be_positive_finite_seconds(name, raw, message):
    """A zero or negative timeout would fail every database or Redis call at run time (found by
    a new-user trial: DB_POOL_TIMEOUT=-5 answered every request 503 with nothing logged)."""
    out = _run(**{name: raw})
    assert out.returncode != 0 and message in out.stderr, out.stderr[-500:]


def test_positive_timeouts_are_accepted():
    out = _run(DB_POOL_TIMEOUT="0.5", REDIS_TIMEOUT="1.5", REALTIME_PUBLISH_TIMEOUT="3")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-500:]


_PREFIX = ("import django, os; os.environ['DJANGO_SETTINGS_MODULE']='backend.settings'; django.setup(); "
           "from apps.core.drivers.cache import channel; from apps.realtime.hub import stream_key; "
           "print(channel(), stream_key())")


@pytest.mark.parametrize("env, names", [
    ({"REDIS_URL": "redis://127.0.0.1:6379/6"}, "appwrite-py.db6.cache.invalidate appwrite-py.db6.rt:events"),
    ({"REDIS_URL": "redis://127.0.0.1:6379"}, "appwrite-py.db0.cache.invalidate appwrite-py.db0.rt:events"),
    ({"REDIS_URL": "redis://127.0.0.1:6379/3", "REDIS_PREFIX": "blue."}, "blue.cache.invalidate blue.rt:events"),
])
def test_redis_channels_are_named_per_deployment(env, names):
    """Pub/sub channels are shared by every database number of a Redis server: deployments on
    different databases (or with their own REDIS_PREFIX) publish on different channels."""
    base = {k: v for k, v in os.environ.items() if k != "REDIS_PREFIX"}
    result = subprocess.run([sys.executable, "-c", _PREFIX], cwd=ROOT, env={**base, **env}, capture_output=True,
                            text=True, timeout=60)
    assert result.stdout.split() == names.split(), result.stderr
