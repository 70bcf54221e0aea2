"""The admin's view of databases, tables, columns, indexes and rows.

Databases, tables, columns and indexes are not Django forms here: they are added, edited and
deleted on the operator pages (:mod:`apps.adminsite.schema_pages`, linked from these pages), each
the API's own endpoint, which also manages the SQL indexes behind user indexes and
relationships. Rows are edited, added and deleted through that same service layer
(:mod:`apps.databases.admin_forms`).
"""

from __future__ import annotations

import json

from django.contrib import admin
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.http import QueryDict
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from apps.adminsite.display import EMPTY, TRASH_PROJECT, ForeignKeyFilter, readable_list
from apps.databases import admin_forms
from apps.databases.models import Column, Database, Index, Row, Table

# Tables listed at most on the add-row chooser; a search narrows the rest.
CHOOSER_LIMIT = 200


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ColumnInline(admin.TabularInline):
    model = Column
    fields = ("key", "kind", "required", "array", "size", "spec", "edit")
    readonly_fields = fields
    extra = 0
    can_delete = False
    classes = ("plain-rows",)  # the key is the first field: no second copy above each row

    @admin.display(description="change")
    def edit(self, obj: Column) -> str:
        if obj.kind == "relationship":
            return EMPTY  # its two sides change together, through the API's relationship route
        return format_html('<a href="{}" aria-label="Edit or delete column {}">Edit</a>',
                           reverse("admin:operator_column_edit", args=[obj.pk]), obj.key)


class IndexInline(admin.TabularInline):
    model = Index
    verbose_name_plural = "indexes"
    fields = ("key", "type", "columns", "orders", "remove")
    readonly_fields = fields
    extra = 0
    can_delete = False
    classes = ("plain-rows",)

    @admin.display(description="delete")
    def remove(self, obj: Index) -> str:
        return format_html('<a href="{}" aria-label="Delete index {}">Delete</a>',
                           reverse("admin:operator_index_delete", args=[obj.pk]), obj.key)


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


def _cell(value) -> str:
    """A column's value in a change list cell: JSON for lists and objects, at most 80 characters."""
    if value is None:
        return EMPTY
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return Truncator(text).chars(80)


def _column_display(key: str):
    @admin.display(description=key)
    def show(obj: Row) -> str:
        return _cell((obj.data or {}).get(key))

    show.__name__ = f"column_{key}"
    return show


@admin.register(Row)
class RowAdmin(admin.ModelAdmin):
    """Rows. Filtered to one table (``?table=<pk>``, each table's page links there) they are
    listed as that table's columns and searched by their values; a row is edited, and added to
    the filtered table, in a form of typed fields whose save is the API's write
    (:mod:`apps.databases.admin_forms`); deleting goes through the API's delete too."""

    list_filter = (TableFilter,)
    search_fields = ("uid",)
    list_select_related = ("table", "table__database")
    ordering = ("-id",)
    show_full_result_count = False  # no count(*) of every row of every table per page
    MAX_LIST_COLUMNS = 8

    # --- the list ---------------------------------------------------------------------------
    def _listed_table(self, request) -> Table | None:
        value = request.GET.get("table") or QueryDict(request.GET.get("_changelist_filters", "")).get("table")
        if not value or not value.isdigit():
            return None
        return Table.objects.select_related("database__project").filter(pk=int(value)).first()

    def get_list_display(self, request):
        table = self._listed_table(request)
        if table is None:
            return ("uid", "table_name", "data_preview", "created_at", "updated_at")
        keys = list(table.columns.order_by("id").values_list("key", flat=True)[: self.MAX_LIST_COLUMNS])
        return ("uid", *[_column_display(key) for key in keys], "updated_at")

    def get_search_results(self, request, queryset, search_term):
        """By ID, or by any column's value: the row's JSON data contains the term (case ignored)."""
        found, duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        if term:
            found = found | queryset.annotate(data_text=Cast("data", TextField())).filter(data_text__icontains=term)
        return found, duplicates

    def get_search_fields(self, request):
        return ("uid",)

    @admin.display(description="table", ordering="table__uid")
    def table_name(self, obj: Row) -> str:
        return f"{obj.table.database.uid} / {obj.table.uid}"

    @admin.display(description="data")
    def data_preview(self, obj: Row) -> str:
        return Truncator(json.dumps(obj.data, ensure_ascii=False)).chars(90)

    # --- the form ---------------------------------------------------------------------------
    @admin.display(description="$sequence")
    def sequence(self, obj: Row) -> int:
        return obj.pk

    def get_form(self, request, obj=None, change=False, **kwargs):
        table = obj.table if obj is not None else self._listed_table(request)
        form = admin_forms.row_form(table, request.user.get_username())
        names = [name for name in form.base_fields if name != "row_id" or obj is None]
        return super().get_form(request, obj, change, form=form, fields=names)

    def get_fields(self, request, obj=None):
        table = obj.table if obj is not None else self._listed_table(request)
        columns = [admin_forms.PREFIX + key for key in table.columns.order_by("id").values_list("key", flat=True)]
        if obj is None:
            return ["table_name", "row_id", *columns, "permissions_text"]
        return ["table_name", "uid", "sequence", *columns, "permissions_text", "created_at", "updated_at"]

    def get_readonly_fields(self, request, obj=None):
        return ("table_name",) if obj is None else ("table_name", "uid", "sequence", "created_at", "updated_at")

    def add_view(self, request, form_url="", extra_context=None):
        """Adding needs the table: without one chosen, a page of tables to choose from."""
        if self._listed_table(request) is None:
            tables = Table.objects.select_related("database").exclude(database__project__uid=TRASH_PROJECT)
            term = request.GET.get("q", "").strip()
            if term:
                tables = tables.filter(Q(uid__icontains=term) | Q(name__icontains=term)
                                       | Q(database__uid__icontains=term))
            total = tables.count()
            return TemplateResponse(request, "admin/databases/row/choose_table.html", {
                **self.admin_site.each_context(request), "title": "Add row: choose the table",
                "opts": self.opts, "tables": tables.order_by("database__uid", "uid")[:CHOOSER_LIMIT],
                "total": total, "limit": CHOOSER_LIMIT, "term": term,
                "add_url": reverse("admin:databases_row_add"),
            })
        return super().add_view(request, form_url, extra_context)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        """Django's, outside its transaction: the form's save is the API's write, which commits
        and announces its realtime events itself (inside an outer transaction they would be
        announced before the commit)."""
        return self._changeform_view(request, object_id, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        """Nothing: the form's validation wrote the row through the API's service."""

    def delete_model(self, request, obj):
        admin_forms.delete(obj, request.user.get_username())

    def delete_queryset(self, request, queryset):
        for row in queryset.select_related("table__database__project"):
            admin_forms.delete(row, request.user.get_username())
