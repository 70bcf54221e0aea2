"""The Users and teams page's SDK examples (docs/users-and-teams.md), run as written against a
live server."""

from __future__ import annotations

import subprocess
import sys

from tests import docs


def test_users_and_teams_examples_run_as_written(api, live_env):
    users_example, teams_example = docs.users_and_teams_examples()
    outputs = []
    for code in (users_example, teams_example):
        code = code.replace('"http://127.0.0.1:8000/v1"', repr(api.server.endpoint)).replace(
            'set_project("demo")', f'set_project({api.project.id!r})')
        out = subprocess.run([sys.executable, "-c", code], env={**live_env, "APPWRITE_KEY": api.project.key},
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        outputs.append(out.stdout.strip())
    assert outputs == ["['grace@example.com'] ['staff']", "['Editors'] plan"]
