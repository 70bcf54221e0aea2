"""The admin as an operator sees it, rendered by Django's test client on data made through the
live API (``seed``): the site's name and health box, every change list, the wording fixes
(staff label, "API keys", "indexes", readable permissions, human sizes), the rows view, and an
API key added with scope checkboxes whose secret is shown once and works on the API."""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.test import override_settings
from django.urls import reverse

from apps.adminsite.tests.seed import account_status, seed
from conftest import Api


@pytest.fixture
def data(api: Api) -> dict:
    return seed(api)


def _get(client, django_db_blocker, url: str, **params):
    with django_db_blocker.unblock():
        page = client.get(url, params)
    assert page.status_code == 200, (url, page.status_code)
    return page.content.decode()


def _table_pk(sql, data) -> int:
    return sql("SELECT t.id FROM databases_table t JOIN databases_database d ON d.id = t.database_id "
               "WHERE d.uid = %s AND t.uid = %s", (data["database"]["$id"], data["table"]["$id"]))[0][0]


def test_home_page_names_the_product_and_shows_the_servers_health(admin_client, django_db_blocker):
    html = _get(admin_client, django_db_blocker, reverse("admin:index"))
    assert "Django administration" not in html and "Django site admin" not in html
    assert "<title>Operations | Appwrite-compatible backend admin</title>" in html
    assert "Appwrite-compatible backend administration" in html
    box = html[html.index('id="server-health"'):]
    for name in ("http", "database", "cache", "pubsub"):
        assert re.search(rf'<tr class="health-pass">\s*<th scope="row">{name}</th>', box), name
    assert 'href="/v1/health/version"' in box
    assert "View site" not in html  # no page for people without the demo
    # Staff accounts are labelled apart from the product's users.
    assert "Administrators (staff)" in html and ">Users<" in html
    assert ">Api keys<" not in html and ">API keys<" in html


def test_home_page_shows_the_workers_liveness_and_the_queues_depth(admin_client, django_db_blocker):
    """Mail queued while no worker is alive fails the "worker" check with the waiting count; a
    fresh heartbeat passes it. Waiting tasks are counted as ``/v1/health/queue/mails`` counts them."""
    from datetime import timedelta

    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult

    from apps.core.models import TaskWorker
    from apps.core.tests.sample_tasks import slow_marker

    later = timezone.now() + timedelta(days=1)  # not claimed by the tests' mail worker meanwhile
    with django_db_blocker.unblock():
        queued = slow_marker.using(queue_name="mails", run_after=later).enqueue(path="/nonexistent", seconds=0)
        try:
            # Every heartbeat is older than a microsecond: no worker counts as alive.
            with override_settings(TASKS_WORKER_TIMEOUT=1e-6):
                down = admin_client.get(reverse("admin:index")).content.decode()
            TaskWorker.objects.create(worker_id="admin-page-test", host="here", pid=1, seen_at=timezone.now())
            up = admin_client.get(reverse("admin:index")).content.decode()
        finally:
            TaskWorker.objects.filter(worker_id="admin-page-test").delete()
            DBTaskResult.objects.filter(id=queued.id).delete()
    row = re.search(r'<tr id="health-worker" class="health-(\w+)">(.*?)</tr>', down, re.S)
    assert row.group(1) == "fail" and "no worker seen" in row.group(2)
    assert re.search(r'class="stuck">\d+ task\(s\) waiting', row.group(2))
    mails = re.search(r'data-queue="mails">(.*?)</tr>', down, re.S).group(1)
    assert int(re.search(r'class="queue-size">(\d+)<', mails).group(1)) >= 1
    assert "GET /v1/health/queue/mails" in mails and "GET /v1/health/queue/failed/v1-mails" in mails
    row = re.search(r'<tr id="health-worker" class="health-(\w+)">(.*?)</tr>', up, re.S)
    assert row.group(1) == "pass" and "worker(s) alive" in row.group(2) and "stuck" not in row.group(2)
    assert 'title="admin-page-test on here, pid 1"' in row.group(2)


@override_settings(DEMO_ENABLED=True)
def test_view_site_leads_to_the_demo_when_it_is_served(admin_client, django_db_blocker):
    html = _get(admin_client, django_db_blocker, reverse("admin:index"))
    assert '<a href="/demo/">View site</a>' in html


