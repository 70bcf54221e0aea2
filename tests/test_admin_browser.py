"""The Django admin in headless Chromium at 1280 px, on a live ASGI server with data made through
the API (``apps.adminsite.tests.seed``), driven by ``tests/websdk/admin_browser.mjs``:

- sign in; every change list and the table, row and file pages answer without a server error
  and nothing is clipped sideways (the page's and the change list table's ``scrollWidth`` fit);
  image files show a thumbnail; each column key is printed once on the table page;
- add an API key by ticking scope checkboxes, read its secret (and press Copy): the key works on
  the API with exactly those scopes;
- block a user with the change list's action: their session is refused by the API at once;
- a table's rows are listed as its columns, found by a value inside a word, and one is edited in
  the typed form (the API then returns the edit);
- operator pages: a user added from the users' list signs in on the API and is added to a team;
  a file uploaded to a bucket downloads with the same bytes;
- the operator forms, typed into and submitted in the browser, each result read back through the
  API: a table added to a database, its permissions, a column and an index added, the column
  edited; a user's MFA reset (authenticator removed, MFA off, new recovery codes, after which the
  password alone signs in); a project's SMTP server and a mail template saved; the project's
  service and protocol switches switched on its page (keyless requests are then refused, or
  served again);
- a test mail sent with the SMTP page's *Send test mail* reaches the tests' SMTP server process
  through the server the SMTP form saved;
- deletes, confirmed on their confirmation pages: a column of a scratch table (on its operator
  page; the API then has no such column, nor the index on it), a user (the page lists their
  audit entries; the API then answers 404 for them and refuses their session) and a throwaway
  project with a user, a team and a database (the API then knows no such project); the walk's
  own project keeps its data;
- the home page shows the background worker's liveness and the queues' depth; axe-core finds no
  serious or critical violation on the screens it checks, every operator page above, the delete
  confirmations, adding a database and the usage page among them.

Screenshots land in ``artifacts/admin/``; ``home.png`` there is ``docs/admin.md``'s
``docs/images/admin.png``: run with ``DOCS_IMAGES=1`` to write it there (as a palette PNG, a few
dozen KB).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys

import pyotp
import pytest
from django.contrib import admin
from django.urls import reverse

from apps.adminsite.tests.seed import account_status, assert_locale_and_graphql_off, seed
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


def _axe_pages(project_pk: int) -> list[dict]:
    """The pages axe-core checks without submitting them (the operator forms the browser submits,
    ``FORMS``, are checked on the way; every form's behaviour is tested in apps/adminsite/tests)."""
    return [{"name": "usage", "path": reverse("admin:usage") + f"?project={project_pk}"},
            {"name": "operator-add-database", "path": reverse("admin:operator_database_add")}]


# What the operator types into the operator forms (tests/websdk/admin_browser.mjs, ``forms``).
FORMS = {
    "schema": {"table": {"id": "orders", "name": "Orders", "permissions": 'read("any")'},
               "permissions": 'read("any")\ncreate("users")',
               "column": {"key": "qty", "kind": "integer", "min": "0", "max": "1000", "default": "1"},
               "index": {"key": "by_qty", "type": "key", "columns": "qty", "orders": "DESC"},
               "edit": {"max": "500", "default": "5"}},
    # host and port: the tests' SMTP server process (the test mail goes through it); no user name,
    # so no AUTH (the password is stored all the same, and never shown back)
    "smtp": {"senderName": "Night shop", "senderEmail": "noreply@shop.test", "username": "", "password": "smtp-secret",
             "secure": "", "testTo": f"ops-{secrets.token_hex(4)}@example.com"},
    "template": {"id": "recovery", "locale": "de", "subject": "Passwort zurücksetzen",
                 "message": "<p>Hallo {{user}}: {{redirect}}</p>", "senderName": "Night shop"},
    # locale off, the GraphQL protocol off, avatars (switched off through the API first) on again
    "switches": ["switch-service-locale", "switch-protocol-graphql", "switch-service-avatars"],
}


def _database_path(django_db_blocker, data) -> str:
    from apps.databases.models import Database

    with django_db_blocker.unblock():
        return reverse("admin:databases_database_change", args=[Database.objects.get(uid=data["database"]["$id"]).pk])


def _user_path(django_db_blocker, user: dict) -> str:
    from apps.accounts.models import User

    with django_db_blocker.unblock():
        return reverse("admin:accounts_user_change", args=[User.objects.get(uid=user["$id"]).pk])


def _bucket_pk(django_db_blocker, data) -> int:
    from apps.storage.models import Bucket

    with django_db_blocker.unblock():
        return Bucket.objects.get(uid=data["bucket"]["$id"]).pk


def _team_pk(django_db_blocker, data) -> int:
    from apps.teams.models import Team

    with django_db_blocker.unblock():
        return Team.objects.get(uid=data["team"]["$id"]).pk


def _throwaways(api: Api, django_db_blocker, server, database_id: str) -> dict:
    """What the walk deletes: a user with a session (and so audit entries) in the walk's project;
    a scratch table there with a column ``gone`` (indexed) beside ``kept``, and a row; another
    project with a user, a team and a database with a table and a row. Returns the browser's part
    (``paths``) and what the test checks afterwards."""
    from apps.accounts.models import User
    from apps.audit.models import Log
    from apps.databases.models import Table

    user, session = api.signup(name="Leaving Soon")
    table = f"/tablesdb/{database_id}/tables/scratch"
    for path, body in [(f"/tablesdb/{database_id}/tables", {"tableId": "scratch", "name": "Scratch"}),
                       (f"{table}/columns/varchar", {"key": "kept", "size": 16, "required": False}),
                       (f"{table}/columns/varchar", {"key": "gone", "size": 16, "required": False}),
                       (f"{table}/indexes", {"key": "by_gone", "type": "key", "columns": ["gone"]}),
                       (f"{table}/rows", {"rowId": "s1", "data": {"kept": "stays", "gone": "goes"}})]:
        r = api.call("POST", path, key=True, json=body)
        assert r.status_code in (201, 202), r.text
    other = make_project(django_db_blocker)
    other_api = Api(server, other)
    other_user, other_session = other_api.signup(name="In a doomed project")
    other_db = f"/tablesdb/doomed{secrets.token_hex(3)}"
    for path, body in [("/teams", {"teamId": "doomed", "name": "Doomed team"}),
                       ("/tablesdb", {"databaseId": other_db.rsplit("/", 1)[1], "name": "Doomed"}),
                       (f"{other_db}/tables", {"tableId": "t", "name": "T"}),
                       (f"{other_db}/tables/t/columns/varchar", {"key": "v", "size": 8, "required": False}),
                       (f"{other_db}/tables/t/rows", {"rowId": "r", "data": {"v": "x"}})]:
        r = other_api.call("POST", path, key=True, json=body)
        assert r.status_code in (201, 202), r.text
    with django_db_blocker.unblock():
        user_pk = User.objects.get(uid=user["$id"]).pk
        assert Log.objects.filter(user_id=user_pk, event="session.create").exists()
        table_pk = Table.objects.get(database__uid=database_id, uid="scratch").pk
    return {"paths": {"userPath": reverse("admin:accounts_user_change", args=[user_pk]),
                      "tablePath": reverse("admin:databases_table_change", args=[table_pk]), "column": "gone",
                      "projectPath": reverse("admin:projects_project_change", args=[other.pk])},
            "user": user, "userPk": user_pk, "session": session, "table": table, "otherApi": other_api,
            "otherUser": other_user, "otherSession": other_session, "otherDb": other_db}


def _mfa_user(api: Api) -> tuple[dict, list[str]]:
    """A user with an authenticator app, MFA on and recovery codes, as one who lost their phone
    would be: their password alone no longer signs them in. Returns ``(user, recovery codes)``."""
    user, token = api.signup(name="Grace Hopper")
    secret = api.call("POST", "/account/mfa/authenticators/totp", json={}, session=token).json()["secret"]
    assert api.call("PUT", "/account/mfa/authenticators/totp", json={"otp": pyotp.TOTP(secret).now()},
                    session=token).status_code == 200
    assert api.call("PATCH", "/account/mfa", json={"mfa": True}, session=token).json()["mfa"] is True
    codes = api.call("POST", "/account/mfa/recovery-codes", json={}, session=token).json()["recoveryCodes"]
    return user, codes


def _password_session(api: Api, email: str) -> dict:
    """``GET /account`` with a session made by the password alone."""
    r = api.call("POST", "/account/sessions/email", json={"email": email, "password": "password123"}, key=True)
    assert r.status_code == 201, r.text
    return api.call("GET", "/account", session=r.json()["secret"]).json()


def _palette_png(source, target) -> None:
    """``source`` (a screenshot) written to ``target`` as a 256-colour palette PNG: the admin's flat
    colours survive, the file is about a third of the size."""
    from PIL import Image

    with Image.open(source) as shot:
        shot.convert("RGB").quantize(256, dither=Image.Dither.NONE).save(target, optimize=True)


@pytest.fixture
def admin_server(live_env):
    """An ASGI server of this test's own: the admin's Django views use Django's connection pool,
    which a long-lived shared server may have filled with other tests' requests. Its request log
    is on, so the walk meets that change list with the walk's own API requests in it. It keeps
    a resolved project for 5 minutes (``PROJECT_CACHE_TTL``), longer than the walk: the project
    deleted in the admin must be unknown to the admin's own process at once, not when its cached
    copy expires."""
    server = start_server("asgi", {**live_env, "REQUEST_LOG": "true", "PROJECT_CACHE_TTL": "300"})
    yield server
    server.stop()


@pytest.fixture
def task_worker(live_env):
    """A real background worker (``manage.py worker``) on the servers' database, on the ``default``
    queue only (the tests' mail worker keeps ``mails``): the home page then shows it alive."""
    from tests.mail import start_worker

    worker = start_worker(live_env, ARTIFACTS / f"admin-worker-{secrets.token_hex(3)}.log", "--queues", "default")
    yield worker
    worker.stop()


def test_operator_walks_the_admin_in_chromium(admin_server, django_db_blocker, operator, task_worker, smtp_server,
                                              mail_worker):
    asgi_server = admin_server
    project = make_project(django_db_blocker)
    api = Api(asgi_server, project)
    data = seed(api)
    assert api.call("GET", "/account", session=data["session"]).status_code == 200
    pages, table_path = _pages(django_db_blocker, data)
    mfa_user, old_codes = _mfa_user(api)
    assert _password_session(api, mfa_user["email"])["type"] == "user_more_factors_required"
    assert api.call("PATCH", "/project/services/avatars", key=True, json={"enabled": False}).status_code == 200
    assert api.call("GET", "/avatars/initials", params={"name": "A B"}).status_code == 503  # until the admin's switch
    doomed = _throwaways(api, django_db_blocker, asgi_server, data["database"]["$id"])
    username, password = operator
    task = {
        "base": asgi_server.url, "username": username, "password": password, "chromium": CHROMIUM,
        "artifacts": str(SHOTS), "pages": pages, "tablePath": table_path, "columnKeys": ["title", "price"],
        "key": {"project": f"{project.id} ({project.id})", "name": "browser key", "scopes": ["users.read", "health.read"]},
        "blockEmail": data["user"]["email"], "homeShot": str(SHOTS / "home.png"),
        "axePages": _axe_pages(project.pk),
        "forms": {**FORMS, "schema": {**FORMS["schema"], "databasePath": _database_path(django_db_blocker, data)},
                  "smtp": {**FORMS["smtp"], "host": smtp_server.host, "port": smtp_server.port},
                  "mfa": {"userPath": _user_path(django_db_blocker, mfa_user)}},
        "operator": {"projectPk": project.pk, "email": f"added-{secrets.token_hex(4)}@example.com",
                     "password": "added-in-admin-1", "fileText": "bytes uploaded from the admin\n",
                     "bucketPath": reverse("admin:storage_bucket_change", args=[_bucket_pk(django_db_blocker, data)]),
                     "teamPath": reverse("admin:teams_team_change", args=[_team_pk(django_db_blocker, data)])},
        "projectPath": reverse("admin:projects_project_change", args=[project.pk]),
        "rows": {"listPath": next(p["path"] for p in pages if p["name"] == "rows-of-table"),
                 "changePath": next(p["path"] for p in pages if p["name"] == "row"),
                 "search": "clai", "newTitle": "Chair, edited in the admin"},
        "deletes": doomed["paths"],
    }
    done = run_node("admin_browser.mjs", json.dumps(task), timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["errors"] == []
    assert seen["axe"] == [], "\n".join(seen["axe"])
    assert len(seen["axeChecked"]) == len(task["axePages"])
    if os.environ.get("DOCS_IMAGES"):
        _palette_png(SHOTS / "home.png", ROOT / "docs" / "images" / "admin.png")
    # The home page's health box: the worker started for this test is alive; the queues this
    # server runs are listed.
    assert seen["worker"].startswith("worker pass") and "worker(s) alive" in seen["worker"], seen["worker"]
    assert {"mails", "deletes"} <= set(seen["queues"])

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
    assert seen["phoneLabel"].startswith("Phone sign-in (needs an SMS provider)") and seen["sessionAlerts"] == 0
    # Operator pages: the user added signs in; the file uploaded comes back the same.
    assert "was added to project" in seen["userAdded"], seen["userAdded"]
    signin = api.call("POST", "/account/sessions/email", json={"email": task["operator"]["email"],
                                                                "password": "added-in-admin-1"})
    assert signin.status_code == 201, signin.text
    assert "was uploaded to" in seen["uploaded"], seen["uploaded"]
    assert "is a member of Night crew now" in seen["memberAdded"], seen["memberAdded"]
    members = api.call("GET", f"/teams/{data['team']['$id']}/memberships", key=True).json()["memberships"]
    assert any(m["userEmail"] == task["operator"]["email"] and m["roles"] == ["editor"] for m in members)
    assert seen["downloaded"] == {"name": "from-admin.txt", "text": "bytes uploaded from the admin\n"}
    # Rows: the table's columns, a search by value, an edit saved through the API.
    assert [h.lower() for h in seen["rowHeaders"]] == ["row id", "title", "price", "updated at"], seen["rowHeaders"]
    assert seen["rowsFound"] == ["item1"]
    assert seen["priceType"] == "number"  # a float column: the browser takes numbers only
    assert "was changed successfully" in seen["rowSaved"], seen["rowSaved"]
    rows = f"/tablesdb/{data['database']['$id']}/tables/{data['table']['$id']}/rows"
    edited = api.call("GET", f"{rows}/item0", key=True).json()
    assert edited["title"] == "Chair, edited in the admin" and edited["price"] == 7.5

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

    _check_forms(api, seen["forms"], data, mfa_user, old_codes, smtp_server)
    _check_deletes(api, seen["deletes"], data, doomed, django_db_blocker)


def _check_deletes(api: Api, seen: dict, data: dict, doomed: dict, django_db_blocker) -> None:
    """The column, the user and the project deleted in the browser are gone from the API; what
    was beside them is not."""
    from apps.audit.models import Log

    # The column and the index on it; the other column and the row stay.
    assert "Delete the column gone of Scratch?" in seen["columnAsk"], seen["columnAsk"]
    assert "The column gone was deleted from Scratch." in seen["columnDeleted"], seen["columnDeleted"]
    table = doomed["table"]
    assert api.call("GET", f"{table}/columns/gone", key=True).status_code == 404
    assert api.call("GET", f"{table}/indexes/by_gone", key=True).status_code == 404
    assert api.call("GET", f"{table}/columns/kept", key=True).json()["status"] == "available"
    row = api.call("GET", f"{table}/rows/s1", key=True).json()
    assert row["kept"] == "stays" and "gone" not in row, row

    # The user: the confirmation listed their audit entries; they, their session and their
    # entries are gone. The seeded user (blocked above) is still there.
    assert "Are you sure you want to delete the user" in seen["userAsk"], seen["userAsk"]
    assert "Log: session.create" in seen["userAsk"], seen["userAsk"]
    assert "was deleted successfully" in seen["userDeleted"], seen["userDeleted"]
    r = api.call("GET", f"/users/{doomed['user']['$id']}", key=True)
    assert r.status_code == 404 and r.json()["type"] == "user_not_found", r.text
    assert account_status(api, doomed["session"], 401).status_code == 401
    with django_db_blocker.unblock():
        assert not Log.objects.filter(user_id=doomed["userPk"]).exists()
    assert api.call("GET", f"/users/{data['user']['$id']}", key=True).status_code == 200

    # The project and everything in it; the walk's project keeps its own.
    assert "Are you sure you want to delete the project" in seen["projectAsk"], seen["projectAsk"]
    for item in ("Team: Doomed team (doomed)", f"User: {doomed['otherUser']['email']}", "Log: session.create",
                 f"Database: {doomed['otherDb'].rsplit('/', 1)[1]}", "Row: r"):
        assert item in seen["projectAsk"], (item, seen["projectAsk"])
    assert "was deleted successfully" in seen["projectDeleted"], seen["projectDeleted"]
    other = doomed["otherApi"]
    for path in ("/users", "/teams", doomed["otherDb"]):
        r = other.call("GET", path, key=True)
        assert r.status_code == 404 and r.json()["type"] == "project_not_found", (path, r.text)
    r = other.call("GET", "/account", session=doomed["otherSession"])
    assert r.status_code == 404 and r.json()["type"] == "project_not_found", r.text
    rows = api.call("GET", f"/tablesdb/{data['database']['$id']}/tables/{data['table']['$id']}/rows", key=True)
    assert rows.status_code == 200 and rows.json()["total"] == 2, rows.text
    assert api.call("GET", f"/teams/{data['team']['$id']}", key=True).status_code == 200
    files = api.call("GET", f"/storage/buckets/{data['bucket']['$id']}/files", key=True).json()
    assert files["total"] == 3, files  # the seed's two and the one uploaded in the admin


def _check_forms(api: Api, seen: dict, data: dict, mfa_user: dict, old_codes: list[str], smtp_server) -> None:
    """What the operator forms submitted in the browser wrote, as the API reads it back."""
    schema = FORMS["schema"]
    # The table, its permissions, the column (edited) and the index.
    assert "The table Orders (orders) was created" in seen["tableAdded"], seen["tableAdded"]
    assert "The permissions of Orders were saved." in seen["permissionsSaved"], seen["permissionsSaved"]
    assert "The integer column qty was added to Orders." in seen["columnAdded"], seen["columnAdded"]
    assert "The index by_qty was added to Orders." in seen["indexAdded"], seen["indexAdded"]
    assert "The column qty of Orders was saved." in seen["columnSaved"], seen["columnSaved"]
    assert 'by_qty key ["qty"] ["DESC"] Delete' in seen["tableText"], seen["tableText"]
    table = f"/tablesdb/{data['database']['$id']}/tables/orders"
    got = api.call("GET", table, key=True).json()
    assert (got["name"], got["$permissions"], got["rowSecurity"]) == (
        "Orders", schema["permissions"].split("\n"), True), got
    column = api.call("GET", f"{table}/columns/qty", key=True).json()
    assert {k: column[k] for k in ("type", "min", "max", "default", "required")} == {
        "type": "integer", "min": 0, "max": 500, "default": 5, "required": False}, column
    index = api.call("GET", f"{table}/indexes/by_qty", key=True).json()
    assert (index["type"], index["columns"], index["orders"], index["status"]) == ("key", ["qty"], ["DESC"], "available")
    # The edited maximum holds for rows.
    over = api.call("POST", f"{table}/rows", key=True, json={"rowId": "r1", "data": {"qty": 700}})
    assert over.status_code == 400 and over.json()["type"] == "row_invalid_structure", over.text
    assert api.call("POST", f"{table}/rows", key=True, json={"rowId": "r1", "data": {"qty": 500}}).status_code == 201

    # The user's MFA: no authenticator, MFA off, the codes shown are the stored ones; the
    # password alone signs in again.
    assert "was removed" in seen["totpRemoved"] and "MFA is off for" in seen["mfaOff"], seen
    assert seen["mfaStatus"].startswith("MFA is off"), seen["mfaStatus"]
    users = f"/users/{mfa_user['$id']}"
    assert api.call("GET", users, key=True).json()["mfa"] is False
    assert api.call("GET", f"{users}/mfa/factors", key=True).json()["totp"] is False
    stored = api.call("GET", f"{users}/mfa/recovery-codes", key=True).json()["recoveryCodes"]
    assert len(seen["recoveryCodes"]) == 6 and stored == seen["recoveryCodes"]
    assert not set(stored) & set(old_codes)
    assert _password_session(api, mfa_user["email"])["$id"] == mfa_user["$id"]

    # SMTP and the mail template.
    smtp = FORMS["smtp"]
    assert "The SMTP settings of" in seen["smtpSaved"], seen["smtpSaved"]
    project = api.call("GET", "/project", key=True).json()
    assert {k: project[k] for k in ("smtpEnabled", "smtpSenderName", "smtpSenderEmail", "smtpHost", "smtpPort",
                                    "smtpUsername", "smtpSecure", "smtpPassword")} == {
        "smtpEnabled": True, "smtpSenderName": smtp["senderName"], "smtpSenderEmail": smtp["senderEmail"],
        "smtpHost": smtp_server.host, "smtpPort": smtp_server.port, "smtpUsername": smtp["username"],
        "smtpSecure": smtp["secure"], "smtpPassword": ""}
    # The test mail, sent with the page's button, went through that server.
    assert f"A test mail to {smtp['testTo']} is queued" in seen["smtpTest"], seen["smtpTest"]
    mail = smtp_server.wait_for(to=smtp["testTo"])[0]
    assert mail["Subject"] == "Custom SMTP email sample" and smtp["senderEmail"] in str(mail["From"]), mail
    template = FORMS["template"]
    assert seen["templateEditing"] == "recovery"
    assert "The recovery mail template (de) of" in seen["templateSaved"], seen["templateSaved"]
    got = api.call("GET", "/project/templates/email/recovery", key=True, params={"locale": "de"}).json()
    assert (got["subject"], got["message"], got["senderName"]) == (
        template["subject"], template["message"], template["senderName"])

    # The switches: the API lists them so and refuses keyless requests to what is off.
    assert [m.split(":")[0] for m in seen["switched"]] == [
        f"The locale service of {project['name']} is off", f"The graphql protocol of {project['name']} is off",
        f"The avatars service of {project['name']} is on."], seen["switched"]
    assert seen["switchesOff"] == ["services/locale", "protocols/graphql"]
    off = {f"{kind}/{s['$id']}" for kind in ("services", "protocols") for s in project[kind] if not s["enabled"]}
    assert off == {"services/locale", "protocols/graphql"}
    assert_locale_and_graphql_off(api)
