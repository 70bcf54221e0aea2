"""A session user's invitation goes out as mail (real SMTP server and worker processes); the
invitee follows the mailed link's parameters through the official Python SDK and joins."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

from appwrite.client import Client
from appwrite.services.account import Account
from appwrite.services.teams import Teams

from conftest import ORIGIN
from tests.mail import link_in, text_of


def _client(api, session: str | None = None) -> Client:
    client = Client().set_endpoint(api.server.endpoint).set_project(api.project.id)
    return client.set_session(session) if session else client


def test_invitation_is_mailed_and_its_link_joins_the_team(mail_api):
    api = mail_api
    _, owner_session = api.signup(name="Olga Owner")
    invitee_email = f"invitee{time.monotonic_ns()}@example.com"
    teams = Teams(_client(api, owner_session))
    team = teams.create(team_id="unique()", name="Rowers")
    invited = teams.create_membership(team_id=team.id, roles=["crew"], email=invitee_email, url=f"{ORIGIN}/join",
                                      name="Ivan Invitee")
    assert invited.confirm is False

    [mail] = api.smtp.wait_for(to=invitee_email)
    assert "Rowers" in mail["Subject"] and "Olga Owner" in text_of(mail)
    link = link_in(mail)
    assert link.startswith(f"{ORIGIN}/join?")
    query = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    assert query["membershipId"] == invited.id and query["teamId"] == team.id and query["teamName"] == "Rowers"

    guest = Teams(_client(api))  # the invitee has no session yet: accepting signs them in
    accepted = guest.update_membership_status(team_id=query["teamId"], membership_id=query["membershipId"],
                                              user_id=query["userId"], secret=query["secret"])
    assert accepted.confirm is True and accepted.roles == ["crew"]
    assert teams.get(team_id=team.id).total == 2


def test_invitation_mail_follows_the_locale(mail_api):
    api = mail_api
    _, owner_session = api.signup(name="Olga")
    email = f"de{time.monotonic_ns()}@example.com"
    team = api.call("POST", "/teams", session=owner_session, json={"teamId": "unique()", "name": "Ruderer"}).json()
    r = api.call("POST", f"/teams/{team['$id']}/memberships", session=owner_session,
                 headers={"X-Appwrite-Locale": "de"}, json={"email": email, "roles": [], "url": f"{ORIGIN}/join"})
    assert r.status_code == 201, r.text
    [mail] = api.smtp.wait_for(to=email)
    assert mail["Subject"].startswith("Einladung in das Team Ruderer")
    assert "Olga hat Sie in das Team Ruderer" in text_of(mail)
    assert Account(_client(api, owner_session)).get().name == "Olga"  # the owner's session is untouched
