"""Operator pages for a database's schema: add a database and a table, edit a table's
permissions, add, edit and delete a column and an index. Each is the TablesDB endpoint itself
(:mod:`apps.adminsite.api_call`), so the key, size, type, default and index checks, the SQL indexes
behind a table's indexes, the events and the caches are the API's:

* ``databases/add/``: project, ID, name -> ``POST /v1/tablesdb``;
* ``databases/<pk>/tables/add/``: ID, name, permissions, row security -> ``POST .../tables``;
* ``tables/<pk>/permissions/``: permissions, row security, enabled -> ``PUT .../tables/{tableId}``;
* ``tables/<pk>/columns/add/``: key, type and the type's settings -> ``POST .../columns/{type}``;
* ``columns/<pk>/``: required, default, the type's settings, a new key -> ``PATCH .../columns/{type}/{key}``;
* ``columns/<pk>/delete/`` -> ``DELETE .../columns/{key}`` (its values and the indexes using it go);
* ``tables/<pk>/indexes/add/``: key, type, columns, orders -> ``POST .../indexes``;
* ``indexes/<pk>/delete/`` -> ``DELETE .../indexes/{key}``.

Values typed as text (a default, a minimum) are converted to the column's type when they read as
one and sent as typed otherwise, so the API's own message refuses them.
"""

from __future__ import annotations

import re

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.html import format_html

from apps.adminsite.api_call import call
from apps.adminsite.display import TRASH_PROJECT
from apps.adminsite.pages import attempt, guarded, lines, operator, page
from apps.databases.schema import KINDS

# The kinds offered: every plain kind but the spatial ones (PostGIS only; JSON values).
COLUMN_KINDS = [name for name, kind in KINDS.items() if kind.base not in ("spatial", "relationship")]
INDEX_TYPES = ("key", "unique", "fulltext", "trigram")
_INT = re.compile(r"^[+-]?\d+$")

PERMISSIONS_HELP = ('One per line, e.g. read("any"), create("users"), update("user:<id>"), '
                    'delete("team:<id>/owner").')


def _typed(text: str, base: str):
    """``text`` as a value of a column of family ``base``; the text itself when it does not read
    as one (the API then refuses it with its message)."""
    text = text.strip()
    try:
        if base == "integer":
            return int(text) if _INT.match(text) else float(text)
        if base == "float":
            return float(text)
    except ValueError:
        return text
    if base == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def _tables_path(table) -> str:
    return f"/tablesdb/{table.database.uid}/tables/{table.uid}"


def _table_page(table) -> str:
    return reverse("admin:databases_table_change", args=[table.pk])


# --- databases and tables ---------------------------------------------------------------------
class DatabaseAddForm(forms.Form):
    project = forms.ModelChoiceField(queryset=None)
    database_id = forms.CharField(label="Database ID", required=False, max_length=36,
                                  help_text="Empty: a unique ID is made.")
    name = forms.CharField(max_length=128)

    def __init__(self, *args, **kwargs):
        from apps.projects.models import Project

        super().__init__(*args, **kwargs)
        self.fields["project"].queryset = Project.objects.exclude(uid=TRASH_PROJECT).order_by("uid")


class TableAddForm(forms.Form):
    table_id = forms.CharField(label="Table ID", required=False, max_length=36, help_text="Empty: a unique ID is made.")
    name = forms.CharField(max_length=128)
    permissions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4}), help_text=PERMISSIONS_HELP)
    row_security = forms.BooleanField(label="Row security", required=False,
                                      help_text="Rows' own permissions grant access too.")


class TablePermissionsForm(forms.Form):
    permissions = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 6}), help_text=PERMISSIONS_HELP)
    row_security = forms.BooleanField(label="Row security", required=False,
                                      help_text="Rows' own permissions grant access too.")
    enabled = forms.BooleanField(required=False, help_text="A disabled table answers 404 to users and guests.")


def database_add(request, site):
    from apps.databases.models import Database

    form = DatabaseAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        made = attempt(form, request, lambda: call(d["project"].uid, operator(request), "POST", "/tablesdb", {
            "databaseId": d["database_id"] or "unique()", "name": d["name"]}))
        if made:
            messages.success(request, f"The database {d['name']} ({made['$id']}) was created.")
            return redirect("admin:databases_database_change",
                            Database.objects.get(project=d["project"], uid=made["$id"]).pk)
    return page(request, site, "Add database", form, reverse("admin:databases_database_changelist"), "Add database")


