"""Concurrent writes on one user, team or membership: every answer is a success or Appwrite's
404/409, never a 500, and what is left is consistent."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import Api

OK_OR_GONE = {200, 201, 204, 404, 409}


def _burst(api: Api, calls: list[tuple]):
    """Send ``(method, path[, json])`` calls with the key, all at once."""
    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(lambda c: api.call(c[0], c[1], key=True, json=c[2] if len(c) > 2 else None), calls))


@pytest.fixture
def race_api(server, project) -> Api:
    return Api(server, project)


def test_two_deletes_and_updates_of_a_user(race_api: Api, sql):
    api = race_api
    for _ in range(3):
        uid = f"race{time.monotonic_ns()}"
        assert api.call("POST", "/users", key=True, json={"userId": uid, "email": f"{uid}@x.io"}).status_code == 201
        answers = _burst(api, [
            ("DELETE", f"/users/{uid}"),
            ("DELETE", f"/users/{uid}"),
            ("PATCH", f"/users/{uid}/name", {"name": "late"}),
            ("PUT", f"/users/{uid}/labels", {"labels": ["x"]}),
            ("POST", f"/users/{uid}/sessions", {}),
        ])
        assert all(r.status_code in OK_OR_GONE for r in answers), [(r.status_code, r.text) for r in answers]
        assert sorted(r.status_code for r in answers[:2]) == [204, 404]
        for r in answers:
            if r.status_code == 404:
                assert r.json()["type"] in ("user_not_found", "user_session_not_found")
        assert sql("SELECT COUNT(*) FROM accounts_user WHERE uid = %s", (uid,)) == [(0,)]
        assert sql("SELECT COUNT(*) FROM accounts_session s JOIN accounts_user u ON u.id = s.user_id "
                   "WHERE u.uid = %s", (uid,)) == [(0,)]


def test_team_delete_racing_member_changes(race_api: Api, sql):
    api = race_api
    users = [api.call("POST", "/users", key=True, json={"userId": "unique()"}).json()["$id"] for _ in range(3)]
    for _ in range(3):
        tid = f"rt{time.monotonic_ns()}"
        assert api.call("POST", "/teams", key=True, json={"teamId": tid, "name": "r"}).status_code == 201
        m = api.call("POST", f"/teams/{tid}/memberships", key=True, json={"userId": users[0], "roles": []}).json()
        answers = _burst(api, [
            ("DELETE", f"/teams/{tid}"),
            ("DELETE", f"/teams/{tid}"),
            ("POST", f"/teams/{tid}/memberships", {"userId": users[1], "roles": []}),
            ("POST", f"/teams/{tid}/memberships", {"userId": users[2], "roles": []}),
            ("PATCH", f"/teams/{tid}/memberships/{m['$id']}", {"roles": ["a"]}),
            ("DELETE", f"/teams/{tid}/memberships/{m['$id']}"),
            ("PUT", f"/teams/{tid}", {"name": "late"}),
        ])
        assert all(r.status_code in OK_OR_GONE for r in answers), [(r.status_code, r.text) for r in answers]
        assert sorted(r.status_code for r in answers[:2]) == [204, 404]
        assert sql("SELECT COUNT(*) FROM teams_membership m JOIN teams_team t ON t.id = m.team_id "
                   "WHERE t.uid = %s", (tid,)) == [(0,)]
        assert sql("SELECT COUNT(*) FROM teams_membership WHERE team_id NOT IN (SELECT id FROM teams_team)") == [(0,)]


def test_two_adds_of_one_member(race_api: Api, sql):
    api = race_api
    uid = api.call("POST", "/users", key=True, json={"userId": "unique()"}).json()["$id"]
    tid = api.call("POST", "/teams", key=True, json={"teamId": "unique()", "name": "r"}).json()["$id"]
    answers = _burst(api, [("POST", f"/teams/{tid}/memberships", {"userId": uid, "roles": []})] * 4)
    assert sorted(r.status_code for r in answers) == [201, 409, 409, 409], [r.text for r in answers]
    assert {r.json()["type"] for r in answers if r.status_code == 409} == {"membership_already_confirmed"}
    assert api.call("GET", f"/teams/{tid}", key=True).json()["total"] == 1


def test_a_deleted_user_leaves_their_teams_at_once(api, sql, django_db_blocker):
    """DELETE /users answers at once and the worker removes the rest later; meanwhile the
    user's memberships are neither listed nor counted, and the purge deletes them."""
    from apps.accounts.tasks import purge_user

    user, _ = api.signup(name="Leaving")
    team = api.call("POST", "/teams", key=True, json={"teamId": "unique()", "name": "Crew"}).json()
    assert api.call("POST", f"/teams/{team['$id']}/memberships", key=True,
                    json={"userId": user["$id"], "roles": []}).status_code == 201
    assert api.call("GET", f"/teams/{team['$id']}", key=True).json()["total"] == 1
    internal = sql("SELECT id FROM accounts_user WHERE uid = %s AND project_id = %s", (user["$id"], api.project.pk))[0][0]
    assert api.call("DELETE", f"/users/{user['$id']}", key=True).status_code == 204
    assert api.call("GET", f"/teams/{team['$id']}", key=True).json()["total"] == 0
    assert api.call("GET", f"/teams/{team['$id']}/memberships", key=True).json()["memberships"] == []
    again = api.call("DELETE", f"/users/{user['$id']}", key=True)
    assert again.status_code == 404 and again.json()["type"] == "user_not_found"
    with django_db_blocker.unblock():
        purge_user.call(user_id=internal)  # what the worker runs
    assert sql("SELECT COUNT(*) FROM teams_membership WHERE user_id = %s", (internal,)) == [(0,)]
    assert sql("SELECT COUNT(*) FROM accounts_user WHERE id = %s", (internal,)) == [(0,)]
