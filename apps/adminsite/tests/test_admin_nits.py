"""Small things an operator trips over in the admin (Django's test client): the internal
``~trash`` project is in no filter and no picker, a help text's ``<name>`` is shown, not eaten
as HTML, phone sign-in says it is unavailable, and no "Session alerts" switch promises mail the
server never sends."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from apps.adminsite.tests.seed import seed
from conftest import Api, make_project

TRASH = "~trash"


def _get(client, django_db_blocker, url: str) -> str:
    with django_db_blocker.unblock():
        page = client.get(url)
    assert page.status_code == 200, (url, page.status_code)
    return page.content.decode()


@pytest.fixture
def trash_pk(django_db_blocker) -> int:
    from apps.projects.models import Project

    with django_db_blocker.unblock():
        return Project.objects.get_or_create(uid=TRASH, defaults={"name": "Deleted resources"})[0].pk


@pytest.mark.parametrize("changelist", [
    "accounts_user", "accounts_session", "audit_log", "projects_apikey", "storage_bucket", "storage_file",
    "teams_team", "teams_membership",
])
def test_project_filters_leave_out_the_trash(admin_client, django_db_blocker, api: Api, trash_pk, changelist):
    make_project(django_db_blocker)  # a filter shows with two choices or more
    html = _get(admin_client, django_db_blocker, reverse(f"admin:{changelist}_changelist"))
    assert re.search(rf"project__id__exact={api.project.pk}\b", html), "the filter lists the projects"
    assert not re.search(rf"project__id__exact={trash_pk}\b", html), "no ~trash in the project filter"
    # The filter sidebar names no ~trash; rows of items deleted earlier in the session (buckets
    # waiting for their purge live in ~trash) may still be listed in the table itself.
    sidebar = re.search(r'<search id="changelist-filter".*?</search>', html, re.S)
    assert sidebar is not None, "the changelist has its filter sidebar"
    assert TRASH not in sidebar.group(0)


@pytest.mark.parametrize("add", ["projects_apikey_add", "accounts_oauthprovider_add"])
def test_project_pickers_leave_out_the_trash(admin_client, django_db_blocker, api: Api, trash_pk, add):
    html = _get(admin_client, django_db_blocker, reverse(f"admin:{add}"))
    picker = re.search(r'<select name="project"[^>]*>(.*?)</select>', html, re.S).group(1)
    assert f'value="{api.project.pk}"' in picker
    assert f'value="{trash_pk}"' not in picker and TRASH not in picker


def test_label_help_text_shows_the_name_placeholder(admin_client, django_db_blocker, api: Api, sql):
    data = seed(api)
    user_pk = sql("SELECT id FROM accounts_user WHERE uid = %s", (data["user"]["$id"],))[0][0]
    html = _get(admin_client, django_db_blocker, reverse("admin:accounts_user_change", args=[user_pk]))
    assert "each gives the role label:&lt;name&gt;." in html
    assert "role label:." not in html and "<name>" not in html


def test_project_page_says_phone_needs_an_sms_provider_and_offers_no_session_alerts(admin_client, django_db_blocker,
                                                                              api: Api):
    html = _get(admin_client, django_db_blocker, reverse("admin:projects_project_change", args=[api.project.pk]))
    assert "Phone sign-in (needs an SMS provider)" in html
    assert "without one, phone sign-in and phone verification answer 503" in html
    assert 'name="auth_session_alerts"' not in html and "Session alerts" not in html
    assert 'name="auth_invalidate_sessions"' in html  # the rest of the box stays
