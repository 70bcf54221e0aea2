"""A team to test against: created by an owner's session, with a member added by the key, a
pending invitation-less outsider and a guest."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from conftest import Api


@dataclass
class TeamWorld:
    api: Api
    team: dict
    owner: dict
    owner_session: str
    member: dict
    member_session: str
    membership: dict  # the member's
    owner_membership: dict
    outsider: dict
    outsider_session: str

    def session_of(self, who: str) -> str | None:
        return {"owner": self.owner_session, "member": self.member_session, "outsider": self.outsider_session,
                "key": None, "guest": None}[who]

    def call(self, who: str, method: str, path: str, **kw):
        return self.api.call(method, path, key=who == "key", session=self.session_of(who), **kw)


def make_world(api: Api) -> TeamWorld:
    owner, owner_session = api.signup(name="Owner")
    member, member_session = api.signup(name="Member")
    outsider, outsider_session = api.signup(name="Outsider")
    team_id = f"t{time.monotonic_ns()}"
    r = api.call("POST", "/teams", session=owner_session, json={"teamId": team_id, "name": "Team"})
    assert r.status_code == 201, r.text
    team = r.json()
    r = api.call("POST", f"/teams/{team_id}/memberships", key=True,
                 json={"userId": member["$id"], "roles": ["editor"]})
    assert r.status_code == 201, r.text
    membership = r.json()
    r = api.call("GET", f"/teams/{team_id}/memberships", key=True,
                 params={"queries[]": f'{{"method":"equal","attribute":"userId","values":["{owner["$id"]}"]}}'})
    owner_membership = r.json()["memberships"][0]
    return TeamWorld(api, team, owner, owner_session, member, member_session, membership, owner_membership,
                     outsider, outsider_session)


@pytest.fixture
def world(api) -> TeamWorld:
    return make_world(api)