def table_add(request, site, pk: int):
    from apps.databases.models import Database, Table

    database = get_object_or_404(Database.objects.select_related("project"), pk=pk)
    form = TableAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        made = attempt(form, request, lambda: call(database.project.uid, operator(request), "POST",
                                                   f"/tablesdb/{database.uid}/tables", {
            "tableId": d["table_id"] or "unique()", "name": d["name"], "permissions": lines(d["permissions"]),
            "rowSecurity": d["row_security"]}))
        if made:
            messages.success(request, f"The table {d['name']} ({made['$id']}) was created; add its columns.")
            return redirect("admin:databases_table_change", Table.objects.get(database=database, uid=made["$id"]).pk)
    return page(request, site, f"Add a table to {database.name}", form,
                reverse("admin:databases_database_change", args=[database.pk]), "Add table")


def _table(pk: int):
    from apps.databases.models import Table

    return get_object_or_404(Table.objects.select_related("database__project"), pk=pk)


def table_permissions(request, site, pk: int):
    table = _table(pk)
    form = TablePermissionsForm(request.POST or None, initial={
        "permissions": "\n".join(table.permissions or []), "row_security": table.row_security,
        "enabled": table.enabled})
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        done = attempt(form, request, lambda: call(table.database.project.uid, operator(request), "PUT",
                                                   _tables_path(table), {
            "name": table.name, "permissions": lines(d["permissions"]), "rowSecurity": d["row_security"],
            "enabled": d["enabled"]}))
        if done:
            messages.success(request, f"The permissions of {table.name} were saved.")
            return redirect(_table_page(table))
    return page(request, site, f"Permissions of {table.name}", form, _table_page(table), "Save")


# --- columns ----------------------------------------------------------------------------------
class ColumnForm(forms.Form):
    """A column's settings; those its type does not take are ignored (the help says which)."""

    required = forms.BooleanField(required=False, help_text="A row must have a value (no default then).")
    default = forms.CharField(required=False, max_length=10000,
                              help_text="Empty: none. Numbers, true/false and ISO 8601 dates as text.")
    size = forms.IntegerField(required=False, min_value=1, help_text="string and varchar: the most characters.")
    min = forms.CharField(label="Minimum", required=False, max_length=32, help_text="integer, bigint, float.")
    max = forms.CharField(label="Maximum", required=False, max_length=32, help_text="integer, bigint, float.")
    elements = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                               help_text="enum: the allowed values, one per line.")

    def params(self, kind_name: str, *, create: bool) -> dict:
        """The API's parameters for a column of ``kind_name``."""
        d, kind = self.cleaned_data, KINDS[kind_name]
        out: dict = {"required": d["required"],
                     "default": _typed(d["default"], kind.base) if d["default"].strip() else None}
        for name in kind.params:
            if name == "size" and d["size"] is not None:
                out["size"] = d["size"]
            elif name in ("min", "max") and d[name].strip():
                out[name] = _typed(d[name], "float" if kind.base == "float" else "integer")
            elif name == "elements":
                out["elements"] = lines(d["elements"])
        if create:
            out["array"] = d.get("array", False)
        return out


class ColumnAddForm(ColumnForm):
    key = forms.CharField(max_length=36, help_text="1-36 of a-z, A-Z, 0-9, period, hyphen, underscore.")
    kind = forms.ChoiceField(label="Type", choices=[(k, k) for k in COLUMN_KINDS])
    array = forms.BooleanField(required=False, help_text="A list of values of the type.")
    field_order = ["key", "kind", "required", "array", "default", "size", "min", "max", "elements"]


class ColumnEditForm(ColumnForm):
    new_key = forms.CharField(label="Key", max_length=36, help_text="A new key renames the column in every row.")
    field_order = ["new_key", "required", "default", "size", "min", "max", "elements"]


def column_add(request, site, pk: int):
    table = _table(pk)
    form = ColumnAddForm(request.POST or None, initial={"kind": "varchar", "size": 255})
    if request.method == "POST" and form.is_valid():
        kind = form.cleaned_data["kind"]
        made = attempt(form, request, lambda: call(table.database.project.uid, operator(request), "POST",
                                                   f"{_tables_path(table)}/columns/{kind}",
                                                   {"key": form.cleaned_data["key"], **form.params(kind, create=True)}))
        if made:
            messages.success(request, f"The {kind} column {made['key']} was added to {table.name}.")
            return redirect(_table_page(table))
    return page(request, site, f"Add a column to {table.name}", form, _table_page(table), "Add column")


def _column(pk: int):
    from apps.databases.models import Column

    return get_object_or_404(Column.objects.select_related("table__database__project"), pk=pk)


