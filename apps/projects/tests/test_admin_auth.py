"""The Django admin's Project page edits the authentication settings, with their limits."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import User as AdminUser
from django.test import RequestFactory

from apps.projects.admin import ProjectAdmin
from apps.projects.models import Project

pytestmark = pytest.mark.django_db


def _form(project: Project, **changes):
    request = RequestFactory().get("/admin/")
    request.user = AdminUser(is_superuser=True, is_staff=True)
    model_admin = ProjectAdmin(Project, admin.site)
    form_class = model_admin.get_form(request, project, change=True)
    data = {f: getattr(project, f) for f in form_class.base_fields}
    data["auth_mock_numbers"] = "[]"
    data = {k: v for k, v in data.items() if v is not False and v is not None}  # unchecked boxes are absent
    data.update(changes)
    return form_class(data=data, instance=project)


def test_auth_settings_are_on_the_page_and_saved():
    fields = {f for _, opts in ProjectAdmin.fieldsets for f in opts["fields"]}
    editable = {f.name for f in Project._meta.fields if f.name.startswith(("auth_", "memberships_"))}
    # Session alerts are not offered: the server sends no alert mail (see ProjectAdmin).
    assert editable - {"auth_session_alerts"} <= fields and "auth_session_alerts" not in fields
    project = Project.objects.create(uid="admin-auth", name="Admin auth")
    form = _form(project, auth_max_sessions=5, auth_password_min_length=10)
    assert form.is_valid(), form.errors
    form.save()
    project.refresh_from_db()
    assert (project.auth_max_sessions, project.auth_password_min_length) == (5, 10)


@pytest.mark.parametrize("field,value", [("auth_password_min_length", 7), ("auth_password_min_length", 257),
                                         ("auth_password_history", 21), ("auth_duration", 10)])
def test_limits_are_checked(field, value):
    project = Project.objects.create(uid=f"admin-{field}-{value}", name="x")
    form = _form(project, **{field: value})
    assert not form.is_valid() and field in form.errors
