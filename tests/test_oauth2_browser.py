"""The OAuth2 browser (redirect) flow in headless Chromium with the web SDK 27, against a real
OpenID provider (npm ``oidc-provider``), on the ASGI and the WSGI build.

A small static server on ``http://127.0.0.1:<port>`` serves ``tests/websdk/oauth2.html`` and the
SDK's IIFE build; that origin is the project's web platform. The page's "Sign in with OpenID"
calls ``account.createOAuth2Session``; Chromium goes to this API, to the provider's login form
(filled by ``tests/websdk/oauth2_browser.mjs``, playwright-core), back through the callback, and
lands on ``success`` with a session cookie, where the page reads the account with the SDK. The
page and the API share the registrable domain 127.0.0.1, so the session travels as a cookie.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from apps.accounts.tests.test_oauth2_flow import configure_oidc, unique_login
from conftest import ARTIFACTS, make_project
from tests.websdk import CHROMIUM, needs_chromium, needs_playwright, run_node, serve_node_dir

pytestmark = [needs_chromium, needs_playwright]


@pytest.fixture(scope="module")
def page_server():
    """Serves tests/websdk (the page and node_modules/appwrite) on a free 127.0.0.1 port."""
    with serve_node_dir() as origin:
        yield origin


def _run(page_origin, server, project_id, login, name):
    url = f"{page_origin}/oauth2.html?" + urlencode({"endpoint": server.endpoint, "project": project_id})
    (ARTIFACTS / "browser").mkdir(parents=True, exist_ok=True)
    done = run_node("oauth2_browser.mjs", url, login, CHROMIUM, str(ARTIFACTS / "browser" / f"{name}.png"),
                    timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_sign_in_with_openid_in_chromium(request, kind, page_server, oidc_provider, django_db_blocker):
    server = request.getfixturevalue(f"{kind}_server")
    project = make_project(django_db_blocker, origins=(page_server,))
    configure_oidc(django_db_blocker, project, server, oidc_provider)
    login = unique_login("browser")
    shown = _run(page_server, server, project.id, login, f"oauth2-{kind}-success")
    assert shown["result"] == "success", shown
    assert shown["email"] == f"{login}@example.com" and shown["emailVerification"] is True
    assert shown["provider"] == "oidc" and shown["factors"] == ["email", "oauth2"]
    assert shown["identities"] == 1
    assert shown["url"].startswith(f"{page_server}/oauth2.html?")
    assert f"a_session_{project.id}_legacy".lower() in shown["cookies"]
    assert not any(c.startswith("a_oauth2_") for c in shown["cookies"])  # the binding cookie is gone


@pytest.mark.parametrize("kind", ["asgi", "wsgi"])
def test_cancel_at_provider_lands_on_failure_in_chromium(request, kind, page_server, oidc_provider,
                                                         django_db_blocker):
    server = request.getfixturevalue(f"{kind}_server")
    project = make_project(django_db_blocker, origins=(page_server,))
    configure_oidc(django_db_blocker, project, server, oidc_provider)
    shown = _run(page_server, server, project.id, "--cancel", f"oauth2-{kind}-cancel")
    assert shown["result"] == "failure", shown
    error = shown["error"]
    assert error["type"] == "user_oauth2_provider_error" and error["code"] == 424
    assert "access_denied" in error["message"]
