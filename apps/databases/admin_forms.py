"""Rows in the admin: a form per table whose fields are the table's columns, type-checked, and
whose save is the API's write (``apps.databases.services.rows``).

The form's validation runs in two steps. Django's form fields check what they can (a number is a
number, within the column's ``min``/``max``; a string fits its ``size``; an enum value is one of
its ``elements``; an array or a spatial value is JSON). Then the row is written by the same
service functions as ``POST``/``PATCH /v1/tablesdb/{databaseId}/tables/{tableId}/rows``, called as
an API key of the row's project (keys hold every permission, as an operator does): the columns'
types, sizes, formats and defaults, relationships, unique indexes, the row size limit and the
permission strings are checked there, realtime events are announced, and a refusal (the API's
400 or 409 message) becomes the form's error, nothing written. The admin never writes
``databases_row`` itself.
"""

from __future__ import annotations

import json
import re

from django import forms

from apps.core.drivers.db import get_database
from apps.core.drivers.kv import get_kv
from apps.core.drivers.runtime import run_sync
from apps.core.errors import AppwriteError
from apps.core.http.auth import KEY_SCOPES, Auth
from apps.core.http.context import RequestContext
from apps.databases.models import Row, Table
from apps.databases.naming import TABLESDB
from apps.databases.schema import KINDS

PREFIX = "col__"  # form field name of a column: col__<key>
LONG = 255  # strings longer than this get a text area


def service_ctx(project_uid: str, operator: str) -> RequestContext:
    """A request context for the service layer: the project ``project_uid`` and an API key named
    after the staff account ``operator`` (audit entries and events name it)."""
    from apps.projects.selectors import project_resolve

    ctx = RequestContext(mode="sync", method="POST", path="/admin/", query=[], headers={}, peer_ip="127.0.0.1",
                         db=get_database("sync"), kv=get_kv("sync"))
    ctx.project = run_sync(project_resolve(ctx, project_uid))
    if ctx.project is None:
        raise AppwriteError("project_not_found")
    ctx.auth = Auth(kind="key", key={"name": f"admin: {operator}"}, scopes=KEY_SCOPES, roles=[])
    return ctx


def write(table: Table, operator: str, *, row_uid: str, data: dict, permissions: list[str] | None,
          create: bool) -> dict:
    """Create (``create``) or update the row ``row_uid`` of ``table`` through the service layer;
    returns the stored row (``{"id", "uid", ...}``). Raises :class:`AppwriteError` as the API
    would (400 ``row_invalid_structure``, 409 ``row_already_exists``, 404 ``row_not_found``...)."""
    from apps.databases.selectors.meta import resolve
    from apps.databases.services import rows as svc

    ctx = service_ctx(table.database.project.uid, operator)
    database, table_meta = run_sync(resolve(ctx, TABLESDB, table.database.uid, table.uid))
    if create:
        return run_sync(svc.row_create(ctx, naming=TABLESDB, database=database, table=table_meta, row_uid=row_uid,
                                       data=data, permissions=permissions))
    return run_sync(svc.row_update(ctx, naming=TABLESDB, database=database, table=table_meta, row_uid=row_uid,
                                   data=data, permissions=permissions))


def delete(row: Row, operator: str) -> None:
    """Delete ``row`` through the service layer (relationships' on-delete rules, events)."""
    from apps.databases.selectors.meta import resolve
    from apps.databases.services import rows as svc

    table = row.table
    ctx = service_ctx(table.database.project.uid, operator)
    database, table_meta = run_sync(resolve(ctx, TABLESDB, table.database.uid, table.uid))
    run_sync(svc.row_delete(ctx, naming=TABLESDB, database=database, table=table_meta, row_uid=row.uid))


class JSONValueField(forms.CharField):
    """A value typed as JSON (arrays, spatial values, relationships); empty is ``None``."""

    widget = forms.Textarea(attrs={"rows": 2, "cols": 60})

    def __init__(self, *, expect: type | None = None, **kwargs):
        self.expect = expect
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False)

    def to_python(self, value):
        value = super().to_python(value)
        if value in ("", None):
            return None
        try:
            parsed = json.loads(value)
        except ValueError:
            raise forms.ValidationError("Enter JSON, e.g. [\"a\", \"b\"] for a list.") from None
        if self.expect is not None and not isinstance(parsed, self.expect):
            raise forms.ValidationError(f"Enter a JSON {'list' if self.expect is list else 'value'}.")
        return parsed


