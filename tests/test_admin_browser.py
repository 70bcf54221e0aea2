"""The Django admin in headless Chromium at 1280 px, on a live ASGI server with data made through
the API (``apps.adminsite.tests.seed``), driven by ``tests/websdk/admin_browser.mjs``:

- sign in; every change list and the table, row and file pages answer without a server error
  and nothing is clipped sideways (the page's and the change list table's ``scrollWidth`` fit);
  image files show a thumbnail; each column key is printed once on the table page;
- add an API key by ticking scope checkboxes, read its secret (and press Copy): the key works on
  the API with exactly those scopes;
- block a user with the change list's action: their session is refused by the API at once.

Screenshots land in ``artifacts/admin/``; ``home.png`` there is the README's
``docs/images/admin.png``.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys

import pytest
from django.contrib import admin
from django.urls import reverse

from apps.adminsite.tests.seed import account_status, seed
from conftest import ARTIFACTS, ROOT, Api, make_project, start_server
from tests.websdk import CHROMIUM, needs_chromium, needs_playwright, run_node

pytestmark = [needs_chromium, needs_playwright]
SHOTS = ARTIFACTS / "admin"


@pytest.fixture
def operator(live_env) -> tuple[str, str]:
    """A Django staff account (superuser) with a password: ``(username, password)``, made by
    ``manage.py createsuperuser`` with the servers' settings, as an operator makes it (the
    password hash is then one the server checks, whatever the test process's settings are)."""
    username, password = f"ops-{secrets.token_hex(4)}", secrets.token_urlsafe(16)
    done = subprocess.run([sys.executable, "manage.py", "createsuperuser", "--noinput", "--username", username,
                           "--email", f"{username}@example.com"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**live_env, "DJANGO_SUPERUSER_PASSWORD": password})
    assert done.returncode == 0, done.stderr[-2000:]
    return username, password


def _pages(django_db_blocker, data) -> tuple[list[dict], str]:
    """Every change list, plus the detail pages with the most on them; and the table's page."""
    from apps.databases.models import Row, Table
    from apps.storage.models import File

    with django_db_blocker.unblock():
        table = Table.objects.get(database__uid=data["database"]["$id"], uid=data["table"]["$id"])
        row = Row.objects.get(table=table, uid="item0")
        image = File.objects.select_related("bucket").get(uid=data["image"]["$id"])
    pages = [{"name": "home", "path": reverse("admin:index")}]
    for model in admin.site._registry:
        opts = model._meta
        pages.append({"name": f"{opts.app_label}-{opts.model_name}",
                      "path": reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")})
    table_path = reverse("admin:databases_table_change", args=[table.pk])
    pages += [{"name": "table", "path": table_path},
              {"name": "row", "path": reverse("admin:databases_row_change", args=[row.pk])},
              {"name": "rows-of-table", "path": reverse("admin:databases_row_changelist") + f"?table={table.pk}"},
              {"name": "image-file", "path": reverse("admin:storage_file_change", args=[image.pk])},
              # This test's own files (the whole list also holds other tests' files, whose bytes
              # may be gone: their thumbnails are 404 by design).
              {"name": "files-of-project", "path": reverse("admin:storage_file_changelist")
               + f"?bucket__project__id__exact={image.bucket.project_id}"}]
    return pages, table_path


@pytest.fixture
def admin_server(live_env):
    """An ASGI server of this test's own: the admin's Django views use Django's connection pool,
    which a long-lived shared server may have filled with other tests' requests."""
    server = start_server("asgi", live_env)
    yield server
    server.stop()


def test_operator_walks_the_admin_in_chromium(admin_server, django_db_blocker, operator):
    asgi_server = admin_server
    project = make_project(django_db_blocker)
    api = Api(asgi_server, project)
    data = seed(api)
    assert api.call("GET", "/account", session=data["session"]).status_code == 200
    pages, table_path = _pages(django_db_blocker, data)
    username, password = operator
    task = {
        "base": asgi_server.url, "username": username, "password": password, "chromium": CHROMIUM,
        "artifacts": str(SHOTS), "pages": pages, "tablePath": table_path, "columnKeys": ["title", "price"],
        "key": {"project": f"{project.id} ({project.id})", "name": "browser key", "scopes": ["users.read", "health.read"]},
        "blockEmail": data["user"]["email"], "homeShot": str(SHOTS / "home.png"),
    }
    done = run_node("admin_browser.mjs", json.dumps(task), timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["errors"] == []

    assert [page for page in seen["pages"] if page["status"] != 200] == []
    clipped = [(page["name"], page["docScroll"], page["resultsScroll"], page["resultsClient"]) for page in seen["pages"]
               if page["docScroll"] > page["docClient"] or page["resultsScroll"] > page["resultsClient"]]
    assert clipped == [], "wider than the window (name, page width, table width, its box): " + repr(clipped)
    by_name = {page["name"]: page for page in seen["pages"]}
    assert by_name["home"]["title"] == "Operations | Appwrite-compatible backend admin"
    assert by_name["adminsite-administrator"]["title"].startswith("Select administrator (staff) to change")
    for name in ("files-of-project", "image-file"):
        assert by_name[name]["images"] >= 1 and by_name[name]["imagesLoaded"] == by_name[name]["images"], name
    assert seen["columns"] == {"title": 1, "price": 1}

    # The key made with checkboxes works, with exactly the ticked scopes.
    assert seen["secret"].startswith("standard_") and seen["copied"] == seen["secret"]
    assert seen["copyStatus"] == "Copied."
    assert "The API key “browser key” (" in seen["keyMessage"] and "()" not in seen["keyMessage"]
    keyed = Api(asgi_server, type(project)(id=project.id, key=seen["secret"], pk=project.pk))
    assert keyed.call("GET", "/users", key=True).status_code == 200
    assert keyed.call("GET", "/health", key=True).status_code == 200
    refused = keyed.call("GET", "/teams", key=True)
    assert refused.status_code == 401 and refused.json()["type"] == "general_unauthorized_scope"

    # The blocked user's session stops working at once.
    assert "Blocked 1 user(s)." in seen["blockMessage"]
    r = account_status(api, data["session"], 403)
    assert r.status_code == 403 and r.json()["type"] == "user_blocked"
