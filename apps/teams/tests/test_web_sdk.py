"""The official web SDK 27 ``Teams`` service under Node against the live ASGI server."""

from __future__ import annotations

import json

from tests.websdk import run_node


def test_web_sdk_teams(api):
    _, owner = api.signup(name="Web owner")
    _, outsider = api.signup(name="Web outsider")
    done = run_node("teams.mjs", api.server.endpoint, api.project.id, owner, outsider)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["created"]["total"] == 1 and out["created"]["name"] == "Web crew"
    assert out["listed"] == [out["created"]["id"]]
    assert out["renamed"] == "Web crew 2"
    assert out["prefs"] == {"color": "blue"} and out["gotPrefs"] == {"color": "blue"}
    assert out["memberships"] == [{"roles": ["lead", "owner"], "confirm": True}]
    assert out["got"] is True and out["updated"] == ["owner", "x"]
    assert out["invite"] == "invited"  # a session user's invitation waits for the invitee
    assert out["outsider"] == "404 team_not_found"
    assert out["after"] == 0
