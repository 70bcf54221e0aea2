"""The operators' admin: users, sessions, teams, memberships and the audit log; blocking a
user or ending their sessions there takes effect on the live API at once."""

from __future__ import annotations

import time
from html.parser import HTMLParser

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


class _FormFields(HTMLParser):
    """The fields a browser would submit from the page's ``#user_form`` (inputs, checked boxes,
    textareas, selected options), as ``{name: value}``."""

    def __init__(self):
        super().__init__()
        self.fields: dict[str, str] = {}
        self._in_form = False
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._in_form = a.get("id") == "user_form"
        if not self._in_form or "name" not in a and tag != "option":
            return
        if tag == "input" and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") != "checkbox" or "checked" in a:
                self.fields[a["name"]] = a.get("value") or ("on" if a.get("type") == "checkbox" else "")
        elif tag == "textarea":
            self._textarea = a["name"]
            self.fields[a["name"]] = ""
        elif tag == "select":
            self._select = a["name"]
        elif tag == "option" and self._select and "selected" in a:
            self.fields[self._select] = a.get("value", "")

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None
        elif tag == "form":
            self._in_form = False

    def handle_data(self, data):
        if self._textarea:
            self.fields[self._textarea] += data


def test_the_impersonator_flag_from_the_admin(api: Api, admin_client, django_db_blocker, sql):
    """Ticking 'impersonator' on a user's page lets their session act as another user at once
    (the admin drops the API's cached session); unticking it ends that."""
    operator, op = api.signup(name="Support")
    target, _ = api.signup(name="Customer")
    as_target = {"X-Appwrite-Impersonate-User-Id": target["$id"]}
    assert api.call("GET", "/account", session=op, headers=as_target).json()["$id"] == operator["$id"]  # cached
    url = reverse("admin:accounts_user_change", args=[_pk(sql, operator["$id"])])

    def save(on: bool) -> None:
        with django_db_blocker.unblock():
            form = _FormFields()
            form.feed(admin_client.get(url).content.decode())
            fields = {k: v for k, v in form.fields.items() if k != "impersonator"}
            if on:
                fields["impersonator"] = "on"
            done = admin_client.post(url, {**fields, "_save": "Save"})
            assert done.status_code == 302, done.content.decode()[-3000:]

    def seen_as(expected: str, within: float = 3.0) -> str:
        deadline = time.monotonic() + within
        while True:
            got = api.call("GET", "/account", session=op, headers=as_target).json()["$id"]
            if got == expected or time.monotonic() > deadline:
                return got
            time.sleep(0.05)

    save(True)
    assert sql("SELECT impersonator FROM accounts_user WHERE uid = %s", (operator["$id"],)) == [(True,)]
    assert seen_as(target["$id"]) == target["$id"]
    save(False)
    assert seen_as(operator["$id"]) == operator["$id"]
