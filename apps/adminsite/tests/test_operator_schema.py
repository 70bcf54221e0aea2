"""The schema's operator pages (``apps.adminsite.schema_pages``): a database, a table, a column of
each common type added, edited and deleted, an index added and deleted, a table's permissions
edited, each through the TablesDB endpoint: the API reads back what the admin wrote, and its
refusals show on the form with nothing written."""

from __future__ import annotations

import time

from django.urls import reverse

from conftest import Api


def _post(client, blocker, url: str, form: dict):
    with blocker.unblock():
        return client.post(url, form)


def _get(client, blocker, url: str) -> str:
    with blocker.unblock():
        response = client.get(url)
    assert response.status_code == 200, response.content.decode()[-2000:]
    return response.content.decode()


def _seen(api: Api, path: str, expected: dict, seconds: float = 5.0) -> dict:
    """``GET path`` (with the key) until the fields of ``expected`` have those values, at most
    ``seconds``; returns the last answer. The admin runs in this process and the API server in
    another, which learns of a schema change by Redis pub/sub: an edit is seen a moment later,
    not necessarily by the very next request (apps/core/drivers/cache.py)."""
    deadline = time.monotonic() + seconds
    while True:
        got = api.call("GET", path, key=True).json()
        if {k: got.get(k) for k in expected} == expected or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def _gone(api: Api, path: str, seconds: float = 5.0) -> int:
    """``GET path`` (with the key) until it answers 404, at most ``seconds``; returns the last
    status. A delete made in the admin reaches the API server's table cache by pub/sub, as
    :func:`_seen` explains."""
    deadline = time.monotonic() + seconds
    while True:
        status = api.call("GET", path, key=True).status_code
        if status == 404 or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def _pk(location: str) -> int:
    return int(location.rstrip("/").split("/")[-2])


# (key, type, extra form fields, what the API answers for it)
COLUMNS = [
    ("title", "varchar", {"size": "80", "default": "untitled"}, {"type": "varchar", "size": 80, "default": "untitled"}),
    ("notes", "string", {"size": "2000"}, {"type": "string", "size": 2000}),
    ("stock", "integer", {"min": "0", "max": "500", "default": "7"}, {"type": "integer", "min": 0, "max": 500,
                                                                     "default": 7}),
    ("price", "float", {"min": "0.5", "max": "99.5"}, {"type": "double", "min": 0.5, "max": 99.5}),
    ("active", "boolean", {"default": "true"}, {"type": "boolean", "default": True}),
    ("since", "datetime", {}, {"type": "datetime", "format": "datetime"}),
    ("contact", "email", {"default": "shop@example.com"}, {"type": "string", "format": "email",
                                                           "default": "shop@example.com"}),
    ("size", "enum", {"elements": "small\nlarge"}, {"type": "string", "format": "enum", "elements": ["small", "large"]}),
]