def column_field(column) -> forms.Field:
    """The form field of a column (:class:`apps.databases.models.Column`), labelled with its
    key and typed by its kind; ``help_text`` names the type and its limits."""
    kind = KINDS.get(column.kind)
    spec = column.spec or {}
    limits = [kind.type if kind else column.kind]
    if column.array:
        limits.append("array (JSON list)")
    required = bool(column.required)
    common = {"label": column.key, "required": required}
    if column.array or kind is None or kind.base in ("spatial", "relationship"):
        field = JSONValueField(expect=list if column.array else None, **common)
    elif kind.base == "integer":
        field = forms.IntegerField(min_value=spec.get("min"), max_value=spec.get("max"), **common)
    elif kind.base == "float":
        field = forms.FloatField(min_value=spec.get("min"), max_value=spec.get("max"), **common)
    elif kind.base == "boolean":
        field = forms.NullBooleanField(label=column.key, required=False, widget=forms.NullBooleanSelect)
    elif kind.base == "datetime":
        field = forms.CharField(**common, widget=forms.TextInput(attrs={"placeholder": "2026-12-01T16:05:00.000+00:00"}))
    elif kind.name == "enum":
        choices = [("", "(empty)")] + [(e, e) for e in spec.get("elements", [])]
        field = forms.ChoiceField(choices=choices, **common)
    else:
        size = column.size or kind.fixed_size
        widget = forms.Textarea(attrs={"rows": 3, "cols": 60}) if (size or 0) > LONG else None
        field = forms.CharField(max_length=size, strip=False, empty_value=None, widget=widget, **common)
        if kind.format:
            limits.append(kind.format)
    if spec.get("min") is not None or spec.get("max") is not None:
        limits.append(f"{spec.get('min', '')}..{spec.get('max', '')}")
    if column.size and not column.array and kind and kind.base == "string":
        limits.append(f"up to {column.size} characters")
    limits.append("required" if required else "optional")
    field.help_text = ", ".join(str(x) for x in limits)
    return field


_COLUMN_IN_MESSAGE = re.compile(r'(?:attribute|column) "([^"]+)"', re.I)


class RowForm(forms.ModelForm):
    """The row's columns as fields; :meth:`clean` writes the row (see the module's docstring)."""

    table: Table
    columns: list = []
    operator = ""

    class Meta:
        model = Row
        fields: list[str] = []

    row_id = forms.CharField(label="Row ID", required=False, max_length=36,
                             help_text="Up to 36 characters a-z, A-Z, 0-9, period, hyphen, underscore; "
                                       "empty: a unique ID is made.")
    permissions_text = forms.CharField(
        label="Permissions", required=False, widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text='One per line, e.g. read("any") or update("user:ada").')

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            self.instance.table = self.table
        else:
            self.fields.pop("row_id", None)
            data = self.instance.data or {}
            for column in self.columns:
                self.initial.setdefault(PREFIX + column.key, data.get(column.key))
            self.initial.setdefault("permissions_text", "\n".join(self.instance.permissions or []))

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        data = {column.key: cleaned.get(PREFIX + column.key) for column in self.columns}
        creating = self.instance.pk is None
        if creating:
            data = {k: v for k, v in data.items() if v is not None}  # absent: the column's default
        permissions = [line.strip() for line in (cleaned.get("permissions_text") or "").splitlines() if line.strip()]
        try:
            row_uid = (cleaned.get("row_id") or "unique()") if creating else self.instance.uid
            row = write(self.table, self.operator, row_uid=row_uid, data=data, permissions=permissions,
                        create=creating)
        except AppwriteError as err:
            named = _COLUMN_IN_MESSAGE.search(err.message or "")
            field = PREFIX + named.group(1) if named and PREFIX + named.group(1) in self.fields else None
            self.add_error(field, f"{err.message} ({err.type})")
            return cleaned
        self.instance = Row.objects.select_related("table__database").get(pk=row["id"])
        return cleaned


def row_form(table: Table, operator: str) -> type[RowForm]:
    """A :class:`RowForm` class for ``table``'s columns (in creation order)."""
    columns = list(table.columns.order_by("id"))
    attrs = {PREFIX + column.key: column_field(column) for column in columns}
    attrs.update(table=table, columns=columns, operator=operator)
    return type(f"RowForm_{table.pk}", (RowForm,), attrs)
