"""A read-only admin view of databases, tables, columns, indexes and rows.

Writes go through the API (``services``): they also manage the SQL indexes behind user
indexes, relationships and realtime events, which an admin edit or delete would bypass.
"""

from __future__ import annotations

import json

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from apps.adminsite.display import ForeignKeyFilter, pretty_json, readable_list
from apps.databases.models import Column, Database, Index, Row, Table


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ColumnInline(admin.TabularInline):
    model = Column
    fields = ("key", "kind", "required", "array", "size", "spec")
    readonly_fields = fields
    extra = 0
    can_delete = False
    classes = ("plain-rows",)  # the key is the first field: no second copy above each row


class IndexInline(admin.TabularInline):
    model = Index
    verbose_name_plural = "indexes"
    fields = ("key", "type", "columns", "orders")
    readonly_fields = fields
    extra = 0
    can_delete = False
    classes = ("plain-rows",)


def rows_url(table_pk: int) -> str:
    """The rows changelist filtered to one table."""
    return reverse("admin:databases_row_changelist") + f"?table={table_pk}"


@admin.register(Database)
class DatabaseAdmin(ReadOnly):
    list_display = ("uid", "name", "type", "enabled", "project__uid", "created_at")
    list_filter = ("type", "enabled")
    search_fields = ("uid", "name")


@admin.register(Table)
class TableAdmin(ReadOnly):
    list_display = ("uid", "name", "database", "enabled", "row_security", "created_at", "rows_link")
    search_fields = ("uid", "name")
    list_select_related = ("database",)
    fields = ("uid", "name", "database", "description", "enabled", "row_security", "permission_list", "rows",
              "created_at", "updated_at")
    readonly_fields = fields
    inlines = [ColumnInline, IndexInline]

    @admin.display(description="permissions")
    def permission_list(self, obj: Table) -> str:
        return readable_list(obj.permissions)

    @admin.display(description="rows")
    def rows_link(self, obj: Table) -> str:
        return format_html('<a href="{}">Rows</a>', rows_url(obj.pk))

    @admin.display(description="rows")
    def rows(self, obj: Table) -> str:
        return format_html('<a href="{}">{} row(s)</a>', rows_url(obj.pk), obj.rows.count())


class TableFilter(ForeignKeyFilter):
    """Rows of one table (``?table=<table pk>``), listed as ``database / table``."""

    title = "table"
    parameter_name = "table"
    LIMIT = 100

    def lookups(self, request, model_admin):
        tables = Table.objects.select_related("database").order_by("database__uid", "uid")
        chosen, listed = self.chosen(), list(tables[: self.LIMIT])
        if chosen is not None and all(t.pk != chosen for t in listed):
            listed += list(tables.filter(pk=chosen))
        return [(str(t.pk), f"{t.database.uid} / {t.uid}") for t in listed]


@admin.register(Row)
class RowAdmin(ReadOnly):
    """Rows with their data as pretty-printed JSON; filter by table (each table's page links here)."""

    list_display = ("uid", "table_name", "data_preview", "created_at", "updated_at")
    list_filter = (TableFilter,)
    search_fields = ("uid",)
    list_select_related = ("table", "table__database")
    ordering = ("-id",)
    show_full_result_count = False  # no count(*) of every row of every table per page
    fields = ("uid", "table_name", "sequence", "pretty_data", "permission_list", "created_at", "updated_at")
    readonly_fields = fields

    @admin.display(description="table", ordering="table__uid")
    def table_name(self, obj: Row) -> str:
        return f"{obj.table.database.uid} / {obj.table.uid}"

    @admin.display(description="data")
    def data_preview(self, obj: Row) -> str:
        return Truncator(json.dumps(obj.data, ensure_ascii=False)).chars(90)

    @admin.display(description="$sequence")
    def sequence(self, obj: Row) -> int:
        return obj.pk

    @admin.display(description="data")
    def pretty_data(self, obj: Row) -> str:
        return pretty_json(obj.data)

    @admin.display(description="permissions")
    def permission_list(self, obj: Row) -> str:
        return readable_list(obj.permissions)
