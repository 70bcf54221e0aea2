"""The load-test runner's command line refuses malformed options before it touches anything."""

from __future__ import annotations

import pytest

from loadtests.run import parse_args


@pytest.mark.parametrize("bad", ["DB_POOL_MAX_SIZE", "=20", ""])
def test_server_env_needs_name_equals_value(bad, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--server-env", bad])
    assert exit_.value.code == 2
    assert "--server-env takes NAME=VALUE" in capsys.readouterr().err


def test_server_env_is_collected():
    args = parse_args(["--server-env", "DB_POOL_MAX_SIZE=40", "--server-env", "X=a=b"])
    assert args.server_env == ["DB_POOL_MAX_SIZE=40", "X=a=b"]


def test_defaults_are_private_to_this_checkout(monkeypatch):
    """Another user of the same PostgreSQL and Redis (another checkout, CI job) gets other names:
    the database is named after DATABASE_URL's, Redis is REDIS_URL's database, the port is free."""
    monkeypatch.setenv("DATABASE_URL", "postgres://u@db.example:5433/alice")
    monkeypatch.setenv("REDIS_URL", "redis://cache.example:6379/6")
    args = parse_args([])
    assert args.pg_url == "postgres://u@db.example:5433/postgres"
    assert args.database == "alice_bench"
    assert args.redis_url == "redis://cache.example:6379/6"
    assert args.port > 0 and args.port != 18431  # was one fixed port for everybody
    assert not args.drop_database and parse_args(["--smoke"]).drop_database
