"""Accepting an invitation (``PATCH .../memberships/{id}/status``). Invitations are mailed, and
this server has no mail delivery yet, so the test makes one the way the invitation route
stores it: an unconfirmed membership holding the SHA-256 of its secret."""

from __future__ import annotations

import hashlib
import json

import pytest

from apps.teams.tests.conftest import TeamWorld

SECRET = "invitation-secret-" + "ab" * 20


@pytest.fixture
def invitation(world: TeamWorld, sql):
    api = world.api
    invitee = api.call("POST", "/users", key=True, json={"userId": "unique()", "email": "invitee@example.com"}).json()
    m = api.call("POST", f"/teams/{world.team['$id']}/memberships", key=True,
                 json={"userId": invitee["$id"], "roles": ["guest"]}).json()
    sql("UPDATE teams_membership SET confirm = false, joined = NULL, secret_hash = %s WHERE uid = %s",
        (hashlib.sha256(SECRET.encode()).hexdigest(), m["$id"]))
    return invitee, m


def test_accept_confirms_verifies_and_signs_in(world: TeamWorld, invitation):
    api, team = world.api, world.team["$id"]
    invitee, m = invitation
    path = f"/teams/{team}/memberships/{m['$id']}/status"
    before = api.call("GET", f"/teams/{team}", key=True).json()["total"]
    wrong = api.call("PATCH", path, json={"userId": invitee["$id"], "secret": "nope"})
    assert wrong.status_code == 401 and wrong.json()["type"] == "team_invalid_secret"
    other = api.call("PATCH", path, json={"userId": world.member["$id"], "secret": SECRET})
    assert other.status_code == 401 and other.json()["type"] == "team_invite_mismatch"
    as_someone = api.call("PATCH", path, session=world.outsider_session, json={"userId": invitee["$id"], "secret": SECRET})
    assert as_someone.status_code == 401 and as_someone.json()["type"] == "team_invite_mismatch"

    ok = api.call("PATCH", path, json={"userId": invitee["$id"], "secret": SECRET})
    assert ok.status_code == 200, ok.text
    body = ok.json()
    assert body["confirm"] is True and body["joined"] and body["userId"] == invitee["$id"]
    name = f"a_session_{api.project.id}".lower()
    assert name in ok.headers.get("Set-Cookie", "")
    token = json.loads(ok.headers["X-Fallback-Cookies"])[name]
    me = api.call("GET", "/account", session=token).json()
    assert me["$id"] == invitee["$id"] and me["emailVerification"] is True
    assert [t["$id"] for t in api.call("GET", "/teams", session=token).json()["teams"]] == [team]
    assert api.call("GET", f"/teams/{team}", key=True).json()["total"] == before + 1
    again = api.call("PATCH", path, json={"userId": invitee["$id"], "secret": SECRET})
    assert again.status_code == 409 and again.json()["type"] == "membership_already_confirmed"
