"""The project's authentication settings reach the account routes (the rest of the settings are
tested with the flows that use them)."""

from __future__ import annotations

import datetime as dt

from conftest import Api


def test_session_length_follows_the_project(api: Api, sql):
    sql("UPDATE projects_project SET auth_duration = 3600 WHERE id = %s", (api.project.pk,))
    user, token = api.signup()
    session = api.call("GET", "/account/sessions/current", session=token).json()
    expire = dt.datetime.fromisoformat(session["expire"])
    left = (expire - dt.datetime.now(dt.UTC)).total_seconds()
    assert 3500 < left <= 3600


def test_default_session_length_is_the_servers(api: Api):
    user, token = api.signup()
    session = api.call("GET", "/account/sessions/current", session=token).json()
    left = (dt.datetime.fromisoformat(session["expire"]) - dt.datetime.now(dt.UTC)).total_seconds()
    assert left > 364 * 86400  # SESSION_DURATION: one year