def test_every_change_list_renders(admin_client, django_db_blocker, data):
    for model in admin.site._registry:
        opts = model._meta
        _get(admin_client, django_db_blocker, reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    staff = _get(admin_client, django_db_blocker, reverse("admin:adminsite_administrator_changelist"))
    assert "Select administrator (staff) to change" in staff


def test_table_page_reads_well_and_links_its_rows(admin_client, django_db_blocker, data, sql):
    pk = _table_pk(sql, data)
    html = _get(admin_client, django_db_blocker, reverse("admin:databases_table_change", args=[pk]))
    assert re.search(r'class="inline-heading">\s*Indexes\s*</h2>', html)
    assert "Indexs" not in html and "INDEXS" not in html
    # Permissions one per line, not an escaped JSON string.
    assert "<li>read(&quot;any&quot;)</li><li>create(&quot;users&quot;)</li>" in html
    assert "\\&quot;" not in html and '\\"' not in html
    assert html.count('class="module plain-rows') == 2  # columns and indexes: the key once per row
    rows_url = reverse("admin:databases_row_changelist") + f"?table={pk}"
    assert f'<a href="{rows_url}">2 row(s)</a>' in html

    rows = _get(admin_client, django_db_blocker, reverse("admin:databases_row_changelist"), table=pk)
    assert "item0" in rows and "item1" in rows and "Lamp \u00e9clair" in rows
    nothing = _get(admin_client, django_db_blocker, reverse("admin:databases_row_changelist"), table="x")
    assert "item0" not in nothing and "0 rows" in nothing


def _rows_of(api: Api, data) -> str:
    return f"/tablesdb/{data['database']['$id']}/tables/{data['table']['$id']}/rows"


def test_rows_are_listed_as_their_tables_columns_and_searched_by_value(admin_client, django_db_blocker, data, sql):
    pk = _table_pk(sql, data)
    url = reverse("admin:databases_row_changelist")
    rows = _get(admin_client, django_db_blocker, url, table=pk)
    headers = re.findall(r'<th scope="col" class="[^"]*column-(\w+)', rows)
    assert headers[headers.index("uid"):] == ["uid", "column_title", "column_price", "updated_at"]
    assert re.search(r'<td class="field-column_title">Chair</td>\s*<td class="field-column_price">49.5</td>', rows)
    found = _get(admin_client, django_db_blocker, url, table=pk, q="clai")  # inside a word, any case
    assert "Lamp \u00e9clair" in found and "item0" not in found
    assert "item0" in _get(admin_client, django_db_blocker, url, table=pk, q="item0")  # by ID still
    everything = _get(admin_client, django_db_blocker, url)  # no table chosen: the data as JSON
    assert "column-data_preview" in everything


def test_rows_are_edited_added_and_deleted_through_the_api_with_typed_fields(admin_client, django_db_blocker,
                                                                            data, api: Api, sql):
    pk = _table_pk(sql, data)
    row_pk = sql("SELECT id FROM databases_row WHERE table_id = %s AND uid = 'item0'", (pk,))[0][0]
    change = reverse("admin:databases_row_change", args=[row_pk])
    page = _get(admin_client, django_db_blocker, change)
    assert '<input type="text" name="col__title" value="Chair" maxlength="64" required' in page
    assert 'type="number" name="col__price" value="49.5"' in page
    assert f'read(&quot;user:{data["user"]["$id"]}&quot;)</textarea>' in page
    assert "varchar, up to 64 characters, required" in page and "double, optional" in page
    perms = f'read("user:{data["user"]["$id"]}")'
    with django_db_blocker.unblock():
        typed = admin_client.post(change, {"col__title": "Chair", "col__price": "cheap", "permissions_text": perms})
        bad_permission = admin_client.post(change, {"col__title": "Chair", "col__price": "1",
                                                    "permissions_text": 'read("nobody")'})
        saved = admin_client.post(change, {"col__title": "Armchair", "col__price": "55.25",
                                           "permissions_text": perms + '\nupdate("any")'})
    assert typed.status_code == 200 and "Enter a number." in typed.content.decode()
    assert bad_permission.status_code == 200 and "errorlist" in bad_permission.content.decode()
    assert saved.status_code == 302, saved.content.decode()[-3000:]
    row = api.call("GET", f"{_rows_of(api, data)}/item0", key=True).json()
    assert row["title"] == "Armchair" and row["price"] == 55.25
    assert sorted(row["$permissions"]) == sorted([perms, 'update("any")'])

    add = reverse("admin:databases_row_add")
    # Searched, so the table is listed however many tables other tests have left in the database.
    chooser = _get(admin_client, django_db_blocker, add, q=data["table"]["$id"])
    assert f'href="{add}?table={pk}"' in chooser
    assert "No table matches" in _get(admin_client, django_db_blocker, add, q="no-such-table-anywhere")
    with django_db_blocker.unblock():
        clash = admin_client.post(f"{add}?table={pk}", {"row_id": "item0", "col__title": "Stool", "col__price": ""})
        missing = admin_client.post(f"{add}?table={pk}", {"row_id": "", "col__title": "", "col__price": "3"})
        made = admin_client.post(f"{add}?table={pk}", {"row_id": "stool", "col__title": "Stool", "col__price": "",
                                                       "permissions_text": 'read("any")'})
    assert clash.status_code == 200 and "row_already_exists" in clash.content.decode()
    assert missing.status_code == 200 and "This field is required." in missing.content.decode()
    assert made.status_code == 302, made.content.decode()[-3000:]
    stool = api.call("GET", f"{_rows_of(api, data)}/stool", key=True).json()
    assert stool["title"] == "Stool" and stool["price"] is None and stool["$permissions"] == ['read("any")']

    stool_pk = sql("SELECT id FROM databases_row WHERE table_id = %s AND uid = 'stool'", (pk,))[0][0]
    with django_db_blocker.unblock():
        gone = admin_client.post(reverse("admin:databases_row_delete", args=[stool_pk]), {"post": "yes"})
    assert gone.status_code == 302
    assert api.call("GET", f"{_rows_of(api, data)}/stool", key=True).status_code == 404


def test_files_show_human_sizes_and_a_thumbnail_for_images(admin_client, django_db_blocker, data, sql):
    html = _get(admin_client, django_db_blocker, reverse("admin:storage_file_changelist"))
    assert "23.4\xa0KB" in html  # 24,000 bytes of text
    assert ">24000<" not in html
    image_pk = sql("SELECT id FROM storage_file WHERE uid = %s", (data["image"]["$id"],))[0][0]
    assert reverse("admin:storage_file_thumbnail", args=[image_pk]) + "?size=96" in html
    text_pk = sql("SELECT id FROM storage_file WHERE uid = %s", (data["text"]["$id"],))[0][0]
    page = _get(admin_client, django_db_blocker, reverse("admin:storage_file_change", args=[text_pk]))
    assert "23.4\xa0KB (24,000 bytes)" in page and "(not an image)" in page
    buckets = _get(admin_client, django_db_blocker, reverse("admin:storage_bucket_changelist"))
    assert "5.0\xa0MB" in buckets and ">5242880<" not in buckets


def test_api_key_scopes_are_checkboxes_and_the_secret_is_shown_once(admin_client, django_db_blocker, api: Api):
    add = reverse("admin:projects_apikey_add")
    form = _get(admin_client, django_db_blocker, add)
    assert 'type="checkbox" name="scopes" value="users.read"' in form
    assert "<textarea" not in form.split('name="scopes"')[0][-300:]  # no raw JSON box
    with django_db_blocker.unblock():
        done = admin_client.post(add, {"project": api.project.pk, "name": "from admin",
                                       "scopes": ["users.read", "health.read"]})
        assert done.status_code == 302, done.content.decode()[-2000:]
        secret_page = admin_client.get(done["Location"])
        html = secret_page.content.decode()
        again = admin_client.get(done["Location"]).content.decode()
    secret = re.search(r'<code id="api-key-secret">(standard_[0-9a-f]+)</code>', html).group(1)
    assert 'id="copy-secret" data-copy-target="api-key-secret"' in html
    message = re.search(r"The API key “from admin” \((\w+)\) was added to project ([\w-]+)\.", html)
    assert message and message.group(2) == api.project.id and "()" not in html.split("messagelist")[1][:300]
    assert "api-key-secret" not in again and "was already shown" in again
    with django_db_blocker.unblock():
        change = admin_client.get(done["Location"].replace("/secret/", "/change/")).content.decode()
    ticked = re.findall(r'<input type="checkbox" name="scopes" value="([\w.]+)"[^>]*checked', change)
    assert ticked == ["health.read", "users.read"]
    key = {**api.project.__dict__, "key": secret}
    keyed = Api(api.server, type(api.project)(**key))
    assert keyed.call("GET", "/users", key=True).status_code == 200
    r = keyed.call("GET", "/teams", key=True)
    assert r.status_code == 401 and r.json()["type"] == "general_unauthorized_scope"


def test_sessions_filter_by_user_and_end_ends_them(admin_client, django_db_blocker, data, api: Api, sql):
    user_pk = sql("SELECT id FROM accounts_user WHERE uid = %s", (data["user"]["$id"],))[0][0]
    users = _get(admin_client, django_db_blocker, reverse("admin:accounts_user_changelist"), q="Lovelace")
    sessions_url = reverse("admin:accounts_session_changelist") + f"?user={user_pk}"
    assert f'<a href="{sessions_url}">1</a>' in users
    listed = _get(admin_client, django_db_blocker, reverse("admin:accounts_session_changelist"), user=user_pk)
    assert listed.count('name="_selected_action"') == 1
    nobody = _get(admin_client, django_db_blocker, reverse("admin:accounts_session_changelist"), user="x")
    assert 'name="_selected_action"' not in nobody
    session_pk = sql("SELECT id FROM accounts_session WHERE user_id = %s", (user_pk,))[0][0]
    assert api.call("GET", "/account", session=data["session"]).status_code == 200
    with django_db_blocker.unblock():
        done = admin_client.post(reverse("admin:accounts_session_changelist"),
                                 {"action": "end_selected", "_selected_action": [session_pk]})
    assert done.status_code == 302
    assert account_status(api, data["session"], 401).status_code == 401


def test_bucket_permissions_are_edited_one_a_line(admin_client, django_db_blocker, data, sql):
    pk = sql("SELECT id FROM storage_bucket WHERE uid = %s", (data["bucket"]["$id"],))[0][0]
    url = reverse("admin:storage_bucket_change", args=[pk])
    html = _get(admin_client, django_db_blocker, url)
    box = re.search(r'<textarea name="permissions"[^>]*>(.*?)</textarea>', html, re.S).group(1)
    assert box.strip() == "read(&quot;any&quot;)"  # not ["read(\"any\")"]
    with django_db_blocker.unblock():
        from apps.storage.admin import BucketAdmin
        from apps.storage.models import Bucket

        bucket = Bucket.objects.get(pk=pk)
        form_class = BucketAdmin(Bucket, admin.site).get_form(None, bucket, change=True)
        base = {f: getattr(bucket, f) for f in ("name", "maximum_file_size", "compression")}
        base.update(enabled="on", allowed_file_extensions="PNG\n.jpg\n")
        good = form_class(data={**base, "permissions": 'read("any")\n\nwrite("users")'}, instance=bucket)
        assert good.is_valid(), good.errors
        assert good.cleaned_data["permissions"] == ['read("any")', 'create("users")', 'update("users")',
                                                    'delete("users")']
        assert good.cleaned_data["allowed_file_extensions"] == ["png", "jpg"]
        bad = form_class(data={**base, "permissions": 'read("nobody")'}, instance=bucket)
        assert not bad.is_valid() and "is not valid" in str(bad.errors["permissions"])


def test_labels_and_roles_are_edited_one_a_line_with_the_apis_rules(admin_client, django_db_blocker, data, sql):
    from apps.accounts.admin import UserForm
    from apps.teams.admin import MembershipForm

    user_pk = sql("SELECT id FROM accounts_user WHERE uid = %s", (data["user"]["$id"],))[0][0]
    html = _get(admin_client, django_db_blocker, reverse("admin:accounts_user_change", args=[user_pk]))
    assert re.search(r'<textarea name="labels"[^>]*>\s*</textarea>', html)  # an empty list: an empty box
    team = _get(admin_client, django_db_blocker, reverse("admin:teams_team_change", args=[
        sql("SELECT id FROM teams_team WHERE uid = %s", (data["team"]["$id"],))[0][0]]))
    assert re.search(r'<textarea name="memberships-0-roles"[^>]*>\s*lead</textarea>', team)

    assert UserForm().fields["labels"].clean("staff\n\n vip \n") == ["staff", "vip"]
    with pytest.raises(ValidationError, match="Only chars A-Z, a-z and 0-9 are allowed"):
        UserForm().fields["labels"].clean("staff\nnot a label")
    assert MembershipForm().fields["roles"].clean("owner\nlead.writer") == ["owner", "lead.writer"]
    with pytest.raises(ValidationError, match="Valid chars are"):
        MembershipForm().fields["roles"].clean("-owner")
