"""The operators' admin: users, sessions, teams, memberships and the audit log; blocking a
user or ending their sessions there takes effect on the live API at once."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from conftest import Api


@pytest.fixture
def admin_client(django_db_blocker, client):
    from django.contrib.auth.models import User as Staff

    with django_db_blocker.unblock():
        staff, _ = Staff.objects.get_or_create(username="ops", defaults={"is_staff": True, "is_superuser": True})
        client.force_login(staff)
    return client


def _pk(sql, uid: str) -> int:
    return sql("SELECT id FROM accounts_user WHERE uid = %s", (uid,))[0][0]


def test_block_and_end_sessions_from_the_admin(api: Api, admin_client, django_db_blocker, sql):
    user, token = api.signup(name="Managed")
    assert api.call("GET", "/account", session=token).status_code == 200  # cached now
    pk = _pk(sql, user["$id"])
    url = reverse("admin:accounts_user_changelist")
    with django_db_blocker.unblock():
        page = admin_client.get(url, {"q": user["email"]})
        assert page.status_code == 200 and user["email"].encode() in page.content
        done = admin_client.post(url, {"action": "block", "_selected_action": [pk]})
        assert done.status_code == 302
    # The admin runs in another process than the API: its change reaches the API's session
    # cache through Redis, a moment later.
    assert _status_soon(api, token, 403) == 403
    assert api.call("GET", "/account", session=token).json()["type"] == "user_blocked"
    with django_db_blocker.unblock():
        admin_client.post(url, {"action": "unblock", "_selected_action": [pk]})
    assert _status_soon(api, token, 200) == 200
    with django_db_blocker.unblock():
        admin_client.post(url, {"action": "end_sessions", "_selected_action": [pk]})
    assert _status_soon(api, token, 401) == 401


def _status_soon(api: Api, token: str, expected: int, within: float = 3.0) -> int:
    """The status of ``GET /account`` once it is ``expected``, or the last one after ``within`` s."""
    deadline = time.monotonic() + within
    while True:
        status = api.call("GET", "/account", session=token).status_code
        if status == expected or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def test_admin_pages_for_teams_memberships_sessions_and_logs(api: Api, admin_client, django_db_blocker):
    _, token = api.signup(name="Owner")
    assert api.call("POST", "/teams", session=token, json={"teamId": "unique()", "name": "Admin crew"}).status_code == 201
    with django_db_blocker.unblock():
        for name in ("teams_team", "teams_membership", "accounts_session", "audit_log"):
            page = admin_client.get(reverse(f"admin:{name}_changelist"))
            assert page.status_code == 200, name
        logs = admin_client.get(reverse("admin:audit_log_changelist"), {"q": "team.create"})
        assert b"team.create" in logs.content
