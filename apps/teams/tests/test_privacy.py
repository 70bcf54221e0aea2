"""The project's member-field privacy settings (``memberships_*``): what session users see of
a team's members; keys always see everything."""

from __future__ import annotations

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
