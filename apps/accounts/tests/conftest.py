"""Fixtures of the account lifecycle tests: a project with a registered web origin (where mailed
links may point) and an API client on it that reads mail from the session's SMTP server."""

from __future__ import annotations

import pytest

from conftest import Api, make_project

ORIGIN = "http://localhost:5173"


@pytest.fixture
def app_project(django_db_setup, django_db_blocker):
    """A project with ``ORIGIN`` registered as a web platform."""
    return make_project(django_db_blocker, origins=(ORIGIN,))


@pytest.fixture
def mail_api(asgi_server, app_project, mail_worker, smtp_server) -> Api:
    """An :class:`Api` on ``app_project`` with the worker running; ``api.smtp`` is the SMTP server."""
    api = Api(asgi_server, app_project)
    api.smtp = smtp_server
    return api