def column_edit(request, site, pk: int):
    column = _column(pk)
    table, spec = column.table, column.spec or {}
    default = spec.get("default")
    initial = {"new_key": column.key, "required": column.required, "size": column.size,
               "default": "" if default is None else (str(default).lower() if isinstance(default, bool) else str(default)),
               "min": "" if spec.get("min") is None else str(spec["min"]),
               "max": "" if spec.get("max") is None else str(spec["max"]),
               "elements": "\n".join(spec.get("elements") or [])}
    form = ColumnEditForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        params = form.params(column.kind, create=False)
        if form.cleaned_data["new_key"] != column.key:
            params["newKey"] = form.cleaned_data["new_key"]
        done = attempt(form, request, lambda: call(table.database.project.uid, operator(request), "PATCH",
                                                   f"{_tables_path(table)}/columns/{column.kind}/{column.key}", params))
        if done:
            messages.success(request, f"The column {done['key']} of {table.name} was saved.")
            return redirect(_table_page(table))
    intro = format_html("<p>Type <strong>{}</strong>{}. <a href=\"{}\" id=\"delete-column\">Delete this column</a></p>",
                        column.kind, " (array)" if column.array else "",
                        reverse("admin:operator_column_delete", args=[column.pk]))
    return page(request, site, f"Column {column.key} of {table.name}", form, _table_page(table), "Save", intro=intro)


def column_delete(request, site, pk: int):
    column = _column(pk)
    table = column.table
    intro = format_html("<p>Delete the column <strong>{}</strong> of {}? Its value in every row and the indexes "
                        "that use it are deleted too.</p>", column.key, table.name)
    return _delete_page(request, site, table, f"columns/{column.key}", f"column {column.key}", intro)


def _delete_page(request, site, table, sub: str, what: str, intro):
    """A confirmation page whose POST is the API's ``DELETE <table's path>/{sub}``; ``what`` names
    the thing in the page's words (``column title``, ``index by_year``). Back to the table's page
    when it is done; a refusal is shown on the form."""
    form = forms.Form(request.POST if request.method == "POST" else None)  # an empty POST is bound too
    if request.method == "POST" and form.is_valid():
        done = attempt(form, request, lambda: call(table.database.project.uid, operator(request), "DELETE",
                                                   f"{_tables_path(table)}/{sub}"))
        if done is not None:
            messages.success(request, f"The {what} was deleted from {table.name}.")
            return redirect(_table_page(table))
    return page(request, site, f"Delete {what}", form, _table_page(table), f"Delete {what.split()[0]}",
                intro=intro, danger=True)


# --- indexes ----------------------------------------------------------------------------------
class IndexAddForm(forms.Form):
    key = forms.CharField(max_length=36)
    type = forms.ChoiceField(choices=[(t, t) for t in INDEX_TYPES])
    columns = forms.CharField(max_length=2000, help_text="The column keys, in order, one per line.",
                              widget=forms.Textarea(attrs={"rows": 3}))
    orders = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 3}),
                             help_text="ASC or DESC per column, one per line (empty: ascending).")


def index_add(request, site, pk: int):
    table = _table(pk)
    keys = list(table.columns.order_by("id").values_list("key", flat=True))
    form = IndexAddForm(request.POST or None)
    form.fields["columns"].help_text += f" This table's: {', '.join(keys) or 'none yet'}."
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        orders = [o.upper() for o in lines(d["orders"])]
        made = attempt(form, request, lambda: call(table.database.project.uid, operator(request), "POST",
                                                   f"{_tables_path(table)}/indexes", {
            "key": d["key"], "type": d["type"], "columns": lines(d["columns"]), **({"orders": orders} if orders else {})}))
        if made:
            messages.success(request, f"The index {made['key']} was added to {table.name}.")
            return redirect(_table_page(table))
    return page(request, site, f"Add an index to {table.name}", form, _table_page(table), "Add index")


def index_delete(request, site, pk: int):
    from apps.databases.models import Index

    index = get_object_or_404(Index.objects.select_related("table__database__project"), pk=pk)
    intro = format_html("<p>Delete the index <strong>{}</strong> ({} on {}) of {}?</p>", index.key, index.type,
                        ", ".join(index.columns), index.table.name)
    return _delete_page(request, site, index.table, f"indexes/{index.key}", f"index {index.key}", intro)


def urls(site) -> list:
    def view(fn):
        return guarded(site, fn, "databases.change_table")

    return [
        path("operator/databases/add/", view(database_add), name="operator_database_add"),
        path("operator/databases/<int:pk>/tables/add/", view(table_add), name="operator_table_add"),
        path("operator/tables/<int:pk>/permissions/", view(table_permissions), name="operator_table_permissions"),
        path("operator/tables/<int:pk>/columns/add/", view(column_add), name="operator_column_add"),
        path("operator/columns/<int:pk>/", view(column_edit), name="operator_column_edit"),
        path("operator/columns/<int:pk>/delete/", view(column_delete), name="operator_column_delete"),
        path("operator/tables/<int:pk>/indexes/add/", view(index_add), name="operator_index_add"),
        path("operator/indexes/<int:pk>/delete/", view(index_delete), name="operator_index_delete"),
    ]
