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