def test_database_table_columns_and_index(admin_client, django_db_blocker, api: Api):
    tag = str(time.monotonic_ns())[-8:]
    listing = _get(admin_client, django_db_blocker, reverse("admin:databases_database_changelist"))
    add_db = reverse("admin:operator_database_add")
    assert f'href="{add_db}" class="addlink">Add database<' in listing
    bad = _post(admin_client, django_db_blocker, add_db, {"project": api.project.pk, "database_id": "bad id!",
                                                          "name": "Bad"})
    assert bad.status_code == 200 and "(general_argument_invalid)" in bad.content.decode()
    made = _post(admin_client, django_db_blocker, add_db, {"project": api.project.pk, "database_id": f"shop{tag}",
                                                           "name": "Shop"})
    assert made.status_code == 302, made.content.decode()[-2000:]
    assert api.call("GET", f"/tablesdb/shop{tag}", key=True).json()["name"] == "Shop"

    database_pk = _pk(made["Location"])
    add_table = reverse("admin:operator_table_add", args=[database_pk])
    assert f'href="{add_table}" id="add-table"' in _get(admin_client, django_db_blocker, made["Location"])
    table = _post(admin_client, django_db_blocker, add_table, {
        "table_id": "items", "name": "Items", "permissions": 'read("any")\ncreate("users")', "row_security": "on"})
    assert table.status_code == 302, table.content.decode()[-2000:]
    base = f"/tablesdb/shop{tag}/tables/items"
    got = api.call("GET", base, key=True).json()
    assert got["$permissions"] == ['read("any")', 'create("users")'] and got["rowSecurity"] is True
    table_pk = _pk(table["Location"])

    add_column = reverse("admin:operator_column_add", args=[table_pk])
    for key, kind, extra, expected in COLUMNS:
        done = _post(admin_client, django_db_blocker, add_column, {"key": key, "kind": kind, **extra})
        assert done.status_code == 302, (key, done.content.decode()[-2000:])
        column = _seen(api, f"{base}/columns/{key}", expected)
        assert {k: column.get(k) for k in expected} == expected, column
    # Refused by the API: a default out of range, a default of the wrong type, a taken key.
    for form, error in [({"key": "qty", "kind": "integer", "min": "0", "max": "5", "default": "9"},
                         "attribute_value_invalid"),
                        ({"key": "qty", "kind": "integer", "default": "many"}, "attribute_value_invalid"),
                        ({"key": "title", "kind": "varchar", "size": "10"}, "column_already_exists")]:
        refused = _post(admin_client, django_db_blocker, add_column, form)
        assert refused.status_code == 200 and f"({error})" in refused.content.decode(), form
    assert api.call("GET", f"{base}/columns/qty", key=True).status_code == 404

    page = _get(admin_client, django_db_blocker, table["Location"])
    assert 'id="add-column"' in page and 'id="add-index"' in page and 'id="edit-permissions"' in page
    from apps.databases.models import Column, Index

    with django_db_blocker.unblock():
        columns = {c.key: c.pk for c in Column.objects.filter(table_id=table_pk)}
    assert reverse("admin:operator_column_edit", args=[columns["stock"]]) in page

    # Edit: new limits and default, new enum values, a new size, a new key.
    edits = [("stock", {"new_key": "stock", "min": "1", "max": "900", "default": "10"},
              {"min": 1, "max": 900, "default": 10}),
             ("size", {"new_key": "size", "elements": "small\nlarge\nhuge", "default": "huge"},
              {"elements": ["small", "large", "huge"], "default": "huge"}),
             ("title", {"new_key": "heading", "size": "120", "required": "on"},
              {"key": "heading", "size": 120, "required": True, "default": None})]
    for key, form, expected in edits:
        url = reverse("admin:operator_column_edit", args=[columns[key]])
        assert 'id="delete-column"' in _get(admin_client, django_db_blocker, url)
        done = _post(admin_client, django_db_blocker, url, form)
        assert done.status_code == 302, (key, done.content.decode()[-2000:])
        column = _seen(api, f"{base}/columns/{expected.get('key', key)}", expected)
        assert {k: column.get(k) for k in expected} == expected, column
    wrong = _post(admin_client, django_db_blocker, reverse("admin:operator_column_edit", args=[columns["size"]]),
                  {"new_key": "size", "elements": "small", "default": "huge"})
    assert wrong.status_code == 200 and "(attribute_value_invalid)" in wrong.content.decode()

    # An index, then deleting it and a column.
    add_index = reverse("admin:operator_index_add", args=[table_pk])
    assert "This table&#x27;s: heading, notes, stock" in _get(admin_client, django_db_blocker, add_index)
    missing = _post(admin_client, django_db_blocker, add_index, {"key": "by_x", "type": "key", "columns": "nope"})
    assert missing.status_code == 200 and "(index_invalid)" in missing.content.decode()
    done = _post(admin_client, django_db_blocker, add_index, {"key": "by_stock", "type": "key",
                                                              "columns": "stock\nprice", "orders": "desc\nasc"})
    assert done.status_code == 302, done.content.decode()[-2000:]
    index = api.call("GET", f"{base}/indexes/by_stock", key=True).json()
    assert index["columns"] == ["stock", "price"] and index["orders"] == ["DESC", "ASC"]
    with django_db_blocker.unblock():
        index_pk = Index.objects.get(table_id=table_pk, key="by_stock").pk
    deleted = _post(admin_client, django_db_blocker, reverse("admin:operator_index_delete", args=[index_pk]), {})
    assert deleted.status_code == 302, deleted.content.decode().split("errornote")[-1][:500]
    assert _gone(api, f"{base}/indexes/by_stock") == 404
    delete = reverse("admin:operator_column_delete", args=[columns["notes"]])
    assert "Its value in every row" in _get(admin_client, django_db_blocker, delete)
    assert _post(admin_client, django_db_blocker, delete, {}).status_code == 302
    assert _gone(api, f"{base}/columns/notes") == 404


def test_table_permissions(admin_client, django_db_blocker, api: Api, sql):
    tag = str(time.monotonic_ns())[-8:]
    assert api.call("POST", "/tablesdb", key=True, json={"databaseId": f"d{tag}", "name": "D"}).status_code == 201
    assert api.call("POST", f"/tablesdb/d{tag}/tables", key=True, json={
        "tableId": "notes", "name": "Notes", "permissions": ['read("any")']}).status_code == 201
    table_pk = sql("SELECT t.id FROM databases_table t JOIN databases_database d ON d.id = t.database_id "
                   "WHERE d.uid = %s AND t.uid = 'notes'", (f"d{tag}",))[0][0]
    url = reverse("admin:operator_table_permissions", args=[table_pk])
    assert "read(&quot;any&quot;)" in _get(admin_client, django_db_blocker, url)
    bad = _post(admin_client, django_db_blocker, url, {"permissions": "read(any)", "enabled": "on"})
    assert bad.status_code == 200 and "(general_argument_invalid)" in bad.content.decode()
    done = _post(admin_client, django_db_blocker, url, {
        "permissions": 'read("users")\nupdate("team:crew/owner")', "row_security": "on", "enabled": "on"})
    assert done.status_code == 302, done.content.decode()[-2000:]
    got = api.call("GET", f"/tablesdb/d{tag}/tables/notes", key=True).json()
    assert got["$permissions"] == ['read("users")', 'update("team:crew/owner")']
    assert got["rowSecurity"] is True and got["enabled"] is True and got["name"] == "Notes"
