"""The request log's admin page (``apps.adminsite.requestlog``): read-only, newest first,
filtered by project, status class and method, searched by path or request ID; it says when the
log is off and how to turn it on; the home page links to it."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.urls import reverse

URL = "admin:core_requestlog_changelist"


@pytest.fixture
def entries(django_db_blocker, project):
    """Four committed entries of ``project`` (one per status class and method), newest last."""
    from apps.core.models import RequestLog

    tag = uuid.uuid4().hex[:12]
    now = dt.datetime.now(dt.UTC)
    rows = [("GET", "/v1/tablesdb", 200), ("POST", "/v1/users", 201), ("DELETE", "/v1/users/u1", 404),
            ("PATCH", "/v1/account/name", 500)]
    with django_db_blocker.unblock():
        made = RequestLog.objects.bulk_create([
            RequestLog(time=now - dt.timedelta(seconds=10 - i), project=project.id, method=method, route=path,
                       path=f"{path}/{tag}", status=status, duration_ms=1.5 + i,
                       ip="10.0.0.1", actor="guest", request_id=f"{tag}{i:04d}", user_agent="test")
            for i, (method, path, status) in enumerate(rows)])
    yield tag, made
    with django_db_blocker.unblock():
        RequestLog.objects.filter(request_id__startswith=tag).delete()


def _get(client, blocker, url: str, **params) -> tuple[int, str]:
    with blocker.unblock():
        response = client.get(url, params)
    return response.status_code, response.content.decode()


def _ids(page: str, tag: str) -> list[str]:
    import re

    return re.findall(rf'class="field-request_id">({tag}\d{{4}})<', page)


def test_lists_newest_first_and_filters(admin_client, django_db_blocker, project, entries):
    tag, _ = entries
    url = reverse(URL)
    status, page = _get(admin_client, django_db_blocker, url, project=project.id)
    assert status == 200
    assert _ids(page, tag) == [f"{tag}0003", f"{tag}0002", f"{tag}0001", f"{tag}0000"]
    assert "/<wbr>v1/<wbr>tablesdb<" in page and "1.5 ms" in page  # the route may break after each "/"
    assert _ids(_get(admin_client, django_db_blocker, url, project=project.id, status_class="4")[1], tag) == [f"{tag}0002"]
    assert _ids(_get(admin_client, django_db_blocker, url, project=project.id, status_class="5")[1], tag) == [f"{tag}0003"]
    assert _ids(_get(admin_client, django_db_blocker, url, project=project.id, method="POST")[1], tag) == [f"{tag}0001"]
    # Search: the whole request ID, or any part of the path.
    assert _ids(_get(admin_client, django_db_blocker, url, q=f"{tag}0002")[1], tag) == [f"{tag}0002"]
    assert _ids(_get(admin_client, django_db_blocker, url, q=f"account/name/{tag}")[1], tag) == [f"{tag}0003"]
    # The project filter offers the real projects.
    assert f"?project={project.id}" in page


def test_read_only(admin_client, django_db_blocker, entries):
    _, made = entries
    pk = made[0].pk
    assert _get(admin_client, django_db_blocker, reverse("admin:core_requestlog_add"))[0] == 403
    assert _get(admin_client, django_db_blocker, reverse("admin:core_requestlog_delete", args=[pk]))[0] == 403
    status, page = _get(admin_client, django_db_blocker, reverse("admin:core_requestlog_change", args=[pk]))
    assert status == 200 and 'name="_save"' not in page  # a view, no form to save
    status, page = _get(admin_client, django_db_blocker, reverse(URL))
    assert "addlink" not in page and 'name="action"' not in page  # no add button, no delete action


def test_says_when_the_log_is_off_and_how_to_turn_it_on(admin_client, django_db_blocker, settings):
    settings.REQUEST_LOG = False
    page = _get(admin_client, django_db_blocker, reverse(URL))[1]
    assert "The request log is off." in page and "<code>REQUEST_LOG=true</code>" in page
    home = _get(admin_client, django_db_blocker, reverse("admin:index"))[1]
    assert f'href="{reverse(URL)}"' in home and "<code>REQUEST_LOG=true</code>" in home
    settings.REQUEST_LOG, settings.REQUEST_LOG_DAYS = True, 3
    page = _get(admin_client, django_db_blocker, reverse(URL))[1]
    assert "The request log is off." not in page and "kept for 3 day(s)" in page
