"""Fixtures of the admin's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def admin_client(django_db_setup, django_db_blocker, client):
    """Django's test client signed in as a staff superuser (``ops``, made once and committed);
    replaces pytest-django's fixture of that name, which needs a transactional test database."""
    from django.contrib.auth.models import User as Staff

    with django_db_blocker.unblock():
        staff, _ = Staff.objects.get_or_create(username="ops", defaults={"is_staff": True, "is_superuser": True})
        client.force_login(staff)
    return client
