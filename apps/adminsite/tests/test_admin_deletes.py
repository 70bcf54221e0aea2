"""Deleting a user and a project from the admin (Django's test client on data made through the
live API): the read-only audit log no longer blocks the cascade, and the owner's audit entries
go with it, as ``DELETE /v1/users/{userId}`` removes them."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.test import override_settings
from django.urls import reverse

from apps.adminsite.tests.seed import account_status, seed
from conftest import Api, make_project


def _audit_count(sql, column: str, pk: int) -> int:
    return sql(f"SELECT count(*) FROM audit_log WHERE {column} = %s", (pk,))[0][0]


def _delete(client, django_db_blocker, url: str) -> str:
    """Open the confirmation page (it must offer the delete), then confirm it."""
    with django_db_blocker.unblock():
        page = client.get(url)
        html = page.content.decode()
        assert page.status_code == 200, html[-2000:]
        assert "permission to delete" not in html and "Cannot delete" not in html, html
        assert 'name="post" value="yes"' in html
        done = client.post(url, {"post": "yes"})
    assert done.status_code == 302, done.content.decode()[-2000:]
    return html


def test_admin_deletes_a_user_and_its_audit_entries(admin_client, django_db_blocker, api: Api, sql):
    data = seed(api)
    user_pk = sql("SELECT id FROM accounts_user WHERE uid = %s", (data["user"]["$id"],))[0][0]
    other, _ = api.signup(name="Stays")
    other_pk = sql("SELECT id FROM accounts_user WHERE uid = %s", (other["$id"],))[0][0]
    assert _audit_count(sql, "user_id", user_pk) > 0  # the sign-up's session.create at least
    kept = _audit_count(sql, "user_id", other_pk)
    html = _delete(admin_client, django_db_blocker, reverse("admin:accounts_user_delete", args=[user_pk]))
    assert "session.create" in html  # the confirmation lists the audit entries that go too
    assert sql("SELECT count(*) FROM accounts_user WHERE id = %s", (user_pk,)) == [(0,)]
    assert _audit_count(sql, "user_id", user_pk) == 0
    assert sql("SELECT count(*) FROM teams_membership WHERE user_id = %s", (user_pk,)) == [(0,)]
    assert _audit_count(sql, "user_id", other_pk) == kept  # nobody else's history
    assert account_status(api, data["session"], 401).status_code == 401
    assert api.call("GET", f"/users/{data['user']['$id']}", key=True).status_code == 404


def test_admin_deletes_users_with_the_bulk_action(admin_client, django_db_blocker, api: Api, sql):
    pks = [sql("SELECT id FROM accounts_user WHERE uid = %s", (api.signup()[0]["$id"],))[0][0] for _ in range(2)]
    url = reverse("admin:accounts_user_changelist")
    with django_db_blocker.unblock():
        ask = admin_client.post(url, {"action": "delete_selected", "_selected_action": pks})
        assert "permission to delete" not in ask.content.decode()
        done = admin_client.post(url, {"action": "delete_selected", "_selected_action": pks, "post": "yes"})
    assert done.status_code == 302
    assert sql("SELECT count(*) FROM accounts_user WHERE id = ANY(%s)", (pks,)) == [(0,)]
    assert sql("SELECT count(*) FROM audit_log WHERE user_id = ANY(%s)", (pks,)) == [(0,)]


def test_admin_deletes_a_project_with_everything_in_it(admin_client, django_db_blocker, asgi_server, live_env, sql):
    project = make_project(django_db_blocker)
    api = Api(asgi_server, project)
    seed(api)
    assert _audit_count(sql, "project_id", project.pk) > 0
    keys = [k for (k,) in sql("SELECT f.key FROM storage_file f JOIN storage_bucket b ON b.id = f.bucket_id "
                              "WHERE b.project_id = %s", (project.pk,))]
    stored = [Path(live_env["STORAGE_ROOT"]) / key for key in keys]
    assert len(stored) == 2 and all(path.is_file() for path in stored)
    index_names = [n for (n,) in sql("SELECT 'udx_' || i.table_id || '_' || i.id FROM databases_index i "
                                     "JOIN databases_table t ON t.id = i.table_id JOIN databases_database d "
                                     "ON d.id = t.database_id WHERE d.project_id = %s", (project.pk,))]
    in_pg = "SELECT count(*) FROM pg_indexes WHERE indexname = ANY(%s)"
    assert len(index_names) == 1 and sql(in_pg, (index_names,)) == [(1,)]  # the seed's "by_price"
    files = {**settings.STORAGES["files"], "OPTIONS": {**settings.STORAGES["files"].get("OPTIONS", {}),
                                                       "location": live_env["STORAGE_ROOT"]}}
    with override_settings(STORAGES={**settings.STORAGES, "files": files}):
        _delete(admin_client, django_db_blocker, reverse("admin:projects_project_delete", args=[project.pk]))
    assert not any(path.exists() for path in stored), "the files' bytes are removed"
    assert sql(in_pg, (index_names,)) == [(0,)], "the SQL indexes of its user indexes are dropped"
    assert sql("SELECT count(*) FROM projects_project WHERE id = %s", (project.pk,)) == [(0,)]
    assert _audit_count(sql, "project_id", project.pk) == 0
    for table in ("accounts_user", "teams_team", "storage_bucket", "databases_database"):
        assert sql(f"SELECT count(*) FROM {table} WHERE project_id = %s", (project.pk,)) == [(0,)], table
