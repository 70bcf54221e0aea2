"""The project's member-field privacy settings (``memberships_*``): what session users see of
a team's members; keys always see everything."""

from __future__ import annotations

import time

import pytest

from conftest import Api, make_project


def test_hidden_member_fields(asgi_server, django_db_blocker):
    project = make_project(django_db_blocker)
    from apps.projects.models import Project

    with django_db_blocker.unblock():  # before the server ever resolves this project
        Project.objects.filter(uid=project.id).update(memberships_user_email=False, memberships_user_id=False,
                                                      memberships_user_name=True,
                                                      memberships_user_accessed_at=True)
    api = Api(asgi_server, project)
    owner, token = api.signup(name="Owner", email="owner.priv@example.com")
    team = api.call("POST", "/teams", session=token, json={"teamId": "unique()", "name": "P"}).json()
    path = f"/teams/{team['$id']}/memberships"
    seen = api.call("GET", path, session=token).json()["memberships"][0]
    assert seen["userEmail"] == "" and "userId" not in seen
    assert seen["userName"] == "Owner" and seen["userAccessedAt"]
    one = api.call("GET", f"{path}/{seen['$id']}", session=token).json()
    assert one["userEmail"] == "" and "userId" not in one
    full = api.call("GET", path, key=True).json()["memberships"][0]
    assert full["userEmail"] == "owner.priv@example.com" and full["userId"] == owner["$id"]


# Appwrite's three settings: (setting, model key, value when shown, value when hidden). ``None``
# for the shown value: the member's own, filled in by the test.
APPWRITE_SETTINGS = [
    ("memberships_user_name", "userName", None, ""),
    ("memberships_user_email", "userEmail", None, ""),
    ("memberships_mfa", "mfa", True, False),
]
SHOWN = {"userName": "Member Name"}


def _team_with_member(api: Api) -> tuple[str, str, str, str]:
    """A team whose owner has a session and a JWT, with a second member who has MFA on.
    Returns ``(team ID, owner's session token, owner's JWT, member's email)``."""
    email = f"m{time.monotonic_ns()}@example.com"
    member, member_token = api.signup(name=SHOWN["userName"], email=email)
    assert api.call("PATCH", "/account/mfa", json={"mfa": True}, session=member_token).status_code == 200
    _, token = api.signup(name="Owner")
    team = api.call("POST", "/teams", session=token, json={"teamId": "unique()", "name": "T"}).json()
    r = api.call("POST", f"/teams/{team['$id']}/memberships", key=True,
                 json={"userId": member["$id"], "roles": ["member"]})
    assert r.status_code == 201, r.text
    jwt = api.call("POST", "/account/jwts", session=token).json()["jwt"]
    return team["$id"], token, jwt, email


@pytest.mark.parametrize("hidden", [False, True], ids=["shown", "hidden"])
@pytest.mark.parametrize("setting,field,shown,blank", APPWRITE_SETTINGS, ids=[c[0] for c in APPWRITE_SETTINGS])
def test_appwrite_member_privacy_settings(asgi_server, django_db_blocker, setting, field, shown, blank, hidden):
    """Set through the service the operator's tools use (``createproject``, the admin form)
    before the server first resolves the project (it caches projects)."""
    from apps.projects.models import Project
    from apps.projects.services import project_auth_update

    project = make_project(django_db_blocker)
    with django_db_blocker.unblock():
        project_auth_update(project=Project.objects.get(uid=project.id), auth={setting: not hidden})
    api = Api(asgi_server, project)
    team, token, jwt, email = _team_with_member(api)
    expected_shown = {"userName": SHOWN["userName"], "userEmail": email, "mfa": True}[field] if shown is None \
        else shown
    path = f"/teams/{team}/memberships"
    for who in ({"session": token}, {"headers": {"X-Appwrite-JWT": jwt}}):
        listed = api.call("GET", path, **who).json()["memberships"]
        member = next(m for m in listed if "member" in m["roles"])
        one = api.call("GET", f"{path}/{member['$id']}", **who).json()
        for seen in (member, one):
            assert seen[field] == (blank if hidden else expected_shown), (who, seen)
    # API keys always see every field.
    member = next(m for m in api.call("GET", path, key=True).json()["memberships"] if "member" in m["roles"])
    assert member[field] == expected_shown
    assert api.call("GET", f"{path}/{member['$id']}", key=True).json()[field] == expected_shown
